//! BERT's text cleaning: control-char removal, whitespace unification, spaces around CJK
//! ideographs, accent stripping and lowercasing.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use unicode_categories::UnicodeCategories;
use unicode_normalization_alignments::char::{canonical_combining_class, decompose_canonical};

use crate::base::{NormalizedString, Normalizer};
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

/// Appends `c` after accent stripping (`strip`) and lowercasing (`lower`). `false` when the
/// decomposition holds a combining mark that accent stripping keeps (class ≠ 0 but not Mn):
/// NFD of the whole string could reorder it, which a char-by-char pass cannot reproduce.
fn strip_and_lower(c: char, strip: bool, lower: bool, out: &mut String) -> bool {
    let push = |d: char, out: &mut String| {
        if !lower {
            out.push(d);
        } else if d.is_ascii() {
            out.push(d.to_ascii_lowercase());
        } else {
            out.extend(d.to_lowercase());
        }
    };
    if !strip || c.is_ascii() {
        push(c, out);
        return true;
    }
    let mut ok = true;
    decompose_canonical(c, |d| {
        if d.is_mark_nonspacing() {
            return;
        }
        if canonical_combining_class(d) != 0 {
            ok = false;
        }
        push(d, out);
    });
    ok
}

impl BertNormalizer {
    /// The four steps in one pass. Printable ASCII (plus `\t \n \r`) maps byte for byte, so
    /// such text is rewritten in place; anything else goes through a single char-by-char
    /// rewrite. Returns `false` (leaving `n` untouched) when a canonical reordering of
    /// combining marks could make the one-pass result differ from the step-by-step one.
    fn normalize_fused(&self, n: &mut NormalizedString) -> bool {
        let bytes = n.get().as_bytes();
        if bytes.iter().all(|&b| (b' '..=b'~').contains(&b) || matches!(b, b'\t' | b'\n' | b'\r')) {
            let (clean, lower) = (self.clean_text, self.lowercase);
            if (clean && bytes.iter().any(|&b| b < b' ')) || (lower && bytes.iter().any(u8::is_ascii_uppercase)) {
                n.map_ascii_in_place(|b| match b {
                    b'\t' | b'\n' | b'\r' if clean => b' ',
                    _ if lower => b.to_ascii_lowercase(),
                    _ => b,
                });
            }
            return true;
        }
        let memo = self.char_memo();
        n.try_rewrite_chars(|c, out| self.rewrite_char(c, memo, out))
    }

    /// The memo of [`rewrite_char`](Self::rewrite_char) for these options.
    pub(crate) fn char_memo(&self) -> &'static [u32] {
        self.memo(self.strip_accents.unwrap_or(self.lowercase))
    }

    /// Appends what the one-pass rewrite makes of `c` to `out` (nothing when it is removed);
    /// `memo` is [`char_memo`](Self::char_memo). `false` when a canonical reordering of
    /// combining marks could make the one-pass result differ from the step-by-step one.
    #[inline]
    pub(crate) fn rewrite_char(&self, c: char, memo: &[u32], out: &mut String) -> bool {
        if let Some(m) = memo_index(c).map(|i| memo[i]) {
            match m {
                MEMO_REMOVED => return true,
                MEMO_SLOW => {}
                m => {
                    out.extend(char::from_u32(m));
                    return true;
                }
            }
        }
        if self.handle_chinese_chars && is_plain_ideograph(c) {
            out.extend([' ', c, ' ']);
            return true;
        }
        self.fuse_char(c, self.strip_accents.unwrap_or(self.lowercase), out)
    }

    /// What the one-pass rewrite appends for `c` (`strip`: accent stripping is on); `false`
    /// as [`strip_and_lower`] returns it.
    fn fuse_char(&self, c: char, strip: bool, out: &mut String) -> bool {
        let c = if self.clean_text {
            if is_removed(c) {
                return true;
            }
            if is_bert_whitespace(c) {
                ' '
            } else {
                c
            }
        } else {
            c
        };
        if self.handle_chinese_chars && is_chinese_char(c) {
            out.push(' ');
            let ok = strip_and_lower(c, strip, self.lowercase, out);
            out.push(' ');
            ok
        } else {
            strip_and_lower(c, strip, self.lowercase, out)
        }
    }

    /// [`fuse_char`](Self::fuse_char) of each char [`memo_index`] covers, for these options:
    /// the one char it appends, [`MEMO_REMOVED`] when it appends none, [`MEMO_SLOW`] otherwise.
    /// Built once per combination of the options that matter (none of these chars is a CJK
    /// ideograph).
    fn memo(&self, strip: bool) -> &'static [u32] {
        static MEMOS: [OnceLock<Box<[u32]>>; 8] = [const { OnceLock::new() }; 8];
        let key = usize::from(self.clean_text) | usize::from(strip) << 1 | usize::from(self.lowercase) << 2;
        MEMOS[key].get_or_init(|| {
            let mut out = String::new();
            MEMO_RANGES
                .iter()
                .flat_map(|r| r.clone())
                .map(|c| {
                    out.clear();
                    let Some(c) = char::from_u32(c) else { return MEMO_SLOW };
                    if !self.fuse_char(c, strip, &mut out) {
                        return MEMO_SLOW;
                    }
                    let mut chars = out.chars();
                    match (chars.next(), chars.next()) {
                        (None, _) => MEMO_REMOVED,
                        (Some(d), None) => d as u32,
                        _ => MEMO_SLOW,
                    }
                })
                .collect()
        })
    }
}

