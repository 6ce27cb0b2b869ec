//! DeepSeek-V3's pre-tokenizer (also DeepSeek-V2's): a `Sequence` of three `Split`s, each
//! `Isolated`, then `ByteLevel` without regex. The three regexes, in order:
//!
//! ```text
//! 1. \p{N}{1,3}
//! 2. [一-龥぀-ゟ゠-ヿ]+
//! 3. [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+
//!    | ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//! ```
//!
//! (in the third, `\r\n` inside the first class are literal CR and LF characters in the
//! file). Each regex has its own lexer giving exactly Oniguruma's matches ([`DigitGroups`],
//! [`CjkRuns`], [`DeepSeekLexer`]); [`deepseek_pieces`] composes them as the `Split` chain
//! does (matches and the gaps between them are pieces, each piece is cut by the next regex),
//! giving the final pieces in one call.
//!
//! Unlike the GPT-2 family, the third regex does not match every char: a control char or a
//! format char (U+200D, U+FEFF, ...) not followed by a letter is left in a gap.

use super::classes::{char_at, char_class_at, class_at, class_of, run_while, whitespace_match, Class, L, M, N, P, S, WS};
use super::isolated_pieces as isolated;

/// DeepSeek's first split regex: digits, by groups of at most three.
pub const DEEPSEEK_DIGITS_PATTERN: &str = r"\p{N}{1,3}";
/// DeepSeek's second split regex: runs of CJK ideographs (U+4E00..U+9FA5) and kana
/// (U+3040..U+30FF).
pub const DEEPSEEK_CJK_PATTERN: &str = "[\u{4E00}-\u{9FA5}\u{3040}-\u{309F}\u{30A0}-\u{30FF}]+";
/// DeepSeek's third split regex, exactly as its tokenizer.json holds it (with literal CR and
/// LF in the first negated class).
pub const DEEPSEEK_MAIN_PATTERN: &str = concat!(
    r##"[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|"##,
    "[^\r\n",
    r"\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[",
    "\r\n",
    r"]*|\s*[",
    "\r\n",
    r"]+|\s+(?!\S)|\s+"
);

#[inline]
fn is_crlf(c: char) -> bool {
    c == '\r' || c == '\n'
}

#[inline]
fn is_cjk(c: char) -> bool {
    matches!(c, '\u{4E00}'..='\u{9FA5}' | '\u{3040}'..='\u{30FF}')
}

/// Matches of `\p{N}{1,3}` as `(start, end)` byte ranges: each run of `\p{N}` chars cut into
/// groups of three from its start.
pub struct DigitGroups<'a> {
    text: &'a [u8],
    pos: usize,
}

impl<'a> DigitGroups<'a> {
    /// A lexer over `text`.
    pub fn new(text: &'a str) -> Self {
        Self { text: text.as_bytes(), pos: 0 }
    }
}

impl Iterator for DigitGroups<'_> {
    type Item = (usize, usize);

    #[inline]
    fn next(&mut self) -> Option<(usize, usize)> {
        let t = self.text;
        let mut i = self.pos;
        // ASCII text without digits is skipped a byte at a time without decoding.
        loop {
            while i < t.len() && t[i] < 0x80 && !t[i].is_ascii_digit() {
                i += 1;
            }
            if i >= t.len() {
                self.pos = i;
                return None;
            }
            let (c, len) = char_at(t, i);
            if class_of(c) & N != 0 {
                break;
            }
            i += len;
        }
        let start = i;
        let mut n = 0;
        while n < 3 && i < t.len() {
            let (c, len) = char_at(t, i);
            if class_of(c) & N == 0 {
                break;
            }
            i += len;
            n += 1;
        }
        self.pos = i;
        Some((start, i))
    }
}

/// Matches of `[一-龥぀-ゟ゠-ヿ]+` as `(start, end)` byte ranges.
pub struct CjkRuns<'a> {
    text: &'a [u8],
    pos: usize,
}

impl<'a> CjkRuns<'a> {
    /// A lexer over `text`.
    pub fn new(text: &'a str) -> Self {
        Self { text: text.as_bytes(), pos: 0 }
    }

