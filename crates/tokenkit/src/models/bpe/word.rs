//! The BPE merge loop on ids, independent of strings: a word is a linked list of symbols
//! (token id + byte length) and merges are applied lowest rank first, leftmost first on
//! ties, through a priority queue. This is the core the string-level [`super::BPE`] model,
//! tiktoken-style encoders and trainers build on.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use ahash::AHashMap;
use rand::Rng;

/// A pair of adjacent token ids.
pub type Pair = (u32, u32);

/// `(left id, right id)` → `(rank, id of the merged token)`; lower ranks merge first.
pub type MergeMap = AHashMap<Pair, (u32, u32)>;

/// "No neighbour" in a symbol's links.
const NONE: u32 = u32::MAX;

/// One symbol of a word: a token id and how many bytes of the piece it covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Symbol {
    /// Token id.
    pub id: u32,
    /// Index of the previous live symbol, `u32::MAX` for none.
    prev: u32,
    /// Index of the next live symbol, `u32::MAX` for none.
    next: u32,
    /// Length in bytes of the piece it covers; 0 marks a symbol merged into its left neighbour.
    pub len: u32,
}

/// A queued merge candidate: the pair starting at symbol `pos`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Merge {
    pos: u32,
    rank: u32,
    new_id: u32,
}

impl Ord for Merge {
    // `BinaryHeap` is a max-heap: the greatest element is the lowest rank, then the lowest position.
    fn cmp(&self, other: &Self) -> Ordering {
        other.rank.cmp(&self.rank).then_with(|| other.pos.cmp(&self.pos))
    }
}

impl PartialOrd for Merge {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A word being merged: symbols in order, with links so merges do not shift the vector.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Word {
    symbols: Vec<Symbol>,
}

impl Word {
    /// An empty word with room for `capacity` symbols.
    pub fn with_capacity(capacity: usize) -> Self {
        Self { symbols: Vec::with_capacity(capacity) }
    }

    /// Empties the word, keeping its allocation.
    pub fn clear(&mut self) {
        self.symbols.clear();
    }

    /// Appends a symbol covering `byte_len` bytes.
    #[inline]
    pub fn add(&mut self, id: u32, byte_len: u32) {
        let n = self.symbols.len() as u32;
        let prev = match self.symbols.last_mut() {
            Some(last) => {
                last.next = n;
                n - 1
            }
            None => NONE,
        };
        self.symbols.push(Symbol { id, prev, next: NONE, len: byte_len });
    }

    /// Number of symbols (after [`Word::merge_all`], the number of tokens).
    pub fn len(&self) -> usize {
        self.symbols.len()
    }

    /// Whether the word has no symbol.
    pub fn is_empty(&self) -> bool {
        self.symbols.is_empty()
    }

    /// The symbols in order.
    pub fn symbols(&self) -> &[Symbol] {
        &self.symbols
    }

    /// Token ids in order.
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.symbols.iter().map(|s| s.id)
    }

