//! A byte trie over the Unigram pieces as a double array: the child of state `s` on byte `b`
//! is `t = base[s] + b`, valid when `check[t] == s`, so each byte of a prefix search costs
//! one array access (the Viterbi calls it at every char of every input, the trainer's at
//! every position of its corpus).

use rayon::prelude::*;

use crate::utils::table_cache::{self, Pod, Table};
use crate::utils::used_slots::Placer;

/// "No piece ends here" / "unused slot".
const NONE: u32 = u32::MAX;

/// One state of the double array: 16 bytes, read together.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C)]
struct Unit {
    /// Children of this state live at `base + byte`.
    base: u32,
    /// The parent state, or `NONE` for a free slot and the root.
    check: u32,
    /// Id of the piece ending here, or `NONE`.
    id: u32,
    /// A score stored with the piece (see [`Trie::with_scores`]), read with the id so the
    /// Viterbi needs no second lookup.
    score: f32,
}

const FREE: Unit = Unit { base: 0, check: NONE, id: NONE, score: 0.0 };

// SAFETY: `#[repr(C)]`, three `u32`s and an `f32`: no padding, any bits are a value.
unsafe impl Pod for Unit {}

/// Pieces as a trie: finds every piece that is a prefix of a byte string.
#[derive(Debug, Clone, PartialEq)]
pub struct Trie {
    /// In place in a mapped table-cache entry when read from one ([`Trie::read_table`]).
    units: Table<Unit>,
    /// The length of the longest piece, in bytes.
    longest: usize,
}

impl Default for Trie {
    fn default() -> Self {
        Self::new(std::iter::empty())
    }
}

