//! Hand-written lexers for the well-known pre-tokenization regexes. Each one gives exactly
//! the matches Oniguruma gives for its pattern (checked against `SysRegex` in the tests on
//! the corpora and on random strings), at a fraction of the cost.

pub mod adversarial;
pub mod block;
pub mod cl100k;
pub mod class_table;
pub mod classes;
pub mod deepseek;
pub mod gpt2;
pub mod o200k;

pub use adversarial::adversarial_texts;
pub use cl100k::{Cl100kLexer, DigitRun};
pub use deepseek::{
    deepseek_pieces, CjkRuns, DeepSeekLexer, DigitGroups, DEEPSEEK_CJK_PATTERN, DEEPSEEK_DIGITS_PATTERN, DEEPSEEK_MAIN_PATTERN,
};
pub use gpt2::Gpt2Lexer;
pub use o200k::{O200kLexer, O200K_PATTERN};

/// The pieces an `Isolated` split makes of a text of `len` bytes given its regex's `matches`
/// (in order, not overlapping): each match, and each non-empty gap between them, passed to
/// `piece` as byte ranges in order.
#[inline]
pub fn isolated_pieces(len: usize, matches: impl Iterator<Item = (usize, usize)>, piece: impl FnMut(usize, usize)) {
    let mut isolated = Isolated::new(piece);
    matches.for_each(|(s, e)| isolated.matched(s, e));
    isolated.finish(len);
}

/// [`isolated_pieces`] fed one match at a time (for matches that come from a callback).
pub struct Isolated<F> {
    last: usize,
    piece: F,
}

impl<F: FnMut(usize, usize)> Isolated<F> {
    /// Pieces go to `piece(start, end)`.
    #[inline]
    pub fn new(piece: F) -> Self {
        Self { last: 0, piece }
    }

    /// The next match, `start..end` (after the previous one): the gap before it, then it.
    #[inline]
    pub fn matched(&mut self, start: usize, end: usize) {
        if start > self.last {
            (self.piece)(self.last, start);
        }
        (self.piece)(start, end);
        self.last = end;
    }

    /// No more matches in a text of `len` bytes: the gap after the last one.
    #[inline]
    pub fn finish(mut self, len: usize) {
        if self.last < len {
            (self.piece)(self.last, len);
        }
    }
}

/// Deterministic random strings (0 to 11 chars) over `alphabet`, for the lexer tests.
#[cfg(test)]
pub(crate) fn random_strings(alphabet: &str, mut state: u64, count: usize) -> Vec<String> {
    let alphabet: Vec<char> = alphabet.chars().collect();
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let len = (state % 12) as usize;
        let mut s = String::new();
        let mut x = state;
        for _ in 0..len {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            s.push(alphabet[(x >> 33) as usize % alphabet.len()]);
        }
        out.push(s);
    }
    out
}
#[cfg(test)]
mod block_tests;
#[cfg(test)]
mod linear_tests;
#[cfg(test)]
pub(crate) mod reference_tests;
