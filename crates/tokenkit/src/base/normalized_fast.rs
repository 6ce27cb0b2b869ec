//! Single-pass rewrites of a [`NormalizedString`] for the hot normalizers and pre-tokenizers.
//!
//! Each method gives exactly the text and alignments the equivalent sequence of
//! `transform` calls gives, but in one pass with at most one new buffer (or none, when every
//! change keeps the byte length of each char).
//!
//! They rely on one invariant of `NormalizedString`: all the bytes of a normalized char share
//! the same alignment (every constructor and `transform` keep it).

use super::normalized::{char_alignments, is_continuation, utf8_len, NormalizedString};

impl NormalizedString {
    /// Maps every ASCII byte of the normalized string through `f` in place; non-ASCII chars
    /// are left alone. A byte that `f` maps outside ASCII is kept unchanged. Alignments do not
    /// move: each char keeps its byte length.
    pub(crate) fn map_ascii_in_place<F: Fn(u8) -> u8>(&mut self, f: F) {
        // SAFETY: only ASCII bytes are replaced, and only by ASCII bytes, so the string stays
        // valid UTF-8 (multi-byte sequences are never touched).
        let bytes = unsafe { self.normalized.as_bytes_mut() };
        for b in bytes.iter_mut() {
            if b.is_ascii() {
                let m = f(*b);
                if m.is_ascii() {
                    *b = m;
                }
            }
        }
    }

    /// Rewrites the normalized string char by char: `f(c, out)` appends what `c` becomes to
    /// `out` (nothing to remove it), and every byte appended gets the alignment of `c`, as a
    /// `transform` with a `0` change for the first new char and `1` for the others would give.
    ///
    /// When `f` returns `false` the rewrite is abandoned and `self` is left untouched;
    /// the method then returns `false`.
    pub(crate) fn try_rewrite_chars<F>(&mut self, mut f: F) -> bool
    where
        F: FnMut(char, &mut String) -> bool,
    {
        let mut text = String::with_capacity(self.normalized.len() + self.normalized.len() / 8 + 8);
        let mut alignments = Vec::with_capacity(text.capacity());
        for (i, c) in self.normalized.char_indices() {
            if !f(c, &mut text) {
                return false;
            }
            let align = if self.chars_aligned { (i, i + c.len_utf8()) } else { self.alignments[i] };
            alignments.resize(text.len(), align);
        }
        self.normalized = text;
        self.alignments = alignments;
        self.chars_aligned = false;
        true
    }

    /// Replaces every byte `b` of the normalized string by the UTF-8 char `table[b]` (its
    /// length and bytes): the chars made of the bytes of one old char all take its alignment,
    /// what [`try_rewrite_chars`](Self::try_rewrite_chars) gives, in one pass over the bytes.
    pub(crate) fn map_bytes(&mut self, table: &[(u8, [u8; 4]); 256]) {
        let bytes = self.normalized.as_bytes();
        let mut text = Vec::with_capacity(bytes.len() * 2);
        let mut alignments = Vec::with_capacity(bytes.len() * 2);
        let mut align = (0, 0);
        for (i, &b) in bytes.iter().enumerate() {
            if !is_continuation(b) {
                align = if self.chars_aligned { (i, i + utf8_len(b)) } else { self.alignments[i] };
            }
            // Byte by byte: a copy of one or two bytes by `extend_from_slice` is a call each.
            let (n, utf8) = &table[b as usize];
            for &u in &utf8[..*n as usize] {
                text.push(u);
                alignments.push(align);
            }
        }
        debug_assert!(std::str::from_utf8(&text).is_ok());
        // SAFETY: the text is the concatenation of whole chars (each entry is a char's UTF-8).
        self.normalized = unsafe { String::from_utf8_unchecked(text) };
        self.alignments = alignments;
        self.chars_aligned = false;
    }

