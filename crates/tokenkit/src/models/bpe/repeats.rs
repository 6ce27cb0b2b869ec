//! Repeated text inside one long piece: windows of the backtracking search's own path, kept by
//! content, so that a piece that repeats itself (a run of one char such as 1 MB of `/` or of
//! tabs, a repeated pattern) is searched through once per distinct window instead of at every
//! repeat. On such runs the search meets many tokens at each position (cl100k has `/` tokens
//! of 19 lengths up to 96 bytes) and explores wrong branches at every boundary: 0.7 positions
//! and 13 validity tests per byte, 27 times the instructions per byte of English prose.
//!
//! Why reusing a window gives the same tokens (see the [`super::backtrack`] module docs): the
//! search's path has all its adjacent pairs valid, so the tokens between two of its boundaries
//! are the valid tokenization of the text between them, whatever the search later does with
//! the path. Equal bytes elsewhere have that same tokenization (it is unique), and appending it
//! to a path whose last token makes a valid pair with its first token keeps every pair valid:
//! the longer path is again the valid tokenization of the text it covers. The search goes on
//! from there as if it had found those tokens itself, except that it has not tried the tokens
//! longer than a reused one at its start: when it backtracks into a reused token, it takes up
//! the position afresh from its longest token (see [`Repeats::popped`]).

/// The fewest bytes a window covers: the search records its path from a boundary to the first
/// boundary at least this far on. Long enough that a reuse (a lookup, a compare of the bytes,
/// a copy of the tokens) costs well under an instruction per byte.
pub(crate) const WINDOW: usize = 256;

/// Pieces at least this long look for repeats; shorter ones (nearly every piece of real text)
/// never pay for the lookups.
pub(crate) const MIN_PIECE: usize = 4 * WINDOW;

/// Windows kept at once, by a hash of their first eight bytes (a power of two).
const SLOTS: usize = 64;

/// The most tokens the windows hold together; past it they are all dropped.
const MAX_TOKENS: usize = 1 << 16;

/// A window: its first eight bytes, where its bytes are in the piece, its first token and
/// where its tokens are in [`Repeats::tokens`]. `count == 0` when the slot is empty.
#[derive(Debug, Clone, Copy, Default)]
struct Window {
    key: u64,
    start: usize,
    len: usize,
    first: u32,
    tokens: usize,
    count: usize,
}

/// A stretch of the search's path: from byte `start` to `end` of the text, from index `at` to
/// `end_at` of the output.
#[derive(Debug, Clone, Copy, Default)]
struct Stretch {
    start: usize,
    end: usize,
    at: usize,
    end_at: usize,
}

/// What the search of one long piece knows of its repeats: the windows recorded so far, the
/// stretch of its path being gathered into the next one, and the ranges of its output that
/// reuses placed.
///
/// A stretch becomes a window only once the path has gone a whole further stretch beyond it
/// without backtracking into it: a stretch that ends in a token the rest of the text will not
/// keep (a 96-byte `/` token is valid after a 64-byte one, but dead a few bytes later) would
/// be reused only to be backtracked through again at every repeat.
#[derive(Debug, Default)]
pub(crate) struct Repeats {
    slots: Vec<Window>,
    /// The key of each slot, apart (0 in an empty one, whose `count` tells it from a window
    /// of eight NUL bytes): the lookup at every token the search pushes reads one word of a
    /// fixed array, and on text that does not repeat itself nearly all of them stop there
    /// (r50k on 400 KB of random digits: 4% fewer instructions than reading the slot's window).
    keys: Keys,
    tokens: Vec<u32>,
    /// Where the stretch being gathered starts (`end` and `end_at` unused).
    open: Stretch,
    /// The last stretch gathered, to become a window when the next one is.
    pending: Option<Stretch>,
    /// Ranges of the output (start, end) whose tokens a reuse placed, in output order; the
    /// last one ends where the output ends or below.
    reused: Vec<(usize, usize)>,
}

/// The keys of [`Repeats::slots`] (arrays of more than 32 have no `Default`).
#[derive(Debug)]
struct Keys([u64; SLOTS]);

impl Default for Keys {
    fn default() -> Self {
        Self([0; SLOTS])
    }
}