impl Trie {
    /// Builds the trie; a piece listed twice keeps its last id.
    pub fn new<'a>(pieces: impl IntoIterator<Item = (&'a str, u32)>) -> Self {
        Self::with_scores(pieces.into_iter().map(|(p, id)| (p, id, 0.0)))
    }

    /// Builds the trie with a score per piece (see [`Self::common_prefixes_scored`]); a piece
    /// listed twice keeps its last id and score.
    ///
    /// The double array is laid out straight from the sorted pieces (no pointer trie first:
    /// the Unigram trainer builds it over up to a million seed pieces), breadth first: the
    /// children of each state get the first base where all their slots are free, found by
    /// walking a bitset of used slots.
    pub fn with_scores<'a>(pieces: impl IntoIterator<Item = (&'a str, u32, f32)>) -> Self {
        let keys = sorted_keys(pieces.into_iter().map(|(p, id, score)| (p.as_bytes(), id, score)).collect());
        let longest = keys.iter().map(|k| k.0.len()).max().unwrap_or(0);
        // The root is nobody's child: its check matches no state.
        let mut units = vec![Unit { check: NONE, ..FREE }];
        let mut placer = Placer::new();
        // (state, first key, end key, depth) of the keys below each state, which share their
        // first `depth` bytes.
        let mut queue = std::collections::VecDeque::from([(0u32, 0usize, keys.len(), 0usize)]);
        let mut kids: Vec<(u8, usize, usize)> = Vec::new();
        while let Some((state, mut lo, hi, depth)) = queue.pop_front() {
            // The keys that end at this state sort first.
            while lo < hi && keys[lo].0.len() == depth {
                let unit = &mut units[state as usize];
                (unit.id, unit.score) = (keys[lo].1, keys[lo].2);
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
            let base = placer.place(kids.iter().map(|&(b, _, _)| usize::from(b)));
            units[state as usize].base = base as u32;
            let last = base + kids.last().map_or(0, |&(b, _, _)| b as usize);
            if units.len() <= last {
                units.resize(last + 1, FREE);
            }
            for &(b, klo, khi) in &kids {
                let t = base + b as usize;
                units[t] = Unit { check: state, ..FREE };
                queue.push_back((t as u32, klo, khi, depth + 1));
            }
        }
        // Every lookup `base + b` with b < 256 stays in bounds.
        let len = units.len() + 256;
        units.resize(len, FREE);
        Self { units: units.into(), longest }
    }

    /// Writes the trie for [`Self::read_table`].
    pub fn write_table(&self, w: &mut table_cache::Writer) {
        w.table(&self.units);
        w.u64(self.longest as u64);
    }

    /// Reads what [`Self::write_table`] wrote (the units in place when the entry is mapped),
    /// checked to hold only ids below `n_ids` and bases whose 256 children are in bounds.
    pub fn read_table(r: &mut table_cache::Reader<'_>, n_ids: usize) -> crate::Result<Self> {
        let bad = || crate::Error::invalid("table cache: malformed trie");
        let units: Table<Unit> = r.table()?;
        let longest = usize::try_from(r.u64()?).map_err(|_| bad())?;
        let ok = units.first().is_some_and(|root| root.check == NONE)
            && units.iter().all(|u| u.base as usize + 256 <= units.len() && (u.id == NONE || (u.id as usize) < n_ids));
        if !ok {
            return Err(bad());
        }
        Ok(Self { units, longest })
    }

    /// The length of the longest piece, in bytes.
    pub fn longest(&self) -> usize {
        self.longest
    }

    /// Whether some piece starts with byte `b`.
    pub fn has_child(&self, b: u8) -> bool {
        let t = self.units[0].base as usize + b as usize;
        self.units[0].base != 0 && self.units[t].check == 0
    }

    /// The scores stored with the pieces.
    pub fn scores(&self) -> impl Iterator<Item = f32> + '_ {
        self.units.iter().filter(|u| u.id != NONE).map(|u| u.score)
    }

    /// Calls `f(length, id)` for each piece that is a prefix of `bytes`, shortest first.
    #[inline]
    pub fn common_prefixes(&self, bytes: &[u8], mut f: impl FnMut(usize, u32)) {
        self.common_prefixes_scored(bytes, |len, id, _| f(len, id))
    }

    /// Calls `f(length, id, score)` for each piece that is a prefix of `bytes`, shortest first.
    #[inline]
    pub fn common_prefixes_scored(&self, bytes: &[u8], mut f: impl FnMut(usize, u32, f32)) {
        let mut cursor = self.cursor();
        for (i, &b) in bytes.iter().enumerate() {
            match self.step(&mut cursor, b) {
                Some((id, score)) if id != NONE => f(i + 1, id, score),
                Some(_) => {}
                None => return,
            }
        }
    }

    /// A cursor at the root, to walk the trie byte by byte with [`Self::step`].
    #[inline]
    pub fn cursor(&self) -> Cursor {
        Cursor { state: 0, base: self.units[0].base }
    }

    /// Moves `cursor` along byte `b`: `None` if no piece continues that way, else the id
    /// (`u32::MAX` for none) and score of the piece ending there.
    #[inline]
    pub fn step(&self, cursor: &mut Cursor, b: u8) -> Option<(u32, f32)> {
        // A state without children has base 0: no unit has it as parent, so the check
        // fails without testing for that case first.
        let t = cursor.base as usize + b as usize;
        let u = self.units.get(t)?;
        if u.check != cursor.state {
            return None;
        }
        *cursor = Cursor { state: t as u32, base: u.base };
        Some((u.id, u.score))
    }

    /// [`Self::step`] along every byte of `bytes`: what the last step found (`(u32::MAX, 0.0)`
    /// for no bytes), or `None` as soon as no piece continues.
    #[inline]
    pub fn walk(&self, cursor: &mut Cursor, bytes: impl IntoIterator<Item = u8>) -> Option<(u32, f32)> {
        bytes.into_iter().try_fold((NONE, 0.0), |_, b| self.step(cursor, b))
    }
}

