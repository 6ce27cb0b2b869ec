//! Whitespace stripping and combining-mark removal.

use serde::{Deserialize, Serialize};
use unicode_normalization_alignments::char::is_combining_mark;

use crate::base::{NormalizedString, Normalizer};
use crate::normalizers::impl_unit_serde;
use crate::Result;

/// Removes leading (`strip_left`) and/or trailing (`strip_right`) whitespace (Unicode
/// `White_Space`). JSON `{"type":"Strip","strip_left":true,"strip_right":true}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub struct Strip {
    /// Remove leading whitespace.
    pub strip_left: bool,
    /// Remove trailing whitespace.
    pub strip_right: bool,
}

impl Strip {
    /// A strip normalizer for the given sides.
    pub fn new(strip_left: bool, strip_right: bool) -> Self {
        Self { strip_left, strip_right }
    }
}

impl Normalizer for Strip {
    fn normalize(&self, n: &mut NormalizedString) -> Result<()> {
        match (self.strip_left, self.strip_right) {
            (true, true) => n.strip(),
            (true, false) => n.lstrip(),
            (false, true) => n.rstrip(),
            (false, false) => n,
        };
        Ok(())
    }
}

/// Removes every combining mark (Unicode general category M: Mn, Mc, Me); usually after NFD or
/// NFKD so that accents are separate chars. JSON `{"type":"StripAccents"}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StripAccents;

impl_unit_serde!(StripAccents);

impl StripAccents {
    /// Whether the normalizer removes `c`: a combining mark.
    #[inline]
    pub(crate) fn removes(c: char) -> bool {
        is_combining_mark(c)
    }
}

impl Normalizer for StripAccents {
    fn normalize(&self, n: &mut NormalizedString) -> Result<()> {
        let s = n.get();
        if !s.is_ascii() && s.chars().any(Self::removes) {
            n.filter(|c| !Self::removes(c));
        }
        Ok(())
    }
}
