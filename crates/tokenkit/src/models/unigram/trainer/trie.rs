//! The trainer's own trie over the pieces: a double array (as the model's `unigram::trie`,
//! whose lookups it mirrors) built from the sorted pieces, without an intermediate pointer
//! trie, because the trainer builds it over up to a million seed pieces.
//!
//! The child of state `s` on byte `b` is `t = base[s] + b`, valid when `check[t] == s`.

use rayon::prelude::*;

/// "No piece ends here" / "free slot".
const NONE: u32 = u32::MAX;

/// How far behind the last used slot the placement looks for free slots.
const WINDOW: usize = 4096;

/// One state: where its children live, its parent, the piece ending here.
#[derive(Debug, Clone, Copy)]
struct Unit {
    base: u32,
    check: u32,
    id: u32,
}

const FREE: Unit = Unit { base: 0, check: NONE, id: NONE };

/// Pieces as a double-array trie: finds every piece that is a prefix of a byte string.
pub(super) struct Trie {
    units: Vec<Unit>,
}

impl Trie {
    /// Builds the trie over `(piece, id)` pairs; a piece listed twice keeps one of its ids.
    pub fn new<'a>(pieces: impl IntoIterator<Item = (&'a str, u32)>) -> Self {
        let mut keys: Vec<(&[u8], u32)> =
            pieces.into_iter().filter(|(p, _)| !p.is_empty()).map(|(p, id)| (p.as_bytes(), id)).collect();
        keys.par_sort_unstable_by(|a, b| a.0.cmp(b.0));

        let mut units = vec![Unit { base: 0, check: 0, id: NONE }];
        let mut used: Vec<u64> = vec![1];
        let is_used = |used: &[u64], i: usize| used.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1);
        // Breadth first: (state, first key, end key, depth) of the keys below each state.
        let mut queue = std::collections::VecDeque::from([(0u32, 0usize, keys.len(), 0usize)]);
        let mut kids: Vec<(u8, usize, usize)> = Vec::new();
        // No free slot below `cursor`.
        let mut cursor = 1usize;
        while let Some((state, mut lo, hi, depth)) = queue.pop_front() {
            // The keys of the range share `depth` bytes; the (only possible) key of exactly that
            // length sorts first.
            while lo < hi && keys[lo].0.len() == depth {
                units[state as usize].id = keys[lo].1;
                lo += 1;
            }
            if lo == hi {
                continue;
            }
            kids.clear();
            let mut start = lo;
            for k in lo + 1..=hi {
                if k == hi || keys[k].0[depth] != keys[start].0[depth] {
                    kids.push((keys[start].0[depth], start, k));
                    start = k;
                }
            }
            // First fit: the first free slot for the first child where the others fit too,
            // skipping used slots a word of the bitset at a time. Holes more than `WINDOW`
            // slots behind the end are given up (else each placement would try them all).
            cursor = next_free(&used, cursor.max(units.len().saturating_sub(WINDOW)));
            let first = kids[0].0 as usize;
            let mut slot = next_free(&used, cursor.max(first + 1));
            let base = loop {
                let base = slot - first;
                if kids.iter().all(|&(b, _, _)| !is_used(&used, base + b as usize)) {
                    break base;
                }
                slot = next_free(&used, slot + 1);
            };
            units[state as usize].base = base as u32;
            let last = base + kids.last().map_or(0, |&(b, _, _)| b as usize);
            if units.len() <= last {
                units.resize(last + 1, FREE);
            }
            if used.len() <= last / 64 {
                used.resize(last / 64 + 1, 0);
            }
            for &(b, klo, khi) in &kids {
                let t = base + b as usize;
                used[t / 64] |= 1 << (t % 64);
                units[t] = Unit { base: 0, check: state, id: NONE };
                queue.push_back((t as u32, klo, khi, depth + 1));
            }
        }
        // Every lookup `base + b` with b < 256 stays in bounds.
        let len = units.len() + 256;
        units.resize(len, FREE);
        Self { units }
    }

    /// Calls `f(length, id)` for each piece that is a prefix of `bytes`, shortest first.
    #[inline]
    pub fn common_prefixes(&self, bytes: &[u8], mut f: impl FnMut(usize, u32)) {
        let units = &self.units[..];
        let mut s = 0usize;
        for (i, &b) in bytes.iter().enumerate() {
            let base = units[s].base as usize;
            if base == 0 {
                return;
            }
            let t = base + b as usize;
            let u = units[t];
            if u.check as usize != s {
                return;
            }
            s = t;
            if u.id != NONE {
                f(i + 1, u.id);
            }
        }
    }
}

/// The first slot at or after `i` whose bit is clear in `used`.
fn next_free(used: &[u64], i: usize) -> usize {
    let mut w = i / 64;
    let mut bits = match used.get(w) {
        Some(&x) => !x & (u64::MAX << (i % 64)),
        None => return i,
    };
    loop {
        if bits != 0 {
            return w * 64 + bits.trailing_zeros() as usize;
        }
        w += 1;
        match used.get(w) {
            Some(&x) => bits = !x,
            None => return w * 64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_a_naive_search() {
        let words: Vec<String> = (0..3000u32)
            .map(|i| {
                let n = 1 + (i * 7919 % 6) as usize;
                (0..n).map(|k| char::from_u32(0x61 + (i * 31 + k as u32 * 17) % 5).unwrap_or('a')).collect::<String>()
                    + if i % 7 == 0 { "é" } else { "" }
            })
            .collect();
        let mut seen = std::collections::HashMap::new();
        for (i, w) in words.iter().enumerate() {
            seen.entry(w.as_str()).or_insert(i as u32);
        }
        let t = Trie::new(seen.iter().map(|(&w, &i)| (w, i)));
        for text in ["abcdeabcde", "eeééa", "dcbaé", "bbbbbbbb", ""] {
            for start in 0..text.len() {
                let mut got = vec![];
                t.common_prefixes(&text.as_bytes()[start..], |n, id| got.push((n, id)));
                let want: Vec<_> = (1..=text.len() - start)
                    .filter_map(|n| {
                        let p = text.as_bytes().get(start..start + n)?;
                        std::str::from_utf8(p).ok().and_then(|p| seen.get(p)).map(|&id| (n, id))
                    })
                    .collect();
                assert_eq!(got, want, "{text:?}[{start}..]");
            }
        }
        Trie::new(std::iter::empty()).common_prefixes(b"a", |_, _| panic!());
    }
}
