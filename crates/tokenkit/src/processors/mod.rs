//! Post-processors: one file per family; `PostProcessorWrapper` is the closed set tokenizer.json uses.

use serde::{Deserialize, Serialize};

use crate::tokenizer::{Encoding, PostProcessor};
use crate::Result;

/// Placeholder processor that leaves encodings as they are.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Identity;

/// Every post-processor tokenizer.json can name, dispatched statically.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum PostProcessorWrapper {
    Identity(Identity),
}

impl PostProcessor for PostProcessorWrapper {
    fn added_tokens(&self, _is_pair: bool) -> usize {
        0
    }
    fn process_encodings(&self, encodings: Vec<Encoding>, _add_special_tokens: bool) -> Result<Vec<Encoding>> {
        Ok(encodings)
    }
}
