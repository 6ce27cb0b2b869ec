//! A per-token `u32` field of an [`Encoding`](super::Encoding) that is usually one value
//! repeated: the type ids of a sequence, the attention mask before padding, the
//! special-tokens mask of ordinary tokens.
//!
//! Such a field is kept as its value and its length, and reads as a slice of a shared table
//! of that value, until a token with another value is written; only then does it get a
//! buffer of its own. An encoding of one sequence thus makes no buffer for its type ids and
//! attention mask (nor for its special-tokens mask when no special token is added), which on
//! batches of short texts is a good part of the allocator's work. A run the shared tables are
//! too short for (a long text's, or of another value) gets its buffer when first read: an
//! encoding of 400 KB of one-byte tokens made three zeroed or filled 1.6 MB buffers that
//! nothing read (about 13 instructions per token).

use std::collections::TryReserveError;
use std::ops::{Deref, Range};
use std::sync::{LazyLock, OnceLock};

/// The length of the shared tables: a run up to this long of 0 or 1 reads from them.
const MAX_SAME: usize = 1 << 16;

/// The values kept as a run (0 and 1: what the masks and the first two type ids hold).
static ZEROS: [u32; MAX_SAME] = [0; MAX_SAME];
static ONES: LazyLock<Box<[u32]>> = LazyLock::new(|| vec![1; MAX_SAME].into_boxed_slice());

/// One `u32` per token (see the module docs).
#[derive(Clone)]
pub(crate) enum Column {
    /// `len` times `value` (0 or 1, `len` at most [`MAX_SAME`]), read from the shared tables.
    Same { value: u32, len: usize },
    /// A run the shared tables are too short for (boxed: an encoding stays as small as with
    /// two kinds of column).
    Long(Box<LongRun>),
    /// Any values.
    Each(Vec<u32>),
}

/// `len` times `value`, its buffer made when first read.
#[derive(Clone)]
pub(crate) struct LongRun {
    value: u32,
    len: usize,
    built: OnceLock<Box<[u32]>>,
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
    /// `len` times `value`, for `len` tokens the encoding has: a run whatever its length and
    /// value (its buffer, if ever read, is no larger than the ids').
    pub(crate) fn same(value: u32, len: usize) -> Self {
        if value <= 1 && len <= MAX_SAME {
            Column::Same { value, len }
        } else {
            Column::Long(Box::new(LongRun { value, len, built: OnceLock::new() }))
        }
    }

    /// The value and length of a run.
    #[inline]
    fn as_run(&self) -> Option<(u32, usize)> {
        match *self {
            Column::Same { value, len } => Some((value, len)),
            Column::Long(ref r) => Some((r.value, r.len)),
            Column::Each(_) => None,
        }
    }

    /// The number of values (without making a long run's buffer).
    #[inline]
    pub(crate) fn len(&self) -> usize {
        match self {
            Column::Same { len, .. } => *len,
            Column::Long(r) => r.len,
            Column::Each(v) => v.len(),
        }
    }

    /// Whether there are no values.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values as a buffer of their own, made now if they are a run.
    fn values_mut(&mut self) -> &mut Vec<u32> {
        if let Some((value, len)) = self.as_run() {
            let built = match self {
                Column::Long(r) => r.built.take(),
                _ => None,
            };
            let v = built.map_or_else(
                || {
                    let mut v = Vec::with_capacity(len + 2);
                    v.resize(len, value);
                    v
                },
                <[u32]>::into_vec,
            );
            *self = Column::Each(v);
        }
        match self {
            Column::Each(v) => v,
            Column::Same { .. } | Column::Long(_) => unreachable!("made a buffer above"),
        }
    }

    /// Whether `n` more tokens of `value` keep this a run: a short run up to the shared
    /// tables' length (as the general path pushes tokens one by one; past it, a buffer), a long
    /// run by at most its own length (a post-processor's special tokens around a long text;
    /// what padding asks beyond that gets a buffer, with its allocation checked, now).
    #[inline]
    fn stays_same(&self, value: u32, n: usize) -> bool {
        match *self {
            Column::Same { value: v, len } => (v == value || len == 0) && value <= 1 && n <= MAX_SAME - len,
            Column::Long(ref r) => r.value == value && n <= r.len,
            Column::Each(_) => false,
        }
    }

    /// Appends `value`.
    #[inline]
    pub(crate) fn push(&mut self, value: u32) {
        self.push_same(value, 1);
    }

    /// Appends `n` times `value`.
    #[inline]
    pub(crate) fn push_same(&mut self, value: u32, n: usize) {
        if !self.stays_same(value, n) {
            self.values_mut().extend(std::iter::repeat_n(value, n));
            return;
        }
        match self {
            Column::Same { value: v, len } => {
                *v = value;
                *len += n;
            }
            Column::Long(r) => {
                r.len += n;
                // A buffer read before is no longer the run's.
                r.built.take();
            }
            Column::Each(_) => {}
        }
    }

    /// Makes room for `n` more values of `value` (appended or prepended), failing instead of
    /// aborting when memory runs out.
    pub(crate) fn try_reserve_same(&mut self, value: u32, n: usize) -> Result<(), TryReserveError> {
        if self.stays_same(value, n) {
            return Ok(());
        }
        match (self.as_run(), self) {
            (Some((v, len)), this) => {
                let mut buf = Vec::new();
                buf.try_reserve(len.saturating_add(n))?;
                buf.resize(len, v);
                *this = Column::Each(buf);
                Ok(())
            }
            (None, Column::Each(v)) => v.try_reserve(n),
            (None, _) => Ok(()),
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
            Column::Long(r) => self.push_same(r.value, r.len),
            Column::Each(v) if self.is_empty() => *self = Column::Each(v),
            Column::Each(v) => self.values_mut().extend_from_slice(&v),
        }
    }

    /// The values of tokens `range`.
    pub(crate) fn slice(&self, range: Range<usize>) -> Column {
        match (self.as_run(), self) {
            (Some((value, _)), _) => Column::same(value, range.len()),
            (None, Column::Each(v)) => Column::Each(v[range].to_vec()),
            (None, _) => Column::default(),
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
            Column::Long(r) => r.built.get_or_init(|| vec![r.value; r.len].into_boxed_slice()),
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

    /// A run of an encoding's length stays a run past the shared tables and with any value
    /// (a post-processor adding tokens around it too), reads as its values, and drops what it
    /// read once it grows; asked to grow past twice its length (padding) it gets a buffer.
    #[test]
    fn long_runs_are_made_when_read() {
        for value in [0, 1, 7] {
            let n = MAX_SAME * 3;
            let mut c = Column::same(value, n);
            assert!(matches!(c, Column::Long(_)));
            assert_eq!(*c, vec![value; n][..]);
            c.push(value);
            c.prepend_same(value, 2);
            assert!(matches!(c, Column::Long(ref r) if r.len == n + 3 && r.built.get().is_none()));
            assert_eq!(*c, vec![value; n + 3][..]);
            c.push_same(value, 3 * n);
            assert!(matches!(c, Column::Each(_)));
            assert_eq!(*c, vec![value; 4 * n + 3][..]);
            let mut c = Column::same(value, n);
            assert!(c.try_reserve_same(value, usize::MAX).is_err());
        }
    }
}
