//! `BertPreTokenizer`: splits on whitespace (dropped) and isolates every punctuation char.

use super::{impl_unit_serde, is_bert_punctuation, slice_ranges, split_words};
use crate::base::{PreTokenizedString, PreTokenizer};
use crate::utils::char_memo::CharMemo;
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

/// What [`BertPreTokenizer`] does with a char.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum CharClass {
    /// Part of a word.
    Word = 0,
    /// Whitespace: ends the word and is dropped.
    Space = 1,
    /// Punctuation: a word of its own.
    Punct = 2,
}

impl CharClass {
    const fn of(whitespace: bool, punctuation: bool) -> Self {
        if whitespace {
            CharClass::Space
        } else if punctuation {
            CharClass::Punct
        } else {
            CharClass::Word
        }
    }
}

/// The class of each ASCII char (`char::is_whitespace` is true for `\t \n \x0b \x0c \r` and
/// space).
const ASCII_CLASSES: [CharClass; 128] = {
    let mut t = [CharClass::Word; 128];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        t[b] = CharClass::of(matches!(c, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' '), c.is_ascii_punctuation());
        b += 1;
    }
    t
};

/// The class of `c`: whitespace and punctuation as [`BertPreTokenizer::split_ranges`] sees them.
#[inline]
pub(crate) fn char_class(c: char) -> CharClass {
    static MEMO: CharMemo = CharMemo::new();
    if c.is_ascii() {
        return ASCII_CLASSES[c as usize];
    }
    match MEMO.get_or_compute(c, |c| CharClass::of(c.is_whitespace(), is_bert_punctuation(c)) as u8) {
        0 => CharClass::Word,
        1 => CharClass::Space,
        _ => CharClass::Punct,
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
    fn char_classes() {
        for c in (0..0x11_0000).filter_map(char::from_u32) {
            let want = CharClass::of(c.is_whitespace(), is_bert_punctuation(c));
            assert_eq!(char_class(c), want, "{c:?}");
        }
    }

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
            expected(&[("a", 0, 1), ("$", 1, 2), ("b¥c", 2, 5), ("、", 5, 6), ("日本\u{301}語", 6, 10)])
        );
    }
}
