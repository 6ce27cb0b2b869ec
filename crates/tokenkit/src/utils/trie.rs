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
        let keys = sorted_keys(pieces.into_iter().map(|(p, id, score)| (p.as_bytes(), id, score)).collect(), |k| k.0);
        let longest = keys.iter().map(|k| k.0.len()).max().unwrap_or(0);
        // The root is nobody's child: its check matches no state.
        let mut units = vec![Unit { check: NONE, ..FREE }];
        let end = lay_out(
            &keys,
            |k| k.0,
            |s| {
                // A key listed twice keeps its last id and score.
                let (id, score) = s.ends.last().map_or((NONE, 0.0), |k| (keys[k].1, keys[k].2));
                units[s.slot] = Unit { base: s.base as u32, check: s.parent, id, score };
                if units.len() < s.children_end {
                    units.resize(s.children_end, FREE);
                }
            },
        );
        // Every lookup `base + b` with b < 256 stays in bounds.
        units.resize(end + 256, FREE);
        units.shrink_to_fit();
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
pub(crate) fn sorted_keys<K: Copy>(keys: Vec<K>, bytes: impl Fn(&K) -> &[u8]) -> Vec<K> {
    let head = |k: &[u8]| {
        let mut b = [0u8; 16];
        let n = k.len().min(16);
        b[..n].copy_from_slice(&k[..n]);
        u128::from_be_bytes(b)
    };
    let order = sorted_heads(keys.iter().enumerate().map(|(i, k)| (head(bytes(k)), i as u32)).collect());
    let mut sorted: Vec<K> = order.iter().map(|&(_, i)| keys[i as usize]).collect();
    // Keys that share their first 16 bytes (longer keys, or shorter ones told apart only by
    // trailing NUL bytes) are in input order: a stable sort by the whole key puts them right.
    let mut start = 0;
    for k in 1..=order.len() {
        if k == order.len() || order[k].0 != order[start].0 {
            if k - start > 1 {
                sorted[start..k].sort_by(|a, b| bytes(a).cmp(bytes(b)));
            }
            start = k;
        }
    }
    sorted
}

/// `heads` sorted: spread by their first byte (one counting pass, in order), then each of
/// those 256 groups sorted alone, in parallel for many keys (a whole sort of a 100k-token
/// vocabulary's heads compared twice as often).
fn sorted_heads(heads: Vec<(u128, u32)>) -> Vec<(u128, u32)> {
    let first = |h: u128| (h >> 120) as usize;
    let mut starts = [0usize; 257];
    heads.iter().for_each(|&(h, _)| starts[first(h) + 1] += 1);
    for b in 0..256 {
        starts[b + 1] += starts[b];
    }
    let mut next = starts;
    let mut order = vec![(0u128, 0u32); heads.len()];
    for &(h, i) in &heads {
        let at = &mut next[first(h)];
        order[*at] = (h, i);
        *at += 1;
    }
    let mut groups: Vec<&mut [(u128, u32)]> = Vec::with_capacity(256);
    let mut rest = order.as_mut_slice();
    for b in 0..256 {
        let (group, tail) = rest.split_at_mut(starts[b + 1] - starts[b]);
        groups.push(group);
        rest = tail;
    }
    if heads.len() > 1 << 16 {
        groups.par_iter_mut().for_each(|g| g.sort_unstable());
    } else {
        groups.iter_mut().for_each(|g| g.sort_unstable());
    }
    order
}

/// A state of a double array as [`lay_out`] places it.
pub(crate) struct LaidState {
    /// Its slot (0 for the root).
    pub slot: usize,
    /// The slot of its parent ([`NONE`] for the root).
    pub parent: u32,
    /// Where its children start (`base + byte`); 0 when it has none.
    pub base: usize,
    /// One past its last child's slot (0 when it has none).
    pub children_end: usize,
    /// The keys that are its string (more than one only when a key is listed twice).
    pub ends: std::ops::Range<usize>,
    /// The keys at it or below it (its string is their prefix).
    pub keys: std::ops::Range<usize>,
}

/// Lays out the double array of `keys` (sorted by their `bytes`, as [`sorted_keys`] does)
/// straight from the sorted keys (no pointer trie first), breadth first (the shallow, hot
/// states end up close together): the children of each state get the first base where all
/// their slots are free ([`Placer`]). `state` is called once per state, parents before their
/// children; returns one past the last slot taken. The layout of the Unigram trie, the
/// WordPiece tries and the BPE backtracker's trie.
pub(crate) fn lay_out<K>(keys: &[K], bytes: impl Fn(&K) -> &[u8], mut state: impl FnMut(LaidState)) -> usize {
    let mut placer = Placer::new();
    // (slot, parent slot, first key, end key, depth) of the keys below each state, which
    // share their first `depth` bytes.
    let mut queue = std::collections::VecDeque::from([(0u32, NONE, 0usize, keys.len(), 0usize)]);
    let mut kids: Vec<(u8, usize, usize)> = Vec::new();
    while let Some((slot, parent, first, hi, depth)) = queue.pop_front() {
        // The keys that end at this state sort first.
        let mut lo = first;
        while lo < hi && bytes(&keys[lo]).len() == depth {
            lo += 1;
        }
        kids.clear();
        let mut start = lo;
        for k in lo + 1..=hi {
            if k == hi || bytes(&keys[k])[depth] != bytes(&keys[start])[depth] {
                kids.push((bytes(&keys[start])[depth], start, k));
                start = k;
            }
        }
        let base = placer.place(kids.iter().map(|&(b, _, _)| usize::from(b)));
        let children_end = kids.last().map_or(0, |&(b, _, _)| base + usize::from(b) + 1);
        state(LaidState { slot: slot as usize, parent, base, children_end, ends: first..lo, keys: first..hi });
        for &(b, klo, khi) in &kids {
            queue.push_back(((base + usize::from(b)) as u32, slot, klo, khi, depth + 1));
        }
    }
    placer.end()
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
        let got = sorted_keys(keys, |k| k.0);
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