impl Repeats {
    /// Forgets everything, for a new piece of `len` bytes whose tokens go to the output from
    /// index `base`.
    pub(crate) fn start(&mut self, base: usize, len: usize) {
        self.slots.clear();
        self.slots.resize(SLOTS, Window::default());
        self.keys = Keys::default();
        self.tokens.clear();
        // At most a token per byte, and at most `MAX_TOKENS`: made once, not grown (each
        // growth copied the tokens).
        self.tokens.reserve(len.min(MAX_TOKENS));
        self.open = Stretch { at: base, ..Stretch::default() };
        self.pending = None;
        self.reused.clear();
    }

    /// Releases the buffers a long piece grew.
    pub(crate) fn release(&mut self) {
        *self = Self::default();
    }

    /// The first eight bytes of `text` from `pos`, when there are eight.
    #[inline]
    fn key(text: &[u8], pos: usize) -> Option<u64> {
        let bytes = text.get(pos..pos.checked_add(8)?)?;
        Some(u64::from_le_bytes(bytes.try_into().ok()?))
    }

    #[inline]
    fn slot(key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SLOTS.trailing_zeros())) as usize
    }

    /// The search pushed a token: its path `out` now ends at byte `pos`.
    #[inline]
    pub(crate) fn pushed(&mut self, text: &[u8], pos: usize, out: &[u32]) {
        if pos - self.open.start < WINDOW {
            return;
        }
        if let Some(p) = self.pending.take() {
            self.record(text, p, &out[p.at..p.end_at]);
        }
        self.pending = Some(Stretch { end: pos, end_at: out.len(), ..self.open });
        self.open = Stretch { start: pos, at: out.len(), ..Stretch::default() };
    }

    /// Records that `tokens` are the valid tokenization of the text of `stretch`.
    fn record(&mut self, text: &[u8], stretch: Stretch, tokens: &[u32]) {
        let (Some(key), Some(&first)) = (Self::key(text, stretch.start), tokens.first()) else { return };
        if self.tokens.len() + tokens.len() > MAX_TOKENS {
            self.slots.fill(Window::default());
            self.keys = Keys::default();
            self.tokens.clear();
        }
        self.keys.0[Self::slot(key)] = key;
        self.slots[Self::slot(key)] =
            Window { key, start: stretch.start, len: stretch.end - stretch.start, first, tokens: self.tokens.len(), count: tokens.len() };
        self.tokens.extend_from_slice(tokens);
    }

    /// Appends to the search's path `out` the tokens of a window whose bytes `text` has from
    /// `pos` (where the path ends), when `accept(last token of the path, first token of the
    /// window, end)` takes it (the search checks there that the path stays valid and leads to
    /// a live position); returns where they end.
    #[inline]
    pub(crate) fn reuse(
        &mut self,
        text: &[u8],
        pos: usize,
        out: &mut Vec<u32>,
        accept: impl FnOnce(u32, u32, usize) -> bool,
    ) -> Option<usize> {
        let key = Self::key(text, pos)?;
        let slot = Self::slot(key);
        if self.keys.0[slot] != key {
            return None;
        }
        let w = *self.slots.get(slot).filter(|w| w.count > 0 && w.key == key)?;
        let (&last, end) = (out.last()?, pos + w.len);
        // The cheap tests first: the bytes are compared only for a reuse that would be taken.
        if end > text.len() || !accept(last, w.first, end) || text[pos..end] != text[w.start..w.start + w.len] {
            return None;
        }
        self.reused.push((out.len(), out.len() + w.count));
        out.extend_from_slice(&self.tokens[w.tokens..w.tokens + w.count]);
        self.open = Stretch { start: end, at: out.len(), ..Stretch::default() };
        Some(end)
    }

    /// The search popped a token: its path now ends at byte `pos`, with `len` tokens. Whether
    /// that token was placed by a reuse; the search then takes up `pos` from the longest token.
    #[inline]
    pub(crate) fn popped(&mut self, pos: usize, len: usize) -> bool {
        if let Some(p) = self.pending.filter(|p| len < p.end_at) {
            // The path left the pending stretch: gather it again, it may close further on.
            self.pending = None;
            self.open = Stretch { start: p.start, at: p.at, ..Stretch::default() };
        }
        if len < self.open.at {
            self.open = Stretch { start: pos, at: len, ..Stretch::default() };
        }
        match self.reused.last_mut() {
            Some((start, end)) if (*start..*end).contains(&len) => {
                *end = len;
                if len == *start {
                    self.reused.pop();
                }
                true
            }
            _ => false,
        }
    }
}
