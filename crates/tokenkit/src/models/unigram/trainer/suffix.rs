//! Repeated substrings of a text, from a suffix array (the seed pieces of the Unigram trainer,
//! as SentencePiece and HF find them).
//!
//! A substring that occurs at least twice and is followed by at least two different symbols
//! (or by the end) is an internal node of the suffix tree, that is an lcp-interval of the
//! suffix array: those are the candidates, with their number of occurrences. HF's trainer runs
//! this over its distinct words (chars, each word once, whatever its count); SentencePiece's
//! over the bytes of all its sentences.

use crate::utils::suffix_array::{permuted_lcp, suffix_array, Symbol};
use crate::Result;

/// A repeated substring: `len` symbols (chars or bytes) from symbol `offset` of the joined
/// text, seen `freq` times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Repeat {
    /// Start, in symbols, of one occurrence in the joined text.
    pub offset: u32,
    /// Length in symbols.
    pub len: u32,
    /// Number of occurrences.
    pub freq: u32,
}

/// Calls `f` on every internal node of the suffix tree of `text` (every lcp-interval of at
/// least two suffixes), the root (depth 0) included. [`Repeat::offset`] is the occurrence
/// whose suffix sorts first (the one SentencePiece looks at). `alphabet` bounds the ranks of
/// the symbols ([`suffix_array`]). Memory: 8 bytes per symbol besides the text.
pub(super) fn for_each_repeat<T: Symbol>(text: &[T], alphabet: usize, mut f: impl FnMut(Repeat)) -> Result<()> {
    let sa = suffix_array(text, alphabet)?;
    let plcp = permuted_lcp(text, &sa);
    let n = text.len();
    // Stack of open intervals: (depth, left bound).
    let mut stack: Vec<(u32, u32)> = vec![(0, 0)];
    for i in 1..=n {
        let l = sa.get(i).map_or(0, |&s| plcp[s as usize]);
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

    #[test]
    fn repeats_are_right_branching_substrings() {
        let t = chars("banana");
        let mut got = Vec::new();
        for_each_repeat(&t, char::MAX as usize + 1, |r| {
            let s: String = t[r.offset as usize..(r.offset + r.len) as usize].iter().map(|&c| char::from_u32(c).unwrap()).collect();
            got.push((s, r.freq));
        })
        .unwrap();
        got.sort();
        // The internal nodes of the suffix tree of "banana": root, "a", "ana", "na".
        assert_eq!(got, vec![("".into(), 6), ("a".into(), 3), ("ana".into(), 2), ("na".into(), 2)]);
    }
}
