//! Decoders: one file per family; `DecoderWrapper` is the closed set tokenizer.json uses.

use serde::{Deserialize, Serialize};

use crate::tokenizer::Decoder;
use crate::Result;

/// Concatenates tokens.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Fuse;

impl Decoder for Fuse {
    fn decode_chain(&self, tokens: Vec<String>) -> Result<Vec<String>> {
        Ok(vec![tokens.concat()])
    }
}

/// Every decoder tokenizer.json can name, dispatched statically.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum DecoderWrapper {
    Fuse(Fuse),
}

impl Decoder for DecoderWrapper {
    fn decode_chain(&self, tokens: Vec<String>) -> Result<Vec<String>> {
        match self {
            DecoderWrapper::Fuse(x) => x.decode_chain(tokens),
        }
    }
}
