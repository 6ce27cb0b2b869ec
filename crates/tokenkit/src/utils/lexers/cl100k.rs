//! The cl100k / Llama-3 / Qwen2 pattern:
//! `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
//!
//! The digit group is `\p{N}{1,3}` in Llama-3's tokenizer.json and `\p{N}{1,3}+` in
//! tiktoken's cl100k; the possessive reading (tiktoken) gives the same matches as `{1,3}`,
//! while Oniguruma reads `{1,3}+` as `(?:\p{N}{1,3})+`, i.e. any number of digits.
//! Qwen2 (also Qwen2.5 and Qwen3) writes a single `\p{N}`, one digit per match.
//! [`DigitRun`] selects which reading to reproduce.

use super::block::AsciiBlock;
use super::classes::{
    ascii_class, ascii_run, ascii_run_at_most, char_class_at, is_other, run_while, whitespace_match, Class, Digits, Letters, Other, L, N,
    WS,
};

/// How many digits one match takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DigitRun {
    /// Exactly one (`\p{N}`, Qwen2).
    One,
    /// At most three (`\p{N}{1,3}`, or tiktoken's possessive `{1,3}+`).
    UpToThree,
    /// Any number (Oniguruma's reading of `\p{N}{1,3}+`).
    Unbounded,
}

/// Yields the `(start, end)` byte ranges of the pattern's matches, covering the whole text.
pub struct Cl100kLexer<'a> {
    text: &'a [u8],
    pos: usize,
    digits: DigitRun,
    ws_run_to_end: bool,
    /// The classified block around `pos` (see [`Self::block_match`]).
    block: AsciiBlock,
}

#[inline]
fn is_crlf(c: char) -> bool {
    c == '\r' || c == '\n'
}

/// Whether `c` matches `[sS]` under Oniguruma's Unicode case folding (which includes 'ſ').
#[inline]
fn fold_eq(c: u8, lower: u8) -> bool {
    c | 0x20 == lower
}

impl<'a> Cl100kLexer<'a> {
    /// A lexer over `text` with the given reading of the digit group.
    pub fn new(text: &'a str, digits: DigitRun) -> Self {
        Self { text: text.as_bytes(), pos: 0, digits, ws_run_to_end: false, block: AsciiBlock::default() }
    }

    /// tiktoken's cl100k reading: its pattern has `\s++$` before `\s*[\r\n]`, so a
    /// whitespace run that reaches the end of the text is one piece, newlines and all.
    pub fn whitespace_run_to_end(mut self) -> Self {
        self.ws_run_to_end = true;
        self
    }

    #[inline]
    fn at(&self, i: usize) -> (char, Class, usize) {
        char_class_at(self.text, i)
    }

    #[inline]
    fn run(&self, i: usize, pred: impl Fn(char, Class) -> bool) -> usize {
        run_while(self.text, i, pred)
    }

    fn contraction(&self, i: usize) -> Option<usize> {
        let t = self.text;
        // 'ſ' (U+017F, bytes C5 BF) folds to 's'.
        if t.get(i + 1) == Some(&0xC5) && t.get(i + 2) == Some(&0xBF) {
            return Some(i + 3);
        }
        let b1 = *t.get(i + 1)?;
        if [b's', b't', b'm', b'd'].iter().any(|&l| fold_eq(b1, l)) {
            return Some(i + 2);
        }
        let b2 = *t.get(i + 2)?;
        let pair = |a: u8, b: u8| fold_eq(b1, a) && fold_eq(b2, b);
        if pair(b'r', b'e') || pair(b'v', b'e') || pair(b'l', b'l') {
            return Some(i + 3);
        }
        None
    }
}

impl Iterator for Cl100kLexer<'_> {
    type Item = (usize, usize);

    /// Always inlined into the caller's loop (an `Isolated` split or the tiktoken path): as
    /// a call per piece it cost about 3 instructions per piece more, and random text has one
    /// piece every 2 bytes (cl100k, 1 MB random printable: 120.5M -> 119.0M).
    #[inline(always)]
    fn next(&mut self) -> Option<(usize, usize)> {
        let start = self.pos;
        if start >= self.text.len() {
            return None;
        }
        let end = match self.block_match(start) {
            Some(end) => end,
            None => self.per_piece_end(start),
        };
        self.pos = end;
        Some((start, end))
    }
}

