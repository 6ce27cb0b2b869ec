//! The BPE merge loop on ids, independent of strings: a word is a linked list of symbols
//! (token id + byte length) and merges are applied lowest rank first, leftmost first on
//! ties, through a priority queue. This is the core the string-level [`super::BPE`] model,
//! tiktoken-style encoders and trainers build on.
//!
//! Each merge costs O(log n): symbols are never shifted (a merged-away symbol is marked with
//! length 0), and queue entries made stale by a merge are dropped when they are popped.

use rand::Rng;

use crate::utils::table_cache::{Pod, Table};

/// A pair of adjacent token ids.
pub type Pair = (u32, u32);

/// "No neighbour" in a symbol's links.
const NONE: u32 = u32::MAX;

/// One slot of a [`MergeMap`]: a packed pair and its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
struct Slot {
    /// `left << 32 | right`, or [`EMPTY`] for a free slot.
    key: u64,
    /// `(rank, new id)`.
    value: (u32, u32),
}

// SAFETY: a `u64` then two `u32`s (checked below): no padding, any bits are a value.
unsafe impl Pod for Slot {}
const _: () = assert!(std::mem::size_of::<Slot>() == 16 && std::mem::align_of::<Slot>() == 8);

/// Key of a free slot.
const EMPTY: u64 = u64::MAX;

/// The multiplier of [`MergeMap`]'s hash (the slot is the product's top bits).
const HASH: u64 = 0x9E37_79B9_7F4A_7C15;

/// The first slot tried for `key` in a table of `64 - shift` bits.
#[inline]
fn home_slot(key: u64, shift: u32) -> usize {
    (key.wrapping_mul(HASH) >> shift) as usize
}

#[inline]
fn pair_key((a, b): Pair) -> u64 {
    (u64::from(a) << 32) | u64::from(b)
}

/// `(left id, right id)` → `(rank, id of the merged token)`; lower ranks merge first.
///
/// An open-addressing table (linear probing, at most half full) keyed by the pair packed
/// into a `u64` with a multiplicative hash: a lookup is a multiply and usually one cache line.
#[derive(Clone)]
pub struct MergeMap {
    /// Shared by the clones (the model's and its encoders'), in place in a mapped cache entry.
    slots: Table<Slot>,
    /// `64 - log2(slots.len())`.
    shift: u32,
    len: usize,
    /// The value of the pair `(u32::MAX, u32::MAX)`, whose key is [`EMPTY`].
    max_pair: Option<(u32, u32)>,
}

impl Default for MergeMap {
    fn default() -> Self {
        Self::with_capacity(0)
    }
}

impl MergeMap {
    /// A map with room for `n` pairs before it grows.
    pub fn with_capacity(n: usize) -> Self {
        let size = (n.max(4) * 2).next_power_of_two();
        Self { slots: vec![Slot { key: EMPTY, value: (0, 0) }; size].into(), shift: 64 - size.trailing_zeros(), len: 0, max_pair: None }
    }

    #[inline]
    fn home(&self, key: u64) -> usize {
        home_slot(key, self.shift)
    }

