//! 64-byte blocks of text classified at once into bit masks (bit `j` is byte `base + j`),
//! for the block paths of the cl100k and o200k lexers: a piece of ASCII text is then decided
//! by a few mask tests and the end of each run by one `trailing_zeros`, where the per-piece
//! path classified each byte again (about 17 instructions per byte of English).
//!
//! A block decides only what its 64 bytes settle: a run that reaches the block's end before
//! the text's, or that a non-ASCII byte ends (a non-ASCII char could continue it), gives
//! `None`, and the lexer falls back to its per-piece path for that piece. x86_64 classifies
//! with AVX2 where the CPU has it, else SSE2 (part of its baseline); other targets with
//! eight-byte words (SWAR).

use super::classes::{bytes_in, HIGH};

/// Bytes per block.
pub const BLOCK: usize = 64;

/// Pieces starting this many bytes or more into the block reload it at their start, so that
/// each piece the block decides has at least `BLOCK - REFILL` bytes of the block after its
/// start (a contraction needs 3; most words and runs fit in 16).
const REFILL: usize = 48;

/// The class masks of up to 64 bytes of text from byte `base`. Bits past the end of the
/// text are in no mask.
#[derive(Debug, Clone, Copy, Default)]
pub struct AsciiBlock {
    /// The text's byte offset of bit 0.
    pub base: usize,
    /// Pieces starting before this byte offset of the text may use the block (0 for no block).
    pub limit: usize,
    /// Whether the text ends within the block or at its end (`base + 64 >= len`).
    pub last: bool,
    /// `[A-Za-z]`.
    pub letters: u64,
    /// `[A-Z]` (o200k's blocks only; 0 otherwise).
    pub upper: u64,
    /// `[a-z]` (o200k's blocks only; 0 otherwise).
    pub lower: u64,
    /// `[0-9]`.
    pub digits: u64,
    /// ASCII whitespace (`\s`: `\t`, `\n`, `\v`, `\f`, `\r`, space).
    pub ws: u64,
    /// `\r` and `\n`.
    pub crlf: u64,
    /// `/` (o200k's blocks only; 0 otherwise).
    pub slash: u64,
    /// The ASCII chars of `[^\s\p{L}\p{N}]` (punctuation, symbols, controls).
    pub other: u64,
    /// Bytes of non-ASCII chars (lead and continuation bytes).
    pub non_ascii: u64,
    /// Where a letter run starts, or a char that takes the letter run after it as its
    /// prefix (`[^\r\n\p{L}\p{N}]?\p{L}+`: ASCII whitespace but CR and LF, punctuation,
    /// symbols, controls; for cl100k not an apostrophe, whose contractions come first).
    pub word_start: u64,
}

/// The masks of one block as the classifier returns them, before the edge of the text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Masks {
    letters: u64,
    upper: u64,
    lower: u64,
    digits: u64,
    ws: u64,
    crlf: u64,
    slash: u64,
    apostrophe: u64,
    non_ascii: u64,
}

impl AsciiBlock {
    /// The block offset of byte `start` of `text` (at or after `base`) for a piece starting
    /// there, the block reloaded at `start` when it lies past the first 48 bytes, or `None`
    /// when it does and the next 8 bytes are not all ASCII: text of other scripts with a
    /// little ASCII in it (Chinese man pages: 23 -> 28 instructions per byte when any ASCII
    /// byte loaded a block) and the last bytes of a text load no block.
    /// `CASED` as in [`Self::load`].
    #[inline(always)]
    pub fn offset<const CASED: bool>(&mut self, text: &[u8], start: usize) -> Option<usize> {
        if start >= self.limit {
            let word = u64::from_le_bytes(*text.get(start..)?.first_chunk::<8>()?);
            if word & HIGH != 0 {
                return None;
            }
            *self = Self::load::<CASED>(text, start);
        }
        Some(start - self.base)
    }

