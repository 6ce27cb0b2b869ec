//! The general regex engine: Oniguruma, the engine HF tokenizers uses for every pattern in a
//! tokenizer.json, so that any pattern is read exactly as HF reads it.

use onig::Regex;

use crate::{Error, Result};

/// A compiled regex with Oniguruma (Ruby syntax) semantics.
pub struct SysRegex {
    regex: Regex,
    pattern: String,
}

impl std::fmt::Debug for SysRegex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("SysRegex").field(&self.pattern).finish()
    }
}

impl Clone for SysRegex {
    fn clone(&self) -> Self {
        SysRegex::new(&self.pattern).expect("a pattern that compiled once compiles again")
    }
}

impl SysRegex {
    /// Compiles `pattern`; a clear error if Oniguruma rejects it.
    pub fn new(pattern: &str) -> Result<Self> {
        let regex = Regex::new(pattern)
            .map_err(|e| Error::Regex { pattern: pattern.to_owned(), message: e.to_string() })?;
        Ok(Self { regex, pattern: pattern.to_owned() })
    }

    /// The source pattern.
    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// Byte ranges of the successive non-overlapping matches.
    pub fn find_iter<'r, 't>(&'r self, inside: &'t str) -> impl Iterator<Item = (usize, usize)> + 'r
    where
        't: 'r,
    {
        self.regex.find_iter(inside)
    }
}
