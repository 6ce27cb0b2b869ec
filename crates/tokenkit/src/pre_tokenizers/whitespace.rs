//! `Whitespace` (`\w+|[^\w\s]+`) and `WhitespaceSplit` (split on whitespace).

use std::sync::LazyLock;

use super::{impl_unit_serde, slice_ranges};
use crate::base::{PreTokenizedString, PreTokenizer, SplitDelimiterBehavior};
use crate::Result;

/// Keeps the runs of word chars and the runs of other non-space chars, as the regex
/// `\w+|[^\w\s]+` finds them (Unicode `\w` and `\s` of the `regex` crate, as HF uses);
/// whitespace is dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Whitespace;

impl_unit_serde!(Whitespace);

static WORDS: LazyLock<regex::Regex> = LazyLock::new(|| regex::Regex::new(r"\w+|[^\w\s]+").expect("the Whitespace regex is valid"));

impl Whitespace {
    /// The pieces of `s` as byte ranges appended to `ranges`: the matches of the regex are
    /// exactly the pieces (HF splits on the inverted regex, removing).
    pub fn split_ranges(s: &str, ranges: &mut Vec<(usize, usize)>) {
        ranges.extend(WORDS.find_iter(s).map(|m| (m.start(), m.end())));
    }
}

impl PreTokenizer for Whitespace {
    fn pre_tokenize(&self, p: &mut PreTokenizedString) -> Result<()> {
        p.split(|_, normalized| {
            let mut ranges = Vec::new();
            Self::split_ranges(normalized.get(), &mut ranges);
            slice_ranges(&normalized, ranges)
        })
    }
}

/// Splits on whitespace (`char::is_whitespace`), dropping it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WhitespaceSplit;

impl_unit_serde!(WhitespaceSplit);

impl WhitespaceSplit {
    /// The pieces of `s` as byte ranges: the runs of non-whitespace chars.
    pub fn split_ranges(s: &str, ranges: &mut Vec<(usize, usize)>) {
        super::split_words(s, ranges, |_| false);
    }
}

impl PreTokenizer for WhitespaceSplit {
    fn pre_tokenize(&self, p: &mut PreTokenizedString) -> Result<()> {
        p.split(|_, n| n.split(char::is_whitespace, SplitDelimiterBehavior::Removed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pre_tokenizers::test_utils::{expected, pre_tokenize_str};

    #[test]
    fn whitespace_like_hf() {
        // HF 0.23.3 Whitespace().pre_tokenize_str(...)
        assert_eq!(
            pre_tokenize_str(&Whitespace, "Hey man!!, how's it going? é日本 x_1\t--"),
            expected(&[
                ("Hey", 0, 3),
                ("man", 4, 7),
                ("!!,", 7, 10),
                ("how", 11, 14),
                ("'", 14, 15),
                ("s", 15, 16),
                ("it", 17, 19),
                ("going", 20, 25),
                ("?", 25, 26),
                ("é日本", 27, 30),
                ("x_1", 31, 34),
                ("--", 35, 37)
            ])
        );
        assert_eq!(pre_tokenize_str(&Whitespace, "\n\t "), expected(&[]));
    }

    #[test]
    fn whitespace_split_like_hf() {
        // HF 0.23.3 WhitespaceSplit().pre_tokenize_str(...)
        assert_eq!(
            pre_tokenize_str(&WhitespaceSplit, " Hey man!!,\u{3000}how's\n"),
            expected(&[("Hey", 1, 4), ("man!!,", 5, 11), ("how's", 12, 17)])
        );
    }
}