    /// The block of `text` from byte `base` (`< text.len()`); `CASED` adds the upper, lower
    /// and slash masks and lets an apostrophe prefix a letter run (o200k).
    #[inline]
    pub fn load<const CASED: bool>(text: &[u8], base: usize) -> Self {
        let rest = &text[base..];
        let (m, n) = match rest.first_chunk::<BLOCK>() {
            Some(chunk) => (classify::<CASED>(chunk), BLOCK),
            None => {
                let mut padded = [0u8; BLOCK];
                padded[..rest.len()].copy_from_slice(rest);
                (classify::<CASED>(&padded), rest.len())
            }
        };
        let valid = if n == BLOCK { !0 } else { (1u64 << n) - 1 };
        let known = m.letters | m.digits | m.ws | m.non_ascii;
        let prefix = !(m.letters | m.digits | m.crlf | m.non_ascii | if CASED { 0 } else { m.apostrophe });
        let word_start = m.letters | (prefix & (m.letters >> 1));
        Self {
            base,
            limit: base + REFILL,
            last: base + BLOCK >= text.len(),
            letters: m.letters & valid,
            upper: m.upper & valid,
            lower: m.lower & valid,
            digits: m.digits & valid,
            ws: m.ws & valid,
            crlf: m.crlf & valid,
            slash: m.slash & valid,
            other: !known & valid,
            non_ascii: m.non_ascii & valid,
            word_start: word_start & valid,
        }
    }

    /// Whether bit `i` (`< 64`) of `mask` is set.
    #[inline(always)]
    pub fn has(mask: u64, i: usize) -> bool {
        (mask >> i) & 1 != 0
    }

    /// The text offset where the run of `set` bits from block offset `i` (`<= 64`) ends, or
    /// `None` when the block cannot tell: the run reaches the block's end before the text's,
    /// or a non-ASCII byte ends it and `ascii_stop` asks for an ASCII end.
    #[inline(always)]
    pub fn run_end(&self, set: u64, i: usize, ascii_stop: bool) -> Option<usize> {
        let j = i + (!set.checked_shr(i as u32).unwrap_or(0)).trailing_zeros() as usize;
        if j >= BLOCK {
            return self.last.then_some(self.base + BLOCK);
        }
        if ascii_stop && Self::has(self.non_ascii, j) {
            return None;
        }
        Some(self.base + j)
    }

    /// [`run_end`](Self::run_end) of at most `max` bytes.
    #[inline(always)]
    pub fn run_end_at_most(&self, set: u64, i: usize, max: usize) -> Option<usize> {
        let n = (!set.checked_shr(i as u32).unwrap_or(0)).trailing_zeros() as usize;
        if n >= max && i + max <= BLOCK {
            return Some(self.base + i + max);
        }
        self.run_end(set, i, true)
    }

    /// `\s*[\r\n]+|\s+(?!\S)|\s+` at block offset `i`, an ASCII whitespace char, in a text
    /// of `len` bytes, as [`whitespace_match`](super::classes::whitespace_match) reads it: the
    /// end of the match and the end of the whitespace run, or `None` when the run goes past
    /// the block or reaches a non-ASCII char (which may be whitespace).
    #[inline(always)]
    pub fn whitespace(&self, i: usize, len: usize) -> Option<(usize, usize)> {
        let run_end = self.run_end(self.ws, i, true)?;
        let n = run_end - self.base - i;
        let run = (!0u64 >> (BLOCK - n)) << i;
        let newlines = self.crlf & run;
        let end = if newlines != 0 {
            // After the run's last newline.
            self.base + BLOCK - newlines.leading_zeros() as usize
        } else if run_end < len && n > 1 {
            // Leave the run's last char to the next piece.
            run_end - 1
        } else {
            run_end
        };
        Some((end, run_end))
    }
}

/// The class masks of 64 bytes.
#[inline(always)]
fn classify<const CASED: bool>(bytes: &[u8; BLOCK]) -> Masks {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            unsafe { classify_avx2::<CASED>(bytes) }
        } else {
            classify_sse2::<CASED>(bytes)
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        classify_swar::<CASED>(bytes)
    }
}

