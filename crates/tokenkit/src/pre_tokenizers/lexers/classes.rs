//! Character classes as Oniguruma reads them (`\p{L}`, `\p{N}`, `\s`, `\p{P}`, `\p{S}`, ...),
//! with O(1) lookup for the Basic Multilingual Plane.

use std::sync::LazyLock;

pub use super::class_table::{LL, LM, LO, LT, LU, M, N, P, S, WS};
use super::class_table::RANGES;

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

/// The class bits of `c` (a combination of `LU`, `LL`, `LT`, `LM`, `LO`, `M`, `N`, `WS`, `P`, `S`).
#[inline]
pub fn class_of(c: char) -> Class {
    let cp = c as u32;
    if cp < 0x10000 {
        BMP[cp as usize]
    } else {
        match RANGES.binary_search_by(|&(a, b, _)| {
            if b < cp {
                std::cmp::Ordering::Less
            } else if a > cp {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        }) {
            Ok(i) => RANGES[i].2,
            Err(_) => 0,
        }
    }
}

/// Decodes the char starting at byte `i` of `s` (which must be a char boundary) and its length.
#[inline]
pub fn char_at(s: &[u8], i: usize) -> (char, usize) {
    let b0 = s[i];
    if b0 < 0x80 {
        return (b0 as char, 1);
    }
    let (len, init) = if b0 < 0xE0 {
        (2, (b0 & 0x1F) as u32)
    } else if b0 < 0xF0 {
        (3, (b0 & 0x0F) as u32)
    } else {
        (4, (b0 & 0x07) as u32)
    };
    let mut cp = init;
    for k in 1..len {
        cp = (cp << 6) | (s[i + k] & 0x3F) as u32;
    }
    // The input is a &str, so the sequence is valid UTF-8.
    (char::from_u32(cp).unwrap_or('\u{FFFD}'), len)
}

/// The char at byte `i` of `text` (a char boundary), its class bits and its length in bytes.
#[inline]
pub fn char_class_at(text: &[u8], i: usize) -> (char, Class, usize) {
    let (c, len) = char_at(text, i);
    (c, class_of(c), len)
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
    let mut last_crlf_end = None;
    let mut last_start = start;
    let mut i = start;
    while i < text.len() {
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
