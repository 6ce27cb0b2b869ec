//! Replacing a literal string or a regex match: one struct for the normalizer and the decoder
//! (its decoding rule is in [`crate::decoders::replace`]), as in HF.

use serde::{Deserialize, Serialize};

use crate::base::{NormalizedString, Normalizer};
use crate::utils::pattern::{Matcher, StringOrRegex};
use crate::{Error, Result};

/// What [`Replace`] looks for. JSON `{"String":"..."}` or `{"Regex":"..."}`.
pub type ReplacePattern = StringOrRegex;

/// Replaces every non-overlapping match of `pattern` (leftmost first) with `content`: in the
/// text as a normalizer (the new chars are aligned with the match they replace), in each
/// token as a decoder. JSON `{"type":"Replace","pattern":{"String":"``"},"content":"\""}`; the
/// struct itself serializes its two fields, the normalizer and decoder wrappers write the type.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "ReplaceFields")]
pub struct Replace {
    pattern: ReplacePattern,
    content: String,
    #[serde(skip)]
    matcher: Matcher,
}

/// The serialized fields of [`Replace`], validated by `TryFrom`.
#[derive(Deserialize)]
struct ReplaceFields {
    pattern: ReplacePattern,
    content: String,
}

impl TryFrom<ReplaceFields> for Replace {
    type Error = Error;

    fn try_from(f: ReplaceFields) -> Result<Self> {
        Replace::new(f.pattern, f.content)
    }
}

impl PartialEq for Replace {
    fn eq(&self, other: &Self) -> bool {
        self.pattern == other.pattern && self.content == other.content
    }
}

impl Replace {
    /// A normalizer or decoder replacing `pattern` by `content`; an error if the regex does
    /// not compile.
    pub fn new(pattern: impl Into<ReplacePattern>, content: impl Into<String>) -> Result<Self> {
        let pattern = pattern.into();
        let matcher = Matcher::new(&pattern)?;
        Ok(Self { pattern, content: content.into(), matcher })
    }

    /// The pattern searched for.
    pub fn pattern(&self) -> &ReplacePattern {
        &self.pattern
    }

    /// The replacement text.
    pub fn content(&self) -> &str {
        &self.content
    }

    /// What finds the pattern.
    pub(crate) fn matcher(&self) -> &Matcher {
        &self.matcher
    }
}

impl Normalizer for Replace {
    fn normalize(&self, n: &mut NormalizedString) -> Result<()> {
        match &self.matcher {
            // One pass, no per-match shifting of the whole string.
            Matcher::Literal(s) => {
                n.replace_literal(s, &self.content);
                Ok(())
            }
            Matcher::Regex(re) => n.replace(re, &self.content),
        }
    }
}