/// The chars whose one-pass result is memoized: ASCII and the two-byte UTF-8 range (Latin,
/// Greek, Cyrillic, Arabic, ...), so the index of such a char is the char itself, and CJK
/// punctuation, Hiragana and Katakana.
const MEMO_RANGES: [std::ops::Range<u32>; 2] = [0x0..0x800, 0x3000..0x3100];
/// A memo entry: the char is dropped.
pub(crate) const MEMO_REMOVED: u32 = u32::MAX - 1;
/// A memo entry: the char takes the general path.
pub(crate) const MEMO_SLOW: u32 = u32::MAX;

/// The index of `c` in a memo, if [`MEMO_RANGES`] covers it.
#[inline]
pub(crate) fn memo_index(c: char) -> Option<usize> {
    let c = c as u32;
    let mut base = 0;
    for r in &MEMO_RANGES {
        if r.contains(&c) {
            return Some(base + (c - r.start) as usize);
        }
        base += r.len();
    }
    None
}

/// A CJK ideograph outside the compatibility blocks: none is removed, whitespace, a cased
/// letter or has a canonical decomposition, so the one-pass rewrite only pads it with spaces.
#[inline]
pub(crate) fn is_plain_ideograph(c: char) -> bool {
    is_chinese_char(c) && !matches!(c as u32, 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

impl Normalizer for BertNormalizer {
    fn normalize(&self, n: &mut NormalizedString) -> Result<()> {
        if !self.normalize_fused(n) {
            self.normalize_steps(n);
        }
        Ok(())
    }
}

impl BertNormalizer {
    /// The four steps one after the other, each a full pass (the reference behavior).
    fn normalize_steps(&self, n: &mut NormalizedString) {
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// The memo and the ideograph shortcut give what the general per-char rewrite gives.
    #[test]
    fn memo_and_ideographs_match_fuse_char() {
        let ideographs = [0x4E00..0xA000, 0x3400..0x4DC0, 0x20000..0x2A6E0, 0x2A700..0x2B740, 0x2B740..0x2B820, 0x2B920..0x2CEB0];
        for clean in [false, true] {
            for strip in [false, true] {
                for lower in [false, true] {
                    let bn = BertNormalizer::new(clean, true, Some(strip), lower);
                    let memo = bn.memo(strip);
                    for c in MEMO_RANGES.iter().flat_map(|r| r.clone()).filter_map(char::from_u32) {
                        assert!(!is_chinese_char(c));
                        let mut out = String::new();
                        let ok = bn.fuse_char(c, strip, &mut out);
                        let m = memo[memo_index(c).unwrap()];
                        match m {
                            MEMO_SLOW => assert!(!ok || out.chars().count() > 1, "{c:?}"),
                            MEMO_REMOVED => assert!(ok && out.is_empty(), "{c:?}"),
                            m => assert!(ok && out == char::from_u32(m).unwrap().to_string(), "{c:?}"),
                        }
                    }
                    for c in ideographs.iter().flat_map(|r| r.clone()).filter_map(char::from_u32) {
                        assert!(is_plain_ideograph(c));
                        let mut out = String::new();
                        assert!(bn.fuse_char(c, strip, &mut out));
                        assert_eq!(out, format!(" {c} "));
                    }
                }
            }
        }
    }

    /// The one-pass path gives exactly what the step-by-step path gives (text and alignments),
    /// for every option combination, on tricky and random strings.
    #[test]
    fn fused_matches_steps() {
        let pool: Vec<char> = "aZ \t\n\r\x0b\x0c\x00\x7f\u{85}\u{a0}\u{3000}\u{fffd}\u{200b}\u{ad}éÉİßǅΣ日本語\u{f900}한カ\u{301}\u{316}\u{345}\u{1d165}\u{1d16d}\u{f73}\u{344}ﬁ①!、\u{e000}😀"
            .chars()
            .collect();
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let mut inputs: Vec<String> =
            ["", "Hello World", "\tA\r\nB ", "a\u{301}\u{316}", "x\u{1d165}\u{301}", "日本 語"].iter().map(|s| s.to_string()).collect();
        for _ in 0..3000 {
            let len = rng.gen_range(0..12);
            inputs.push((0..len).map(|_| pool[rng.gen_range(0..pool.len())]).collect());
        }
        for clean in [false, true] {
            for chinese in [false, true] {
                for strip in [None, Some(false), Some(true)] {
                    for lower in [false, true] {
                        let bn = BertNormalizer::new(clean, chinese, strip, lower);
                        for s in &inputs {
                            let mut a = NormalizedString::from(s.as_str());
                            let mut b = a.clone();
                            bn.normalize(&mut a).unwrap();
                            bn.normalize_steps(&mut b);
                            assert_eq!((a.get(), a.alignments()), (b.get(), b.alignments()), "{bn:?} on {s:?}");
                        }
                    }
                }
            }
        }
    }
}
