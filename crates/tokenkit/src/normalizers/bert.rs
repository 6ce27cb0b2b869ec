//! BERT's text cleaning: control-char removal, whitespace unification, spaces around CJK
//! ideographs, accent stripping and lowercasing.

use serde::{Deserialize, Serialize};
use unicode_categories::UnicodeCategories;

use crate::tokenizer::{NormalizedString, Normalizer};
use crate::Result;

/// The normalizer of the original BERT (`BasicTokenizer`), step by step in this order:
/// `clean_text` removes NUL, U+FFFD and control/format/private-use chars and turns every
/// whitespace into `' '`; `handle_chinese_chars` puts a space on both sides of each CJK
/// ideograph; accent stripping (NFD then removal of nonspacing marks) runs when
/// `strip_accents` is true, or when it is `None` and `lowercase` is true; `lowercase` lowercases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub struct BertNormalizer {
    /// Remove control chars and replace all whitespace by `' '`.
    pub clean_text: bool,
    /// Surround CJK ideographs with spaces.
    pub handle_chinese_chars: bool,
    /// Strip accents; `None` (JSON `null`) means "the same as `lowercase`".
    pub strip_accents: Option<bool>,
    /// Lowercase the text.
    pub lowercase: bool,
}

impl Default for BertNormalizer {
    fn default() -> Self {
        Self { clean_text: true, handle_chinese_chars: true, strip_accents: None, lowercase: true }
    }
}

impl BertNormalizer {
    /// A BERT normalizer with the given options (see the fields).
    pub fn new(clean_text: bool, handle_chinese_chars: bool, strip_accents: Option<bool>, lowercase: bool) -> Self {
        Self { clean_text, handle_chinese_chars, strip_accents, lowercase }
    }
}

/// Whitespace for BERT: `\t`, `\n`, `\r` and every char Rust calls whitespace.
fn is_bert_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || c.is_whitespace()
}

/// Control for BERT: categories Cc, Cf, Co, except `\t`, `\n`, `\r` (whitespace for BERT).
fn is_bert_control(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r') && c.is_other()
}

/// Whether `clean_text` drops `c`.
fn is_removed(c: char) -> bool {
    c == '\0' || c == '\u{fffd}' || is_bert_control(c)
}

/// Whether `c` is in one of the CJK ideograph blocks BERT pads with spaces (Hangul, Hiragana
/// and Katakana are not).
pub(crate) fn is_chinese_char(c: char) -> bool {
    matches!(
        c as u32,
        0x4E00..=0x9FFF
            | 0x3400..=0x4DBF
            | 0x20000..=0x2A6DF
            | 0x2A700..=0x2B73F
            | 0x2B740..=0x2B81F
            | 0x2B920..=0x2CEAF
            | 0xF900..=0xFAFF
            | 0x2F800..=0x2FA1F
    )
}

fn clean_text(n: &mut NormalizedString) {
    let s = n.get();
    // Printable ASCII and ' ' are never touched: skip the passes when nothing else occurs.
    let (mut removes, mut maps) = (false, false);
    for c in s.chars() {
        if (' '..='~').contains(&c) {
            continue;
        }
        removes |= is_removed(c);
        maps |= is_bert_whitespace(c);
    }
    if removes {
        n.filter(|c| !is_removed(c));
    }
    if maps {
        n.map(|c| if is_bert_whitespace(c) { ' ' } else { c });
    }
}

fn pad_chinese_chars(n: &mut NormalizedString) {
    if n.get().is_ascii() || !n.get().chars().any(is_chinese_char) {
        return;
    }
    let mut new_chars = Vec::with_capacity(n.len() + 16);
    for c in n.get().chars() {
        if is_chinese_char(c) {
            // The first space takes the ideograph's place; the ideograph and the second
            // space are insertions, so all three keep the ideograph's alignment.
            new_chars.extend([(' ', 0), (c, 1), (' ', 1)]);
        } else {
            new_chars.push((c, 0));
        }
    }
    n.transform(new_chars, 0);
}

/// NFD, then removal of the nonspacing marks (category Mn).
pub(crate) fn strip_accents_nfd(n: &mut NormalizedString) {
    if n.get().is_ascii() {
        return;
    }
    n.nfd();
    if n.get().chars().any(|c| c.is_mark_nonspacing()) {
        n.filter(|c| !c.is_mark_nonspacing());
    }
}

impl Normalizer for BertNormalizer {
    fn normalize(&self, n: &mut NormalizedString) -> Result<()> {
        if self.clean_text {
            clean_text(n);
        }
        if self.handle_chinese_chars {
            pad_chinese_chars(n);
        }
        if self.strip_accents.unwrap_or(self.lowercase) {
            strip_accents_nfd(n);
        }
        if self.lowercase {
            n.lowercase();
        }
        Ok(())
    }
}
