//! Repeated substrings of a text, from a suffix array (the seed pieces of the Unigram trainer,
//! as SentencePiece and HF find them).
//!
//! A substring that occurs at least twice and is followed by at least two different symbols
//! (or by the end) is an internal node of the suffix tree, that is an lcp-interval of the
//! suffix array: those are the candidates, with their number of occurrences. HF's trainer runs
//! this over its distinct words (chars, each word once, whatever its count); SentencePiece's
//! over the bytes of all its sentences.

use rayon::prelude::*;

use crate::{Error, Result};

/// A repeated substring: `len` chars from char `offset` of the joined text, seen `freq` times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Repeat {
    /// Start, in chars, of one occurrence in the joined text.
    pub offset: u32,
    /// Length in chars.
    pub len: u32,
    /// Number of occurrences.
    pub freq: u32,
}

/// The suffix array of `text` by prefix doubling (Manber and Myers): the suffixes sorted by
/// their first `k` chars are sorted by their first `2k` with two counting-sort passes (the
/// order by the second half comes from the previous order), until all ranks differ. A suffix
/// that ends within the first `2k` chars sorts before the longer ones that share its chars.
pub(super) fn suffix_array(text: &[u32]) -> Result<Vec<u32>> {
    let n = text.len();
    if n >= u32::MAX as usize - 1 {
        return Err(Error::invalid("Unigram training: the words hold more than 4 billion chars"));
    }
    if n == 0 {
        return Ok(Vec::new());
    }
    // Initial ranks: the chars, compressed to 0..distinct.
    let mut alphabet: Vec<u32> = text.to_vec();
    alphabet.par_sort_unstable();
    alphabet.dedup();
    let mut rank: Vec<u32> = text.iter().map(|c| alphabet.binary_search(c).map_or(0, |r| r as u32)).collect();
    let mut classes = alphabet.len();
    drop(alphabet);
    let mut counts: Vec<u32> = vec![0; n.max(classes) + 1];
    // The order by the first char.
    let mut sa: Vec<u32> = vec![0; n];
    let mut by_second: Vec<u32> = (0..n as u32).collect();
    counting_sort(&rank, &by_second, &mut sa, &mut counts[..classes]);
    let mut next_rank = vec![0u32; n];
    let mut k = 1usize;
    loop {
        // Sorted by the second half: suffixes with no second half first, then the others in
        // the current order of the suffix that starts their second half; then stably by the
        // first half.
        by_second.clear();
        by_second.extend((n.saturating_sub(k)..n).map(|i| i as u32));
        by_second.extend(sa.iter().filter(|&&j| j as usize >= k).map(|&j| j - k as u32));
        counting_sort(&rank, &by_second, &mut sa, &mut counts[..classes]);
        let key = |i: usize| (rank[i], if i + k < n { rank[i + k] + 1 } else { 0 });
        let mut r = 0u32;
        next_rank[sa[0] as usize] = 0;
        for j in 1..n {
            if key(sa[j] as usize) != key(sa[j - 1] as usize) {
                r += 1;
            }
            next_rank[sa[j] as usize] = r;
        }
        std::mem::swap(&mut rank, &mut next_rank);
        classes = r as usize + 1;
        if classes == n || k >= n {
            break;
        }
        k *= 2;
    }
    Ok(sa)
}

/// Stable counting sort of `items` by `rank[item]` (ranks below `counts.len()`) into `out`.
fn counting_sort(rank: &[u32], items: &[u32], out: &mut [u32], counts: &mut [u32]) {
    counts.fill(0);
    for &i in items {
        counts[rank[i as usize] as usize] += 1;
    }
    let mut sum = 0;
    for c in counts.iter_mut() {
        let here = *c;
        *c = sum;
        sum += here;
    }
    for &i in items {
        let slot = &mut counts[rank[i as usize] as usize];
        out[*slot as usize] = i;
        *slot += 1;
    }
}

