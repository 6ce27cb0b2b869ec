//! `Metaspace`: SentencePiece-style — spaces become `▁` and each word starts with it. The same
//! struct is the Metaspace decoder (its rule is in `crate::decoders::metaspace`), as in HF.

use serde::{Deserialize, Serialize};

use crate::base::{NormalizedString, PreTokenizedString, PreTokenizer, SplitDelimiterBehavior};
use crate::{Error, Result};

/// When [`Metaspace`] puts a replacement char in front of a split that does not start with one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PrependScheme {
    /// Only on the split that starts the original input (byte offset 0).
    First,
    /// Never.
    Never,
    /// On every split.
    Always,
}

/// Replaces every space `' '` with `replacement` (default `▁`), prepends one as
/// `prepend_scheme` says, and when `split` cuts before each `replacement` so that every piece
/// but possibly the first starts with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "MetaspaceIn")]
pub struct Metaspace {
    replacement: char,
    /// When to prepend the replacement char.
    pub prepend_scheme: PrependScheme,
    /// Cut before each replacement char (`MergedWithNext`).
    pub split: bool,
    /// `replacement` as a string, for `NormalizedString::replace`.
    #[serde(skip)]
    str_rep: String,
}

impl Metaspace {
    /// A Metaspace pre-tokenizer with these options.
    pub fn new(replacement: char, prepend_scheme: PrependScheme, split: bool) -> Self {
        Self { replacement, prepend_scheme, split, str_rep: replacement.to_string() }
    }

    /// The char spaces are replaced with.
    pub fn get_replacement(&self) -> char {
        self.replacement
    }

    /// Sets the char spaces are replaced with.
    pub fn set_replacement(&mut self, replacement: char) {
        self.replacement = replacement;
        self.str_rep = replacement.to_string();
    }

    /// What `c` becomes: a space becomes the replacement char.
    #[inline]
    pub(crate) fn replace(&self, c: char) -> char {
        if c == ' ' {
            self.replacement
        } else {
            c
        }
    }

    /// Whether the replacement char is put in front of a split whose first char is `first`
    /// (`None`: the split is empty), before or after its spaces were replaced; `at_start`:
    /// the split starts the original input.
    #[inline]
    pub(crate) fn prepends(&self, first: Option<char>, at_start: bool) -> bool {
        let wanted = match self.prepend_scheme {
            PrependScheme::Always => true,
            PrependScheme::First => at_start,
            PrependScheme::Never => false,
        };
        wanted && first.map(|c| self.replace(c)) != Some(self.replacement)
    }
}

impl Default for Metaspace {
    fn default() -> Self {
        Self::new('▁', PrependScheme::Always, true)
    }
}

/// Every form of Metaspace tokenizer.json files hold: the current one (`replacement`,
/// `prepend_scheme`, `split`) and the legacy ones (`add_prefix_space`, `str_rep`).
#[derive(Deserialize)]
struct MetaspaceIn {
    replacement: Option<char>,
    str_rep: Option<String>,
    add_prefix_space: Option<bool>,
    prepend_scheme: Option<PrependScheme>,
    split: Option<bool>,
}

impl TryFrom<MetaspaceIn> for Metaspace {
    type Error = Error;

    fn try_from(m: MetaspaceIn) -> Result<Self> {
        let replacement = match (m.replacement, m.str_rep.as_deref()) {
            (Some(c), _) => c,
            // Legacy files carried `str_rep` next to `replacement`; accept it alone too.
            (None, Some(s)) if s.chars().count() == 1 => s.chars().next().unwrap_or('▁'),
            _ => return Err(Error::invalid("Metaspace: missing field `replacement` (a single char)")),
        };
        // HF: a missing scheme is `always`; legacy `add_prefix_space: false` means `never` and
        // contradicts any other declared scheme.
        let prepend_scheme = match (m.add_prefix_space, m.prepend_scheme) {
            (Some(false), Some(PrependScheme::Never) | None) => PrependScheme::Never,
            (Some(false), Some(_)) => return Err(Error::invalid("Metaspace: add_prefix_space does not match declared prepend_scheme")),
            (_, scheme) => scheme.unwrap_or(PrependScheme::Always),
        };
        Ok(Self::new(replacement, prepend_scheme, m.split.unwrap_or(true)))
    }
}

