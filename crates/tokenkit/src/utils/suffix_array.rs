//! Suffix arrays by induced sorting (SA-IS, Nong, Zhang and Chan 2009) and their LCP arrays
//! (Kärkkäinen, Manzini and Puglisi's Φ algorithm), in little memory: besides the text, the
//! suffix array (4 bytes per symbol) and one bit per symbol; the reduced problem of each
//! recursion lives inside the suffix array itself. The LCP values come as the *permuted* LCP
//! array (indexed by text position), 4 more bytes per symbol, with no inverse suffix array.
//!
//! Suffixes compare as strings: a suffix that is a proper prefix of another sorts first (the
//! text is taken to end with a unique symbol smaller than every other, which is not stored).

use crate::{Error, Result};

/// An unset slot of the suffix array while it is being built.
const EMPTY: u32 = u32::MAX;

/// A symbol of a text to sort: its rank in the alphabet (below the `alphabet` given to
/// [`suffix_array`]); symbols compare by rank.
pub trait Symbol: Copy + Eq {
    /// The rank of the symbol, `0..alphabet`.
    fn rank(self) -> usize;
}

impl Symbol for u8 {
    #[inline]
    fn rank(self) -> usize {
        usize::from(self)
    }
}

impl Symbol for u32 {
    #[inline]
    fn rank(self) -> usize {
        self as usize
    }
}

/// The suffix array of `text`: the start positions (in symbols) of its suffixes in increasing
/// order. `alphabet` bounds the ranks of the symbols (256 for bytes; `char::MAX as usize + 1`
/// for code points: the memory of one `u32` per possible rank is taken for the buckets).
///
/// Errors: a text of 2³² − 1 symbols or more (positions are `u32`), a symbol whose rank is not
/// below `alphabet`.
pub fn suffix_array<T: Symbol>(text: &[T], alphabet: usize) -> Result<Vec<u32>> {
    if text.len() >= EMPTY as usize {
        return Err(Error::invalid(format!("suffix array: the text has {} symbols, more than 4 billion", text.len())));
    }
    if let Some(pos) = text.iter().position(|c| c.rank() >= alphabet) {
        return Err(Error::invalid(format!(
            "suffix array: symbol {} at position {pos} is outside the alphabet of {alphabet}",
            text[pos].rank()
        )));
    }
    let mut sa = vec![EMPTY; text.len()];
    sais(text, &mut sa, alphabet);
    Ok(sa)
}

/// The permuted LCP array of `text` and its suffix array `sa`: at text position `i`, the
/// length (in symbols) of the longest common prefix of the suffix `i` and the suffix just
/// before it in `sa` (0 for the smallest suffix). The LCP of `sa[r - 1]` and `sa[r]` is
/// `plcp[sa[r]]`.
pub fn permuted_lcp<T: Symbol>(text: &[T], sa: &[u32]) -> Vec<u32> {
    let n = text.len();
    debug_assert_eq!(sa.len(), n);
    // Φ: the suffix before each suffix in sorted order; then, in place, the LCP with it
    // (which drops by at most one from one text position to the next).
    let mut plcp = vec![EMPTY; n];
    for r in 1..n {
        plcp[sa[r] as usize] = sa[r - 1];
    }
    let mut h = 0usize;
    for i in 0..n {
        let before = plcp[i];
        if before == EMPTY {
            plcp[i] = 0;
            h = 0;
            continue;
        }
        let j = before as usize;
        while i + h < n && j + h < n && text[i + h] == text[j + h] {
            h += 1;
        }
        plcp[i] = h as u32;
        h = h.saturating_sub(1);
    }
    plcp
}

/// One bit per position: set for S-type suffixes (smaller than the suffix that follows).
struct Types(Vec<u64>);

impl Types {
    /// The types of `s`'s suffixes; the last is L-type (the implicit end symbol is smaller).
    fn of<T: Symbol>(s: &[T]) -> Self {
        let n = s.len();
        let mut types = Self(vec![0; n.div_ceil(64)]);
        let mut next_is_s = false;
        for i in (0..n.saturating_sub(1)).rev() {
            let (a, b) = (s[i].rank(), s[i + 1].rank());
            let is_s = a < b || (a == b && next_is_s);
            if is_s {
                types.0[i / 64] |= 1 << (i % 64);
            }
            next_is_s = is_s;
        }
        types
    }

    #[inline]
    fn is_s(&self, i: usize) -> bool {
        self.0[i / 64] >> (i % 64) & 1 == 1
    }

    /// A leftmost S-type position (an S-type after an L-type).
    #[inline]
    fn is_lms(&self, i: usize) -> bool {
        i > 0 && self.is_s(i) && !self.is_s(i - 1)
    }
}

