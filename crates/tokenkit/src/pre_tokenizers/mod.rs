//! Pre-tokenizers: one file per family; `PreTokenizerWrapper` is the closed set tokenizer.json uses.
//!
//! Every pre-tokenizer cuts each not-yet-tokenized split of a [`PreTokenizedString`] into pieces
//! and reports them with byte offsets into the original input, exactly as HF tokenizers 0.23 does.

pub mod bert;
pub mod byte_level;
pub mod delimiter;
pub mod digits;
pub mod fixed_length;
pub mod metaspace;
pub mod punctuation;
pub mod sequence;
pub mod split;
pub mod unicode_scripts;
pub mod whitespace;

#[cfg(test)]
mod oracle_tests;

// The hand-written lexers are the regex engine's (`crate::utils::regex`); their old path stays valid.
pub use crate::utils::lexers;

use serde::{Deserialize, Serialize};

pub use bert::BertPreTokenizer;
pub use byte_level::ByteLevel;
pub use delimiter::CharDelimiterSplit;
pub use digits::Digits;
pub use fixed_length::FixedLength;
pub use metaspace::{Metaspace, PrependScheme};
pub use punctuation::Punctuation;
pub use sequence::Sequence;
pub use split::{Split, SplitPattern};
pub use unicode_scripts::UnicodeScripts;
pub use whitespace::{Whitespace, WhitespaceSplit};

use crate::base::{NormalizedString, PreTokenizedString, PreTokenizer, Range};
use crate::{Error, Result};

/// Every pre-tokenizer tokenizer.json can name, dispatched statically. The serde tag `type`
/// carries the name HF writes (`"BertPreTokenizer"`, `"ByteLevel"`, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum PreTokenizerWrapper {
    /// See [`BertPreTokenizer`].
    BertPreTokenizer(BertPreTokenizer),
    /// See [`ByteLevel`].
    ByteLevel(ByteLevel),
    /// See [`CharDelimiterSplit`].
    CharDelimiterSplit(CharDelimiterSplit),
    /// See [`Metaspace`].
    Metaspace(Metaspace),
    /// See [`Whitespace`].
    Whitespace(Whitespace),
    /// See [`Sequence`].
    Sequence(Sequence),
    /// See [`Split`].
    Split(Split),
    /// See [`Punctuation`].
    Punctuation(Punctuation),
    /// See [`WhitespaceSplit`].
    WhitespaceSplit(WhitespaceSplit),
    /// See [`Digits`].
    Digits(Digits),
    /// See [`UnicodeScripts`].
    UnicodeScripts(UnicodeScripts),
    /// See [`FixedLength`].
    FixedLength(FixedLength),
}

impl PreTokenizerWrapper {
    /// For the pre-tokenizers that only cut the text (never change it), the pieces of `s` as
    /// byte ranges appended to `ranges` (empty ones are not pieces), the same pieces
    /// `pre_tokenize` makes; `Ok(false)` (and nothing appended) for the others.
    pub fn split_ranges(&self, s: &str, ranges: &mut Vec<(usize, usize)>) -> Result<bool> {
        match self {
            PreTokenizerWrapper::BertPreTokenizer(_) => BertPreTokenizer::split_ranges(s, ranges),
            PreTokenizerWrapper::WhitespaceSplit(_) => WhitespaceSplit::split_ranges(s, ranges),
            PreTokenizerWrapper::Split(x) => x.split_ranges(s, ranges)?,
            PreTokenizerWrapper::CharDelimiterSplit(x) => x.split_ranges(s, ranges)?,
            PreTokenizerWrapper::Punctuation(x) => x.split_ranges(s, ranges)?,
            PreTokenizerWrapper::Digits(x) => x.split_ranges(s, ranges)?,
            PreTokenizerWrapper::Whitespace(_) => Whitespace::split_ranges(s, ranges),
            PreTokenizerWrapper::UnicodeScripts(_) => UnicodeScripts::split_ranges(s, ranges),
            PreTokenizerWrapper::FixedLength(x) if x.length > 0 => x.split_ranges(s, ranges),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Whether [`split_ranges`](Self::split_ranges) supports this pre-tokenizer: one that
    /// only cuts the text (not a `FixedLength` of length 0, which is an error).
    pub fn has_split_ranges(&self) -> bool {
        match self {
            PreTokenizerWrapper::FixedLength(x) => x.length > 0,
            p => matches!(
                p,
                PreTokenizerWrapper::BertPreTokenizer(_)
                    | PreTokenizerWrapper::WhitespaceSplit(_)
                    | PreTokenizerWrapper::Split(_)
                    | PreTokenizerWrapper::CharDelimiterSplit(_)
                    | PreTokenizerWrapper::Punctuation(_)
                    | PreTokenizerWrapper::Digits(_)
                    | PreTokenizerWrapper::Whitespace(_)
                    | PreTokenizerWrapper::UnicodeScripts(_)
            ),
        }
    }
}

impl PreTokenizer for PreTokenizerWrapper {
    fn pre_tokenize(&self, p: &mut PreTokenizedString) -> Result<()> {
        match self {
            PreTokenizerWrapper::BertPreTokenizer(x) => x.pre_tokenize(p),
            PreTokenizerWrapper::ByteLevel(x) => x.pre_tokenize(p),
            PreTokenizerWrapper::CharDelimiterSplit(x) => x.pre_tokenize(p),
            PreTokenizerWrapper::Metaspace(x) => x.pre_tokenize(p),
            PreTokenizerWrapper::Whitespace(x) => x.pre_tokenize(p),
            PreTokenizerWrapper::Sequence(x) => x.pre_tokenize(p),
            PreTokenizerWrapper::Split(x) => x.pre_tokenize(p),
            PreTokenizerWrapper::Punctuation(x) => x.pre_tokenize(p),
            PreTokenizerWrapper::WhitespaceSplit(x) => x.pre_tokenize(p),
            PreTokenizerWrapper::Digits(x) => x.pre_tokenize(p),
            PreTokenizerWrapper::UnicodeScripts(x) => x.pre_tokenize(p),
            PreTokenizerWrapper::FixedLength(x) => x.pre_tokenize(p),
        }
    }
}

macro_rules! impl_from {
    ($($ty:ident),* $(,)?) => {
        $(
            impl From<$ty> for PreTokenizerWrapper {
                fn from(x: $ty) -> Self {
                    PreTokenizerWrapper::$ty(x)
                }
            }
        )*
    };
}

impl_from!(
    BertPreTokenizer,
    ByteLevel,
    CharDelimiterSplit,
    Metaspace,
    Whitespace,
    Sequence,
    Split,
    Punctuation,
    WhitespaceSplit,
    Digits,
    UnicodeScripts,
    FixedLength,
);

/// Serde for pre-tokenizers without options: no fields (the wrapper writes `{"type": "Name"}`),
/// and any extra fields are accepted on load, as HF does.
macro_rules! impl_unit_serde {
    ($ty:ident) => {
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                serde::ser::SerializeStruct::end(s.serialize_struct(stringify!($ty), 0)?)
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                serde::de::IgnoredAny::deserialize(d)?;
                Ok($ty)
            }
        }
    };
}
pub(crate) use impl_unit_serde;