/// [`classify`] eight bytes at a time in `u64` words (any target; the reference the SSE2
/// version is tested against).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn classify_swar<const CASED: bool>(bytes: &[u8; BLOCK]) -> Masks {
    /// The high bit of each byte of `m` gathered into the low 8 bits (byte `k` to bit `k`).
    #[inline(always)]
    fn gather(m: u64) -> u64 {
        ((m & HIGH) >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56
    }
    let mut m = Masks::default();
    for (w, chunk) in bytes.chunks_exact(8).enumerate() {
        let x = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        let shift = 8 * w;
        let bit = |mask: u64| gather(mask) << shift;
        m.letters |= bit(bytes_in(x | 0x2020_2020_2020_2020, b'a', b'z'));
        m.digits |= bit(bytes_in(x, b'0', b'9'));
        m.ws |= bit(bytes_in(x, b' ', b' ') | bytes_in(x, b'\t', b'\r'));
        m.crlf |= bit(bytes_in(x, b'\n', b'\n') | bytes_in(x, b'\r', b'\r'));
        m.non_ascii |= bit(x);
        m.apostrophe |= bit(bytes_in(x, b'\'', b'\''));
        if CASED {
            m.upper |= bit(bytes_in(x, b'A', b'Z'));
            m.lower |= bit(bytes_in(x, b'a', b'z'));
            m.slash |= bit(bytes_in(x, b'/', b'/'));
        }
    }
    m
}

/// [`classify`] sixteen bytes at a time with SSE2.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn classify_sse2<const CASED: bool>(bytes: &[u8; BLOCK]) -> Masks {
    use std::arch::x86_64::*;
    let mut m = Masks::default();
    // SAFETY: SSE2 is part of the x86_64 baseline, so its intrinsics run on every x86_64
    // CPU; each load reads 16 bytes of `bytes`, with no alignment needed.
    unsafe {
        let splat = |b: u8| _mm_set1_epi8(b as i8);
        // Signed compares: bytes from 0x80 are negative, so in no ASCII range.
        let within = |v: __m128i, lo: u8, hi: u8| _mm_and_si128(_mm_cmpgt_epi8(v, splat(lo - 1)), _mm_cmplt_epi8(v, splat(hi + 1)));
        let bits = |v: __m128i| u64::from(_mm_movemask_epi8(v) as u16);
        for (k, chunk) in bytes.chunks_exact(16).enumerate() {
            let v = _mm_loadu_si128(chunk.as_ptr().cast());
            let shift = 16 * k;
            let folded = _mm_or_si128(v, splat(0x20));
            m.letters |= bits(within(folded, b'a', b'z')) << shift;
            m.digits |= bits(within(v, b'0', b'9')) << shift;
            let space = _mm_cmpeq_epi8(v, splat(b' '));
            m.ws |= bits(_mm_or_si128(space, within(v, b'\t', b'\r'))) << shift;
            m.crlf |= bits(_mm_or_si128(_mm_cmpeq_epi8(v, splat(b'\n')), _mm_cmpeq_epi8(v, splat(b'\r')))) << shift;
            m.non_ascii |= bits(v) << shift;
            m.apostrophe |= bits(_mm_cmpeq_epi8(v, splat(b'\''))) << shift;
            if CASED {
                m.upper |= bits(within(v, b'A', b'Z')) << shift;
                m.lower |= bits(within(v, b'a', b'z')) << shift;
                m.slash |= bits(_mm_cmpeq_epi8(v, splat(b'/'))) << shift;
            }
        }
    }
    m
}

