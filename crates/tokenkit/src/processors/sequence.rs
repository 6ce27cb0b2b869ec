//! Sequence: several post-processors applied one after the other.

use serde::{Deserialize, Serialize};

use super::PostProcessorWrapper;
use crate::tokenizer::{Encoding, PostProcessor};
use crate::Result;

/// Runs each processor's `process_encodings` on the output of the previous one.
/// Serializes as `{"type":"Sequence","processors":[...]}`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Sequence {
    /// The processors, in order.
    pub processors: Vec<PostProcessorWrapper>,
}

impl Sequence {
    /// A sequence of these processors.
    pub fn new(processors: Vec<PostProcessorWrapper>) -> Self {
        Self { processors }
    }
}

impl PostProcessor for Sequence {
    fn added_tokens(&self, is_pair: bool) -> usize {
        self.processors.iter().map(|p| p.added_tokens(is_pair)).sum()
    }

    fn process_encodings(&self, mut encodings: Vec<Encoding>, add_special_tokens: bool) -> Result<Vec<Encoding>> {
        for p in &self.processors {
            encodings = p.process_encodings(encodings, add_special_tokens)?;
        }
        Ok(encodings)
    }
}
