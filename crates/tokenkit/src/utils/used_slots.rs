//! Where the nodes of a double-array trie go (the Unigram pieces, the WordPiece tokens, the BPE
//! backtracker's tokens): [`Placer`] gives each node's children the first base whose slots are
//! all free, over a growable bitset of used slots that finds the next free slot a word at a time.

/// How far behind the last taken slot [`Placer::place`] looks for free slots: holes further
/// back are given up, else each placement walks over all of them (most of the build time of a
/// 200k vocabulary).
const WINDOW: usize = 4096;

/// The layout of a double array being built, node after node.
pub(crate) struct Placer {
    used: UsedSlots,
    /// No free slot below it (within the window).
    first_free: usize,
    /// One past the last taken slot.
    end: usize,
}

impl Placer {
    /// A layout whose slot 0 (the root) is taken.
    pub(crate) fn new() -> Self {
        let mut used = UsedSlots::default();
        used.set(0);
        Self { used, first_free: 1, end: 1 }
    }

    /// The base of a node whose children have the labels `labels` (ascending): the first
    /// base above 0 from which every `base + label` slot is free. Those slots are then taken.
    pub(crate) fn place(&mut self, labels: impl Iterator<Item = usize> + Clone) -> usize {
        let Some(first) = labels.clone().next() else { return 0 };
        self.first_free = self.used.next_free(self.first_free.max(self.end.saturating_sub(WINDOW)));
        let slot = self.used.next_free(self.first_free.max(first + 1));
        // The first slot from `slot` on where the first label goes and every other label's
        // slot is free too, 64 candidate slots at a time: bit `i` of `fits` says whether slot
        // `from + i` would do, as far as the labels tested so far go. Usually a few labels
        // rule out a whole word of candidates (dozens of free slots tried one at a time each
        // failing were most of a byte trie's layout).
        let mut from = slot;
        let base = loop {
            let mut fits = u64::MAX;
            for l in labels.clone() {
                fits &= !self.used.bits(from + (l - first));
                if fits == 0 {
                    break;
                }
            }
            if fits != 0 {
                break from + fits.trailing_zeros() as usize - first;
            }
            from += 64;
        };
        for l in labels {
            self.used.set(base + l);
            self.end = self.end.max(base + l + 1);
        }
        base
    }

    /// One past the last taken slot.
    pub(crate) fn end(&self) -> usize {
        self.end
    }
}

/// A growable bitset of used slots.
#[derive(Default)]
struct UsedSlots(Vec<u64>);

impl UsedSlots {
    /// Whether slot `i` is taken.
    #[cfg(test)]
    fn get(&self, i: usize) -> bool {
        self.0.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
    }

    /// Marks slot `i` taken.
    #[inline]
    fn set(&mut self, i: usize) {
        if self.0.len() <= i / 64 {
            self.0.resize(i / 64 + 1, 0);
        }
        self.0[i / 64] |= 1 << (i % 64);
    }

    /// The 64 bits of slots `i..i + 64`, slot `i` the lowest (slots past the end are free).
    #[inline]
    fn bits(&self, i: usize) -> u64 {
        let (w, shift) = (i / 64, i % 64);
        let word = |w: usize| self.0.get(w).copied().unwrap_or(0);
        if shift == 0 {
            word(w)
        } else {
            word(w) >> shift | word(w + 1) << (64 - shift)
        }
    }

    /// The first free slot at or after `i`.
    fn next_free(&self, i: usize) -> usize {
        let mut w = i / 64;
        let mut bits = match self.0.get(w) {
            Some(&x) => !x & (u64::MAX << (i % 64)),
            None => return i,
        };
        loop {
            if bits != 0 {
                return w * 64 + bits.trailing_zeros() as usize;
            }
            w += 1;
            match self.0.get(w) {
                Some(&x) => bits = !x,
                None => return w * 64,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_free_slots() {
        let mut u = UsedSlots::default();
        assert_eq!(u.next_free(0), 0);
        for i in (0..200).filter(|i| i % 7 != 3) {
            u.set(i);
        }
        assert!(u.get(0) && !u.get(3) && !u.get(500));
        assert_eq!(u.next_free(0), 3);
        assert_eq!(u.next_free(4), 10);
        assert_eq!(u.next_free(198), 199);
        assert_eq!(u.next_free(200), 200);
        assert_eq!(u.next_free(1000), 1000);
        for i in [0, 1, 63, 64, 130, 190, 250] {
            let want = (0..64).filter(|&k| u.get(i + k)).fold(0u64, |m, k| m | 1 << k);
            assert_eq!(u.bits(i), want, "{i}");
        }
    }

    /// Placing by bit masks gives the bases a test of label after label gives.
    #[test]
    fn places_as_a_label_by_label_search() {
        let (mut p, mut used) = (Placer::new(), vec![true]);
        for n in 0..3000usize {
            let labels: Vec<usize> = (0..256).filter(|l| (l * 7 + n * 13) % (2 + n % 9) == 0 && (n % 5 != 0 || l % 3 == 0)).collect();
            let first_free = (1..).find(|&s| used.get(s) != Some(&true) && s + WINDOW >= used.len()).unwrap_or(1);
            let want = if labels.is_empty() {
                0
            } else {
                (first_free.max(labels[0] + 1) - labels[0]..).find(|&b| labels.iter().all(|&l| used.get(b + l) != Some(&true))).unwrap_or(0)
            };
            assert_eq!(p.place(labels.iter().copied()), want, "node {n}");
            for &l in &labels {
                if used.len() <= want + l {
                    used.resize(want + l + 1, false);
                }
                used[want + l] = true;
            }
        }
    }

    #[test]
    fn places_children_at_the_first_base_with_free_slots() {
        let mut p = Placer::new();
        assert_eq!(p.place([1, 2].into_iter()), 1); // slots 2, 3
        assert_eq!(p.place([0, 1].into_iter()), 4); // base 1 needs slot 2, taken; 4 and 5 are free
        assert_eq!(p.place([5].into_iter()), 1); // slot 6 is free (the base is never 0)
        assert_eq!(p.end(), 7);
        assert_eq!(p.place(std::iter::empty()), 0);
    }
}
