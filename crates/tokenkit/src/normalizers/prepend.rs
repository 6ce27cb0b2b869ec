//! Prepending a fixed string.

use serde::{Deserialize, Serialize};

use crate::base::{NormalizedString, Normalizer};
use crate::Result;

/// Prepends `prepend` to any non-empty string (the new chars are aligned with the first
/// original char). JSON `{"type":"Prepend","prepend":"▁"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub struct Prepend {
    /// The text put in front.
    pub prepend: String,
}

impl Prepend {
    /// A normalizer prepending `prepend`.
    pub fn new(prepend: impl Into<String>) -> Self {
        Self { prepend: prepend.into() }
    }
}

impl Normalizer for Prepend {
    fn normalize(&self, n: &mut NormalizedString) -> Result<()> {
        if !n.is_empty() {
            n.prepend_fast(&self.prepend);
        }
        Ok(())
    }
}