/// Bucket bounds of `s`'s symbols: the start of each symbol's bucket in the suffix array, or
/// its end (exclusive) with `end`.
fn buckets<T: Symbol>(s: &[T], bkt: &mut [u32], end: bool) {
    bkt.fill(0);
    for c in s {
        bkt[c.rank()] += 1;
    }
    let mut sum = 0u32;
    for b in bkt.iter_mut() {
        let count = *b;
        sum += count;
        *b = if end { sum } else { sum - count };
    }
}

/// The L-type suffixes, in order, from the suffixes already placed (left to right).
fn induce_l<T: Symbol>(s: &[T], sa: &mut [u32], types: &Types, bkt: &mut [u32]) {
    let n = s.len();
    buckets(s, bkt, false);
    // The last suffix follows the implicit end symbol, the smallest suffix of all.
    let c = s[n - 1].rank();
    sa[bkt[c] as usize] = (n - 1) as u32;
    bkt[c] += 1;
    for r in 0..n {
        let v = sa[r];
        if v == EMPTY || v == 0 {
            continue;
        }
        let j = v as usize - 1;
        if !types.is_s(j) {
            let c = s[j].rank();
            sa[bkt[c] as usize] = j as u32;
            bkt[c] += 1;
        }
    }
}

/// The S-type suffixes, in order, from the L-type ones (right to left).
fn induce_s<T: Symbol>(s: &[T], sa: &mut [u32], types: &Types, bkt: &mut [u32]) {
    buckets(s, bkt, true);
    for r in (0..s.len()).rev() {
        let v = sa[r];
        if v == EMPTY || v == 0 {
            continue;
        }
        let j = v as usize - 1;
        if types.is_s(j) {
            let c = s[j].rank();
            bkt[c] -= 1;
            sa[bkt[c] as usize] = j as u32;
        }
    }
}

/// Whether the LMS substrings at `a` and `b` (up to and including the next LMS position) are
/// equal, symbols and types.
fn same_lms_substring<T: Symbol>(s: &[T], types: &Types, a: usize, b: usize) -> bool {
    let n = s.len();
    for d in 0.. {
        let (x, y) = (a + d, b + d);
        // The implicit end symbol is unique: a substring reaching it equals no other.
        if x == n || y == n || s[x] != s[y] || types.is_s(x) != types.is_s(y) {
            return false;
        }
        if d > 0 && (types.is_lms(x) || types.is_lms(y)) {
            return types.is_lms(x) && types.is_lms(y);
        }
    }
    unreachable!("the loop returns at the end of the text")
}