    /// The `(rank, new id)` of `pair`.
    #[inline]
    pub fn get(&self, pair: &Pair) -> Option<&(u32, u32)> {
        let key = pair_key(*pair);
        if key == EMPTY {
            return self.max_pair.as_ref();
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let slot = &self.slots[i];
            if slot.key == key {
                return Some(&slot.value);
            }
            if slot.key == EMPTY {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// Sets the value of `pair`, replacing any previous one.
    pub fn insert(&mut self, pair: Pair, value: (u32, u32)) {
        self.extend([(pair, value)]);
    }

    /// [`MergeMap::insert`] of each of `pairs` in turn, the table made writable once per
    /// growth rather than per pair (a third of the inserts' cost on a 200k-token load).
    pub fn extend(&mut self, pairs: impl IntoIterator<Item = (Pair, (u32, u32))>) {
        let mut pairs = pairs.into_iter().peekable();
        while pairs.peek().is_some() {
            if (self.len + 1) * 2 > self.slots.len() {
                self.grow();
            }
            let (mask, shift) = (self.slots.len() - 1, self.shift);
            let slots = self.slots.make_mut();
            // Until the table is half full; then it grows above.
            while (self.len + 1) * 2 <= slots.len() {
                let Some((pair, value)) = pairs.next() else { return };
                let key = pair_key(pair);
                if key == EMPTY {
                    if self.max_pair.replace(value).is_none() {
                        self.len += 1;
                    }
                    continue;
                }
                let mut i = home_slot(key, shift);
                loop {
                    let slot = &mut slots[i];
                    if slot.key == key {
                        slot.value = value;
                        break;
                    }
                    if slot.key == EMPTY {
                        *slot = Slot { key, value };
                        self.len += 1;
                        break;
                    }
                    i = (i + 1) & mask;
                }
            }
        }
    }

    /// Rebuilds the table with the fewest slots its pairs fit in (at most half full), for a
    /// map built with room to spare: it is held in memory and in the table cache as it is.
    pub fn shrink_to_fit(&mut self) {
        if Self::with_capacity(self.len).slots.len() < self.slots.len() {
            let old = std::mem::replace(self, Self::with_capacity(self.len));
            self.extend(old.iter());
        }
    }

    fn grow(&mut self) {
        let old = std::mem::replace(self, Self::with_capacity(self.slots.len()));
        self.extend(old.iter());
    }

    /// Number of pairs.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there is no pair.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether no two pairs merge into the same token (true of trained merge lists).
    pub fn results_unique(&self) -> bool {
        let mut seen = ahash::AHashSet::with_capacity(self.len);
        self.iter().all(|(_, (_, id))| seen.insert(id))
    }

    /// Whether merges that make the same token always have the same rank: true of trained
    /// merge lists (one merge per token) and of tiktoken rank maps (the rank is the token's).
    /// Stale queue entries then never change the result, so [`Word::merge_small`] and
    /// [`Word::merge_all`] agree.
    pub fn rank_follows_result(&self) -> bool {
        // By id in a table when the ids are dense enough (every real vocabulary's): a map
        // of a 200k vocabulary's merges cost as much as the rest of the check.
        let max_id = self.iter().map(|(_, (_, id))| id as usize).max().unwrap_or(0);
        if max_id < 4 * self.len + 1024 {
            let mut rank_of = vec![u64::MAX; max_id + 1];
            return self.iter().all(|(_, (rank, id))| {
                let seen = &mut rank_of[id as usize];
                if *seen == u64::MAX {
                    *seen = u64::from(rank);
                }
                *seen == u64::from(rank)
            });
        }
        let mut seen: ahash::AHashMap<u32, u32> = ahash::AHashMap::with_capacity(self.len);
        self.iter().all(|(_, (rank, id))| *seen.entry(id).or_insert(rank) == rank)
    }

    /// Every `(pair, (rank, new id))`, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (Pair, (u32, u32))> + '_ {
        self.slots
            .iter()
            .filter(|s| s.key != EMPTY)
            .map(|s| (((s.key >> 32) as u32, s.key as u32), s.value))
            .chain(self.max_pair.map(|v| ((u32::MAX, u32::MAX), v)))
    }
}

impl FromIterator<(Pair, (u32, u32))> for MergeMap {
    fn from_iter<I: IntoIterator<Item = (Pair, (u32, u32))>>(iter: I) -> Self {
        let iter = iter.into_iter();
        let mut m = Self::with_capacity(iter.size_hint().0);
        for (p, v) in iter {
            m.insert(p, v);
        }
        m
    }
}

impl PartialEq for MergeMap {
    fn eq(&self, o: &Self) -> bool {
        self.len == o.len && self.iter().all(|(p, v)| o.get(&p) == Some(&v))
    }
}

impl std::fmt::Debug for MergeMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MergeMap").field("len", &self.len).finish()
    }
}

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
    /// `rank << 32 | pos`: the queue pops the smallest, i.e. lowest rank then leftmost.
    key: u64,
    /// Id of the merged token.
    new_id: u32,
    /// Bytes covered by the pair when queued. Live symbols only grow, so the pair at `pos`
    /// is the same pair exactly when it still covers this many bytes.
    span: u32,
}