/// `lcp[i]` = length of the longest common prefix of the suffixes `sa[i - 1]` and `sa[i]`
/// (`lcp[0] = 0`), by Kasai's algorithm.
pub(super) fn lcp_array(text: &[u32], sa: &[u32]) -> Vec<u32> {
    let n = text.len();
    let mut inverse = vec![0u32; n];
    for (i, &s) in sa.iter().enumerate() {
        inverse[s as usize] = i as u32;
    }
    let mut lcp = vec![0u32; n];
    let mut h = 0usize;
    for i in 0..n {
        let r = inverse[i] as usize;
        if r == 0 {
            h = 0;
            continue;
        }
        let j = sa[r - 1] as usize;
        while i + h < n && j + h < n && text[i + h] == text[j + h] {
            h += 1;
        }
        lcp[r] = h as u32;
        h = h.saturating_sub(1);
    }
    lcp
}

/// Calls `f` on every internal node of the suffix tree of `text` (every lcp-interval of at
/// least two suffixes), the root (depth 0) included. [`Repeat::offset`] is the occurrence
/// whose suffix sorts first (the one SentencePiece looks at).
pub(super) fn for_each_repeat(text: &[u32], mut f: impl FnMut(Repeat)) -> Result<()> {
    let sa = suffix_array(text)?;
    let lcp = lcp_array(text, &sa);
    let n = text.len();
    // Stack of open intervals: (depth, left bound).
    let mut stack: Vec<(u32, u32)> = vec![(0, 0)];
    for i in 1..=n {
        let l = lcp.get(i).copied().unwrap_or(0);
        let mut lb = (i - 1) as u32;
        while let Some(&(depth, left)) = stack.last() {
            if l >= depth {
                break;
            }
            stack.pop();
            f(Repeat { offset: sa[left as usize], len: depth, freq: i as u32 - left });
            lb = left;
        }
        if l > stack.last().map_or(0, |&(depth, _)| depth) {
            stack.push((l, lb));
        }
    }
    for (depth, left) in stack.into_iter().rev() {
        if n as u32 - left > 1 {
            f(Repeat { offset: sa[left as usize], len: depth, freq: n as u32 - left });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(s: &str) -> Vec<u32> {
        s.chars().map(|c| c as u32).collect()
    }

    fn naive_sa(text: &[u32]) -> Vec<u32> {
        let mut sa: Vec<u32> = (0..text.len() as u32).collect();
        sa.sort_by(|&a, &b| text[a as usize..].cmp(&text[b as usize..]));
        sa
    }

    #[test]
    fn suffix_array_matches_naive_sort() {
        for s in ["", "a", "banana", "mississippi\0miss\0", "aaaaaaaa", "abcabcabc\0こんにちはこんにちは"] {
            let t = chars(s);
            assert_eq!(suffix_array(&t).unwrap(), naive_sa(&t), "{s:?}");
        }
    }

    #[test]
    fn suffix_array_matches_naive_sort_on_random_texts() {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for len in [2usize, 3, 7, 64, 500, 3000] {
            for alphabet in [1u64, 2, 3, 5, 40] {
                let t: Vec<u32> = (0..len)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        (x % alphabet) as u32 * 7
                    })
                    .collect();
                assert_eq!(suffix_array(&t).unwrap(), naive_sa(&t), "len {len} alphabet {alphabet}");
            }
        }
    }

    #[test]
    fn repeats_are_right_branching_substrings() {
        let t = chars("banana");
        let mut got = Vec::new();
        for_each_repeat(&t, |r| {
            let s: String = t[r.offset as usize..(r.offset + r.len) as usize].iter().map(|&c| char::from_u32(c).unwrap()).collect();
            got.push((s, r.freq));
        })
        .unwrap();
        got.sort();
        // The internal nodes of the suffix tree of "banana": root, "a", "ana", "na".
        assert_eq!(got, vec![("".into(), 6), ("a".into(), 3), ("ana".into(), 2), ("na".into(), 2)]);
    }
}