    /// `(id, (start, end))` for each symbol, offsets in bytes: each symbol starts where the
    /// previous one ended.
    pub fn tokens(&self) -> impl Iterator<Item = (u32, (usize, usize))> + '_ {
        let mut pos = 0usize;
        self.symbols.iter().map(move |s| {
            let start = pos;
            pos += s.len as usize;
            (s.id, (start, pos))
        })
    }

    /// Applies every merge it can, lowest rank first (leftmost on ties), until none applies.
    ///
    /// `queue` is scratch space reused between calls. With `dropout = Some((p, rng))`, each
    /// merge taken from the queue is skipped with probability `p`; skipped merges come back
    /// into the queue after the next merge that happens (BPE-dropout as HF does it).
    pub fn merge_all<R: Rng + ?Sized>(
        &mut self,
        merges: &MergeMap,
        queue: &mut BinaryHeap<Merge>,
        mut dropout: Option<(f32, &mut R)>,
    ) {
        queue.clear();
        queue.extend(self.symbols.windows(2).enumerate().filter_map(|(pos, w)| {
            merges.get(&(w[0].id, w[1].id)).map(|&(rank, new_id)| Merge { pos: pos as u32, rank, new_id })
        }));
        let mut skipped: Vec<Merge> = Vec::new();

        while let Some(top) = queue.pop() {
            if let Some((p, rng)) = dropout.as_mut() {
                if rng.gen::<f32>() < *p {
                    skipped.push(top);
                    continue;
                }
                queue.extend(skipped.drain(..));
            }
            let pos = top.pos as usize;
            let current = self.symbols[pos];
            // A symbol already merged away, or the last one: the entry is stale.
            if current.len == 0 || current.next == NONE {
                continue;
            }
            let next_pos = current.next as usize;
            let right = self.symbols[next_pos];
            // The pair at `pos` changed since this entry was queued.
            if !matches!(merges.get(&(current.id, right.id)), Some(&(_, new_id)) if new_id == top.new_id) {
                continue;
            }

            let merged = Symbol { id: top.new_id, prev: current.prev, next: right.next, len: current.len + right.len };
            self.symbols[pos] = merged;
            self.symbols[next_pos].len = 0;
            if let Some(after) = self.symbols.get_mut(right.next as usize) {
                after.prev = top.pos;
            }

            if let Some(prev) = self.symbols.get(merged.prev as usize) {
                if let Some(&(rank, new_id)) = merges.get(&(prev.id, merged.id)) {
                    queue.push(Merge { pos: merged.prev, rank, new_id });
                }
            }
            if let Some(next) = self.symbols.get(merged.next as usize) {
                if let Some(&(rank, new_id)) = merges.get(&(merged.id, next.id)) {
                    queue.push(Merge { pos: top.pos, rank, new_id });
                }
            }
        }

        self.symbols.retain(|s| s.len != 0);
        // Re-link after compaction so the word stays consistent for further use.
        let n = self.symbols.len() as u32;
        for (i, s) in self.symbols.iter_mut().enumerate() {
            let i = i as u32;
            s.prev = if i == 0 { NONE } else { i - 1 };
            s.next = if i + 1 == n { NONE } else { i + 1 };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;

    fn merges(list: &[((u32, u32), u32)]) -> MergeMap {
        list.iter().enumerate().map(|(rank, &(pair, new_id))| (pair, (rank as u32, new_id))).collect()
    }

    #[test]
    fn lowest_rank_first_leftmost_on_ties() {
        // ids: a=0 b=1 ab=2 bb=3 abb=4; merges: (a,b)->ab rank0, (b,b)->bb rank1, (ab,b)->abb rank2
        let m = merges(&[((0, 1), 2), ((1, 1), 3), ((2, 1), 4)]);
        let mut w = Word::default();
        for id in [0, 1, 1, 1, 1] {
            w.add(id, 1);
        }
        w.merge_all::<StdRng>(&m, &mut BinaryHeap::new(), None);
        // a b b b b -> ab b b b -> ab bb b (leftmost bb) -> stop: (ab,bb) and (bb,b) unknown
        assert_eq!(w.ids().collect::<Vec<_>>(), vec![2, 3, 1]);
        assert_eq!(w.tokens().map(|t| t.1).collect::<Vec<_>>(), vec![(0, 2), (2, 4), (4, 5)]);
    }

    #[test]
    fn full_dropout_skips_every_merge() {
        use rand::SeedableRng;
        let m = merges(&[((0, 1), 2)]);
        let mut w = Word::default();
        w.add(0, 1);
        w.add(1, 1);
        let mut rng = StdRng::seed_from_u64(1);
        w.merge_all(&m, &mut BinaryHeap::new(), Some((1.0, &mut rng)));
        assert_eq!(w.ids().collect::<Vec<_>>(), vec![0, 1]);
    }
}
