//! Character classes as Oniguruma reads them (`\p{L}`, `\p{N}`, `\s`, `\p{P}`, `\p{S}`, ...),
//! with O(1) lookup for the Basic Multilingual Plane.

use std::sync::LazyLock;

use super::class_table::RANGES;
pub use super::class_table::{LL, LM, LO, LT, LU, M, N, P, S, WS};

/// A set of class bits (see the constants of `class_table`).
pub type Class = u16;

/// Any letter: `\p{L}`.
pub const L: Class = LU | LL | LT | LM | LO;

static BMP: LazyLock<Box<[Class; 0x10000]>> = LazyLock::new(|| {
    let mut t = Box::new([0 as Class; 0x10000]);
    for &(a, b, m) in RANGES.iter() {
        if a > 0xFFFF {
            break;
        }
        for cp in a..=b.min(0xFFFF) {
            t[cp as usize] = m;
        }
    }
    t
});

/// The classes of the ASCII chars by byte, as a constant: the hot case needs no lazy table.
/// (`ascii_table_agrees` checks it against the generated ranges.)
static ASCII: [Class; 128] = {
    let ranges: [(u8, u8, Class); 21] = [
        (0x09, 0x0D, WS),
        (0x20, 0x20, WS),
        (0x21, 0x23, P),
        (0x24, 0x24, S),
        (0x25, 0x2A, P),
        (0x2B, 0x2B, S),
        (0x2C, 0x2F, P),
        (0x30, 0x39, N),
        (0x3A, 0x3B, P),
        (0x3C, 0x3E, S),
        (0x3F, 0x40, P),
        (0x41, 0x5A, LU),
        (0x5B, 0x5D, P),
        (0x5E, 0x5E, S),
        (0x5F, 0x5F, P),
        (0x60, 0x60, S),
        (0x61, 0x7A, LL),
        (0x7B, 0x7B, P),
        (0x7C, 0x7C, S),
        (0x7D, 0x7D, P),
        (0x7E, 0x7E, S),
    ];
    let mut t = [0 as Class; 128];
    let mut r = 0;
    while r < ranges.len() {
        let (a, b, k) = ranges[r];
        let mut c = a as usize;
        while c <= b as usize {
            t[c] = k;
            c += 1;
        }
        r += 1;
    }
    t
};

/// The class bits of `c` (a combination of `LU`, `LL`, `LT`, `LM`, `LO`, `M`, `N`, `WS`, `P`, `S`).
#[inline]
pub fn class_of(c: char) -> Class {
    let cp = c as u32;
    if cp < 0x80 {
        return ASCII[cp as usize];
    }
    class_of_non_ascii(cp)
}

/// [`class_of`] above ASCII: the BMP by table, the rest by search.
#[inline]
fn class_of_non_ascii(cp: u32) -> Class {
    if cp < 0x10000 {
        BMP[cp as usize]
    } else {
        class_above_bmp(cp)
    }
}

/// The block of each 256 code points above the BMP, and the distinct blocks.
type BlockTable = (Box<[u16]>, Box<[[Class; 256]]>);

/// The classes above the BMP, by blocks of 256 code points: the block of each, and the
/// distinct blocks (most of the 4,352 are unassigned or all one class: about a hundred are
/// distinct, 50 KB). Two loads per char, where a search of the ranges took a dozen steps
/// (random code points, half of them above the BMP: 15% of o200k's instructions).
static SUPPLEMENTARY: LazyLock<BlockTable> = LazyLock::new(|| {
    const FIRST: u32 = 0x1_0000;
    let mut flat = vec![0 as Class; (char::MAX as u32 + 1 - FIRST) as usize];
    for &(a, b, m) in RANGES.iter().filter(|r| r.1 >= FIRST) {
        flat[(a.max(FIRST) - FIRST) as usize..=(b - FIRST) as usize].fill(m);
    }
    let mut blocks: Vec<[Class; 256]> = Vec::new();
    let mut seen = std::collections::HashMap::new();
    let index = flat
        .chunks_exact(256)
        .map(|chunk| {
            let block: [Class; 256] = chunk.try_into().expect("a whole block");
            *seen.entry(block).or_insert_with(|| {
                blocks.push(block);
                // At most 4,352 blocks.
                (blocks.len() - 1) as u16
            })
        })
        .collect();
    (index, blocks.into_boxed_slice())
});

fn class_above_bmp(cp: u32) -> Class {
    let (index, blocks) = &*SUPPLEMENTARY;
    let at = (cp - 0x1_0000) as usize;
    index.get(at >> 8).map_or(0, |&b| blocks[usize::from(b)][at & 0xFF])
}

