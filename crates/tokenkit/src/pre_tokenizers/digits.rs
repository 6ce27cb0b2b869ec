//! `Digits`: splits numbers from the rest.

use serde::{Deserialize, Serialize};

use crate::base::normalized::split_pieces;
use crate::base::{PreTokenizedString, PreTokenizer, SplitDelimiterBehavior};
use crate::Result;

/// Splits on numeric chars (`char::is_numeric`: Nd, Nl, No): each digit alone when
/// `individual_digits`, else each run of digits as one piece.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Digits {
    /// One piece per digit rather than per run of digits.
    pub individual_digits: bool,
}

impl Digits {
    /// Splits digits, one per piece when `individual_digits`.
    pub fn new(individual_digits: bool) -> Self {
        Self { individual_digits }
    }

    /// What a split does with the digits.
    fn behavior(&self) -> SplitDelimiterBehavior {
        if self.individual_digits {
            SplitDelimiterBehavior::Isolated
        } else {
            SplitDelimiterBehavior::Contiguous
        }
    }

    /// The pieces of `s` as byte ranges appended to `ranges` (some may be empty): the
    /// pieces `pre_tokenize` makes of a split whose text is `s`.
    pub fn split_ranges(&self, s: &str, ranges: &mut Vec<(usize, usize)>) -> Result<()> {
        ranges.extend(split_pieces(s, char::is_numeric, self.behavior())?);
        Ok(())
    }
}

impl PreTokenizer for Digits {
    fn pre_tokenize(&self, p: &mut PreTokenizedString) -> Result<()> {
        p.split(|_, n| n.split(char::is_numeric, self.behavior()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pre_tokenizers::test_utils::{expected, pre_tokenize_str};

    #[test]
    fn splits_like_hf() {
        // HF 0.23.3 Digits(False / True).pre_tokenize_str("a12³½Ⅻ٣b")
        let s = "a12³½Ⅻ٣b";
        assert_eq!(pre_tokenize_str(&Digits::new(false), s), expected(&[("a", 0, 1), ("12³½Ⅻ٣", 1, 7), ("b", 7, 8)]));
        assert_eq!(
            pre_tokenize_str(&Digits::new(true), s),
            expected(&[("a", 0, 1), ("1", 1, 2), ("2", 2, 3), ("³", 3, 4), ("½", 4, 5), ("Ⅻ", 5, 6), ("٣", 6, 7), ("b", 7, 8)])
        );
    }
}