/// Fills `sa` (all `EMPTY`, as long as `s`) with the suffix array of `s`, whose ranks are
/// below `alphabet`.
fn sais<T: Symbol>(s: &[T], sa: &mut [u32], alphabet: usize) {
    let n = s.len();
    match n {
        0 => return,
        1 => {
            sa[0] = 0;
            return;
        }
        _ => {}
    }
    let types = Types::of(s);
    let mut bkt = vec![0u32; alphabet];

    // Stage 1: sort the LMS substrings (LMS suffixes at their buckets' ends in any order, then
    // induced).
    buckets(s, &mut bkt, true);
    for (i, c) in s.iter().enumerate().skip(1) {
        if types.is_lms(i) {
            let c = c.rank();
            bkt[c] -= 1;
            sa[bkt[c] as usize] = i as u32;
        }
    }
    induce_l(s, sa, &types, &mut bkt);
    induce_s(s, sa, &types, &mut bkt);

    // The sorted LMS positions to the front; LMS positions are at least 2 apart, so there are
    // at most n / 2 and `m + pos / 2` are distinct slots of the rest.
    let mut m = 0;
    for r in 0..n {
        let v = sa[r] as usize;
        if types.is_lms(v) {
            sa[m] = v as u32;
            m += 1;
        }
    }
    if m == 0 {
        // No LMS suffix: the induced order is complete.
        return;
    }
    sa[m..].fill(EMPTY);
    // Name the LMS substrings by their rank (equal substrings, equal names).
    let mut names = 0u32;
    let mut prev = usize::MAX;
    for r in 0..m {
        let pos = sa[r] as usize;
        if prev == usize::MAX || !same_lms_substring(s, &types, prev, pos) {
            names += 1;
            prev = pos;
        }
        sa[m + pos / 2] = names - 1;
    }
    // The reduced string (the names in text order) at the end of `sa`.
    let mut j = n;
    for r in (m..n).rev() {
        if sa[r] != EMPTY {
            j -= 1;
            sa[j] = sa[r];
        }
    }
    // Sort the LMS suffixes: by recursion on the reduced string, or directly when every name
    // is distinct. The result (indices into the reduced string) goes to `sa[..m]`.
    let (head, tail) = sa.split_at_mut(n - m);
    if (names as usize) < m {
        head[..m].fill(EMPTY);
        sais(&tail[..], &mut head[..m], names as usize);
    } else {
        for (i, &name) in tail.iter().enumerate() {
            head[name as usize] = i as u32;
        }
    }
    drop(bkt);
    // The LMS positions in text order replace the reduced string; map the indices to them.
    let mut j = n - m;
    for i in 1..n {
        if types.is_lms(i) {
            sa[j] = i as u32;
            j += 1;
        }
    }
    for r in 0..m {
        sa[r] = sa[n - m + sa[r] as usize];
    }
    sa[m..].fill(EMPTY);

    // Stage 2: the sorted LMS suffixes at their buckets' ends, then the rest induced.
    let mut bkt = vec![0u32; alphabet];
    buckets(s, &mut bkt, true);
    for r in (0..m).rev() {
        let v = sa[r];
        sa[r] = EMPTY;
        let c = s[v as usize].rank();
        bkt[c] -= 1;
        sa[bkt[c] as usize] = v;
    }
    induce_l(s, sa, &types, &mut bkt);
    induce_s(s, sa, &types, &mut bkt);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive_sa<T: Ord>(text: &[T]) -> Vec<u32> {
        let mut sa: Vec<u32> = (0..text.len() as u32).collect();
        sa.sort_by(|&a, &b| text[a as usize..].cmp(&text[b as usize..]));
        sa
    }

    fn naive_lcp<T: Eq>(text: &[T], sa: &[u32]) -> Vec<u32> {
        let mut plcp = vec![0u32; text.len()];
        for r in 1..sa.len() {
            let (a, b) = (&text[sa[r - 1] as usize..], &text[sa[r] as usize..]);
            plcp[sa[r] as usize] = a.iter().zip(b).take_while(|(x, y)| x == y).count() as u32;
        }
        plcp
    }

    /// Checks the suffix array and LCP of `text` against sorting; returns the suffixes checked.
    fn check<T: Symbol + Ord + std::fmt::Debug>(text: &[T], alphabet: usize) -> usize {
        let sa = suffix_array(text, alphabet).unwrap();
        let want = naive_sa(text);
        assert_eq!(sa, want, "{text:?}");
        assert_eq!(permuted_lcp(text, &sa), naive_lcp(text, &want), "{text:?}");
        sa.len()
    }

    #[test]
    fn suffix_arrays_of_words_match_sorting() {
        let mut checked = 0;
        for s in [
            "",
            "a",
            "ab",
            "ba",
            "aa",
            "banana",
            "mississippi\0miss\0",
            "aaaaaaaa",
            "abababab",
            "cbacbacba",
            "abcabcabc\0こんにちはこんにちは",
        ] {
            checked += check(s.as_bytes(), 256);
            let chars: Vec<u32> = s.chars().map(|c| c as u32).collect();
            checked += check(&chars, char::MAX as usize + 1);
        }
        // ASCII words once as bytes and once as chars; the last one's 40 bytes and 20 chars.
        assert_eq!(checked, 2 * (1 + 2 + 2 + 2 + 6 + 17 + 8 + 8 + 9) + 40 + 20);
    }

    #[test]
    fn suffix_arrays_of_random_texts_match_sorting() {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut checked = 0;
        for len in [2usize, 3, 7, 64, 500, 3000] {
            for alphabet in [1u64, 2, 3, 5, 40, 256] {
                let mut next = || {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x % alphabet
                };
                let bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
                checked += check(&bytes, 256);
                let wide: Vec<u32> = (0..len).map(|_| next() as u32 * 7).collect();
                checked += check(&wide, 40 * 7 + 256 * 7);
            }
        }
        assert_eq!(checked, 2 * 6 * (2 + 3 + 7 + 64 + 500 + 3000));
    }

    #[test]
    fn periodic_texts_recurse_deeply() {
        // Fibonacci words and runs of one repeated block make every level recurse.
        let (mut a, mut b) = (b"a".to_vec(), b"ab".to_vec());
        while b.len() < 5000 {
            let next = [b.as_slice(), a.as_slice()].concat();
            a = std::mem::replace(&mut b, next);
        }
        let block: Vec<u8> = b"abcab".repeat(700);
        assert_eq!(check(&b, 256) + check(&block, 256), b.len() + 3500);
    }

    #[test]
    fn symbols_outside_the_alphabet_are_an_error() {
        let err = suffix_array(&[1u32, 9, 2], 5).unwrap_err().to_string();
        assert!(err.contains("symbol 9 at position 1"), "{err}");
    }
}
