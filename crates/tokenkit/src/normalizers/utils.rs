//! Composition of normalizers, and lowercasing.

use serde::{Deserialize, Serialize};

use crate::base::{NormalizedString, Normalizer};
use crate::normalizers::{impl_unit_serde, NormalizerWrapper};
use crate::Result;

/// Runs `normalizers` one after the other on the same string.
/// JSON `{"type":"Sequence","normalizers":[...]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub struct Sequence {
    normalizers: Vec<NormalizerWrapper>,
}

impl Sequence {
    /// A sequence of `normalizers`, applied in order.
    pub fn new(normalizers: Vec<NormalizerWrapper>) -> Self {
        Self { normalizers }
    }

    /// The normalizers, in order.
    pub fn get_normalizers(&self) -> &[NormalizerWrapper] {
        &self.normalizers
    }

    /// The normalizers, in order, mutable.
    pub fn get_normalizers_mut(&mut self) -> &mut [NormalizerWrapper] {
        &mut self.normalizers
    }
}

impl Normalizer for Sequence {
    fn normalize(&self, n: &mut NormalizedString) -> Result<()> {
        for normalizer in &self.normalizers {
            normalizer.normalize(n)?;
        }
        Ok(())
    }
}

/// Lowercases with full Unicode case mapping (a char may become several, e.g. `İ` → `i̇`).
/// JSON `{"type":"Lowercase"}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Lowercase;

impl_unit_serde!(Lowercase);

impl Normalizer for Lowercase {
    fn normalize(&self, n: &mut NormalizedString) -> Result<()> {
        n.lowercase();
        Ok(())
    }
}
