//! The GPT-2 pattern, also the default of HF's ByteLevel pre-tokenizer:
//! `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

use super::classes::{ascii_class, ascii_run, char_class_at, AsciiSet, Class, Digits, Letters, Other, L, N, WS};

/// Yields the `(start, end)` byte ranges of the pattern's matches in `text`, in order. The
/// pattern matches every char, so the ranges cover the whole text.
pub struct Gpt2Lexer<'a> {
    text: &'a [u8],
    pos: usize,
}

impl<'a> Gpt2Lexer<'a> {
    /// A lexer over `text`.
    pub fn new(text: &'a str) -> Self {
        Self { text: text.as_bytes(), pos: 0 }
    }

    /// The class bits and the length of the char at byte `i` (an ASCII char by table, inline:
    /// decoding every char as a call cost about 35 instructions per one-byte piece).
    #[inline(always)]
    fn class_at(&self, i: usize) -> (Class, usize) {
        let (_, k, len) = char_class_at(self.text, i);
        (k, len)
    }

    /// End of the run of chars from `i` whose class satisfies `pred`.
    #[inline]
    fn run(&self, mut i: usize, pred: impl Fn(Class) -> bool) -> usize {
        while i < self.text.len() {
            let (k, len) = self.class_at(i);
            if !pred(k) {
                break;
            }
            i += len;
        }
        i
    }

    /// [`Self::run`] of the chars of set `S` (`pred` its test on classes), eight ASCII bytes
    /// at a time while the run is ASCII (a long number or word: one char at a time cost
    /// about 45 instructions per byte).
    #[inline]
    fn run_of<S: AsciiSet>(&self, i: usize, pred: impl Fn(Class) -> bool) -> usize {
        ascii_run::<S>(self.text, i).unwrap_or_else(|| self.run(i, pred))
    }

    fn contraction(&self, i: usize) -> Option<usize> {
        let t = self.text;
        let b1 = *t.get(i + 1)?;
        match b1 {
            b's' | b't' | b'm' | b'd' => Some(i + 2),
            b'r' if t.get(i + 2) == Some(&b'e') => Some(i + 3),
            b'v' if t.get(i + 2) == Some(&b'e') => Some(i + 3),
            b'l' if t.get(i + 2) == Some(&b'l') => Some(i + 3),
            _ => None,
        }
    }
}

#[inline]
fn is_other(k: Class) -> bool {
    k & (L | N | WS) == 0
}

impl Iterator for Gpt2Lexer<'_> {
    type Item = (usize, usize);

    fn next(&mut self) -> Option<(usize, usize)> {
        let start = self.pos;
        let t = self.text;
        if start >= t.len() {
            return None;
        }
        let b = t[start];
        let end = 'm: {
            if b == b'\'' {
                if let Some(e) = self.contraction(start) {
                    break 'm e;
                }
            }
            // ` ?X+` where X is a letter, number or other: an optional leading space.
            let (first, skip) = if b == b' ' && start + 1 < t.len() { (start + 1, true) } else { (start, false) };
            let (k, len) = self.class_at(first);
            if skip || k & WS == 0 {
                if k & L != 0 {
                    break 'm self.run_of::<Letters>(first + len, |k| k & L != 0);
                }
                if k & N != 0 {
                    break 'm self.run_of::<Digits>(first + len, |k| k & N != 0);
                }
                if is_other(k) {
                    break 'm self.run_of::<Other>(first + len, is_other);
                }
            }
            // Whitespace: `\s+(?!\S)` leaves the last space to the next piece when a
            // non-space follows; `\s+` takes a lone space before a non-space (a one-char
            // piece, decided on two ASCII bytes when the next is not whitespace).
            if let Some(k1) = t.get(start + 1).and_then(|&b| ascii_class(b)) {
                if b < 0x80 && k1 & WS == 0 {
                    break 'm start + 1;
                }
            }
            let (_, len0) = self.class_at(start);
            let mut last_start = start;
            let mut i = start + len0;
            while i < t.len() {
                let (k, len) = self.class_at(i);
                if k & WS == 0 {
                    break;
                }
                last_start = i;
                i += len;
            }
            if i < t.len() && last_start > start {
                last_start
            } else {
                i
            }
        };
        self.pos = end;
        Some((start, end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::utils::regex::SysRegex;

    pub(crate) const GPT2_PATTERN: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";

    fn check(text: &str, re: &SysRegex) {
        let ours: Vec<_> = Gpt2Lexer::new(text).collect();
        let theirs: Vec<_> = re.find_iter(text).collect();
        assert_eq!(ours, theirs, "on {text:?}");
    }

    #[test]
    fn matches_oniguruma_on_corner_cases() {
        let re = SysRegex::onig_only(GPT2_PATTERN).unwrap();
        for s in [
            "",
            " ",
            "  ",
            "a",
            " a",
            "  a",
            "\n",
            "\n\n",
            " \n",
            "\n a",
            "a \n b",
            "Hello world!",
            "I'm you're we've they'll he'd it's 'S 'x",
            "'''",
            "'sx",
            " 'll",
            "abc123def",
            " 123",
            "   \t\n  x  ",
            "x   ",
            "émigré naïve",
            "日本語のテキスト",
            "😀 😀😀 a😀",
            "a\u{301}b",
            "٣٤ ٥",
            "\u{3000}\u{3000}x",
            "\u{85}y",
            "tab\tsep",
            "end with space ",
            "?!... ,;",
            "a'",
            "'",
        ] {
            check(s, &re);
        }
    }

    #[test]
    fn matches_oniguruma_on_random_strings() {
        let re = SysRegex::onig_only(GPT2_PATTERN).unwrap();
        let alphabet = " \t\n\r'aZséß日本😀1٣_-.,!?\u{301}\u{3000}\u{a0}rvlmdt";
        for s in super::super::random_strings(alphabet, 0x9E3779B97F4A7C15, 20_000) {
            check(&s, &re);
        }
    }
}
