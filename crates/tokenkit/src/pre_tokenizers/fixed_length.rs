//! `FixedLength`: cuts into pieces of a fixed number of chars.

use serde::{Deserialize, Serialize};

use super::slice_ranges;
use crate::base::{PreTokenizedString, PreTokenizer};
use crate::{Error, Result};

fn default_length() -> usize {
    5
}

/// Cuts each split into pieces of `length` chars (the last one may be shorter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FixedLength {
    /// Chars per piece; must be at least 1 (HF panics on 0, tokenkit returns an error).
    #[serde(default = "default_length")]
    pub length: usize,
}

impl FixedLength {
    /// Pieces of `length` chars.
    pub fn new(length: usize) -> Self {
        Self { length }
    }
}

impl Default for FixedLength {
    fn default() -> Self {
        Self::new(default_length())
    }
}

impl FixedLength {
    /// The pieces of `s` as byte ranges appended to `ranges`: `length` chars each, the last
    /// one shorter. `length` must be at least 1 (else nothing is appended).
    pub fn split_ranges(&self, s: &str, ranges: &mut Vec<(usize, usize)>) {
        if self.length == 0 {
            return;
        }
        let mut start = 0;
        for (n, (i, _)) in s.char_indices().enumerate() {
            if n > 0 && n % self.length == 0 {
                ranges.push((start, i));
                start = i;
            }
        }
        if start < s.len() {
            ranges.push((start, s.len()));
        }
    }
}

impl PreTokenizer for FixedLength {
    fn pre_tokenize(&self, p: &mut PreTokenizedString) -> Result<()> {
        if self.length == 0 {
            return Err(Error::invalid("FixedLength pre-tokenizer: `length` must be at least 1"));
        }
        p.split(|_, normalized| {
            let mut ranges = Vec::with_capacity(normalized.len() / self.length + 1);
            self.split_ranges(normalized.get(), &mut ranges);
            slice_ranges(&normalized, ranges)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pre_tokenizers::test_utils::{expected, pre_tokenize_str};

    #[test]
    fn splits_like_hf() {
        // HF 0.23.3 FixedLength(2).pre_tokenize_str("aéc日本語")
        assert_eq!(pre_tokenize_str(&FixedLength::new(2), "aéc日本語"), expected(&[("aé", 0, 2), ("c日", 2, 4), ("本語", 4, 6)]));
        assert_eq!(pre_tokenize_str(&FixedLength::new(2), ""), expected(&[]));
        let mut p = PreTokenizedString::from("abc");
        assert!(FixedLength::new(0).pre_tokenize(&mut p).is_err());
    }
}
