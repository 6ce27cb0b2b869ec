//! The o200k pattern (tiktoken's `o200k_base`, read alike by tiktoken's engine and Oniguruma):
//!
//! ```text
//! [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//! |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//! |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//! ```
//!
//! Call `U` the "upper" class `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]` and `W` the "lower" class
//! `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`; they overlap (Lm, Lo, marks). A backtracking engine tries, in
//! order: the first branch with the optional prefix taken, then without it, then the second
//! branch with and without it; within the first branch `U*` gives back chars until a `W`
//! follows. The lexer reproduces exactly that order.

use super::block::AsciiBlock;
use super::classes::{
    ascii_class, ascii_run, ascii_run_at_most, char_class_at, class_at, is_other, run_while, whitespace_match, Class, Digits, Lower, Other,
    Upper, L, LL, LM, LO, LT, LU, M, N, WS,
};

/// The o200k pattern, as tiktoken writes it.
pub const O200K_PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|",
    r"\p{N}{1,3}|",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*|",
    r"\s*[\r\n]+|",
    r"\s+(?!\S)|",
    r"\s+"
);

const UPPER: Class = LU | LT | LM | LO | M;
const LOWER: Class = LL | LM | LO | M;

/// Yields the `(start, end)` byte ranges of the o200k pattern's matches, covering the text.
pub struct O200kLexer<'a> {
    text: &'a [u8],
    pos: usize,
    /// The classified block around `pos` (see [`Self::block_match`]).
    block: AsciiBlock,
}

#[inline]
fn is_crlf(c: char) -> bool {
    c == '\r' || c == '\n'
}

impl<'a> O200kLexer<'a> {
    /// A lexer over `text`.
    pub fn new(text: &'a str) -> Self {
        Self { text: text.as_bytes(), pos: 0, block: AsciiBlock::default() }
    }

    #[inline]
    fn at(&self, i: usize) -> (char, Class, usize) {
        char_class_at(self.text, i)
    }

    /// The class of the char at `i` (0 past the end).
    #[inline]
    fn class(&self, i: usize) -> Class {
        class_at(self.text, i)
    }

    #[inline]
    fn run(&self, i: usize, pred: impl Fn(char, Class) -> bool) -> usize {
        run_while(self.text, i, pred)
    }

    /// `U*W+` from `j`: the end of the `W` run after the last point where a `W` can start.
    fn upper_star_lower_plus(&self, j: usize) -> Option<usize> {
        // Walk the U run; remember where the last W-capable char in it starts.
        let mut i = j;
        let mut last_w: Option<usize> = None;
        while i < self.text.len() {
            let (_, k, len) = self.at(i);
            if k & UPPER == 0 {
                break;
            }
            if k & LOWER != 0 {
                last_w = Some(i);
            }
            i += len;
        }
        // U* keeps the whole run when a W follows it.
        if self.class(i) & LOWER != 0 {
            return Some(self.run(i, |_, k| k & LOWER != 0));
        }
        // Otherwise it gives back chars up to the last W in the run; that W's run is one char
        // (the next char is U but not W, or is neither).
        let w = last_w?;
        let (_, _, len) = self.at(w);
        Some(w + len)
    }

    /// `U+W*` from `j`.
    fn upper_plus_lower_star(&self, j: usize) -> Option<usize> {
        let i = self.run(j, |_, k| k & UPPER != 0);
        (i > j).then(|| self.run(i, |_, k| k & LOWER != 0))
    }

    /// `(?i:'s|'t|'re|'ve|'m|'ll|'d)?` at `i`.
    fn contraction(&self, i: usize) -> usize {
        let t = self.text;
        if t.get(i) != Some(&b'\'') {
            return i;
        }
        let fold = |b: Option<&u8>, lower: u8| b.is_some_and(|&b| b | 0x20 == lower);
        // 'ſ' (U+017F, bytes C5 BF) folds to 's'.
        if t.get(i + 1) == Some(&0xC5) && t.get(i + 2) == Some(&0xBF) {
            return i + 3;
        }
        let b1 = t.get(i + 1);
        if [b's', b't', b'm', b'd'].iter().any(|&l| fold(b1, l)) {
            return i + 2;
        }
        let b2 = t.get(i + 2);
        if (fold(b1, b'r') && fold(b2, b'e')) || (fold(b1, b'v') && fold(b2, b'e')) || (fold(b1, b'l') && fold(b2, b'l')) {
            return i + 3;
        }
        i
    }
}

impl Iterator for O200kLexer<'_> {
    type Item = (usize, usize);

    #[inline]
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

