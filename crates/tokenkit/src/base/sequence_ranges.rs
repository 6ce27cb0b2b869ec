//! Which tokens of an [`Encoding`](super::Encoding) belong to which input sequence.

use std::collections::BTreeMap;
use std::ops::Range;

/// The token range of each input sequence of an encoding (0: the first, 1: the pair), as
/// post-processors record them. Sequences 0 and 1 are kept inline, so recording them (once
/// per encoded input) allocates nothing; any other sequence index goes to a map.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SequenceRanges {
    first_two: [Option<Range<usize>>; 2],
    others: BTreeMap<usize, Range<usize>>,
}

impl SequenceRanges {
    /// The range of sequence `id`, if recorded.
    pub fn get(&self, id: usize) -> Option<&Range<usize>> {
        match self.first_two.get(id) {
            Some(r) => r.as_ref(),
            None => self.others.get(&id),
        }
    }

    /// Records (or replaces) the range of sequence `id`.
    pub fn insert(&mut self, id: usize, range: Range<usize>) {
        match self.first_two.get_mut(id) {
            Some(slot) => *slot = Some(range),
            None => {
                self.others.insert(id, range);
            }
        }
    }

    /// How many sequences have a range.
    pub fn len(&self) -> usize {
        self.first_two.iter().flatten().count() + self.others.len()
    }

    /// Whether no sequence has a range.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets every range.
    pub fn clear(&mut self) {
        self.first_two = [None, None];
        self.others.clear();
    }

    /// `(sequence id, range)` in increasing sequence id.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &Range<usize>)> {
        let first_two = self.first_two.iter().enumerate().filter_map(|(id, r)| Some((id, r.as_ref()?)));
        first_two.chain(self.others.iter().map(|(&id, r)| (id, r)))
    }

    /// Moves every range `by` tokens later.
    pub(crate) fn shift(&mut self, by: usize) {
        for r in self.first_two.iter_mut().flatten().chain(self.others.values_mut()) {
            *r = r.start + by..r.end + by;
        }
    }

    /// Records the ranges of `other`, moved `by` tokens later (replacing those of the same
    /// sequences).
    pub(crate) fn extend_shifted(&mut self, mut other: SequenceRanges, by: usize) {
        other.shift(by);
        for (id, r) in other.first_two.into_iter().enumerate() {
            if let Some(r) = r {
                self.insert(id, r);
            }
        }
        self.others.extend(other.others);
    }
}

impl FromIterator<(usize, Range<usize>)> for SequenceRanges {
    fn from_iter<I: IntoIterator<Item = (usize, Range<usize>)>>(iter: I) -> Self {
        let mut out = SequenceRanges::default();
        for (id, r) in iter {
            out.insert(id, r);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behaves_as_a_map_from_sequence_id_to_range() {
        let mut m = SequenceRanges::default();
        assert!(m.is_empty());
        m.insert(1, 3..5);
        m.insert(7, 9..10);
        m.insert(0, 0..2);
        m.insert(1, 4..6);
        assert_eq!(m.len(), 3);
        assert_eq!(m.iter().collect::<Vec<_>>(), vec![(0, &(0..2)), (1, &(4..6)), (7, &(9..10))]);
        assert_eq!((m.get(1), m.get(2), m.get(7)), (Some(&(4..6)), None, Some(&(9..10))));
        let mut n: SequenceRanges = [(1, 0..1), (3, 1..2)].into_iter().collect();
        n.extend_shifted(m.clone(), 10);
        assert_eq!(n.iter().collect::<Vec<_>>(), vec![(0, &(10..12)), (1, &(14..16)), (3, &(1..2)), (7, &(19..20))]);
        m.clear();
        assert_eq!((m.len(), m.get(0)), (0, None));
    }
}
