//! Character classes as Oniguruma reads them (`\p{L}`, `\p{N}`, `\s`, ...), with O(1) lookup
//! for the Basic Multilingual Plane.

use std::sync::LazyLock;

pub use super::class_table::{LL, LM, LO, LT, LU, M, N, WS};
use super::class_table::RANGES;

/// Any letter: `\p{L}`.
pub const L: u8 = LU | LL | LT | LM | LO;

static BMP: LazyLock<Box<[u8; 0x10000]>> = LazyLock::new(|| {
    let mut t = Box::new([0u8; 0x10000]);
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

/// The class bits of `c` (a combination of `LU`, `LL`, `LT`, `LM`, `LO`, `M`, `N`, `WS`).
#[inline]
pub fn class_of(c: char) -> u8 {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_agrees_with_oniguruma_on_a_sample() {
        let l = onig::Regex::new(r"\A\p{L}\z").unwrap();
        let n = onig::Regex::new(r"\A\p{N}\z").unwrap();
        let s = onig::Regex::new(r"\A\s\z").unwrap();
        let m = onig::Regex::new(r"\A\p{M}\z").unwrap();
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
        }
    }
}
