//! `UnicodeScripts`: cuts where the Unicode script changes (SentencePiece's rule, as HF has it).

mod table;

pub use table::Script;
use table::SCRIPT_RANGES;

use super::{impl_unit_serde, slice_ranges};
use crate::base::{PreTokenizedString, PreTokenizer};
use crate::Result;

/// The script class HF's `UnicodeScripts` gives `c` (Hiragana and Katakana already count as Han;
/// the space and unlisted code points are [`Script::Any`]).
pub fn script_of(c: char) -> Script {
    let cp = c as u32;
    if cp < 0x80 {
        return match c {
            ' ' => Script::Any,
            'a'..='z' | 'A'..='Z' => Script::Latin,
            _ => Script::Common,
        };
    }
    match SCRIPT_RANGES.binary_search_by(|&(start, end, _)| {
        if end < cp {
            std::cmp::Ordering::Less
        } else if start > cp {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    }) {
        Ok(i) => SCRIPT_RANGES[i].2,
        Err(_) => Script::Any,
    }
}

/// Starts a new piece at each char whose script differs from the last non-`Any` script seen.
/// `Any` chars (spaces, unlisted code points) stay with the piece before them, and leading
/// `Any` chars of a split are dropped, as HF does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UnicodeScripts;

impl_unit_serde!(UnicodeScripts);

impl UnicodeScripts {
    /// The pieces of `s` as byte ranges appended to `ranges`: a piece starts at each char
    /// whose script (other than `Any`) differs from the last such char's.
    pub fn split_ranges(s: &str, ranges: &mut Vec<(usize, usize)>) {
        let first = ranges.len();
        let mut last = Script::Any;
        for (i, c) in s.char_indices() {
            let script = script_of(c);
            if script != Script::Any {
                if script != last {
                    if ranges.len() > first {
                        ranges.last_mut().expect("a piece before").1 = i;
                    }
                    ranges.push((i, s.len()));
                }
                last = script;
            }
        }
    }
}

impl PreTokenizer for UnicodeScripts {
    fn pre_tokenize(&self, p: &mut PreTokenizedString) -> Result<()> {
        p.split(|_, normalized| {
            let mut ranges = Vec::new();
            Self::split_ranges(normalized.get(), &mut ranges);
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
        // HF 0.23.3 UnicodeScripts().pre_tokenize_str(...)
        let pt = UnicodeScripts;
        assert_eq!(pre_tokenize_str(&pt, " abc"), expected(&[("abc", 1, 4)]));
        assert_eq!(pre_tokenize_str(&pt, "   "), expected(&[]));
        assert_eq!(pre_tokenize_str(&pt, "abc 日本"), expected(&[("abc ", 0, 4), ("日本", 4, 6)]));
        assert_eq!(pre_tokenize_str(&pt, " 日本 abc "), expected(&[("日本 ", 1, 4), ("abc ", 4, 8)]));
        assert_eq!(pre_tokenize_str(&pt, "x🥰y"), expected(&[("x🥰y", 0, 3)]));
        assert_eq!(pre_tokenize_str(&pt, "a1b"), expected(&[("a", 0, 1), ("1", 1, 2), ("b", 2, 3)]));
        assert_eq!(pre_tokenize_str(&pt, "どこで生れ。Yes"), expected(&[("どこで生れ", 0, 5), ("。", 5, 6), ("Yes", 6, 9)]));
    }

    #[test]
    fn script_classes() {
        assert_eq!(script_of('京'), Script::Han);
        assert_eq!(script_of('い'), Script::Han);
        assert_eq!(script_of('グ'), Script::Han);
        assert_eq!(script_of('ー'), Script::Han);
        assert_eq!(script_of('a'), Script::Latin);
        assert_eq!(script_of('é'), Script::Latin);
        assert_eq!(script_of('0'), Script::Common);
        assert_eq!(script_of(' '), Script::Any);
    }
}