/// The code point starting at byte `i` of `s` (a char boundary of valid UTF-8) and its
/// length, decoded without a loop (one length check per char; a truncated sequence, which
/// valid UTF-8 never has, reads as U+FFFD).
#[inline(always)]
fn decode_at(s: &[u8], i: usize) -> (u32, usize) {
    let cont = |b: u8| u32::from(b & 0x3F);
    match s[i..] {
        [b0, ..] if b0 < 0x80 => (u32::from(b0), 1),
        [b0, b1, ..] if b0 < 0xE0 => (((u32::from(b0) & 0x1F) << 6) | cont(b1), 2),
        [b0, b1, b2, ..] if b0 < 0xF0 => (((u32::from(b0) & 0x0F) << 12) | (cont(b1) << 6) | cont(b2), 3),
        [b0, b1, b2, b3, ..] => (((u32::from(b0) & 0x07) << 18) | (cont(b1) << 12) | (cont(b2) << 6) | cont(b3), 4),
        _ => (0xFFFD, 1),
    }
}

/// Decodes the char starting at byte `i` of `s` (which must be a char boundary) and its length.
#[inline]
pub fn char_at(s: &[u8], i: usize) -> (char, usize) {
    let (cp, len) = decode_at(s, i);
    // The input is a &str, so the sequence is valid UTF-8.
    (char::from_u32(cp).unwrap_or('\u{FFFD}'), len)
}

/// The char at byte `i` of `text` (a char boundary), its class bits and its length in bytes.
#[inline(always)]
pub fn char_class_at(text: &[u8], i: usize) -> (char, Class, usize) {
    let b = text[i];
    if b < 0x80 {
        return (b as char, ASCII[usize::from(b)], 1);
    }
    let (cp, len) = decode_at(text, i);
    (char::from_u32(cp).unwrap_or('\u{FFFD}'), class_of_non_ascii(cp), len)
}

/// The class bits of the char at byte `i` of `text`, 0 at or past the end.
#[inline]
pub fn class_at(text: &[u8], i: usize) -> Class {
    if i < text.len() {
        char_class_at(text, i).1
    } else {
        0
    }
}

/// The class bits of byte `b` when it is an ASCII char, `None` for any other byte.
#[inline(always)]
pub fn ascii_class(b: u8) -> Option<Class> {
    ASCII.get(usize::from(b)).copied()
}

/// A set of ASCII chars that the lexers' fast paths take runs of, tested eight bytes at a
/// time (see [`ascii_run`]). One type per set, so that each run's test is compiled in.
pub trait AsciiSet {
    /// Whether an ASCII char of class `k` is in the set.
    fn has(k: Class) -> bool;
    /// The high bit of each byte of `x` (eight bytes of text, little-endian) in the set.
    fn bytes(x: u64) -> u64;
}

/// The high bit of every byte of a word.
pub(crate) const HIGH: u64 = 0x8080_8080_8080_8080;
/// The low bit of every byte of a word.
const LOW: u64 = 0x0101_0101_0101_0101;

/// The high bit of each byte of `x` that is ASCII and in `lo..=hi` (`hi < 0x80`). Each
/// byte's sums stay below 0x100, so no carry crosses into the next byte.
#[inline(always)]
pub(crate) fn bytes_in(x: u64, lo: u8, hi: u8) -> u64 {
    let low7 = x & !HIGH;
    let at_least_lo = low7 + LOW * u64::from(0x80 - lo);
    let above_hi = low7 + LOW * u64::from(0x7F - hi);
    at_least_lo & !above_hi & !x & HIGH
}