/// Whether splitting `n` before each `replacement` would give `n` itself back unchanged: the
/// replacement occurs at most as the first char, and the alignments cover the whole original
/// (so that slicing the full range changes neither the original nor its offsets).
fn is_one_piece(n: &NormalizedString, replacement: char) -> bool {
    let s = n.get();
    let Some(first) = s.chars().next() else {
        return false;
    };
    n.covers_its_original() && !s[first.len_utf8()..].contains(replacement)
}

impl PreTokenizer for Metaspace {
    fn pre_tokenize(&self, p: &mut PreTokenizedString) -> Result<()> {
        p.split(|_, mut normalized| {
            normalized.replace_char(' ', self.replacement);
            if self.prepends(normalized.get().chars().next(), normalized.offsets_original().0 == 0) {
                normalized.prepend_fast(&self.str_rep);
            }
            if self.split && !is_one_piece(&normalized, self.replacement) {
                normalized.split(self.replacement, SplitDelimiterBehavior::MergedWithNext)
            } else {
                Ok(vec![normalized])
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pre_tokenizers::test_utils::{expected, pre_tokenize_str, roundtrip};
    use crate::pre_tokenizers::PreTokenizerWrapper;

    #[test]
    fn splits_like_hf() {
        // HF 0.23.3 Metaspace(...).pre_tokenize_str(...)
        assert_eq!(
            pre_tokenize_str(&Metaspace::default(), "Hey   friend!"),
            expected(&[("▁Hey", 0, 3), ("▁", 3, 4), ("▁", 4, 5), ("▁friend!", 5, 13)])
        );
        assert_eq!(
            pre_tokenize_str(&Metaspace::new('▁', PrependScheme::First, true), " hello  wé日"),
            expected(&[("▁hello", 0, 6), ("▁", 6, 7), ("▁wé日", 7, 11)])
        );
        assert_eq!(
            pre_tokenize_str(&Metaspace::new('▁', PrependScheme::Never, false), "hello  wé日 "),
            expected(&[("hello▁▁wé日▁", 0, 11)])
        );
    }

    #[test]
    fn serde_like_hf() {
        let m = roundtrip(r#"{"type":"Metaspace","replacement":"_","prepend_scheme":"first","split":false}"#);
        assert_eq!(m, PreTokenizerWrapper::Metaspace(Metaspace::new('_', PrependScheme::First, false)));
        // Legacy forms; the right-hand side is what HF 0.23.3 writes back (first three).
        for (input, output) in [
            (
                r#"{"type":"Metaspace","replacement":"_","add_prefix_space":true}"#,
                r#"{"type":"Metaspace","replacement":"_","prepend_scheme":"always","split":true}"#,
            ),
            (
                r#"{"type":"Metaspace","replacement":"_","str_rep":"x","add_prefix_space":true}"#,
                r#"{"type":"Metaspace","replacement":"_","prepend_scheme":"always","split":true}"#,
            ),
            (
                r#"{"type":"Metaspace","replacement":"_","add_prefix_space":false,"prepend_scheme":"never"}"#,
                r#"{"type":"Metaspace","replacement":"_","prepend_scheme":"never","split":true}"#,
            ),
            // HF 0.23.3 refuses these two; older HF wrote them with exactly this meaning.
            (
                r#"{"type":"Metaspace","replacement":"_","add_prefix_space":false}"#,
                r#"{"type":"Metaspace","replacement":"_","prepend_scheme":"never","split":true}"#,
            ),
            (
                r#"{"type":"Metaspace","str_rep":"_","add_prefix_space":true}"#,
                r#"{"type":"Metaspace","replacement":"_","prepend_scheme":"always","split":true}"#,
            ),
        ] {
            let pt: PreTokenizerWrapper = serde_json::from_str(input).unwrap();
            assert_eq!(serde_json::to_string(&pt).unwrap(), output);
        }
    }
}