impl Merge {
    #[inline]
    fn new(rank: u32, pos: u32, new_id: u32, span: u32) -> Self {
        Self { key: (u64::from(rank) << 32) | u64::from(pos), new_id, span }
    }
    #[inline]
    fn pos(&self) -> u32 {
        self.key as u32
    }
}

/// A binary min-heap of [`Merge`]s ordered by their packed `(rank, pos)` key.
#[derive(Debug, Clone, Default)]
pub struct MergeQueue {
    heap: Vec<Merge>,
}

impl MergeQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Empties the queue, keeping its allocation.
    pub fn clear(&mut self) {
        self.heap.clear();
    }

    /// Number of queued entries.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Allocated room, in entries.
    pub fn capacity(&self) -> usize {
        self.heap.capacity()
    }

    /// Restores the heap order over the whole vector (after unordered pushes).
    fn heapify(&mut self) {
        let n = self.heap.len();
        for i in (0..n / 2).rev() {
            self.sift_down(i);
        }
    }

    /// Adds a candidate.
    #[inline]
    pub fn push(&mut self, m: Merge) {
        let h = &mut self.heap;
        let mut i = h.len();
        h.push(m);
        while i > 0 {
            let parent = (i - 1) / 2;
            if h[parent].key <= m.key {
                break;
            }
            h[i] = h[parent];
            i = parent;
        }
        h[i] = m;
    }

    /// Removes and returns the lowest `(rank, pos)` candidate.
    #[inline]
    pub fn pop(&mut self) -> Option<Merge> {
        let last = self.heap.pop()?;
        if self.heap.is_empty() {
            return Some(last);
        }
        let top = self.heap[0];
        self.sift_down_to_bottom(last);
        Some(top)
    }

    /// Fills the hole at the root with `m`: the hole first moves down to a leaf along the
    /// smaller children (one comparison per level, no data-dependent exit), then `m` rises
    /// from there, which is usually only a level or two.
    #[inline]
    fn sift_down_to_bottom(&mut self, m: Merge) {
        let h = &mut self.heap[..];
        let n = h.len();
        let mut hole = 0;
        let mut child = 1;
        while child + 1 < n {
            child += usize::from(h[child + 1].key < h[child].key);
            h[hole] = h[child];
            hole = child;
            child = 2 * hole + 1;
        }
        if child + 1 == n {
            h[hole] = h[child];
            hole = child;
        }
        while hole > 0 {
            let parent = (hole - 1) / 2;
            if h[parent].key <= m.key {
                break;
            }
            h[hole] = h[parent];
            hole = parent;
        }
        h[hole] = m;
    }

    #[inline]
    fn sift_down(&mut self, mut i: usize) {
        let h = &mut self.heap;
        let n = h.len();
        let m = h[i];
        loop {
            let left = 2 * i + 1;
            if left >= n {
                break;
            }
            let right = left + 1;
            let child = if right < n && h[right].key < h[left].key { right } else { left };
            if h[child].key >= m.key {
                break;
            }
            h[i] = h[child];
            i = child;
        }
        h[i] = m;
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

    /// Allocated room, in symbols.
    pub fn capacity(&self) -> usize {
        self.symbols.capacity()
    }

    /// Appends a symbol covering `byte_len` (at least 1) bytes.
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

    /// [`Word::merge_all`] without dropout for short words, by scanning the pairs instead of
    /// queueing them: `O(n)` per merge, faster than the queue for a few dozen symbols.
    ///
    /// Same result as [`Word::merge_all`] only when merges making the same token share their
    /// rank ([`MergeMap::rank_follows_result`]): otherwise the queue may apply a stale entry
    /// whose pair changed into another one making the same token, at the stale rank, as HF does.
    /// `pairs` is scratch space reused between calls.
    pub fn merge_small(&mut self, merges: &MergeMap, pairs: &mut Vec<u64>) {
        /// Packs a pair's merge as `rank << 32 | new id` (`u64::MAX`: no merge), so the
        /// smallest value is the lowest rank and the first smallest is the leftmost.
        #[inline]
        fn packed(merges: &MergeMap, a: u32, b: u32) -> u64 {
            merges.get(&(a, b)).map_or(u64::MAX, |&(rank, id)| (u64::from(rank) << 32) | u64::from(id))
        }
        let s = &mut self.symbols;
        if s.len() < 2 {
            return;
        }
        pairs.clear();
        pairs.extend(s.windows(2).map(|w| packed(merges, w[0].id, w[1].id)));
        loop {
            let (mut at, mut best) = (0, u64::MAX);
            for (i, &p) in pairs.iter().enumerate() {
                if p < best {
                    (at, best) = (i, p);
                }
            }
            if best == u64::MAX {
                break;
            }
            let right = s.remove(at + 1);
            pairs.remove(at);
            let merged = &mut s[at];
            merged.id = best as u32;
            merged.len += right.len;
            let id = merged.id;
            if at > 0 {
                pairs[at - 1] = packed(merges, s[at - 1].id, id);
            }
            if at + 1 < s.len() {
                pairs[at] = packed(merges, id, s[at + 1].id);
            }
        }
        let n = s.len() as u32;
        for (i, sym) in s.iter_mut().enumerate() {
            let i = i as u32;
            sym.prev = if i == 0 { NONE } else { i - 1 };
            sym.next = if i + 1 == n { NONE } else { i + 1 };
        }
    }

    /// Applies every merge it can, lowest rank first (leftmost on ties), until none applies.
    ///
    /// `queue` is scratch space reused between calls. With `dropout = Some((p, rng))`, each
    /// merge taken from the queue is skipped with probability `p`; skipped merges come back
    /// into the queue after the next merge that happens (BPE-dropout as HF does it).
    pub fn merge_all<R: Rng + ?Sized>(&mut self, merges: &MergeMap, queue: &mut MergeQueue, mut dropout: Option<(f32, &mut R)>) {
        if self.symbols.len() < 2 {
            return;
        }
        queue.clear();
        queue.heap.extend(self.symbols.windows(2).enumerate().filter_map(|(pos, w)| {
            merges.get(&(w[0].id, w[1].id)).map(|&(rank, new_id)| Merge::new(rank, pos as u32, new_id, w[0].len + w[1].len))
        }));
        queue.heapify();
        let mut skipped: Vec<Merge> = Vec::new();
        let symbols = &mut self.symbols[..];

        while let Some(top) = queue.pop() {
            if let Some((p, rng)) = dropout.as_mut() {
                if rng.gen::<f32>() < *p {
                    skipped.push(top);
                    continue;
                }
                for m in skipped.drain(..) {
                    queue.push(m);
                }
            }
            let pos = top.pos() as usize;
            let current = symbols[pos];
            // A symbol already merged away, or the last one: the entry is stale.
            if current.len == 0 || current.next == NONE {
                continue;
            }
            let next_pos = current.next as usize;
            let right = symbols[next_pos];
            // Same span: the very pair that was queued. Otherwise the pair changed since; it
            // still merges (HF's rule) if it makes the same token.
            if current.len + right.len != top.span
                && !matches!(merges.get(&(current.id, right.id)), Some(&(_, new_id)) if new_id == top.new_id)
            {
                continue;
            }

            let merged = Symbol { id: top.new_id, prev: current.prev, next: right.next, len: current.len + right.len };
            symbols[pos] = merged;
            symbols[next_pos].len = 0;
            if let Some(after) = symbols.get_mut(right.next as usize) {
                after.prev = pos as u32;
                if let Some(&(rank, new_id)) = merges.get(&(merged.id, after.id)) {
                    queue.push(Merge::new(rank, pos as u32, new_id, merged.len + after.len));
                }
            }
            if let Some(prev) = symbols.get(merged.prev as usize) {
                if let Some(&(rank, new_id)) = merges.get(&(prev.id, merged.id)) {
                    queue.push(Merge::new(rank, merged.prev, new_id, prev.len + merged.len));
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

impl MergeMap {
    /// Writes the table as it is (slots included), for [`crate::utils::table_cache`].
    pub(crate) fn write_table(&self, w: &mut crate::utils::table_cache::Writer) {
        w.table(&self.slots);
        w.u32(self.shift);
        w.len(self.len);
        w.bool(self.max_pair.is_some());
        let (r, id) = self.max_pair.unwrap_or_default();
        w.u32(r);
        w.u32(id);
    }

    /// Reads what [`MergeMap::write_table`] wrote.
    pub(crate) fn read_table(r: &mut crate::utils::table_cache::Reader<'_>) -> crate::Result<Self> {
        let slots: Table<Slot> = r.table()?;
        let n = slots.len();
        let shift = r.u32()?;
        let len = r.len(0)?;
        let has_max = r.bool()?;
        let max = (r.u32()?, r.u32()?);
        if !n.is_power_of_two() || 64 - n.trailing_zeros() != shift || len > n {
            return Err(crate::Error::invalid("table cache: malformed merge table"));
        }
        Ok(Self { slots, shift, len, max_pair: has_max.then_some(max) })
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
        w.merge_all::<StdRng>(&m, &mut MergeQueue::new(), None);
        // a b b b b -> ab b b b -> ab bb b (leftmost bb) -> stop: (ab,bb) and (bb,b) unknown
        assert_eq!(w.ids().collect::<Vec<_>>(), vec![2, 3, 1]);
        assert_eq!(w.tokens().map(|t| t.1).collect::<Vec<_>>(), vec![(0, 2), (2, 4), (4, 5)]);
    }

    #[test]
    fn shrink_to_fit_keeps_every_pair() {
        let mut m = MergeMap::with_capacity(4000);
        let pairs: Vec<(Pair, (u32, u32))> =
            (0..300u32).map(|i| ((i, i * 7 + 1), (i, i + 1000))).chain([((u32::MAX, u32::MAX), (5, 6))]).collect();
        pairs.iter().for_each(|&(p, v)| m.insert(p, v));
        let before = m.slots.len();
        m.shrink_to_fit();
        assert!(m.slots.len() < before && m.slots.len() >= 2 * m.len());
        assert_eq!(m.len(), pairs.len());
        assert!(pairs.iter().all(|(p, v)| m.get(p) == Some(v)));
        assert_eq!(m.get(&(1, 2)), None);
    }

    #[test]
    fn full_dropout_skips_every_merge() {
        use rand::SeedableRng;
        let m = merges(&[((0, 1), 2)]);
        let mut w = Word::default();
        w.add(0, 1);
        w.add(1, 1);
        let mut rng = StdRng::seed_from_u64(1);
        w.merge_all(&m, &mut MergeQueue::new(), Some((1.0, &mut rng)));
        assert_eq!(w.ids().collect::<Vec<_>>(), vec![0, 1]);
    }

    #[test]
    fn small_scan_same_as_queue() {
        use rand::{Rng, SeedableRng};
        let mut rng = StdRng::seed_from_u64(7);
        for _ in 0..300 {
            // Ids 0..4 are chars; each merge makes a new id from two existing ones.
            let mut m = MergeMap::default();
            let mut next = 4;
            for rank in 0..rng.gen_range(1..30) {
                let pair = (rng.gen_range(0..next), rng.gen_range(0..next));
                if m.get(&pair).is_none() {
                    m.insert(pair, (rank, next));
                    next += 1;
                }
            }
            assert!(m.results_unique());
            for _ in 0..20 {
                let mut a = Word::default();
                for _ in 0..rng.gen_range(0..40) {
                    a.add(rng.gen_range(0..4), rng.gen_range(1..4));
                }
                let mut b = a.clone();
                a.merge_all::<StdRng>(&m, &mut MergeQueue::new(), None);
                b.merge_small(&m, &mut Vec::new());
                assert_eq!(a, b);
            }
        }
    }

    /// `extend` is `insert` after `insert`: the last value of a repeated pair, through growths
    /// (from a map with no room) and the `(u32::MAX, u32::MAX)` pair; `rank_follows_result` by
    /// its table (dense ids) and its map (sparse ids) agree with the definition.
    #[test]
    fn extend_is_insert_in_order() {
        let pairs: Vec<(Pair, (u32, u32))> = (0..5000u32)
            .map(|i| ((i % 613, i % 7), (i, i % 1200)))
            .chain([((u32::MAX, u32::MAX), (1, 2)), ((u32::MAX, u32::MAX), (3, 4))])
            .collect();
        let (mut one_by_one, mut extended) = (MergeMap::default(), MergeMap::with_capacity(0));
        pairs.iter().for_each(|&(p, v)| one_by_one.insert(p, v));
        extended.extend(pairs.iter().copied());
        let mut reference = std::collections::HashMap::new();
        pairs.iter().for_each(|&(p, v)| {
            reference.insert(p, v);
        });
        assert_eq!((extended.len(), one_by_one.len()), (reference.len(), reference.len()));
        assert_eq!(reference.len(), 613 * 7 + 1);
        for (p, v) in &reference {
            assert_eq!((extended.get(p), one_by_one.get(p)), (Some(v), Some(v)));
        }
        let follows = |m: &MergeMap| {
            let mut rank_of = std::collections::HashMap::new();
            m.iter().all(|(_, (rank, id))| *rank_of.entry(id).or_insert(rank) == rank)
        };
        let dense: MergeMap = {
            let mut m = MergeMap::default();
            m.extend((0..3000u32).map(|i| ((i, i + 1), (i / 2, i / 2))));
            m
        };
        let mut sparse = dense.clone();
        sparse.insert((1, 1), (5, u32::MAX - 3));
        let mut broken = dense.clone();
        broken.insert((1, 1), (7, 2));
        let mut broken_sparse = sparse.clone();
        broken_sparse.insert((2, 2), (6, u32::MAX - 3));
        let verdicts: Vec<(bool, bool)> =
            [&dense, &sparse, &broken, &broken_sparse].iter().map(|m| (m.rank_follows_result(), follows(m))).collect();
        assert_eq!(verdicts, [(true, true), (true, true), (false, false), (false, false)]);
    }

    #[test]
    fn merge_map_like_a_hash_map() {
        let mut m = MergeMap::default();
        let mut reference = std::collections::HashMap::new();
        for i in 0..1000u32 {
            let pair = (i % 37, i.wrapping_mul(2_654_435_761));
            m.insert(pair, (i, i + 1));
            reference.insert(pair, (i, i + 1));
        }
        m.insert((u32::MAX, u32::MAX), (7, 8));
        reference.insert((u32::MAX, u32::MAX), (7, 8));
        assert_eq!(m.len(), reference.len());
        for (p, v) in &reference {
            assert_eq!(m.get(p), Some(v));
        }
        assert_eq!(m.get(&(1, 1)), None);
        assert_eq!(m.iter().count(), reference.len());
        assert_eq!(m.clone(), m);
    }

    #[test]
    fn queue_pops_in_order() {
        let mut q = MergeQueue::new();
        let keys = [(5, 3), (1, 9), (5, 1), (0, 4), (1, 2), (9, 0)];
        for &(rank, pos) in &keys {
            q.push(Merge::new(rank, pos, 0, 0));
        }
        let mut sorted = keys.to_vec();
        sorted.sort();
        let popped: Vec<(u32, u32)> = std::iter::from_fn(|| q.pop()).map(|m| ((m.key >> 32) as u32, m.pos())).collect();
        assert_eq!(popped, sorted);
    }
}
