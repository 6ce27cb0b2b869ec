//! The `{"String": s}` / `{"Regex": r}` pattern that Split, the Replace normalizer and the
//! Replace decoder share, and its compiled form.

use serde::{Deserialize, Serialize};

use crate::utils::regex::SysRegex;
use crate::Result;

/// A literal string or an Oniguruma regex, serialized as `{"String": s}` or `{"Regex": r}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum StringOrRegex {
    /// A literal string.
    String(String),
    /// A regex, Oniguruma (Ruby) syntax as HF reads it.
    Regex(String),
}

impl From<String> for StringOrRegex {
    fn from(s: String) -> Self {
        StringOrRegex::String(s)
    }
}

impl From<&str> for StringOrRegex {
    fn from(s: &str) -> Self {
        StringOrRegex::String(s.to_owned())
    }
}

/// The compiled form of a [`StringOrRegex`].
#[derive(Debug, Clone)]
pub enum Matcher {
    /// A non-empty literal: plain substring search finds the same leftmost matches as the
    /// escaped regex HF compiles, without a regex engine.
    Literal(String),
    /// A regex, or the empty literal, whose empty matches between every two chars only a
    /// regex reproduces.
    Regex(SysRegex),
}

impl Matcher {
    /// Compiles `pattern`; an error if it is a regex Oniguruma rejects.
    pub fn new(pattern: &StringOrRegex) -> Result<Self> {
        Ok(match pattern {
            StringOrRegex::String(s) if !s.is_empty() => Matcher::Literal(s.clone()),
            StringOrRegex::String(_) => Matcher::Regex(SysRegex::new("")?),
            StringOrRegex::Regex(r) => Matcher::Regex(SysRegex::new(r)?),
        })
    }
}
