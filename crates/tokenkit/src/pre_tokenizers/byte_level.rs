//! `ByteLevel`: GPT-2's pre-tokenization — split with GPT-2's regex, then write every byte of
//! each piece as the printable char GPT-2's table gives it.

use std::collections::HashSet;
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use crate::base::{PreTokenizedString, PreTokenizer, SplitDelimiterBehavior};
use crate::pre_tokenizers::{PreTokenizerWrapper, Split};
use crate::utils::byte_level::BYTES_CHAR;
use crate::utils::lexers::{deepseek_pieces, Isolated, DEEPSEEK_CJK_PATTERN, DEEPSEEK_DIGITS_PATTERN, DEEPSEEK_MAIN_PATTERN};
use crate::utils::regex::SysRegex;
pub use crate::utils::regex::GPT2_PATTERN;
use crate::Result;

pub(crate) static GPT2_REGEX: LazyLock<SysRegex> =
    LazyLock::new(|| SysRegex::new(GPT2_PATTERN).expect("GPT-2's pattern compiles with Oniguruma"));

/// How a byte-level pre-tokenizer that only cuts and then maps bytes to chars cuts the text
/// (see [`cutter`]): its pieces are the raw bytes of the pieces the pre-tokenizer gives.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Cutter<'a> {
    /// One `Isolated` regex split: the matches and the gaps between them.
    Regex(&'a SysRegex),
    /// DeepSeek's `Sequence` of three `Isolated` splits (digits, CJK, main regex).
    DeepSeek,
}

impl Cutter<'_> {
    /// Calls `piece(start, end)` for each piece of `text`, as byte ranges in order; an
    /// error when the regex gives up on the text ([`SysRegex::try_for_each_match`]).
    #[inline]
    pub(crate) fn for_each_piece(self, text: &str, piece: impl FnMut(usize, usize)) -> Result<()> {
        match self {
            Cutter::Regex(re) => {
                let mut isolated = Isolated::new(piece);
                re.try_for_each_match(text, |s, e| isolated.matched(s, e))?;
                isolated.finish(text.len());
                Ok(())
            }
            Cutter::DeepSeek => {
                deepseek_pieces(text, piece);
                Ok(())
            }
        }
    }
}

/// The regex of an `Isolated`, non-inverted regex split.
fn isolated_regex(p: &PreTokenizerWrapper) -> Option<&SysRegex> {
    match p {
        PreTokenizerWrapper::Split(s @ Split { behavior: SplitDelimiterBehavior::Isolated, invert: false, .. }) => s.regex(),
        _ => None,
    }
}

impl ByteLevel {
    /// Only maps bytes to chars (no regex, no prefix space).
    #[inline]
    fn maps_only(&self) -> bool {
        !self.add_prefix_space && !self.use_regex
    }
}

/// How `pre_tokenizer` cuts, when it is a regex split (or DeepSeek's three) followed by the
/// byte-to-char mapping and nothing else: GPT-2's `ByteLevel` with its regex and no prefix
/// space, or a `Sequence` of `Isolated` splits and a `ByteLevel` that only maps bytes. The
/// one recognition of this shape, for the byte-level encode plan, tiktoken and the trainers.
#[inline]
pub(crate) fn cutter(pre_tokenizer: &PreTokenizerWrapper) -> Option<Cutter<'_>> {
    match pre_tokenizer {
        PreTokenizerWrapper::ByteLevel(b) if !b.add_prefix_space && b.use_regex => Some(Cutter::Regex(&GPT2_REGEX)),
        PreTokenizerWrapper::Sequence(seq) => match seq.pretokenizers.as_slice() {
            [split, PreTokenizerWrapper::ByteLevel(b)] if b.maps_only() => isolated_regex(split).map(Cutter::Regex),
            [a, b, c, PreTokenizerWrapper::ByteLevel(bl)] if bl.maps_only() => {
                let patterns = [isolated_regex(a)?, isolated_regex(b)?, isolated_regex(c)?].map(SysRegex::as_str);
                (patterns == [DEEPSEEK_DIGITS_PATTERN, DEEPSEEK_CJK_PATTERN, DEEPSEEK_MAIN_PATTERN]).then_some(Cutter::DeepSeek)
            }
            _ => None,
        },
        _ => None,
    }
}

fn default_true() -> bool {
    true
}

/// GPT-2's byte-level component: one struct for the pre-tokenizer, the post-processor
/// ([`crate::processors::byte_level`]) and the decoder ([`crate::decoders::byte_level`]), as in
/// HF, serialized as `{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true}`
/// (the first two fields required, `use_regex` defaults to true, as HF reads it).
///
/// As a pre-tokenizer (GPT-2, RoBERTa, Llama 3 with `use_regex: false`, ...): each split first gets a leading space when `add_prefix_space` and it does not already start
/// with one, is then cut with [`GPT2_PATTERN`] when `use_regex`, and finally every UTF-8 byte of
/// every piece is replaced by its char in `BYTES_CHAR` (so `' '` becomes `Ġ`). Offsets still
/// point at the original chars: all the bytes of one char map back to that whole char.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ByteLevel {
    /// Prepend a space to each split that does not start with one, so the first word is seen
    /// like any other.
    pub add_prefix_space: bool,
    /// Used by the ByteLevel post-processor: trim the offsets of tokens to exclude whitespace.
    pub trim_offsets: bool,
    /// Cut with GPT-2's regex; when false every split stays whole.
    #[serde(default = "default_true")]
    pub use_regex: bool,
}

