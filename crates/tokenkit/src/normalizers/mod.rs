//! Normalizers: one file per family; `NormalizerWrapper` is the closed set tokenizer.json uses.

use serde::{Deserialize, Serialize};

use crate::tokenizer::{NormalizedString, Normalizer};
use crate::Result;

/// Lowercases (full Unicode).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Lowercase;

impl Normalizer for Lowercase {
    fn normalize(&self, n: &mut NormalizedString) -> Result<()> {
        n.lowercase();
        Ok(())
    }
}

/// Every normalizer tokenizer.json can name, dispatched statically.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum NormalizerWrapper {
    Lowercase(Lowercase),
}

impl Normalizer for NormalizerWrapper {
    fn normalize(&self, n: &mut NormalizedString) -> Result<()> {
        match self {
            NormalizerWrapper::Lowercase(x) => x.normalize(n),
        }
    }
}