/// A set that is the ASCII chars of one class: a range of bytes once `fold` is or-ed in.
macro_rules! range_set {
    ($(#[$doc:meta])* $name:ident, $class:expr, $fold:expr, $lo:expr, $hi:expr) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name;

        impl AsciiSet for $name {
            #[inline(always)]
            fn has(k: Class) -> bool {
                k & $class != 0
            }
            #[inline(always)]
            fn bytes(x: u64) -> u64 {
                bytes_in(x | (LOW * $fold), $lo, $hi)
            }
        }
    };
}

range_set!(
    /// `[A-Za-z]`: the ASCII chars of `\p{L}` (a letter or-ed with 0x20 is lower case).
    Letters, L, 0x20, b'a', b'z'
);
range_set!(
    /// `[A-Z]`: the ASCII chars of `\p{Lu}`.
    Upper, LU, 0, b'A', b'Z'
);
range_set!(
    /// `[a-z]`: the ASCII chars of `\p{Ll}`.
    Lower, LL, 0, b'a', b'z'
);
range_set!(
    /// `[0-9]`: the ASCII chars of `\p{N}`.
    Digits, N, 0, b'0', b'9'
);

/// The ASCII chars of `[^\s\p{L}\p{N}]` ([`is_other`]).
#[derive(Debug)]
pub struct Other;

impl AsciiSet for Other {
    #[inline(always)]
    fn has(k: Class) -> bool {
        is_other(k)
    }
    #[inline(always)]
    fn bytes(x: u64) -> u64 {
        let space = bytes_in(x, b' ', b' ') | bytes_in(x, b'\t', b'\r');
        !x & HIGH & !space & !Letters::bytes(x) & !Digits::bytes(x)
    }
}

/// The end of the run of ASCII chars of `S` from byte `i` of `text`, or `None` when a
/// non-ASCII char ends it (whose class the caller would have to look up). The ASCII fast
/// paths of the lexers are made of these. Eight bytes at a time: a run's end is found with
/// no branch per byte, whose exit mispredicted at the end of most runs (words are short).
#[inline(always)]
pub fn ascii_run<S: AsciiSet>(text: &[u8], mut i: usize) -> Option<usize> {
    while let Some(chunk) = text.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().unwrap_or([0x80; 8]));
        let outside = !S::bytes(x) & HIGH;
        if outside == 0 {
            i += 8;
            continue;
        }
        let end = i + (outside.trailing_zeros() / 8) as usize;
        return (text[end] < 0x80).then_some(end);
    }
    while let Some(&b) = text.get(i) {
        if !S::has(ascii_class(b)?) {
            return Some(i);
        }
        i += 1;
    }
    Some(i)
}

/// [`ascii_run`] of at most `max` chars (bytes): the end of the run of ASCII chars of `S`
/// from byte `i`, stopping after `max`, or `None` when a non-ASCII char ends it sooner.
/// A counted repeat such as `\p{N}{1,3}` must look no further than its bound: scanning the
/// whole run for each match made a long run of digits quadratic.
#[inline(always)]
pub fn ascii_run_at_most<S: AsciiSet>(text: &[u8], i: usize, max: usize) -> Option<usize> {
    ascii_run::<S>(text.get(..i.saturating_add(max)).unwrap_or(text), i)
}

/// `[^\s\p{L}\p{N}]`: a char that is no letter, digit or whitespace.
#[inline(always)]
pub fn is_other(k: Class) -> bool {
    k & (L | N | WS) == 0
}

/// The end (in bytes) of the run of chars from byte `i` of `text` that satisfy `pred`.
#[inline]
pub fn run_while(text: &[u8], mut i: usize, pred: impl Fn(char, Class) -> bool) -> usize {
    while i < text.len() {
        let (c, k, len) = char_class_at(text, i);
        if !pred(c, k) {
            break;
        }
        i += len;
    }
    i
}

