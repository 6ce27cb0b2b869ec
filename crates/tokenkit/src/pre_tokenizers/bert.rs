//! `BertPreTokenizer`: splits on whitespace (dropped) and isolates every punctuation char.

use super::{impl_unit_serde, is_bert_punctuation, slice_ranges, split_words};
use crate::tokenizer::{PreTokenizedString, PreTokenizer};
use crate::Result;

/// BERT's basic tokenization: whitespace separates words and is dropped; each punctuation char
/// (see [`is_bert_punctuation`]) becomes a piece of its own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BertPreTokenizer;

impl_unit_serde!(BertPreTokenizer);

impl BertPreTokenizer {
    /// The pieces of `s` as byte ranges: whitespace separates words and is dropped, each
    /// punctuation char is a piece of its own. One pass gives the same pieces as HF's two
    /// (whitespace `Removed`, then punctuation `Isolated`).
    pub fn split_ranges(s: &str, ranges: &mut Vec<(usize, usize)>) {
        split_words(s, ranges, is_bert_punctuation);
    }
}

impl PreTokenizer for BertPreTokenizer {
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
        // HF 0.23.3 BertPreTokenizer().pre_tokenize_str(...)
        let pt = BertPreTokenizer;
        assert_eq!(
            pre_tokenize_str(&pt, "Hey friend!     How are you?!?"),
            expected(&[
                ("Hey", 0, 3),
                ("friend", 4, 10),
                ("!", 10, 11),
                ("How", 16, 19),
                ("are", 20, 23),
                ("you", 24, 27),
                ("?", 27, 28),
                ("!", 28, 29),
                ("?", 29, 30)
            ])
        );
        assert_eq!(pre_tokenize_str(&pt, ""), expected(&[]));
        assert_eq!(pre_tokenize_str(&pt, " \n\t "), expected(&[]));
        assert_eq!(
            pre_tokenize_str(&pt, "a$b¥c、日本\u{301}語"),
            expected(&[
                ("a", 0, 1),
                ("$", 1, 2),
                ("b¥c", 2, 5),
                ("、", 5, 6),
                ("日本\u{301}語", 6, 10)
            ])
        );
    }
}