/// `keys` sorted by their bytes, equal keys in input order (so that the last one given wins).
///
/// Sorted on each key's first 16 bytes as a number, with its index (what most comparisons
/// decide: comparing byte strings costs a call each, most of an uncached Unigram load), then
/// each run of keys with the same first 16 bytes by the whole key, stably.
fn sorted_keys(keys: Vec<(&[u8], u32, f32)>) -> Vec<(&[u8], u32, f32)> {
    let head = |k: &[u8]| {
        let mut b = [0u8; 16];
        let n = k.len().min(16);
        b[..n].copy_from_slice(&k[..n]);
        u128::from_be_bytes(b)
    };
    let mut order: Vec<(u128, u32)> = keys.iter().enumerate().map(|(i, k)| (head(k.0), i as u32)).collect();
    if order.len() > 1 << 16 {
        order.par_sort_unstable();
    } else {
        order.sort_unstable();
    }
    let mut sorted: Vec<(&[u8], u32, f32)> = order.iter().map(|&(_, i)| keys[i as usize]).collect();
    // Keys that share their first 16 bytes (longer keys, or shorter ones told apart only by
    // trailing NUL bytes) are in input order: a stable sort by the whole key puts them right.
    let mut start = 0;
    for k in 1..=order.len() {
        if k == order.len() || order[k].0 != order[start].0 {
            if k - start > 1 {
                sorted[start..k].sort_by(|a, b| a.0.cmp(b.0));
            }
            start = k;
        }
    }
    sorted
}

/// A position in a [`Trie`] walk.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cursor {
    state: u32,
    base: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes() {
        let t = Trie::new([("a", 0), ("ab", 1), ("abc", 2), ("b", 3), ("ab", 4)]);
        let mut found = vec![];
        t.common_prefixes(b"abcd", |n, id| found.push((n, id)));
        assert_eq!(found, vec![(1, 0), (2, 4), (3, 2)]);
        found.clear();
        t.common_prefixes(b"x", |n, id| found.push((n, id)));
        assert!(found.is_empty());
        assert!(t.has_child(b'a') && !t.has_child(b'x'));
        Trie::default().common_prefixes(b"a", |_, _| panic!());
        assert!(!Trie::default().has_child(b'a'));
    }

    /// The keys come out as a stable sort by their bytes puts them: long keys sharing 16 bytes,
    /// keys told apart only by trailing NUL bytes, and duplicates (input order kept).
    #[test]
    fn keys_sort_as_a_stable_sort_does() {
        let mut owned: Vec<Vec<u8>> = Vec::new();
        for i in 0..2000u32 {
            let n = (i * 7919 % 23) as usize;
            let mut k: Vec<u8> = (0..n).map(|j| [b'a', b'b', 0, 0xE3][(i as usize * 31 + j * j) % 4 * usize::from(j > 12)]).collect();
            if i % 5 == 0 {
                k.push(0);
            }
            owned.push(k);
        }
        let keys: Vec<(&[u8], u32, f32)> = owned.iter().enumerate().map(|(i, k)| (k.as_slice(), i as u32, 0.0)).collect();
        let mut want = keys.clone();
        want.sort_by(|a, b| a.0.cmp(b.0));
        let got = sorted_keys(keys);
        assert_eq!(got.iter().map(|k| (k.0, k.1)).collect::<Vec<_>>(), want.iter().map(|k| (k.0, k.1)).collect::<Vec<_>>());
    }

    #[test]
    fn matches_a_naive_search() {
        let words: Vec<String> = (0..3000u32)
            .map(|i| {
                let n = 1 + (i * 7919 % 6) as usize;
                (0..n).map(|k| char::from_u32(0x61 + (i * 31 + k as u32 * 17) % 5).unwrap_or('a')).collect::<String>()
                    + if i % 7 == 0 { "é" } else { "" }
            })
            .collect();
        let t = Trie::new(words.iter().enumerate().map(|(i, w)| (w.as_str(), i as u32)));
        let mut last: std::collections::HashMap<&str, u32> = Default::default();
        for (i, w) in words.iter().enumerate() {
            last.insert(w, i as u32);
        }
        for text in ["abcdeabcde", "eeééa", "dcbaé", "bbbbbbbb", ""] {
            for start in 0..text.len() {
                let mut got = vec![];
                t.common_prefixes(&text.as_bytes()[start..], |n, id| got.push((n, id)));
                let want: Vec<_> = (1..=text.len() - start)
                    .filter_map(|n| {
                        let p = text.as_bytes().get(start..start + n)?;
                        std::str::from_utf8(p).ok().and_then(|p| last.get(p)).map(|&id| (n, id))
                    })
                    .collect();
                assert_eq!(got, want, "{text:?}[{start}..]");
            }
        }
    }
}