impl Default for ByteLevel {
    fn default() -> Self {
        Self { add_prefix_space: true, trim_offsets: true, use_regex: true }
    }
}

impl ByteLevel {
    /// A ByteLevel component with these options.
    pub fn new(add_prefix_space: bool, trim_offsets: bool, use_regex: bool) -> Self {
        Self { add_prefix_space, trim_offsets, use_regex }
    }

    /// The 256 chars that stand for the 256 byte values: the initial alphabet of a byte-level
    /// BPE vocabulary.
    pub fn alphabet() -> HashSet<char> {
        BYTES_CHAR.iter().copied().collect()
    }

    /// Sets `add_prefix_space`.
    #[must_use]
    pub fn add_prefix_space(mut self, v: bool) -> Self {
        self.add_prefix_space = v;
        self
    }

    /// Sets `trim_offsets`.
    #[must_use]
    pub fn trim_offsets(mut self, v: bool) -> Self {
        self.trim_offsets = v;
        self
    }

    /// Sets `use_regex`.
    #[must_use]
    pub fn use_regex(mut self, v: bool) -> Self {
        self.use_regex = v;
        self
    }
}

/// Whether a byte is its own char in GPT-2's table (`!` to `~`), so a piece made only of such
/// bytes is left unchanged by the byte mapping.
#[inline]
fn maps_to_itself(b: u8) -> bool {
    (b'!'..=b'~').contains(&b)
}

impl PreTokenizer for ByteLevel {
    fn pre_tokenize(&self, p: &mut PreTokenizedString) -> Result<()> {
        p.split(|_, mut normalized| {
            if self.add_prefix_space && !normalized.get().starts_with(' ') {
                normalized.prepend(" ");
            }
            if self.use_regex {
                normalized.split(&*GPT2_REGEX, SplitDelimiterBehavior::Isolated)
            } else {
                Ok(vec![normalized])
            }
        })?;
        p.normalize(|normalized| {
            let s = normalized.get();
            if s.bytes().all(maps_to_itself) {
                return Ok(());
            }
            // Each byte becomes one char: the first byte of a char takes its place (change 0),
            // the others are inserted after it (change 1), all aligned to the original char.
            let mut transformations = Vec::with_capacity(s.len());
            for c in s.chars() {
                let mut buf = [0u8; 4];
                for (i, b) in c.encode_utf8(&mut buf).bytes().enumerate() {
                    transformations.push((BYTES_CHAR[b as usize], isize::from(i > 0)));
                }
            }
            normalized.transform(transformations, 0);
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pre_tokenizers::test_utils::{expected, pre_tokenize_str};

    #[test]
    fn splits_like_hf() {
        // HF 0.23.3 ByteLevel(add_prefix_space=False).pre_tokenize_str(...)
        assert_eq!(
            pre_tokenize_str(&ByteLevel::default().add_prefix_space(false), "Hello there\nHello  there       dear\u{e9}日 🥰?!"),
            expected(&[
                ("Hello", 0, 5),
                ("Ġthere", 5, 11),
                ("Ċ", 11, 12),
                ("Hello", 12, 17),
                ("Ġ", 17, 18),
                ("Ġthere", 18, 24),
                ("ĠĠĠĠĠĠ", 24, 30),
                ("ĠdearÃ©æĹ¥", 30, 37),
                ("ĠðŁ¥°?!", 37, 41)
            ])
        );
    }

    #[test]
    fn prefix_space_like_hf() {
        // HF 0.23.3 ByteLevel(add_prefix_space=True[, use_regex=False]).pre_tokenize_str(...)
        let pt = ByteLevel::default();
        assert_eq!(pre_tokenize_str(&pt, "i⭢j it's"), expected(&[("Ġi", 0, 1), ("âŃ¢", 1, 2), ("j", 2, 3), ("Ġit", 3, 6), ("'s", 6, 8)]));
        assert_eq!(pre_tokenize_str(&pt, " x"), expected(&[("Ġx", 0, 2)]));
        assert_eq!(pre_tokenize_str(&pt, ""), expected(&[]));
        assert_eq!(pre_tokenize_str(&pt.use_regex(false), "hello  wé日"), expected(&[("ĠhelloĠĠwÃ©æĹ¥", 0, 10)]));
    }

    #[test]
    fn alphabet_has_256_chars() {
        let a = ByteLevel::alphabet();
        assert_eq!(a.len(), 256);
        assert!(a.contains(&'Ġ') && a.contains(&'a') && !a.contains(&' '));
    }
}