impl Cl100kLexer<'_> {
    /// The end of the match at `start` read from the classified block of text around it
    /// (loaded afresh when `start` is past its first 48 bytes and ASCII), or `None` when the
    /// block cannot tell: a non-ASCII char at or next to `start` or ending a run, a run past
    /// the block. The same branches as [`Self::ascii_match`], each decided by mask tests.
    #[inline(always)]
    fn block_match(&mut self, start: usize) -> Option<usize> {
        let t = self.text;
        let i = self.block.offset::<false>(t, start)?;
        let b = &self.block;
        let has = AsciiBlock::has;
        // `[^\r\n\p{L}\p{N}]?\p{L}+` (the char at `i` a letter or the prefix).
        if has(b.word_start, i) {
            return b.run_end(b.letters | 1 << i, i, true);
        }
        if has(b.digits, i) {
            return match self.digits {
                DigitRun::One => Some(start + 1),
                DigitRun::UpToThree => b.run_end_at_most(b.digits, i, 3),
                DigitRun::Unbounded => b.run_end(b.digits, i, true),
            };
        }
        // A non-ASCII char here or next: its class decides.
        if has(b.non_ascii, i) || has(b.non_ascii, i + 1) {
            return None;
        }
        if t[start] == b'\'' {
            if let Some(e) = self.contraction(start) {
                return Some(e);
            }
            // An apostrophe that starts no contraction is a prefix too.
            if has(b.letters, i + 1) {
                return b.run_end(b.letters, i + 1, true);
            }
        }
        // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
        let first = if t[start] == b' ' { i + 1 } else { i };
        if has(b.other, first) {
            let e = b.run_end(b.other, first, true)?;
            return b.run_end(b.crlf, e - b.base, false);
        }
        // Whitespace that no letter or other char follows.
        let (e, run_end) = b.whitespace(i, t.len())?;
        Some(if self.ws_run_to_end && run_end == t.len() { run_end } else { e })
    }

    /// The end of the match at `start` when ASCII alone decides it (the common case), else
    /// `None`: letters (after an optional prefix), digits, punctuation (after an optional
    /// space), whitespace. A run that a non-ASCII char ends could go on, and contractions have
    /// more cases, so those are left to [`Self::general_match`].
    #[inline]
    fn ascii_match(&self, start: usize) -> Option<usize> {
        let t = self.text;
        let b0 = t[start];
        let k0 = ascii_class(b0)?;
        if b0 == b'\'' {
            return None;
        }
        let letters = |i: usize| ascii_run::<Letters>(t, i);
        if k0 & L != 0 {
            return letters(start);
        }
        if k0 & N != 0 {
            return match self.digits {
                DigitRun::One => Some(start + 1),
                DigitRun::UpToThree => ascii_run_at_most::<Digits>(t, start, 3),
                DigitRun::Unbounded => ascii_run::<Digits>(t, start),
            };
        }
        // `[^\r\n\p{L}\p{N}]?\p{L}+` with the prefix.
        let k1 = t.get(start + 1).map_or(Some(0), |&b| ascii_class(b))?;
        if k1 & L != 0 && b0 != b'\r' && b0 != b'\n' {
            return letters(start + 1);
        }
        // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
        let first = if b0 == b' ' { start + 1 } else { start };
        if first < t.len() && is_other(ascii_class(t[first])?) {
            let e = ascii_run::<Other>(t, first)?;
            return Some(t[e..].iter().position(|&b| b != b'\r' && b != b'\n').map_or(t.len(), |n| e + n));
        }
        // Whitespace that no letter or other char follows (or CR, LF, which take no prefix):
        // only the whitespace branches are left.
        (k0 & WS != 0).then(|| self.whitespace(start))
    }

    /// `\s*[\r\n]+|\s+(?!\S)|\s+` at `start`; with tiktoken's `\s++$` first, a whitespace run
    /// that reaches the end of the text is one piece.
    #[inline]
    fn whitespace(&self, start: usize) -> usize {
        let (e, run_end) = whitespace_match(self.text, start);
        if self.ws_run_to_end && run_end == self.text.len() {
            run_end
        } else {
            e
        }
    }

    /// The end of the match at `start` by the per-piece paths alone (no block).
    #[inline(always)]
    pub(crate) fn per_piece_end(&self, start: usize) -> usize {
        match self.ascii_match(start) {
            Some(end) => end,
            None => self.general_match(start),
        }
    }

    /// The end of the match at `start`, following the pattern's branches in order.
    fn general_match(&self, start: usize) -> usize {
        let t = self.text;
        let (c0, k0, len0) = self.at(start);
        'm: {
            if c0 == '\'' {
                if let Some(e) = self.contraction(start) {
                    break 'm e;
                }
            }
            // [^\r\n\p{L}\p{N}]?\p{L}+
            if k0 & L != 0 {
                break 'm self.run(start + len0, |_, k| k & L != 0);
            }
            if k0 & N == 0 && !is_crlf(c0) && start + len0 < t.len() {
                let (_, k1, len1) = self.at(start + len0);
                if k1 & L != 0 {
                    break 'm self.run(start + len0 + len1, |_, k| k & L != 0);
                }
            }
            // \p{N}{1,3}
            if k0 & N != 0 {
                let mut i = start + len0;
                let mut n = 1;
                let max = match self.digits {
                    DigitRun::One => 1,
                    DigitRun::UpToThree => 3,
                    DigitRun::Unbounded => usize::MAX,
                };
                while i < t.len() && n < max {
                    let (_, k, len) = self.at(i);
                    if k & N == 0 {
                        break;
                    }
                    i += len;
                    n += 1;
                }
                break 'm i;
            }
            // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
            let first = if c0 == ' ' { start + len0 } else { start };
            if first < t.len() {
                let (_, k, len) = self.at(first);
                if is_other(k) {
                    let e = self.run(first + len, |_, k| is_other(k));
                    break 'm self.run(e, |c, _| is_crlf(c));
                }
            }
            // Whitespace from here on.
            self.whitespace(start)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::utils::regex::SysRegex;

    pub(crate) const LLAMA3_PATTERN: &str =
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
    pub(crate) const CL100K_PATTERN: &str =
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

    fn check(text: &str, re: &SysRegex, digits: DigitRun) {
        let ours: Vec<_> = Cl100kLexer::new(text, digits).collect();
        let theirs: Vec<_> = re.find_iter(text).collect();
        assert_eq!(ours, theirs, "on {text:?}");
    }

    const CASES: &[&str] = &[
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
        "I'M you'RE we've THEY'LL he'd it'S 'x 'ſ",
        "'''",
        " 'll",
        "abc123def",
        " 12345678",
        "1234567",
        "   \t\n  x  ",
        "x   ",
        "émigré naïve",
        "日本語のテキスト",
        "😀 😀😀 a😀",
        "a\u{301}b",
        "\u{301}b",
        "٣٤٥٦ ٥",
        "\u{3000}\u{3000}x",
        "\u{85}y",
        "tab\tsep",
        "end ",
        "?!... ,;\n\n",
        "a'",
        "'",
        "x\r\n\r\ny",
        " \n \n  z",
        ".\r\n",
        "\tword",
        "\t\tword",
        "'hello",
        "-- \n",
        " ?\n",
    ];

    #[test]
    fn matches_oniguruma_llama3_reading() {
        let re = SysRegex::onig_only(LLAMA3_PATTERN).unwrap();
        for s in CASES {
            check(s, &re, DigitRun::UpToThree);
        }
    }

    #[test]
    fn matches_oniguruma_reading_of_possessive_digits() {
        let re = SysRegex::onig_only(CL100K_PATTERN).unwrap();
        for s in CASES {
            check(s, &re, DigitRun::Unbounded);
        }
    }

    #[test]
    fn matches_oniguruma_on_random_strings() {
        let re3 = SysRegex::onig_only(LLAMA3_PATTERN).unwrap();
        let reu = SysRegex::onig_only(CL100K_PATTERN).unwrap();
        let alphabet = " \t\n\r\u{1}\u{7f}'aZséßſ日本😀1٣_-.,!?\u{301}\u{3000}\u{a0}rRvlLmdtE";
        for s in super::super::random_strings(alphabet, 0x2545F4914F6CDD1D, 20_000) {
            check(&s, &re3, DigitRun::UpToThree);
            check(&s, &reu, DigitRun::Unbounded);
        }
    }
}