    /// Whether the char at `i` (a char boundary before the end) is in the class, and its length.
    #[inline]
    fn cjk_at(&self, i: usize) -> (bool, usize) {
        // Every char of the class is three bytes long, starting E3 (kana) or E4..E9.
        if !(0xE3..=0xE9).contains(&self.text[i]) {
            let len = match self.text[i] {
                0x00..=0x7F => 1,
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                _ => 4,
            };
            return (false, len);
        }
        let (c, len) = char_at(self.text, i);
        (is_cjk(c), len)
    }
}

impl Iterator for CjkRuns<'_> {
    type Item = (usize, usize);

    #[inline]
    fn next(&mut self) -> Option<(usize, usize)> {
        let t = self.text;
        let mut i = self.pos;
        let start = loop {
            if i >= t.len() {
                self.pos = i;
                return None;
            }
            let (yes, len) = self.cjk_at(i);
            if yes {
                break i;
            }
            i += len;
        };
        while i < t.len() {
            let (yes, len) = self.cjk_at(i);
            if !yes {
                break;
            }
            i += len;
        }
        self.pos = i;
        Some((start, i))
    }
}

/// Matches of DeepSeek's third regex ([`DEEPSEEK_MAIN_PATTERN`]) as `(start, end)` byte
/// ranges, in Oniguruma's order of alternatives; chars no alternative matches are skipped.
pub struct DeepSeekLexer<'a> {
    text: &'a [u8],
    pos: usize,
}

impl<'a> DeepSeekLexer<'a> {
    /// A lexer over `text`.
    pub fn new(text: &'a str) -> Self {
        Self { text: text.as_bytes(), pos: 0 }
    }

    /// The end of the match starting at `start`, if one does.
    #[inline]
    fn match_at(&self, start: usize) -> Option<usize> {
        let t = self.text;
        let (c0, k0, len0) = char_class_at(t, start);
        let next = start + len0;
        // [ASCII punctuation][A-Za-z]+
        if c0.is_ascii_punctuation() && t.get(next).is_some_and(u8::is_ascii_alphabetic) {
            let mut i = next + 1;
            while i < t.len() && t[i].is_ascii_alphabetic() {
                i += 1;
            }
            return Some(i);
        }
        // [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+ : with the optional char, then without.
        let is_letter = |_: char, k: Class| k & (L | M) != 0;
        if k0 & (L | P | S) == 0 && !is_crlf(c0) && class_at(t, next) & (L | M) != 0 {
            return Some(run_while(t, next, is_letter));
        }
        if k0 & (L | M) != 0 {
            return Some(run_while(t, next, is_letter));
        }
        // ` ?[\p{P}\p{S}]+[\r\n]*`
        let first = if c0 == ' ' && class_at(t, next) & (P | S) != 0 { next } else { start };
        if class_at(t, first) & (P | S) != 0 {
            let e = run_while(t, first, |_, k| k & (P | S) != 0);
            return Some(run_while(t, e, |c, _| is_crlf(c)));
        }
        if k0 & WS == 0 {
            return None;
        }
        // Whitespace: \s*[\r\n]+, then \s+(?!\S), then \s+.
        Some(whitespace_match(t, start).0)
    }
}

impl Iterator for DeepSeekLexer<'_> {
    type Item = (usize, usize);

    #[inline]
    fn next(&mut self) -> Option<(usize, usize)> {
        while self.pos < self.text.len() {
            let start = self.pos;
            match self.match_at(start) {
                Some(end) => {
                    self.pos = end;
                    return Some((start, end));
                }
                None => self.pos += char_at(self.text, start).1,
            }
        }
        None
    }
}

/// The final pieces of DeepSeek's split chain on `text` (as byte ranges, in order, covering
/// the text), each passed to `piece(start, end)`: the pieces HF's `Sequence` of the three
/// `Isolated` splits gives.
///
/// A group of digits (a match of the first split) is a final piece: no digit is CJK, and each
/// branch of the third regex needs a letter, a mark, punctuation, a symbol or whitespace
/// (`digit_groups_are_final_pieces` checks it for every `\p{N}` char). A gap without CJK
/// chars (ASCII) goes to the third regex directly. On text with a piece every byte or two
/// (" 1 1 1"), the lexers built per piece were most of the cost.
pub fn deepseek_pieces(text: &str, mut piece: impl FnMut(usize, usize)) {
    let mut last = 0;
    for (s, e) in DigitGroups::new(text) {
        if s > last {
            after_digits(text, last, s, &mut piece);
        }
        piece(s, e);
        last = e;
    }
    if last < text.len() {
        after_digits(text, last, text.len(), &mut piece);
    }
}