    /// Replaces every non-overlapping occurrence of the non-empty literal `pattern` (leftmost
    /// first) with `content`; the new chars are aligned with the last char of the occurrence,
    /// exactly as [`replace`](Self::replace) does. Does nothing for an empty `pattern`.
    pub(crate) fn replace_literal(&mut self, pattern: &str, content: &str) {
        if pattern.is_empty() {
            return;
        }
        if let &[b] = pattern.as_bytes() {
            self.replace_byte(b, content);
            return;
        }
        if !self.normalized.contains(pattern) {
            return;
        }
        self.store_alignments();
        let matches = self.normalized.match_indices(pattern);
        let grows = content.len() > pattern.len();
        let extra = if grows { (content.len() - pattern.len()) * 16 } else { 0 };
        let mut text = String::with_capacity(self.normalized.len() + extra);
        let mut alignments = Vec::with_capacity(text.capacity());
        let mut last = 0;
        for (start, m) in matches {
            let end = start + m.len();
            text.push_str(&self.normalized[last..start]);
            alignments.extend_from_slice(&self.alignments[last..start]);
            text.push_str(content);
            let align = self.alignments[end - 1];
            alignments.resize(text.len(), align);
            last = end;
        }
        text.push_str(&self.normalized[last..]);
        alignments.extend_from_slice(&self.alignments[last..]);
        self.normalized = text;
        self.alignments = alignments;
    }

    /// [`replace_literal`](Self::replace_literal) of a one-byte (ASCII) pattern: one pass over
    /// the bytes, the same text and alignments.
    fn replace_byte(&mut self, pattern: u8, content: &str) {
        let bytes = self.normalized.as_bytes();
        let n = memchr::memchr_iter(pattern, bytes).count();
        if n == 0 {
            return;
        }
        let len = bytes.len() - n + n * content.len();
        // The old alignments as they are, or read off the chars when not stored.
        let (text, alignments) = if self.chars_aligned {
            replace_byte_aligned(bytes, char_alignments(&self.normalized), pattern, content.as_bytes(), len)
        } else {
            replace_byte_aligned(bytes, self.alignments.iter().copied(), pattern, content.as_bytes(), len)
        };
        // SAFETY: an ASCII byte is a whole char, and replacing whole chars by a string keeps
        // the text UTF-8 (no need to check it again, which cost as much as the pass above).
        debug_assert!(pattern.is_ascii() && std::str::from_utf8(&text).is_ok());
        self.normalized = unsafe { String::from_utf8_unchecked(text) };
        self.alignments = alignments;
        self.chars_aligned = false;
    }

    /// Replaces every occurrence of `from` with `to` (both single chars); each `to` keeps the
    /// alignment of the `from` it replaces. In place when both have the same UTF-8 length.
    pub(crate) fn replace_char(&mut self, from: char, to: char) {
        if from.len_utf8() == to.len_utf8() && from.is_ascii() {
            let (f, t) = (from as u8, to as u8);
            self.map_ascii_in_place(|b| if b == f { t } else { b });
        } else {
            let mut buf = [0u8; 4];
            self.replace_literal(from.encode_utf8(&mut buf), to.encode_utf8(&mut [0u8; 4]));
        }
    }

    /// Prepends `s`, every new char aligned with the first char, as
    /// [`prepend`](Self::prepend) does; nothing happens on an empty string.
    pub(crate) fn prepend_fast(&mut self, s: &str) {
        if self.normalized.is_empty() || s.is_empty() {
            return;
        }
        self.store_alignments();
        let Some(&align) = self.alignments.first() else {
            return;
        };
        let mut text = String::with_capacity(s.len() + self.normalized.len());
        text.push_str(s);
        text.push_str(&self.normalized);
        let mut alignments = Vec::with_capacity(text.len());
        alignments.resize(s.len(), align);
        alignments.extend_from_slice(&self.alignments);
        self.normalized = text;
        self.alignments = alignments;
    }
}

/// The pass of [`NormalizedString::replace_byte`]: `bytes` with every `pattern` byte replaced
/// by `content`, and the alignments, each new byte taking the old byte's (`old`); `len` is
/// the new length.
#[inline]
fn replace_byte_aligned(
    bytes: &[u8],
    old: impl Iterator<Item = (usize, usize)>,
    pattern: u8,
    content: &[u8],
    len: usize,
) -> (Vec<u8>, Vec<(usize, usize)>) {
    // Filled by pushes into the exact capacity: zeroing both buffers first cost more than
    // the pass itself on English text.
    let mut text = Vec::with_capacity(len);
    let mut alignments = Vec::with_capacity(len);
    for (&b, a) in bytes.iter().zip(old) {
        if b == pattern {
            for &c in content {
                text.push(c);
                alignments.push(a);
            }
        } else {
            text.push(b);
            alignments.push(a);
        }
    }
    (text, alignments)
}

