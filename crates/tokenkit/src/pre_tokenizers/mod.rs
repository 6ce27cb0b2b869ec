//! Pre-tokenizers: one file per family; `PreTokenizerWrapper` is the closed set tokenizer.json uses.

pub mod lexers;

use serde::{Deserialize, Serialize};

use crate::tokenizer::{PreTokenizedString, PreTokenizer, SplitDelimiterBehavior};
use crate::Result;

/// Splits on whitespace, dropping it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WhitespaceSplit;

impl PreTokenizer for WhitespaceSplit {
    fn pre_tokenize(&self, p: &mut PreTokenizedString) -> Result<()> {
        p.split(|_, n| n.split(char::is_whitespace, SplitDelimiterBehavior::Removed))
    }
}

/// Every pre-tokenizer tokenizer.json can name, dispatched statically.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum PreTokenizerWrapper {
    WhitespaceSplit(WhitespaceSplit),
}

impl PreTokenizer for PreTokenizerWrapper {
    fn pre_tokenize(&self, p: &mut PreTokenizedString) -> Result<()> {
        match self {
            PreTokenizerWrapper::WhitespaceSplit(x) => x.pre_tokenize(p),
        }
    }
}
