//! A per-char memo of a small property that is costly to compute (Unicode tables, trie
//! walks), filled as chars are met, safe to share between threads.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

/// Chars below this are remembered (the Basic Multilingual Plane); the others are computed
/// each time.
const MEMO_CHARS: usize = 0x1_0000;

/// Set in a cell once its value is known.
const KNOWN: u8 = 0x80;

/// Remembers a 7-bit value per char of the Basic Multilingual Plane. A clone starts empty.
#[derive(Default)]
pub(crate) struct CharMemo {
    cells: OnceLock<Box<[AtomicU8]>>,
}

impl CharMemo {
    /// An empty memo.
    pub(crate) const fn new() -> Self {
        Self { cells: OnceLock::new() }
    }

    /// The value of `c`, computed by `f` (which must always give the same value for the
    /// same char, below 0x80) the first time.
    #[inline]
    pub(crate) fn get_or_compute(&self, c: char, f: impl FnOnce(char) -> u8) -> u8 {
        let i = c as usize;
        if i >= MEMO_CHARS {
            return f(c) & !KNOWN;
        }
        let cells = self.cells.get_or_init(|| (0..MEMO_CHARS).map(|_| AtomicU8::new(0)).collect());
        // Relaxed is enough: a cell only ever goes from unknown to its one value, and a
        // thread that sees it unknown computes the same value.
        let v = cells[i].load(Ordering::Relaxed);
        if v & KNOWN != 0 {
            return v & !KNOWN;
        }
        let v = f(c) & !KNOWN;
        cells[i].store(v | KNOWN, Ordering::Relaxed);
        v
    }
}

impl Clone for CharMemo {
    fn clone(&self) -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for CharMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CharMemo")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn computes_once_per_char() {
        let memo = CharMemo::new();
        let mut calls = 0;
        for c in ['a', 'é', '日', 'a', '日', '😀', '😀'] {
            let v = memo.get_or_compute(c, |c| {
                calls += 1;
                (c as u32 % 7) as u8
            });
            assert_eq!(v, (c as u32 % 7) as u8);
        }
        // 'a', 'é', '日' once each; the emoji (outside the memo) twice.
        assert_eq!(calls, 5);
    }
}
