//! A per-token `u32` field of an [`Encoding`](super::Encoding) that is usually one value
//! repeated: the type ids of a sequence, the attention mask before padding, the
//! special-tokens mask of ordinary tokens.
//!
//! Such a field is kept as its value and its length, and reads as a slice of a shared table
//! of that value, until a token with another value is written; only then does it get a
//! buffer of its own. An encoding of one sequence thus makes no buffer for its type ids and
//! attention mask (nor for its special-tokens mask when no special token is added), which on
//! batches of short texts is a good part of the allocator's work.

use std::collections::TryReserveError;
use std::ops::{Deref, Range};
use std::sync::LazyLock;

/// Longest run kept as one value; a longer field gets a buffer.
const MAX_SAME: usize = 1 << 16;

/// The values kept as a run (0 and 1: what the masks and the first two type ids hold).
static ZEROS: [u32; MAX_SAME] = [0; MAX_SAME];
static ONES: LazyLock<Box<[u32]>> = LazyLock::new(|| vec![1; MAX_SAME].into_boxed_slice());

/// One `u32` per token (see the module docs).
#[derive(Clone)]
pub(crate) enum Column {
    /// `len` times `value` (0 or 1, `len` at most [`MAX_SAME`]).
    Same { value: u32, len: usize },
    /// Any values.
    Each(Vec<u32>),
}

impl Default for Column {
    fn default() -> Self {
        Column::Same { value: 0, len: 0 }
    }
}

impl From<Vec<u32>> for Column {
    fn from(v: Vec<u32>) -> Self {
        Column::Each(v)
    }
}

impl Column {
    /// `len` times `value`.
    pub(crate) fn same(value: u32, len: usize) -> Self {
        if value <= 1 && len <= MAX_SAME {
            Column::Same { value, len }
        } else {
            Column::Each(vec![value; len])
        }
    }

    /// The values as a buffer of their own, made now if they are a run.
    fn values_mut(&mut self) -> &mut Vec<u32> {
        if let Column::Same { value, len } = *self {
            let mut v = Vec::with_capacity(len + 2);
            v.resize(len, value);
            *self = Column::Each(v);
        }
        match self {
            Column::Each(v) => v,
            Column::Same { .. } => unreachable!("made a buffer above"),
        }
    }

    /// Whether `n` more tokens of `value` keep this a run.
    #[inline]
    fn stays_same(&self, value: u32, n: usize) -> bool {
        matches!(*self, Column::Same { value: v, len } if (v == value || len == 0) && value <= 1 && len + n <= MAX_SAME)
    }

    /// Appends `value`.
    #[inline]
    pub(crate) fn push(&mut self, value: u32) {
        self.push_same(value, 1);
    }

    /// Appends `n` times `value`.
    #[inline]
    pub(crate) fn push_same(&mut self, value: u32, n: usize) {
        if self.stays_same(value, n) {
            if let Column::Same { value: v, len } = self {
                *v = value;
                *len += n;
            }
        } else {
            self.values_mut().extend(std::iter::repeat_n(value, n));
        }
    }

    /// Makes room for `n` more values of `value` (appended or prepended), failing instead of
    /// aborting when memory runs out.
    pub(crate) fn try_reserve_same(&mut self, value: u32, n: usize) -> Result<(), TryReserveError> {
        if self.stays_same(value, n) {
            return Ok(());
        }
        match self {
            Column::Same { value: v, len } => {
                let mut buf = Vec::new();
                buf.try_reserve(len.saturating_add(n))?;
                buf.resize(*len, *v);
                *self = Column::Each(buf);
                Ok(())
            }
            Column::Each(v) => v.try_reserve(n),
        }
    }

    /// Puts `n` times `value` in front.
    pub(crate) fn prepend_same(&mut self, value: u32, n: usize) {
        if self.stays_same(value, n) {
            self.push_same(value, n);
        } else {
            self.values_mut().splice(0..0, std::iter::repeat_n(value, n));
        }
    }

    /// Appends the values of `other`.
    pub(crate) fn append(&mut self, other: Column) {
        match other {
            Column::Same { value, len } => self.push_same(value, len),
            Column::Each(v) if self.is_empty() => *self = Column::Each(v),
            Column::Each(v) => self.values_mut().extend_from_slice(&v),
        }
    }

    /// The values of tokens `range`.
    pub(crate) fn slice(&self, range: Range<usize>) -> Column {
        match *self {
            Column::Same { value, .. } => Column::Same { value, len: range.len() },
            Column::Each(ref v) => Column::Each(v[range].to_vec()),
        }
    }
}

impl Deref for Column {
    type Target = [u32];

    #[inline]
    fn deref(&self) -> &[u32] {
        match self {
            Column::Same { value: 0, len } => &ZEROS[..*len],
            Column::Same { len, .. } => &ONES[..*len],
            Column::Each(v) => v,
        }
    }
}

impl PartialEq for Column {
    fn eq(&self, o: &Self) -> bool {
        **self == **o
    }
}

impl std::fmt::Debug for Column {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every operation gives the same values as on a plain vector, whether the column is a
    /// run or not, for values in and out of the runs' range and runs up to their limit.
    #[test]
    fn reads_as_the_vector_it_stands_for() {
        let starts = [Column::default(), Column::same(0, 3), Column::same(1, 3), Column::same(7, 2), Column::from(vec![0, 1])];
        for start in starts {
            for (value, n) in [(0, 1), (1, 2), (2, 1), (0, 0), (1, MAX_SAME)] {
                let base = start.to_vec();
                let mut c = start.clone();
                c.push_same(value, n);
                let mut v = base.clone();
                v.extend(std::iter::repeat_n(value, n));
                assert_eq!(*c, v[..], "push_same({value}, {n}) on {base:?}");

                let mut c = start.clone();
                c.prepend_same(value, n);
                let mut v = base.clone();
                v.splice(0..0, std::iter::repeat_n(value, n));
                assert_eq!(*c, v[..], "prepend_same({value}, {n}) on {base:?}");

                let mut c = start.clone();
                c.append(Column::same(value, n));
                assert_eq!(*c, [base.clone(), vec![value; n]].concat()[..], "append on {base:?}");
            }
            let base = start.to_vec();
            if base.len() >= 2 {
                assert_eq!(*start.slice(1..2), base[1..2]);
            }
        }
    }

    #[test]
    fn runs_stay_runs_and_other_values_make_a_buffer() {
        let mut c = Column::same(0, 4);
        c.push(0);
        c.prepend_same(0, 1);
        assert!(matches!(c, Column::Same { value: 0, len: 6 }));
        c.push(1);
        assert!(matches!(c, Column::Each(_)));
        assert_eq!(*c, [0, 0, 0, 0, 0, 0, 1]);
        let mut c = Column::default();
        c.push(1);
        assert!(matches!(c, Column::Same { value: 1, len: 1 }));
        c.push_same(1, MAX_SAME);
        assert!(matches!(c, Column::Each(_)));
        assert_eq!(c.len(), MAX_SAME + 1);
    }
}