/// The second and third splits on `text[s1..e1]`, a gap of the first.
#[inline]
fn after_digits(text: &str, s1: usize, e1: usize, piece: &mut impl FnMut(usize, usize)) {
    let p1 = &text[s1..e1];
    if p1.is_ascii() {
        isolated(p1.len(), DeepSeekLexer::new(p1), |s3, e3| piece(s1 + s3, s1 + e3));
        return;
    }
    isolated(p1.len(), CjkRuns::new(p1), |s2, e2| {
        let p2 = &p1[s2..e2];
        let base = s1 + s2;
        isolated(p2.len(), DeepSeekLexer::new(p2), |s3, e3| piece(base + s3, base + e3));
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::utils::regex::SysRegex;

    fn check<'a, I: Iterator<Item = (usize, usize)>>(pattern: &str, lex: impl Fn(&'a str) -> I, text: &'a str) {
        let re = SysRegex::onig_only(pattern).unwrap();
        let ours: Vec<_> = lex(text).collect();
        let theirs: Vec<_> = re.find_iter(text).collect();
        assert_eq!(ours, theirs, "{pattern} on {text:?}");
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
        "I'm you're 'x",
        "'''",
        " 'll",
        "abc123def",
        " 12345678",
        "1234567",
        "   \t\n  x  ",
        "x   ",
        "émigré naïve",
        "日本語のテキスト",
        "カタカナ ひらがな 龥龦",
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
        ".\r\n",
        "\tword",
        "'hello",
        "-- \n",
        " ?\n",
        "$HOME",
        "«word»",
        "€5",
        "\u{200D}a",
        "\u{0}\u{1b}[0m",
        "a\u{200D}\u{200D}",
        "x\u{feff}",
        "1a",
        "¹²³⁴",
        "【注意】",
        " 。a",
    ];

    #[test]
    fn each_lexer_matches_oniguruma() {
        for s in CASES {
            check(DEEPSEEK_DIGITS_PATTERN, DigitGroups::new, s);
            check(DEEPSEEK_CJK_PATTERN, CjkRuns::new, s);
            check(DEEPSEEK_MAIN_PATTERN, DeepSeekLexer::new, s);
        }
    }

    #[test]
    fn chain_pieces_like_hf() {
        // HF 0.23.3: the pre_tokenizer of DeepSeek-V3's tokenizer.json, pre_tokenize_str
        // (ByteLevel maps the text but not the offsets).
        let mut out = Vec::new();
        deepseek_pieces("Hi 12345 日本語abc\u{200D}, x  \n", |s, e| out.push((s, e)));
        // Pieces: 'Hi', ' ', '123', '45', ' ', '日本語', 'abc', '\u{200D}', ',', ' x', '  \n'.
        assert_eq!(out, [(0, 2), (2, 3), (3, 6), (6, 8), (8, 9), (9, 18), (18, 21), (21, 24), (24, 25), (25, 27), (27, 30)]);
    }

    /// Every `\p{N}` char, alone and in groups of two and three (with ASCII digits): neither
    /// the CJK split nor the third regex matches any of it (Oniguruma's reading), so a group of
    /// the first split is a final piece as [`deepseek_pieces`] takes it.
    #[test]
    fn digit_groups_are_final_pieces() {
        let cjk = SysRegex::onig_only(DEEPSEEK_CJK_PATTERN).unwrap();
        let main = SysRegex::onig_only(DEEPSEEK_MAIN_PATTERN).unwrap();
        let digits: Vec<char> = (0..=char::MAX as u32).filter_map(char::from_u32).filter(|&c| class_of(c) & N != 0).collect();
        assert!(digits.len() > 1500, "{}", digits.len());
        let mut checked = 0;
        for (i, &c) in digits.iter().enumerate() {
            for group in [c.to_string(), format!("{c}{}", digits[(i * 7) % digits.len()]), format!("1{c}2")] {
                assert_eq!(cjk.find_iter(&group).count(), 0, "{group:?}");
                assert_eq!(main.find_iter(&group).count(), 0, "{group:?}");
                checked += 1;
            }
        }
        assert_eq!(checked, 3 * digits.len());
    }
}
