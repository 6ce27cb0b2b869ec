//! Which slots of a double array are taken, for the tries laid out as double arrays (the
//! Unigram pieces, the WordPiece tokens, the BPE backtracker's tokens): a growable bitset that finds the
//! next free slot a word at a time.

/// A growable bitset of used slots.
#[derive(Default)]
pub(crate) struct UsedSlots(Vec<u64>);

impl UsedSlots {
    /// Whether slot `i` is taken.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> bool {
        self.0.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
    }

    /// Marks slot `i` taken.
    #[inline]
    pub(crate) fn set(&mut self, i: usize) {
        if self.0.len() <= i / 64 {
            self.0.resize(i / 64 + 1, 0);
        }
        self.0[i / 64] |= 1 << (i % 64);
    }

    /// The first free slot at or after `i`.
    pub(crate) fn next_free(&self, i: usize) -> usize {
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
    }
}
