//! `Punctuation`: splits on punctuation chars.

use serde::{Deserialize, Serialize};

use super::is_bert_punctuation;
use crate::base::normalized::split_pieces;
use crate::base::{PreTokenizedString, PreTokenizer, SplitDelimiterBehavior};
use crate::Result;

fn default_behavior() -> SplitDelimiterBehavior {
    SplitDelimiterBehavior::Isolated
}

/// Splits on every punctuation char ([`is_bert_punctuation`]); `behavior` says what becomes of
/// it (default `Isolated`: a piece of its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Punctuation {
    /// What to do with each punctuation char.
    #[serde(default = "default_behavior")]
    pub behavior: SplitDelimiterBehavior,
}

impl Punctuation {
    /// Splits on punctuation with `behavior`.
    pub fn new(behavior: SplitDelimiterBehavior) -> Self {
        Self { behavior }
    }

    /// The pieces of `s` as byte ranges appended to `ranges` (some may be empty): the
    /// pieces `pre_tokenize` makes of a split whose text is `s`.
    pub fn split_ranges(&self, s: &str, ranges: &mut Vec<(usize, usize)>) -> Result<()> {
        ranges.extend(split_pieces(s, is_bert_punctuation, self.behavior)?);
        Ok(())
    }
}

impl Default for Punctuation {
    fn default() -> Self {
        Self::new(default_behavior())
    }
}

impl PreTokenizer for Punctuation {
    fn pre_tokenize(&self, p: &mut PreTokenizedString) -> Result<()> {
        p.split(|_, n| n.split(is_bert_punctuation, self.behavior))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pre_tokenizers::test_utils::{expected, pre_tokenize_str};

    #[test]
    fn splits_like_hf() {
        // HF 0.23.3 Punctuation(behavior).pre_tokenize_str("Hey friend!!? a-b")
        let s = "Hey friend!!? a-b";
        assert_eq!(
            pre_tokenize_str(&Punctuation::default(), s),
            expected(&[("Hey friend", 0, 10), ("!", 10, 11), ("!", 11, 12), ("?", 12, 13), (" a", 13, 15), ("-", 15, 16), ("b", 16, 17)])
        );
        assert_eq!(
            pre_tokenize_str(&Punctuation::new(SplitDelimiterBehavior::Contiguous), s),
            expected(&[("Hey friend", 0, 10), ("!!?", 10, 13), (" a", 13, 15), ("-", 15, 16), ("b", 16, 17)])
        );
    }
}