impl O200kLexer<'_> {
    /// The end of the match at `start` read from the classified block of text around it
    /// (loaded afresh when `start` is past its first 48 bytes and ASCII), or `None` when the
    /// block cannot tell: a non-ASCII char at or next to `start` or ending a run, a run past
    /// the block. The same branches as [`Self::ascii_match`], each decided by mask tests.
    #[inline(always)]
    fn block_match(&mut self, start: usize) -> Option<usize> {
        let t = self.text;
        let i = self.block.offset::<true>(t, start)?;
        let b = &self.block;
        let has = AsciiBlock::has;
        // An upper run, then a lower run, then an optional contraction.
        let letters = |i: usize| {
            let upper_end = b.run_end(b.upper, i, true)?;
            let e = b.run_end(b.lower, upper_end - b.base, true)?;
            Some(self.contraction(e))
        };
        // A letter run, or a prefix and a letter run.
        if has(b.word_start, i) {
            return letters(i + usize::from(!has(b.letters, i)));
        }
        if has(b.digits, i) {
            return b.run_end_at_most(b.digits, i, 3);
        }
        // A non-ASCII char here or next: its class decides.
        if has(b.non_ascii, i) || has(b.non_ascii, i + 1) {
            return None;
        }
        // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
        let first = if t[start] == b' ' { i + 1 } else { i };
        if has(b.other, first) {
            let e = b.run_end(b.other, first, true)?;
            return b.run_end(b.crlf | b.slash, e - b.base, false);
        }
        // Whitespace that no letter or other char follows.
        b.whitespace(i, t.len()).map(|(e, _)| e)
    }

    /// The end of the match at `start` when ASCII alone decides it (the common case), else
    /// `None`. On ASCII the upper class is `[A-Z]` and the lower class `[a-z]` (no overlap), so
    /// the letter branches are: an upper run, then a lower run. A run that a non-ASCII char
    /// ends could go on, so it is left to [`Self::general_match`].
    #[inline]
    fn ascii_match(&self, start: usize) -> Option<usize> {
        let t = self.text;
        let k0 = ascii_class(t[start])?;
        let upper_then_lower = |i: usize| ascii_run::<Lower>(t, ascii_run::<Upper>(t, i)?);
        let letters = |i: usize| upper_then_lower(i).map(|e| self.contraction(e));
        if k0 & L != 0 {
            return letters(start);
        }
        if k0 & N != 0 {
            // \p{N}{1,3}
            return ascii_run_at_most::<Digits>(t, start, 3);
        }
        // The optional prefix (any ASCII char but letters, digits, CR and LF) before letters.
        let k1 = t.get(start + 1).map_or(Some(0), |&b| ascii_class(b))?;
        if k1 & L != 0 && t[start] != b'\r' && t[start] != b'\n' {
            return letters(start + 1);
        }
        // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
        let first = if t[start] == b' ' { start + 1 } else { start };
        if first < t.len() && is_other(ascii_class(t[first])?) {
            let e = ascii_run::<Other>(t, first)?;
            return Some(t[e..].iter().position(|&b| !matches!(b, b'\r' | b'\n' | b'/')).map_or(t.len(), |n| e + n));
        }
        // Whitespace that no letter or other char follows (or CR, LF, which take no prefix):
        // only the whitespace branches are left.
        (k0 & WS != 0).then(|| whitespace_match(t, start).0)
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
            // The two letter branches, each with then without the optional prefix.
            let prefix = k0 & (L | N) == 0 && !is_crlf(c0);
            if k0 & (UPPER | LOWER) != 0 || prefix {
                let branches: [fn(&Self, usize) -> Option<usize>; 2] = [Self::upper_star_lower_plus, Self::upper_plus_lower_star];
                for branch in branches {
                    if prefix {
                        if let Some(e) = branch(self, start + len0) {
                            break 'm self.contraction(e);
                        }
                    }
                    if let Some(e) = branch(self, start) {
                        break 'm self.contraction(e);
                    }
                }
            }
            // \p{N}{1,3}
            if k0 & N != 0 {
                let mut i = start + len0;
                for _ in 0..2 {
                    if self.class(i) & N == 0 {
                        break;
                    }
                    i += self.at(i).2;
                }
                break 'm i;
            }
            // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
            let first = if c0 == ' ' { start + len0 } else { start };
            if first < t.len() && is_other(self.class(first)) {
                let e = self.run(first, |_, k| is_other(k));
                break 'm self.run(e, |c, _| is_crlf(c) || c == '/');
            }
            // Whitespace: \s*[\r\n]+, then \s+(?!\S), then \s+.
            whitespace_match(t, start).0.max(start + len0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::utils::regex::SysRegex;

    fn check(text: &str, re: &SysRegex) {
        let ours: Vec<_> = O200kLexer::new(text).collect();
        let theirs: Vec<_> = re.find_iter(text).collect();
        assert_eq!(ours, theirs, "on {text:?}");
    }

    #[test]
    fn matches_oniguruma_on_corner_cases() {
        let re = SysRegex::onig_only(O200K_PATTERN).unwrap();
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
            "Hello World!",
            "HELLO world",
            "HelloWorld CamelCase XMLHttp",
            "I'M you'RE we've THEY'LL he'd it'S 'x 'ſ",
            "don't",
            "'''",
            " 'll",
            "abc123def",
            " 12345678",
            "émigré naïve",
            "日本語のテキスト",
            "😀 😀😀 a😀",
            "a\u{301}b",
            "\u{301}b",
            "\u{301}A.",
            ".\u{301}A.",
            "x\u{301}",
            "Ǆa ǅa ǆ",
            "ʰa aʰ Aʰ",
            "٣٤٥٦ ٥",
            "\u{3000}\u{3000}x",
            "\u{85}y",
            "tab\tsep",
            "end ",
            "?!... ,;\n\n",
            "a/b//\n/c",
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
            "http://x.y/z",
            "$100",
            "ÀB",
            "a.B",
        ] {
            check(s, &re);
        }
    }

    #[test]
    fn matches_oniguruma_on_random_strings() {
        let re = SysRegex::onig_only(O200K_PATTERN).unwrap();
        let alphabet = " \t\n\r\u{1}\u{7f}'aZséßſ日本😀1٣_-./,!?\u{301}\u{3000}\u{a0}rRvlLmdtEǅʰ\u{93f}क";
        for s in super::super::random_strings(alphabet, 0x1234_5678_9ABC_DEF1, 20_000) {
            check(&s, &re);
        }
    }
}