/// HF's BERT punctuation: ASCII punctuation (which includes symbols like `$`, `+`, `^`) or any
/// char of a Unicode punctuation category (Pc, Pd, Ps, Pe, Pi, Pf, Po).
#[inline]
pub fn is_bert_punctuation(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_punctuation()
    } else {
        unicode_categories::UnicodeCategories::is_punctuation(c)
    }
}

/// Cuts `normalized` into the given normalized byte ranges, in order; ranges must lie on char
/// boundaries (an error otherwise, never a panic).
/// Appends to `ranges` the words of `s` (byte ranges): whitespace separates words and is
/// dropped, and every char for which `isolate` is true is a word of its own.
pub(crate) fn split_words(s: &str, ranges: &mut Vec<(usize, usize)>, isolate: impl Fn(char) -> bool) {
    let mut word_start = None;
    for (i, c) in s.char_indices() {
        if c.is_whitespace() {
            if let Some(start) = word_start.take() {
                ranges.push((start, i));
            }
        } else if isolate(c) {
            if let Some(start) = word_start.take() {
                ranges.push((start, i));
            }
            ranges.push((i, i + c.len_utf8()));
        } else if word_start.is_none() {
            word_start = Some(i);
        }
    }
    if let Some(start) = word_start {
        ranges.push((start, s.len()));
    }
}

