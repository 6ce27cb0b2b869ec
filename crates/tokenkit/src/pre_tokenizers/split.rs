//! `Split`: splits on a string or a regex, with a chosen delimiter behavior.

use serde::{Deserialize, Serialize};

use crate::base::normalized::split_pieces;
use crate::base::pattern::{Invert, Pattern};
use crate::base::{NormalizedString, PreTokenizedString, PreTokenizer, SplitDelimiterBehavior};
use crate::utils::pattern::{Matcher, StringOrRegex};
use crate::utils::regex::SysRegex;
use crate::{Error, Result};

/// What [`Split`] looks for: a literal string or an Oniguruma regex (serialized as
/// `{"String": s}` or `{"Regex": r}`).
pub type SplitPattern = StringOrRegex;

/// Splits on every match of `pattern` (on every non-match when `invert`), the matches handled
/// as `behavior` says.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "SplitIn")]
pub struct Split {
    /// What to split on.
    pub pattern: SplitPattern,
    /// What to do with the matches.
    pub behavior: SplitDelimiterBehavior,
    /// Split on what does not match instead.
    pub invert: bool,
    #[serde(skip)]
    matcher: Matcher,
}

impl PartialEq for Split {
    fn eq(&self, other: &Self) -> bool {
        self.pattern == other.pattern && self.behavior == other.behavior && self.invert == other.invert
    }
}

impl Split {
    /// Compiles `pattern`; an error if it is a regex Oniguruma rejects.
    pub fn new<P: Into<SplitPattern>>(pattern: P, behavior: SplitDelimiterBehavior, invert: bool) -> Result<Self> {
        let pattern = pattern.into();
        let matcher = Matcher::new(&pattern)?;
        Ok(Self { pattern, behavior, invert, matcher })
    }

    /// The compiled regex, when the pattern is one.
    pub fn regex(&self) -> Option<&SysRegex> {
        match &self.matcher {
            Matcher::Regex(r) if matches!(self.pattern, SplitPattern::Regex(_)) => Some(r),
            _ => None,
        }
    }

    /// The pieces of `s` as byte ranges appended to `ranges` (some may be empty): the pieces
    /// `pre_tokenize` makes of a split whose text is `s` (Split only cuts the text).
    pub fn split_ranges(&self, s: &str, ranges: &mut Vec<(usize, usize)>) -> Result<()> {
        let pieces = match (&self.matcher, self.invert) {
            (Matcher::Literal(p), false) => split_pieces(s, p.as_str(), self.behavior)?,
            (Matcher::Literal(p), true) => split_pieces(s, Invert(p.as_str()), self.behavior)?,
            (Matcher::Regex(r), false) => split_pieces(s, r, self.behavior)?,
            (Matcher::Regex(r), true) => split_pieces(s, Invert(r), self.behavior)?,
        };
        ranges.extend(pieces);
        Ok(())
    }

    fn split_one<P: Pattern>(&self, normalized: NormalizedString, pattern: P) -> Result<Vec<NormalizedString>> {
        if self.invert {
            normalized.split(Invert(pattern), self.behavior)
        } else {
            normalized.split(pattern, self.behavior)
        }
    }
}

#[derive(Deserialize)]
struct SplitIn {
    pattern: SplitPattern,
    behavior: SplitDelimiterBehavior,
    invert: bool,
}

impl TryFrom<SplitIn> for Split {
    type Error = Error;

    fn try_from(s: SplitIn) -> Result<Self> {
        Split::new(s.pattern, s.behavior, s.invert)
    }
}

impl PreTokenizer for Split {
    fn pre_tokenize(&self, p: &mut PreTokenizedString) -> Result<()> {
        match &self.matcher {
            Matcher::Literal(s) => p.split(|_, n| self.split_one(n, s.as_str())),
            Matcher::Regex(r) => p.split(|_, n| self.split_one(n, r)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pre_tokenizers::test_utils::{expected, pre_tokenize_str};
    use SplitDelimiterBehavior::*;

    #[test]
    fn splits_like_hf() {
        // HF 0.23.3 Split(...).pre_tokenize_str(...)
        let s = |p: SplitPattern, b, i| Split::new(p, b, i).unwrap();
        let re = |r: &str| SplitPattern::Regex(r.to_owned());
        assert_eq!(
            pre_tokenize_str(&s("-".into(), Contiguous, false), "the-final--countdown"),
            expected(&[("the", 0, 3), ("-", 3, 4), ("final", 4, 9), ("--", 9, 11), ("countdown", 11, 20)])
        );
        assert_eq!(pre_tokenize_str(&s("".into(), Isolated, false), "abc"), expected(&[("a", 0, 1), ("b", 1, 2), ("c", 2, 3)]));
        assert_eq!(pre_tokenize_str(&s("".into(), Removed, true), "abc"), expected(&[]));
        assert_eq!(pre_tokenize_str(&s(re("a*"), Removed, false), "baac"), expected(&[("b", 0, 1), ("c", 3, 4)]));
        assert_eq!(pre_tokenize_str(&s(re("a*"), Isolated, false), "baac"), expected(&[("b", 0, 1), ("aa", 1, 3), ("c", 3, 4)]));
        // The string is literal, not a regex.
        assert_eq!(pre_tokenize_str(&s("a.".into(), Removed, false), "a.bab"), expected(&[("bab", 2, 5)]));
    }

    #[test]
    fn bad_regex_is_an_error() {
        assert!(Split::new(SplitPattern::Regex("(".into()), Isolated, false).is_err());
    }
}
