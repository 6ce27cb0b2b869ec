//! Sequence: decoders applied one after the other.

use serde::{Deserialize, Serialize};

use super::DecoderWrapper;
use crate::base::Decoder;
use crate::Result;

/// Feeds the per-token output of each decoder to the next.
/// Serializes as `{"type":"Sequence","decoders":[...]}`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Sequence {
    /// The decoders, in order.
    pub decoders: Vec<DecoderWrapper>,
}

impl Sequence {
    /// A sequence of these decoders.
    pub fn new(decoders: Vec<DecoderWrapper>) -> Self {
        Self { decoders }
    }
}

impl Decoder for Sequence {
    fn decode_chain(&self, mut tokens: Vec<String>) -> Result<Vec<String>> {
        for d in &self.decoders {
            tokens = d.decode_chain(tokens)?;
        }
        Ok(tokens)
    }
}