#[cfg(test)]
mod tests {
    use crate::base::NormalizedString;

    fn same(a: &NormalizedString, b: &NormalizedString) {
        assert_eq!(a.get(), b.get());
        assert_eq!(a.alignments(), b.alignments());
        assert_eq!(a.offsets_original(), b.offsets_original());
    }

    #[test]
    fn replace_literal_matches_replace() {
        for (s, p, c) in [
            ("a b  c ", " ", "▁"),
            (" ", " ", "▁"),
            ("héé``x``", "``", "\""),
            ("aé日é", "é", ""),
            ("abc", "z", "y"),
            ("aaaa", "aa", "b"),
            ("x''", "''", "\""),
            ("  a b ", " ", "▁"),
            ("a\tb", "\t", ""),
            ("aaa", "a", "bb"),
        ] {
            let mut a = NormalizedString::from(s);
            a.nfd();
            let mut b = a.clone();
            a.replace(p, c).unwrap();
            b.replace_literal(p, c);
            same(&a, &b);
        }
    }

    #[test]
    fn replace_char_and_prepend_match_core() {
        for s in ["", " a  b ", "é ü", "日本 語"] {
            let mut a = NormalizedString::from(s);
            let mut b = a.clone();
            a.replace(' ', "▁").unwrap();
            b.replace_char(' ', '▁');
            same(&a, &b);
            a.prepend("▁");
            b.prepend_fast("▁");
            same(&a, &b);
            let mut a = NormalizedString::from(s);
            let mut b = a.clone();
            a.replace(' ', "_").unwrap();
            b.replace_char(' ', '_');
            same(&a, &b);
        }
    }

    #[test]
    fn map_bytes_matches_rewrite_chars() {
        let table = crate::utils::byte_level::BYTES_CHAR.map(|c| {
            let mut utf8 = [0u8; 4];
            (c.encode_utf8(&mut utf8).len() as u8, utf8)
        });
        for s in ["", "a b", "é日😀 x", "e\u{301}\u{fb01}"] {
            // Alignments read off the chars, and stored ones that moved (after NFKD).
            for decomposed in [false, true] {
                let mut a = NormalizedString::from(s);
                if decomposed {
                    a.nfkd();
                }
                let mut b = a.clone();
                assert!(a.try_rewrite_chars(|c, out| {
                    out.extend(c.encode_utf8(&mut [0u8; 4]).bytes().map(|b| crate::utils::byte_level::BYTES_CHAR[b as usize]));
                    true
                }));
                b.map_bytes(&table);
                same(&a, &b);
            }
        }
    }

    #[test]
    fn alignments_read_off_the_chars_are_the_stored_ones() {
        for s in ["", "ab", "aé日😀b"] {
            let a = NormalizedString::from(s);
            let mut b = a.clone();
            b.store_alignments();
            same(&a, &b);
            for (i, j) in [(0, 1), (1, 3), (0, s.len()), (2, 4)] {
                if j <= s.len() {
                    assert_eq!(a.offsets_in_input((i, j)), b.offsets_in_input((i, j)), "{s:?} {i} {j}");
                    let (sa, sb) = (
                        a.slice(crate::base::normalized::Range::Normalized(i..j)),
                        b.slice(crate::base::normalized::Range::Normalized(i..j)),
                    );
                    assert_eq!(sa.is_some(), sb.is_some());
                    if let (Some(sa), Some(sb)) = (sa, sb) {
                        same(&sa, &sb);
                    }
                }
            }
        }
    }

    #[test]
    fn rewrite_chars_matches_transform() {
        let mut a = NormalizedString::from("aİ\tb日");
        let mut b = a.clone();
        a.lowercase();
        assert!(b.try_rewrite_chars(|c, out| {
            out.extend(c.to_lowercase());
            true
        }));
        same(&a, &b);
        assert!(!b.try_rewrite_chars(|_, _| false));
        same(&a, &b);
    }
}
