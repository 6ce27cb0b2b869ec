//! Models: `bpe`, `wordpiece`, `wordlevel`, `unigram`, each with its files side by side;
//! `ModelWrapper` is the closed set tokenizer.json uses.

pub mod wordlevel;

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::tokenizer::{Model, Token};
use crate::Result;

pub use wordlevel::WordLevel;

/// Every model tokenizer.json can name, dispatched statically.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum ModelWrapper {
    WordLevel(WordLevel),
}

impl From<WordLevel> for ModelWrapper {
    fn from(m: WordLevel) -> Self {
        ModelWrapper::WordLevel(m)
    }
}

impl Model for ModelWrapper {
    fn tokenize(&self, sequence: &str) -> Result<Vec<Token>> {
        match self {
            ModelWrapper::WordLevel(m) => m.tokenize(sequence),
        }
    }
    fn token_to_id(&self, token: &str) -> Option<u32> {
        match self {
            ModelWrapper::WordLevel(m) => m.token_to_id(token),
        }
    }
    fn id_to_token(&self, id: u32) -> Option<&str> {
        match self {
            ModelWrapper::WordLevel(m) => m.id_to_token(id),
        }
    }
    fn get_vocab(&self) -> HashMap<String, u32> {
        match self {
            ModelWrapper::WordLevel(m) => m.get_vocab(),
        }
    }
    fn get_vocab_size(&self) -> usize {
        match self {
            ModelWrapper::WordLevel(m) => m.get_vocab_size(),
        }
    }
}
