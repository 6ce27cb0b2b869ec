//! Fuse: all tokens into one string.

use serde::{Deserialize, Serialize};

use crate::base::Decoder;
use crate::Result;

/// Concatenates the tokens into a single string (one output even for no token).
/// Serializes as `{"type":"Fuse"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Fuse {}

impl Fuse {
    /// The decoder.
    pub fn new() -> Self {
        Self {}
    }
}

impl Decoder for Fuse {
    fn decode_chain(&self, tokens: Vec<String>) -> Result<Vec<String>> {
        Ok(vec![tokens.concat()])
    }
}