/// At byte `start` of `text`, the tail `\s*[\r\n]+|\s+(?!\S)|\s+` the GPT-4 style patterns
/// share: the end of its match (`start` when no whitespace starts there) and the end of the
/// whitespace run.
#[inline]
pub fn whitespace_match(text: &[u8], start: usize) -> (usize, usize) {
    // A whitespace char before a char that is not (an ASCII pair): every branch takes that
    // one char (`\s*[\r\n]+` one newline, `\s+(?!\S)` none, `\s+` one). The common case of
    // a space before a word, a number or a symbol, in one test.
    if let (Some(&a), Some(&b)) = (text.get(start), text.get(start + 1)) {
        if a < 0x80 && b < 0x80 && ASCII[usize::from(a)] & WS != 0 && ASCII[usize::from(b)] & WS == 0 {
            return (start + 1, start + 1);
        }
    }
    let mut last_crlf_end = None;
    let mut last_start = start;
    let mut i = start;
    while i < text.len() {
        if text[i] == b' ' {
            // A run of spaces (the indentation of code and man pages) in one step.
            let run = text[i..].iter().position(|&b| b != b' ').unwrap_or(text.len() - i);
            last_start = i + run - 1;
            i += run;
            continue;
        }
        let (c, k, len) = char_class_at(text, i);
        if k & WS == 0 {
            break;
        }
        last_start = i;
        i += len;
        if c == '\r' || c == '\n' {
            last_crlf_end = Some(i);
        }
    }
    // \s*[\r\n]+ ends after the run's last newline; \s+(?!\S) leaves the run's last char
    // before a non-space; \s+ takes a single space.
    let end = match last_crlf_end {
        Some(e) => e,
        None if i < text.len() && last_start > start => last_start,
        None => i,
    };
    (end, i)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `S::bytes` against `S::has` on every byte in every lane, and `ascii_run` against a
    /// byte-by-byte run on a text with runs longer than a word and a non-ASCII char.
    fn check_set<S: AsciiSet>() {
        for b in 0u8..=255 {
            let want = b < 0x80 && S::has(ASCII[usize::from(b)]);
            for lane in 0..8 {
                for fill in [0u8, b'a', b'0', b' ', 0xFF, 0x7F] {
                    let mut w = [fill; 8];
                    w[lane] = b;
                    let got = S::bytes(u64::from_le_bytes(w)) >> (8 * lane + 7) & 1 == 1;
                    assert_eq!(got, want, "{b:#x} lane {lane} fill {fill:#x}");
                }
            }
        }
        let text = "abcdefghijklmnopqrstu!vwxyzABCDEFGHIJéK 0123456789012x;;;;;;;;;;;;é";
        for i in 0..text.len() {
            let mut e = i;
            let want = loop {
                match text.as_bytes().get(e) {
                    Some(&b) if b >= 0x80 => break None,
                    Some(&b) if S::has(ASCII[usize::from(b)]) => e += 1,
                    _ => break Some(e),
                }
            };
            assert_eq!(ascii_run::<S>(text.as_bytes(), i), want, "at {i}");
        }
    }

    #[test]
    fn ascii_sets_agree_with_the_classes() {
        check_set::<Letters>();
        check_set::<Upper>();
        check_set::<Lower>();
        check_set::<Digits>();
        check_set::<Other>();
    }

    /// The block table above the BMP gives every code point the class its range has.
    #[test]
    fn supplementary_table_agrees_with_the_ranges() {
        let mut checked = 0;
        for &(a, b, m) in RANGES.iter().filter(|r| r.1 >= 0x1_0000) {
            let first = a.max(0x1_0000);
            for cp in [first, b, first + (b - first) / 2] {
                assert_eq!(class_above_bmp(cp), m, "{cp:#x}");
                checked += 1;
            }
            // Just outside the range: another range's class or none.
            let outside = |cp: u32| RANGES.iter().find(|r| (r.0..=r.1).contains(&cp)).map_or(0, |r| r.2);
            if a > 0x1_0000 {
                assert_eq!(class_above_bmp(a - 1), outside(a - 1), "{:#x}", a - 1);
            }
            if b < char::MAX as u32 {
                assert_eq!(class_above_bmp(b + 1), outside(b + 1), "{:#x}", b + 1);
            }
        }
        assert!(checked > 300, "{checked}");
        for cp in (0x1_0000..=char::MAX as u32).step_by(97) {
            let want = RANGES.iter().find(|r| (r.0..=r.1).contains(&cp)).map_or(0, |r| r.2);
            assert_eq!(class_above_bmp(cp), want, "{cp:#x}");
        }
    }

    #[test]
    fn ascii_table_agrees() {
        for b in 0u8..0x80 {
            let from_ranges = RANGES.iter().find(|r| (r.0..=r.1).contains(&u32::from(b))).map_or(0, |r| r.2);
            assert_eq!(ASCII[usize::from(b)], from_ranges, "{b:#x}");
        }
    }

    #[test]
    fn table_agrees_with_oniguruma_on_a_sample() {
        let l = onig::Regex::new(r"\A\p{L}\z").unwrap();
        let n = onig::Regex::new(r"\A\p{N}\z").unwrap();
        let s = onig::Regex::new(r"\A\s\z").unwrap();
        let m = onig::Regex::new(r"\A\p{M}\z").unwrap();
        let p = onig::Regex::new(r"\A\p{P}\z").unwrap();
        let sy = onig::Regex::new(r"\A\p{S}\z").unwrap();
        let mut buf = [0u8; 4];
        // Every 7th code point keeps the debug-mode test fast and still hits every block.
        for cp in (0u32..0x110000).step_by(7) {
            let Some(c) = char::from_u32(cp) else { continue };
            let st = c.encode_utf8(&mut buf);
            let k = class_of(c);
            assert_eq!(k & L != 0, l.is_match(st), "L {cp:X}");
            assert_eq!(k & N != 0, n.is_match(st), "N {cp:X}");
            assert_eq!(k & WS != 0, s.is_match(st), "WS {cp:X}");
            assert_eq!(k & M != 0, m.is_match(st), "M {cp:X}");
            assert_eq!(k & P != 0, p.is_match(st), "P {cp:X}");
            assert_eq!(k & S != 0, sy.is_match(st), "S {cp:X}");
        }
    }
}
