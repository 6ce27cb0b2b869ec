//! A token added on top of a model's vocabulary (tokenizer.json's `added_tokens`), as the
//! trainers and the tokenizer's added vocabulary use it.

use serde::{Deserialize, Serialize};

/// A token added on top of the model's vocabulary.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AddedToken {
    /// The text of the token.
    pub content: String,
    /// Only match when not inside a word (`\w` on neither side).
    #[serde(default)]
    pub single_word: bool,
    /// Swallow the whitespace on its left.
    #[serde(default)]
    pub lstrip: bool,
    /// Swallow the whitespace on its right.
    #[serde(default)]
    pub rstrip: bool,
    /// Match against the normalized text (otherwise the raw input).
    #[serde(default = "default_true")]
    pub normalized: bool,
    /// Special: skipped by `decode(skip_special_tokens=true)`.
    #[serde(default)]
    pub special: bool,
}

fn default_true() -> bool {
    true
}

impl AddedToken {
    /// A token with HF's defaults: special tokens are not normalized, others are.
    pub fn from(content: impl Into<String>, special: bool) -> Self {
        Self { content: content.into(), single_word: false, lstrip: false, rstrip: false, normalized: !special, special }
    }
    /// Sets `single_word`.
    pub fn single_word(mut self, v: bool) -> Self {
        self.single_word = v;
        self
    }
    /// Sets `lstrip`.
    pub fn lstrip(mut self, v: bool) -> Self {
        self.lstrip = v;
        self
    }
    /// Sets `rstrip`.
    pub fn rstrip(mut self, v: bool) -> Self {
        self.rstrip = v;
        self
    }
    /// Sets `normalized`.
    pub fn normalized(mut self, v: bool) -> Self {
        self.normalized = v;
        self
    }
    /// Sets `special`.
    pub fn special(mut self, v: bool) -> Self {
        self.special = v;
        self
    }
}