/// [`classify`] thirty-two bytes at a time with AVX2 (half the instructions of SSE2).
///
/// # Safety
///
/// The CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn classify_avx2<const CASED: bool>(bytes: &[u8; BLOCK]) -> Masks {
    use std::arch::x86_64::*;
    let mut m = Masks::default();
    // Plain macros rather than closures, so that every intrinsic is compiled with AVX2.
    macro_rules! splat {
        ($b:expr) => {
            _mm256_set1_epi8($b as i8)
        };
    }
    // Signed compares: bytes from 0x80 are negative, so in no ASCII range.
    macro_rules! within {
        ($v:expr, $lo:expr, $hi:expr) => {
            _mm256_and_si256(_mm256_cmpgt_epi8($v, splat!($lo - 1)), _mm256_cmpgt_epi8(splat!($hi + 1), $v))
        };
    }
    macro_rules! bits {
        ($v:expr) => {
            u64::from(_mm256_movemask_epi8($v) as u32)
        };
    }
    for (k, chunk) in bytes.chunks_exact(32).enumerate() {
        // SAFETY: `chunk` is 32 readable bytes; `loadu` takes any alignment.
        let v = unsafe { _mm256_loadu_si256(chunk.as_ptr().cast()) };
        let shift = 32 * k;
        let folded = _mm256_or_si256(v, splat!(0x20));
        m.letters |= bits!(within!(folded, b'a', b'z')) << shift;
        m.digits |= bits!(within!(v, b'0', b'9')) << shift;
        let space = _mm256_cmpeq_epi8(v, splat!(b' '));
        m.ws |= bits!(_mm256_or_si256(space, within!(v, b'\t', b'\r'))) << shift;
        m.crlf |= bits!(_mm256_or_si256(_mm256_cmpeq_epi8(v, splat!(b'\n')), _mm256_cmpeq_epi8(v, splat!(b'\r')))) << shift;
        m.non_ascii |= bits!(v) << shift;
        m.apostrophe |= bits!(_mm256_cmpeq_epi8(v, splat!(b'\''))) << shift;
        if CASED {
            m.upper |= bits!(within!(v, b'A', b'Z')) << shift;
            m.lower |= bits!(within!(v, b'a', b'z')) << shift;
            m.slash |= bits!(_mm256_cmpeq_epi8(v, splat!(b'/'))) << shift;
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::super::classes::{ascii_class, is_other, LL, LU, N, WS};
    use super::*;

    /// Every byte value in every lane of a block: the masks against the class table, for the
    /// SWAR and the SIMD classifier, in a whole block and a block cut short by the text's end.
    #[test]
    fn masks_agree_with_the_class_table() {
        let mut checked = 0;
        for b in 0u8..=255 {
            for lane in 0..BLOCK {
                let mut text = [b'a'; BLOCK];
                text[lane] = b;
                let swar = classify_swar::<true>(&text);
                assert_eq!(classify::<true>(&text), swar, "{b:#x} at {lane}");
                #[cfg(target_arch = "x86_64")]
                {
                    assert_eq!(classify_sse2::<true>(&text), swar, "SSE2 {b:#x} at {lane}");
                    if std::arch::is_x86_feature_detected!("avx2") {
                        // SAFETY: the CPU has AVX2.
                        assert_eq!(unsafe { classify_avx2::<true>(&text) }, swar, "AVX2 {b:#x} at {lane}");
                    }
                }
                for cut in [BLOCK, lane + 1] {
                    let blk = AsciiBlock::load::<true>(&text[..cut], 0);
                    let k = ascii_class(b);
                    let want = |f: fn(u16) -> bool| k.is_some_and(f);
                    let got = |mask: u64| AsciiBlock::has(mask, lane);
                    assert_eq!(got(blk.letters), want(|k| k & (LU | LL) != 0), "letters {b:#x}");
                    assert_eq!(got(blk.upper), want(|k| k & LU != 0), "upper {b:#x}");
                    assert_eq!(got(blk.lower), want(|k| k & LL != 0), "lower {b:#x}");
                    assert_eq!(got(blk.digits), want(|k| k & N != 0), "digits {b:#x}");
                    assert_eq!(got(blk.ws), want(|k| k & WS != 0), "ws {b:#x}");
                    assert_eq!(got(blk.other), want(is_other), "other {b:#x}");
                    assert_eq!(got(blk.crlf), b == b'\r' || b == b'\n', "crlf {b:#x}");
                    assert_eq!(got(blk.slash), b == b'/', "slash {b:#x}");
                    assert_eq!(got(blk.non_ascii), b >= 0x80, "non-ASCII {b:#x}");
                    assert_eq!(blk.last, cut <= BLOCK);
                    // Before a letter (the text's other bytes).
                    if lane + 1 < cut {
                        let prefix = k.is_some_and(|k| k & (LU | LL | N) == 0) && b != b'\r' && b != b'\n';
                        assert_eq!(got(blk.word_start), k.is_some_and(|k| k & (LU | LL) != 0) || prefix, "word start {b:#x}");
                        let cl = AsciiBlock::load::<false>(&text[..cut], 0);
                        assert_eq!(AsciiBlock::has(cl.word_start, lane), got(blk.word_start) && b != b'\'', "cl100k word start {b:#x}");
                    }
                    if cut < BLOCK {
                        let past = !0u64 << cut;
                        let any = blk.letters | blk.digits | blk.ws | blk.other | blk.crlf | blk.non_ascii;
                        assert_eq!(any & past, 0, "bits past the end of the text");
                    }
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 256 * BLOCK * 2);
    }
}
