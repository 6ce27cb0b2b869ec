//! `CharDelimiterSplit`: splits on one char, dropping it.

use serde::{Deserialize, Serialize};

use crate::base::normalized::split_pieces;
use crate::base::{PreTokenizedString, PreTokenizer, SplitDelimiterBehavior};
use crate::Result;

/// Splits on every occurrence of `delimiter`, which is removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CharDelimiterSplit {
    /// The char to split on.
    pub delimiter: char,
}

impl CharDelimiterSplit {
    /// Splits on `delimiter`.
    pub fn new(delimiter: char) -> Self {
        Self { delimiter }
    }

    /// The pieces of `s` as byte ranges appended to `ranges` (some may be empty): the
    /// pieces `pre_tokenize` makes of a split whose text is `s`.
    pub fn split_ranges(&self, s: &str, ranges: &mut Vec<(usize, usize)>) -> Result<()> {
        ranges.extend(split_pieces(s, self.delimiter, SplitDelimiterBehavior::Removed)?);
        Ok(())
    }
}

impl PreTokenizer for CharDelimiterSplit {
    fn pre_tokenize(&self, p: &mut PreTokenizedString) -> Result<()> {
        p.split(|_, n| n.split(self.delimiter, SplitDelimiterBehavior::Removed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pre_tokenizers::test_utils::{expected, pre_tokenize_str};

    #[test]
    fn splits_like_hf() {
        // HF 0.23.3 CharDelimiterSplit('x').pre_tokenize_str("axxbéxc")
        assert_eq!(pre_tokenize_str(&CharDelimiterSplit::new('x'), "axxbéxc"), expected(&[("a", 0, 1), ("bé", 3, 5), ("c", 6, 7)]));
    }
}
