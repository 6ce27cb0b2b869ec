//! Sequence: several post-processors applied one after the other.

use serde::{Deserialize, Serialize};

use super::PostProcessorWrapper;
use crate::base::{process_by_parts, Encoding, PostProcessor};
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

    /// When every processor but the last is a ByteLevel (Llama-3's `[ByteLevel, Template]`),
    /// which only edits each sequence in place, the last one's own `process` finishes the
    /// job; otherwise, the general route.
    fn process(&self, encoding: Encoding, pair: Option<Encoding>, add_special_tokens: bool) -> Result<Encoding> {
        let Some((last, init)) = self.processors.split_last() else {
            return process_by_parts(self, encoding, pair, add_special_tokens);
        };
        if !init.iter().all(|p| matches!(p, PostProcessorWrapper::ByteLevel(_))) {
            return process_by_parts(self, encoding, pair, add_special_tokens);
        }
        let mut encodings = Vec::with_capacity(2);
        encodings.push(encoding);
        encodings.extend(pair);
        for p in init {
            encodings = p.process_encodings(encodings, add_special_tokens)?;
        }
        let mut encodings = encodings.into_iter();
        let encoding = encodings.next().unwrap_or_default();
        last.process(encoding, encodings.next(), add_special_tokens)
    }

    fn process_encodings(&self, mut encodings: Vec<Encoding>, add_special_tokens: bool) -> Result<Vec<Encoding>> {
        for p in &self.processors {
            encodings = p.process_encodings(encodings, add_special_tokens)?;
        }
        Ok(encodings)
    }
}