pub(crate) fn slice_ranges<I>(normalized: &NormalizedString, ranges: I) -> Result<Vec<NormalizedString>>
where
    I: IntoIterator<Item = (usize, usize)>,
{
    ranges
        .into_iter()
        .map(|(start, end)| {
            normalized.slice(Range::Normalized(start..end)).ok_or_else(|| {
                Error::invalid(format!("pre-tokenizer produced the byte range {start}..{end}, which is not on char boundaries"))
            })
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod test_utils {
    use crate::base::{OffsetReferential, OffsetType, PreTokenizedString, PreTokenizer};

    /// Runs `pt` on `s` and returns the pieces with their char offsets in the original string,
    /// the shape of HF's `pre_tokenize_str`.
    pub fn pre_tokenize_str<P: PreTokenizer>(pt: &P, s: &str) -> Vec<(String, (usize, usize))> {
        let mut p = PreTokenizedString::from(s);
        pt.pre_tokenize(&mut p).expect("pre-tokenization failed");
        p.get_splits(OffsetReferential::Original, OffsetType::Char).into_iter().map(|(s, o, _)| (s.to_owned(), o)).collect()
    }

    /// Builds the expected value from `(piece, start, end)` triples.
    pub fn expected(v: &[(&str, usize, usize)]) -> Vec<(String, (usize, usize))> {
        v.iter().map(|&(s, a, b)| (s.to_owned(), (a, b))).collect()
    }

    /// Deserializes `json` as a wrapper, serializes it back and checks the text is identical.
    pub fn roundtrip(json: &str) -> super::PreTokenizerWrapper {
        let pt: super::PreTokenizerWrapper = serde_json::from_str(json).expect("deserialize");
        assert_eq!(serde_json::to_string(&pt).expect("serialize"), json);
        pt
    }
}

#[cfg(test)]
mod tests {
    use super::test_utils::roundtrip;
    use super::*;

    #[test]
    fn hf_json_roundtrips() {
        // The JSON HF 0.23.3 writes (`__getstate__`) for each pre-tokenizer.
        for json in [
            r#"{"type":"BertPreTokenizer"}"#,
            r#"{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true}"#,
            r#"{"type":"Whitespace"}"#,
            r#"{"type":"WhitespaceSplit"}"#,
            r#"{"type":"Split","pattern":{"String":"a"},"behavior":"Isolated","invert":false}"#,
            r#"{"type":"Split","pattern":{"Regex":"a+"},"behavior":"MergedWithNext","invert":true}"#,
            r#"{"type":"Punctuation","behavior":"Isolated"}"#,
            r#"{"type":"Digits","individual_digits":false}"#,
            r#"{"type":"Metaspace","replacement":"▁","prepend_scheme":"always","split":true}"#,
            r#"{"type":"UnicodeScripts"}"#,
            r#"{"type":"CharDelimiterSplit","delimiter":"x"}"#,
            r#"{"type":"FixedLength","length":5}"#,
            r#"{"type":"Sequence","pretokenizers":[{"type":"Digits","individual_digits":false},{"type":"Whitespace"}]}"#,
        ] {
            roundtrip(json);
        }
    }

    #[test]
    fn hf_defaults_and_extra_fields() {
        // HF 0.23.3: loading these then `to_str()` gives the right-hand side.
        for (input, output) in [
            (r#"{"type":"Punctuation"}"#, r#"{"type":"Punctuation","behavior":"Isolated"}"#),
            (r#"{"type":"FixedLength"}"#, r#"{"type":"FixedLength","length":5}"#),
            (
                r#"{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true}"#,
                r#"{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true}"#,
            ),
            (r#"{"type":"Digits","individual_digits":true,"x":3}"#, r#"{"type":"Digits","individual_digits":true}"#),
            (r#"{"type":"UnicodeScripts","x":1}"#, r#"{"type":"UnicodeScripts"}"#),
            (r#"{"type":"Whitespace","add_prefix_space":true}"#, r#"{"type":"Whitespace"}"#),
            (
                r#"{"type":"Sequence","pretokenizers":[{"type":"Whitespace","foo":1}]}"#,
                r#"{"type":"Sequence","pretokenizers":[{"type":"Whitespace"}]}"#,
            ),
        ] {
            let pt: PreTokenizerWrapper = serde_json::from_str(input).unwrap();
            assert_eq!(serde_json::to_string(&pt).unwrap(), output, "{input}");
        }
    }

    #[test]
    fn hf_rejections() {
        // HF 0.23.3 refuses each of these.
        for input in [
            r#"{"type":"ByteLevel"}"#,
            r#"{"type":"ByteLevel","add_prefix_space":false}"#,
            r#"{"type":"Split","pattern":{"String":"a"},"behavior":"Isolated"}"#,
            r#"{"type":"Split","pattern":{"String":"a"}}"#,
            r#"{"type":"Split","pattern":{"Regex":"("},"behavior":"Isolated","invert":false}"#,
            r#"{"type":"Split","pattern":"a","behavior":"Isolated","invert":false}"#,
            r#"{"type":"Split","pattern":{"String":"a"},"behavior":"isolated","invert":false}"#,
            r#"{"type":"Split","pattern":{"String":"a","Regex":"b"},"behavior":"Isolated","invert":false}"#,
            r#"{"type":"Digits"}"#,
            r#"{"type":"CharDelimiterSplit"}"#,
            r#"{"type":"Metaspace"}"#,
            r#"{"type":"Metaspace","replacement":"ab"}"#,
            r#"{"type":"Metaspace","replacement":"_","add_prefix_space":false,"prepend_scheme":"first"}"#,
            r#"{"type":"Sequence"}"#,
            r#"{"type":"Nope"}"#,
            r#"{"add_prefix_space":false,"trim_offsets":true}"#,
            r#"{}"#,
        ] {
            assert!(serde_json::from_str::<PreTokenizerWrapper>(input).is_err(), "{input}");
        }
    }

    #[test]
    fn bert_punctuation() {
        assert!(is_bert_punctuation('$'));
        assert!(is_bert_punctuation('^'));
        assert!(is_bert_punctuation('、'));
        assert!(is_bert_punctuation('«'));
        assert!(!is_bert_punctuation('a'));
        assert!(!is_bert_punctuation('¥'));
        assert!(!is_bert_punctuation(' '));
    }
}
