//! SentencePiece's Unigram Viterbi (`unigram_model.cc`, 0.2.3's `EncodeOptimized`), with its
//! exact arithmetic: scores and path sums are `f32` (the rounding decides between segmentations
//! that tie on paper, e.g. `- --` against `-- -`), on ties the first candidate found is kept,
//! and path sums are rebased to 0 when they leave `±1e5` (which changes the rounding, and with
//! scores near `±f32::MAX` which segmentation wins).
//!
//! When no piece has a `▁` after another char, every `▁` that follows another char is a
//! boundary of every segmentation, so the text is segmented word by word; a word's segmentation
//! is remembered (computed from a path sum of 0) with how close its closest decision was, and
//! reused wherever the rounding at the actual path sum cannot turn that decision (see
//! [`SpViterbi::encode_words`]).

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use super::lattice::{Lattice, ScoredPath, MAX_NBEST};
use crate::base::vocab::Vocab;
use crate::models::bpe::chars::for_each_part;
use crate::models::cache::{Cache, Doorkeeper, Hashed, DEFAULT_CACHE_CAPACITY};
use crate::normalizers::sentencepiece::{utf8_len, SPACE_SYMBOL};
use crate::utils::table_cache::Table;
use crate::utils::trie::{Cursor, Trie};

/// "Not set".
const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Node {
    score: f32,
    start: u32,
    id: u32,
}

/// The Viterbi table and, for a word being cached, the runner-up score at each end.
type Scratch = (Vec<Node>, Vec<f32>);

thread_local! {
    static BEST: RefCell<Scratch> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// A segment: `(start, end, id)`, byte offsets.
type Segment = (u32, u32, u32);

/// A word's segmentation from a path sum of 0 before it (offsets from the word's start), and
/// the smallest gap between the best and the second best path to any end inside it (`inf` when
/// no end had two candidates).
#[derive(Debug)]
struct CachedWord {
    segments: Box<[Segment]>,
    margin: f32,
}

/// Words this long (bytes) or longer are not cached: they seldom repeat.
const MAX_CACHED_WORD: usize = 64;

/// The word cache of a vocabulary whose words are independent (`None` otherwise). A clone
/// starts empty; equality ignores it.
struct WordCache(Option<(Cache<CachedWord>, Doorkeeper)>);

impl Clone for WordCache {
    fn clone(&self) -> Self {
        Self(self.0.as_ref().map(|(cache, door)| (cache.fresh(), door.fresh())))
    }
}

impl PartialEq for WordCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for WordCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "WordCache(on)" } else { "WordCache(off)" })
    }
}

/// What the Viterbi needs to know about a SentencePiece vocabulary.
#[derive(Debug, Clone, PartialEq)]
pub struct SpViterbi {
    /// The trie of the normal, user-defined pieces (not unused ones: they never take part),
    /// with the walks along the commonest chars; built when first needed when the model was
    /// made with [`Self::lazy`] (until then pieces are looked up by their text).
    built: OnceLock<Built>,
    /// The pieces to look up, and to build the trie from, in a lazy model.
    lookup: Option<PieceLookup>,
    /// The score of each id as SentencePiece adds it: the piece score, or for a user-defined
    /// piece `0.1 * (len_bytes - 1)` (a bonus that makes the longest match win).
    pub scores: Vec<f32>,
    /// The id given to a char no single-char piece covers.
    pub unk_id: u32,
    /// `min_score - 10` in `f32`.
    pub unk_score: f32,
    /// `user_defined[id]`: piece `id` is user-defined.
    pub user_defined: Vec<bool>,
    /// Every score is finite (as in any model sentencepiece loads), which the fast loop of
    /// [`Self::fill`] needs.
    finite: bool,
    /// The largest magnitude of a score (NaN ignored).
    max_magnitude: f32,
    /// The length of the longest piece, in bytes.
    longest: usize,
    /// Segmentations of words, when words are independent (see [`Self::with_word_cache`]).
    words: WordCache,
}

/// The trie and what is known of its walks.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Built {
    trie: Trie,
    /// The trie walked along `▁` (the start of most words, three bytes): the cursor after it
    /// and the id (`NONE` for none) and score of the piece `▁`; `None` when no piece starts
    /// with it.
    space: Walked,
    /// The same for each ASCII char (most chars of most texts): `ascii[b]` is the trie
    /// walked along byte `b`.
    ascii: Box<[Walked; 128]>,
}

impl Built {
    fn new(trie: Trie) -> Self {
        let walk = |bytes: &[u8]| {
            let mut cursor = trie.cursor();
            trie.walk(&mut cursor, bytes.iter().copied()).map(|found| (cursor, found))
        };
        let space = walk(SPACE_SYMBOL.as_bytes());
        let ascii = Box::new(std::array::from_fn(|b| walk(&[b as u8])));
        Self { trie, space, ascii }
    }
}

/// The pieces of a lazy [`SpViterbi`]: the vocabulary (shared with the model) and which ids
/// take part (`in_trie(kinds[id])`), and the bytes encoded by lookups so far.
#[derive(Debug)]
struct PieceLookup {
    vocab: Vocab,
    kinds: Table<u8>,
    in_trie: fn(u8) -> bool,
    encoded: AtomicUsize,
}

impl Clone for PieceLookup {
    fn clone(&self) -> Self {
        let encoded = AtomicUsize::new(self.encoded.load(Ordering::Relaxed));
        Self { vocab: self.vocab.clone(), kinds: self.kinds.clone(), in_trie: self.in_trie, encoded }
    }
}

impl PartialEq for PieceLookup {
    fn eq(&self, o: &Self) -> bool {
        self.vocab == o.vocab && *self.kinds == *o.kinds
    }
}

impl PieceLookup {
    /// The id and score of `piece` when it takes part.
    #[inline]
    fn find(&self, piece: &str, scores: &[f32]) -> Option<(u32, f32)> {
        let id = self.vocab.id(piece)?;
        (self.in_trie)(*self.kinds.get(id as usize)?).then(|| (id, scores[id as usize]))
    }

    /// The pieces that take part, with their ids.
    fn pieces(&self) -> impl Iterator<Item = (&str, u32)> + '_ {
        self.vocab.iter().filter(|&(_, id)| self.kinds.get(id as usize).is_some_and(|&k| (self.in_trie)(k)))
    }
}

/// Where a Viterbi ([`SpViterbi::fill`], HF's in [`super::Unigram`]) finds the pieces that
/// start at each position.
pub(crate) trait Pieces {
    /// Calls `f(end, found)` for the first char of `text[start..]`, ending at the returned
    /// `end` (`found`: the id and score of the piece that is that char, `None` when there is
    /// none), then `f(end, Some(found))` for each longer piece that is a prefix, shortest first.
    fn at(&self, text: &[u8], start: usize, f: impl FnMut(usize, Option<(u32, f32)>)) -> usize;
}

impl Pieces for Built {
    #[inline]
    fn at(&self, text: &[u8], start: usize, mut f: impl FnMut(usize, Option<(u32, f32)>)) -> usize {
        let trie = &self.trie;
        let mut cursor = trie.cursor();
        let lead = text[start];
        // The walk along the most common chars is known.
        let known = |walked: Walked, cursor: &mut Cursor| {
            walked.map(|(after, found)| {
                *cursor = after;
                found
            })
        };
        let size = text.len();
        let (char_end, single) = if let Some(&walked) = self.ascii.get(lead as usize) {
            (start + 1, known(walked, &mut cursor))
        } else if lead == SPACE_SYMBOL.as_bytes()[0] && text[start..].starts_with(SPACE_SYMBOL.as_bytes()) {
            (start + SPACE_SYMBOL.len(), known(self.space, &mut cursor))
        } else {
            let len = utf8_len(lead);
            let single = trie.walk(&mut cursor, text[start..].iter().take(len).copied());
            (start + len.min(size - start), single)
        };
        match single {
            Some((id, score)) => {
                f(char_end, (id != NONE).then_some((id, score)));
                let mut k = char_end;
                while let Some(&b) = text.get(k) {
                    let Some((id, score)) = trie.step(&mut cursor, b) else { break };
                    k += 1;
                    if id != NONE {
                        f(k, Some((id, score)));
                    }
                }
            }
            None => f(char_end, None),
        }
        char_end
    }
}

/// Where a [`SpViterbi`] finds its pieces now ([`SpViterbi::piece_source`]).
pub(crate) enum PieceSource<'a> {
    /// The trie, built.
    Trie(&'a Built),
    /// Lookups by text, before the trie is built.
    Lookup(Lookup<'a>),
}

/// The pieces looked up by their text: every prefix of up to `longest` bytes that ends at a
/// char boundary (a piece is valid UTF-8, so one that is a prefix ends at one).
pub(crate) struct Lookup<'a> {
    pieces: &'a PieceLookup,
    scores: &'a [f32],
    longest: usize,
}

impl Pieces for Lookup<'_> {
    fn at(&self, text: &[u8], start: usize, mut f: impl FnMut(usize, Option<(u32, f32)>)) -> usize {
        let size = text.len();
        let char_end = start + utf8_len(text[start]).min(size - start);
        let window = &text[start..size.min(start + self.longest).max(char_end)];
        let valid = match std::str::from_utf8(window) {
            Ok(s) => s,
            Err(e) => std::str::from_utf8(&window[..e.valid_up_to()]).unwrap_or_default(),
        };
        let first = char_end - start;
        f(char_end, valid.get(..first).and_then(|p| self.pieces.find(p, self.scores)));
        for k in first + 1..=valid.len() {
            if let Some(found) = valid.get(..k).and_then(|p| self.pieces.find(p, self.scores)) {
                f(start + k, Some(found));
            }
        }
        char_end
    }
}

/// The trie walked along a char from the root: the cursor after it and what
/// [`Trie::step`] found at its last byte; `None` when no piece starts with the char.
type Walked = Option<(Cursor, (u32, f32))>;

/// The score sentencepiece 0.2.3 gives a user-defined piece of `length` units (bytes in the
/// one-best Viterbi, chars in the lattice): `0.1 * (length - 1)` in `f64`, rounded to `f32`,
/// so that the longest match wins (`GetUserDefinedScore`).
pub(crate) fn user_defined_score(length: usize) -> f32 {
    (0.1 * (length as f64 - 1.0)) as f32
}

/// When the path sum at a start leaves `±RESET`, sentencepiece subtracts it from every path
/// found so far from there on (`kScoreResetThreshold`).
const RESET: f32 = 100_000.0;

impl SpViterbi {
    /// The Viterbi over `trie`, with the scores of each id (see the fields).
    pub fn new(trie: Trie, scores: Vec<f32>, unk_id: u32, unk_score: f32, user_defined: Vec<bool>) -> Self {
        let finite = trie.scores().chain([unk_score]).all(f32::is_finite);
        let max_magnitude = trie.scores().chain([unk_score]).map(f32::abs).fold(0.0, f32::max);
        let longest = trie.longest();
        let built = OnceLock::from(Built::new(trie));
        let words = WordCache(None);
        Self { built, lookup: None, scores, unk_id, unk_score, user_defined, finite, max_magnitude, longest, words }
    }

    /// The Viterbi over the pieces of `vocab` whose kind `in_trie` accepts (`kinds[id]`),
    /// with the scores of each id (see the fields), which looks the pieces up by their text
    /// until [`Self::build_trie`] builds the trie (a load then builds nothing per piece).
    pub fn lazy(
        vocab: Vocab,
        kinds: Table<u8>,
        in_trie: fn(u8) -> bool,
        scores: Vec<f32>,
        unk_id: u32,
        unk_score: f32,
        user_defined: Vec<bool>,
    ) -> Self {
        let (mut finite, mut max_magnitude) = (unk_score.is_finite(), unk_score.abs());
        for (&k, &s) in kinds.iter().zip(&scores) {
            if in_trie(k) {
                finite &= s.is_finite();
                max_magnitude = max_magnitude.max(s.abs());
            }
        }
        let lookup = PieceLookup { vocab, kinds, in_trie, encoded: AtomicUsize::new(0) };
        let longest = lookup.pieces().map(|(p, _)| p.len()).max().unwrap_or(0);
        let words = WordCache(None);
        let lookup = Some(lookup);
        Self { built: OnceLock::new(), lookup, scores, unk_id, unk_score, user_defined, finite, max_magnitude, longest, words }
    }

    /// Counts `bytes` of text about to be encoded by lookups: `true` once the trie is not
    /// built and `threshold` bytes have been (then the caller builds it, [`Self::build_trie`]).
    pub fn trie_due(&self, bytes: usize, threshold: usize) -> bool {
        match &self.lookup {
            Some(lookup) if self.built.get().is_none() => {
                lookup.encoded.fetch_add(bytes, Ordering::Relaxed).saturating_add(bytes) >= threshold
            }
            _ => false,
        }
    }

    /// Whether the trie is built.
    pub fn trie_built(&self) -> bool {
        self.built.get().is_some()
    }

    /// The trie, built now if it is not; `true` with it when this call built it.
    pub fn build_trie(&self) -> (&Trie, bool) {
        let (built, now) = self.built();
        (&built.trie, now)
    }

    /// [`Self::build_trie`], with the walks.
    fn built(&self) -> (&Built, bool) {
        let mut now = false;
        let built = self.built.get_or_init(|| {
            now = true;
            let (lookup, scores) = (self.lookup.as_ref(), &self.scores);
            let pieces = lookup.into_iter().flat_map(|l| l.pieces());
            Built::new(Trie::with_scores(pieces.map(|(p, id)| (p, id, scores[id as usize]))))
        });
        (built, now)
    }

    /// The trie of the pieces, built now if it is not.
    pub fn trie(&self) -> &Trie {
        self.build_trie().0
    }

    /// Lets [`Self::encode_words`] segment word by word, with a cache: only for a vocabulary
    /// where no piece has a `▁` after another char (then no piece spans a `▁` that follows
    /// another char, and those are boundaries of every segmentation).
    pub fn with_word_cache(mut self, words_independent: bool) -> Self {
        self.words = WordCache(words_independent.then(|| (Cache::new(DEFAULT_CACHE_CAPACITY), Doorkeeper::new(16))));
        self
    }

    /// Runs `f` on this thread's scratch tables (fresh ones when they are in use).
    fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
        BEST.with(|cell| {
            let mut guard = cell.try_borrow_mut();
            let mut local = Scratch::default();
            let scratch = match guard.as_deref_mut() {
                Ok(s) => s,
                Err(_) => &mut local,
            };
            let r = f(scratch);
            if scratch.0.len() > (1 << 20) {
                *scratch = Scratch::default();
            }
            r
        })
    }

    /// The best segmentation of the UTF-8 `text`, as `(start, end, id)` byte ranges in order,
    /// appended to `out` (cleared first). Unknown chars come out one per segment.
    pub fn encode(&self, text: &[u8], out: &mut Vec<(u32, u32, u32)>) {
        out.clear();
        if text.is_empty() {
            return;
        }
        Self::with_scratch(|(best, _)| {
            self.segment_from(text, 0.0, 0, best, out);
        });
    }

    /// [`Self::encode`] of `text`, word by word with the word cache when the vocabulary has
    /// one (the same segmentation, see the module doc).
    ///
    /// sentencepiece adds the scores of a path in `f32` from the start of the text, so the
    /// sums at a word depend on the text before it, and their rounding can decide between two
    /// paths through the word that are almost as good. A word is therefore segmented once from
    /// a sum of 0, recording the smallest gap between the best and the second best candidate at
    /// any end inside it; at a sum `q`, each sum differs from its counterpart by at most
    /// `(n + 1) * (|q| + 2 * n * max_magnitude) * 2^-24` after `n` bytes, so when the gap is more
    /// than twice that (and no sum can reach the rebase threshold inside the word) every
    /// decision falls the same way and the cached segmentation is sentencepiece's. Otherwise,
    /// and for long words, the word is segmented from its actual sum.
    pub fn encode_words(&self, text: &str, out: &mut Vec<(u32, u32, u32)>) {
        let Some(words) = self.words.0.as_ref().filter(|_| self.finite) else {
            return self.encode(text.as_bytes(), out);
        };
        out.clear();
        Self::with_scratch(|scratch| {
            let (mut sum, mut start) = (0.0f32, 0);
            // The callback cannot fail.
            let _ = for_each_part(text, '\u{2581}', |word| {
                sum = self.encode_word(words, word.as_bytes(), start, sum, scratch, out);
                start += word.len();
                Ok(())
            });
        });
    }

    /// Appends the segments of `word` (at byte `base` of the text, the path sum before it
    /// `sum`) and returns the path sum after it.
    fn encode_word(
        &self,
        (cache, door): &(Cache<CachedWord>, Doorkeeper),
        word: &[u8],
        base: usize,
        sum: f32,
        scratch: &mut Scratch,
        out: &mut Vec<Segment>,
    ) -> f32 {
        // At the word's start, sentencepiece rebases a sum beyond the threshold to 0 (no path
        // reaches beyond the start yet: it is a boundary).
        let at_start = if sum.abs() > RESET { 0.0 } else { sum };
        let n = word.len() as f32;
        if word.len() < MAX_CACHED_WORD && at_start.is_finite() && n * self.max_magnitude < RESET / 4.0 {
            let key = Hashed::new(word);
            match cache.with_hashed(&key, |w| self.reuse(w, at_start, word.len(), base, out)) {
                Some(Some(after)) => return after,
                Some(None) => {}
                // A word seen for the first time is not worth an entry yet.
                None if !door.seen_before(&key) => {}
                None => {
                    let (best, second) = scratch;
                    if self.fill::<true, true>(word, 0.0, best, second) {
                        let margin = (1..=word.len())
                            .filter(|&k| best[k].start != NONE)
                            .map(|k| best[k].score - second[k])
                            .fold(f32::INFINITY, f32::min);
                        let mut segments = Vec::new();
                        backtrack(best, word.len(), 0, &mut segments);
                        let w = CachedWord { segments: segments.into_boxed_slice(), margin };
                        let reused = self.reuse(&w, at_start, word.len(), base, out);
                        cache.insert_hashed(&key, w);
                        if let Some(after) = reused {
                            return after;
                        }
                    }
                }
            }
        }
        self.segment_from(word, sum, base, &mut scratch.0, out)
    }

    /// Appends `w`'s segments (offset by `base`) if they are the best path of its word of
    /// `len` bytes from a path sum of `sum` (see [`Self::encode_words`]), and returns the sum
    /// after them, added as sentencepiece adds it; `None` when the word is too close to a tie
    /// at this sum.
    fn reuse(&self, w: &CachedWord, sum: f32, len: usize, base: usize, out: &mut Vec<Segment>) -> Option<f32> {
        let (n, q, m) = (len as f64, sum.abs() as f64, self.max_magnitude as f64);
        let error = (n + 1.0) * (q + 2.0 * n * m) * f64::powi(2.0, -24);
        // A NaN margin is not a safe one.
        let clear_of_ties = w.margin as f64 > 2.0 * error;
        if !clear_of_ties || q + n * m * 1.001 > RESET as f64 {
            return None;
        }
        let base = base as u32;
        let mut after = sum;
        for &(s, e, id) in w.segments.iter() {
            out.push((s + base, e + base, id));
            after += if id == self.unk_id { self.unk_score } else { self.scores[id as usize] };
        }
        Some(after)
    }

    /// sentencepiece's Viterbi over `text` (at byte `base` of the whole text) from a path sum
    /// of `sum`: appends the best path's segments and returns its sum.
    fn segment_from(&self, text: &[u8], sum: f32, base: usize, best: &mut Vec<Node>, out: &mut Vec<Segment>) -> f32 {
        if !(self.finite && self.fill::<true, false>(text, sum, best, &mut Vec::new())) {
            self.fill::<false, false>(text, sum, best, &mut Vec::new());
        }
        backtrack(best, text.len(), base, out);
        best[text.len()].score
    }

    /// `best[end]`: the best path to byte `end` of `text`, by its last piece, the path sum
    /// before `text` being `sum`. As in sentencepiece, a candidate replaces the path found so
    /// far when there is none yet or when its score is higher (the first found wins ties). With
    /// `MARGIN` (and `FAST`), `second[end]` is the best score of the other candidates.
    ///
    /// Paths not found yet score `-inf`, which any candidate but NaN beats: with finite scores,
    /// a candidate is finite unless the sum it extends is NaN (sums beyond `±RESET` are rebased
    /// first), and a sum becomes NaN only in a rebase, as `inf - inf` once sums overflowed
    /// near `±f32::MAX`. So the `FAST` loop compares scores alone and gives up (returns
    /// `false`) when a rebase makes a NaN; the general loop follows sentencepiece through NaNs.
    fn fill<const FAST: bool, const MARGIN: bool>(&self, text: &[u8], sum: f32, best: &mut Vec<Node>, second: &mut Vec<f32>) -> bool {
        match self.piece_source() {
            PieceSource::Lookup(lookup) => self.fill_with::<FAST, MARGIN>(&lookup, text, sum, best, second),
            PieceSource::Trie(built) => self.fill_with::<FAST, MARGIN>(built, text, sum, best, second),
        }
    }

    /// Where the pieces are found now: by their text in a lazy model whose trie is not built,
    /// else in the trie.
    pub(crate) fn piece_source(&self) -> PieceSource<'_> {
        match (self.built.get(), &self.lookup) {
            (None, Some(pieces)) => PieceSource::Lookup(Lookup { pieces, scores: &self.scores, longest: self.longest }),
            _ => PieceSource::Trie(self.built().0),
        }
    }

    /// The vocabulary of a lazy model ([`Self::lazy`]).
    pub(crate) fn vocab(&self) -> Option<&Vocab> {
        self.lookup.as_ref().map(|l| &l.vocab)
    }

    /// [`Self::fill`] with the pieces found by `pieces`.
    #[inline(always)]
    fn fill_with<const FAST: bool, const MARGIN: bool>(
        &self,
        pieces: &impl Pieces,
        text: &[u8],
        sum: f32,
        best: &mut Vec<Node>,
        second: &mut Vec<f32>,
    ) -> bool {
        let size = text.len();
        best.clear();
        best.resize(size + 1, Node { score: f32::NEG_INFINITY, start: NONE, id: NONE });
        let best = &mut best[..=size];
        best[0].score = sum;
        if MARGIN {
            second.clear();
            second.resize(size + 1, f32::NEG_INFINITY);
        }
        let second = &mut second[..];
        let mut improve = |best: &mut [Node], end: usize, cand: f32, start: usize, id: u32| {
            let target = &mut best[end];
            if cand > target.score || (!FAST && target.start == NONE) {
                if MARGIN {
                    second[end] = target.score;
                }
                *target = Node { score: cand, start: start as u32, id };
            } else if MARGIN && cand > second[end] {
                second[end] = cand;
            }
        };
        // A piece or unknown char reaches at most this many bytes beyond its start.
        let reach = self.longest.max(4);
        let mut start = 0;
        // sentencepiece checks the sum at every start; from the last one checked, it cannot
        // leave `±RESET` before `until`.
        let mut until = 0;
        while start < size {
            if start >= until {
                let window = start..size.min(start + reach) + 1;
                if best[start].score.abs() > RESET && !rebase::<FAST>(&mut best[window.clone()]) {
                    return false;
                }
                until = start + self.steps_within_reset(&best[window]);
            }
            let here = best[start].score;
            // The first char (pieces are whole chars: none ends inside it), then the
            // longer pieces, shortest first.
            let char_end = pieces.at(text, start, |end, found| match found {
                Some((id, score)) => improve(best, end, score + here, start, id),
                None => improve(best, end, self.unk_score + here, start, self.unk_id),
            });
            start = char_end;
        }
        true
    }
}

impl SpViterbi {
    /// How many bytes from a start (at least 1) no path sum can leave `±RESET` in, given the
    /// paths found so far up to `window`'s end (`window[0]` the start's own): a sum is a path
    /// sum before the start, whose magnitude is at most `w`, plus at most one score per char
    /// since, each at most `max_magnitude`, so after `k` chars it is at most
    /// `(w + k * max_magnitude) * (1 + 2^-24)^k` with the rounding. (NaN sums never leave.)
    fn steps_within_reset(&self, window: &[Node]) -> usize {
        const MAX_STEPS: usize = 4096;
        // (1 + 2^-24)^MAX_STEPS < 1.001.
        const ROUNDING: f64 = 1.001;
        let w = window[1..].iter().filter(|n| n.start != NONE).fold(window[0].score.abs(), |w, n| w.max(n.score.abs()));
        let steps = (RESET as f64 / ROUNDING - w as f64) / self.max_magnitude as f64;
        // `as` saturates: negative and NaN (0 / 0) give 0, infinity `usize::MAX`.
        1 + (steps as usize).min(MAX_STEPS)
    }
}

/// Appends the path that `best` (filled over `len` bytes) ends with, in order, offset by `base`.
fn backtrack(best: &[Node], len: usize, base: usize, out: &mut Vec<Segment>) {
    let before = out.len();
    let base = base as u32;
    let mut end = len;
    while let Some(node) = best.get(end).filter(|_| end > 0) {
        out.push((node.start + base, end as u32 + base, node.id));
        end = node.start as usize;
    }
    out[before..].reverse();
}

/// sentencepiece's rebase at a start whose path sum left `±RESET`: subtracts that sum
/// (`nodes[0]`'s score) from the paths found beyond it, and the sum becomes 0. Paths not found
/// yet are changed too, which only the fast loop looks at: `false` when one becomes NaN there.
#[cold]
#[inline(never)]
fn rebase<const FAST: bool>(nodes: &mut [Node]) -> bool {
    let offset = std::mem::replace(&mut nodes[0].score, 0.0);
    for node in &mut nodes[1..] {
        node.score -= offset;
        if FAST && node.score.is_nan() {
            return false;
        }
    }
    true
}

impl SpViterbi {
    /// Whether `id` is a user-defined piece.
    pub(crate) fn is_user_defined(&self, id: u32) -> bool {
        self.user_defined.get(id as usize).copied().unwrap_or(false)
    }

    /// A segmentation of `text` drawn from the lattice with probability proportional to
    /// `exp(alpha * score)` (sentencepiece's subword regularisation with `nbest_size = -1`),
    /// as `(start, end, id)` in order. The draw depends only on `rng`, so a seeded generator
    /// makes it reproducible (the sequence of draws differs from sentencepiece's own generator).
    pub fn sample(&self, text: &[u8], alpha: f32, rng: &mut impl rand::Rng, out: &mut Vec<(u32, u32, u32)>) {
        Lattice::new(self, text).sample(alpha, rng, out)
    }

    /// The `n` best segmentations of `text`, best first, with their scores (sentencepiece's
    /// `NBestEncode`): `n` is clamped to `1..=1024`; for `n == 1` (or an empty text) the single
    /// Viterbi result with score 0, as sentencepiece returns it.
    pub fn nbest(&self, text: &[u8], n: usize) -> Vec<ScoredPath> {
        let n = n.clamp(1, MAX_NBEST);
        if n == 1 || text.is_empty() {
            let mut out = Vec::new();
            self.encode(text, &mut out);
            return vec![(out, 0.0)];
        }
        Lattice::new(self, text).nbest(n)
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng as _, SeedableRng as _};

    use super::*;

    /// The segmentation `fill::<FAST>` gives, `None` when the fast loop gave up.
    fn path<const FAST: bool>(v: &SpViterbi, text: &[u8]) -> Option<Vec<(u32, u32)>> {
        let mut best = Vec::new();
        if !v.fill::<FAST, false>(text, 0.0, &mut best, &mut Vec::new()) {
            return None;
        }
        let mut out = Vec::new();
        let mut end = text.len();
        while end > 0 {
            out.push((best[end].start, best[end].id));
            end = best[end].start as usize;
        }
        Some(out)
    }

    /// The fast loop gives the general loop's segmentation whenever it does not give up, with
    /// ordinary scores (half-integers, so that sums tie) and extreme ones (sums that overflow,
    /// rebases that make NaNs).
    #[test]
    fn fast_loop_same_as_sentencepiece_loop() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        // Chars of 1, 2 and 3 bytes; `x` is in no piece, `中` only in longer ones.
        let chars = ["a", "b", "é", "▁", "中", "x"];
        let extreme = [f32::MAX, -f32::MAX, 3e38, -1e38, -1e30, 1e30, 2e5, -2e5, 1e-45, 0.0, -0.5];
        let (mut compared, mut gave_up) = (0, 0);
        for round in 0..200 {
            let mut pieces: Vec<String> = ["a", "b", "é", "▁"].iter().filter(|_| rng.gen_bool(0.8)).map(|c| c.to_string()).collect();
            for _ in 0..30 {
                let n = rng.gen_range(2..5);
                pieces.push((0..n).map(|_| chars[rng.gen_range(0..5)]).collect());
            }
            pieces.sort();
            pieces.dedup();
            let scores: Vec<f32> = pieces
                .iter()
                .map(|_| match round % 2 {
                    0 => -(rng.gen_range(1..20) as f32) / 2.0,
                    _ => extreme[rng.gen_range(0..extreme.len())],
                })
                .collect();
            let trie = Trie::with_scores(pieces.iter().zip(&scores).enumerate().map(|(id, (p, &s))| (p.as_str(), id as u32, s)));
            let n = pieces.len();
            let min = scores.iter().copied().fold(f32::MAX, f32::min);
            let v = SpViterbi::new(trie, scores, n as u32, min - 10.0, vec![false; n]);
            assert!(v.finite);
            for _ in 0..20 {
                let text: String = (0..rng.gen_range(1..40)).map(|_| chars[rng.gen_range(0..6)]).collect();
                let general = path::<false>(&v, text.as_bytes()).expect("the general loop always finishes");
                match path::<true>(&v, text.as_bytes()) {
                    Some(fast) => {
                        assert_eq!(fast, general, "{text:?}");
                        compared += 1;
                    }
                    None => gave_up += 1,
                }
            }
        }
        assert!(compared > 3000 && gave_up > 0, "{compared} compared, {gave_up} given up");
        let inf = SpViterbi::new(Trie::with_scores([("a", 0, f32::INFINITY)]), vec![f32::INFINITY], 1, -10.0, vec![false]);
        assert!(!inf.finite);
    }

    /// A lazy Viterbi (pieces looked up by their text) segments as the one over the trie, before
    /// and after it builds its trie, on texts with invalid UTF-8 too; pieces of a kind it was not
    /// given (here odd kinds) take no part.
    #[test]
    fn lookups_same_as_the_trie() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        let chars: [&[u8]; 8] = [b"a", b"b", "é".as_bytes(), "▁".as_bytes(), "中".as_bytes(), b"x", b"\x80", b"\xE4\xB8"];
        let mut compared = 0;
        for _ in 0..100 {
            let mut pieces: Vec<String> = ["a", "b", "é", "▁"].iter().filter(|_| rng.gen_bool(0.8)).map(|c| c.to_string()).collect();
            for _ in 0..40 {
                let n = rng.gen_range(2..6);
                pieces.push((0..n).map(|_| std::str::from_utf8(chars[rng.gen_range(0..5)]).unwrap_or("a")).collect());
            }
            pieces.sort();
            pieces.dedup();
            let n = pieces.len();
            let scores: Vec<f32> = (0..n).map(|_| -(rng.gen_range(1..20) as f32) / 2.0).collect();
            let kinds: Vec<u8> = (0..n).map(|_| rng.gen_range(0..4)).collect();
            let in_trie = |k: u8| k.is_multiple_of(2);
            let trie = Trie::with_scores(
                pieces
                    .iter()
                    .zip(&scores)
                    .enumerate()
                    .filter(|&(id, _)| in_trie(kinds[id]))
                    .map(|(id, (p, &s))| (p.as_str(), id as u32, s)),
            );
            let min = scores.iter().copied().fold(f32::MAX, f32::min);
            let eager = SpViterbi::new(trie, scores.clone(), n as u32, min - 10.0, vec![false; n]);
            let vocab = Vocab::from_distinct_tokens(pieces.iter().map(String::as_str)).unwrap();
            let lazy = SpViterbi::lazy(vocab, kinds.into(), in_trie, scores, n as u32, min - 10.0, vec![false; n]);
            assert_eq!((lazy.finite, lazy.max_magnitude, lazy.longest), (eager.finite, eager.max_magnitude, eager.longest));
            let texts: Vec<Vec<u8>> =
                (0..20).map(|_| (0..rng.gen_range(1..40)).flat_map(|_| chars[rng.gen_range(0..8)].to_vec()).collect()).collect();
            for built in [false, true] {
                if built {
                    lazy.build_trie();
                }
                assert_eq!(lazy.trie_built(), built);
                for text in &texts {
                    let (mut a, mut b) = (Vec::new(), Vec::new());
                    lazy.encode(text, &mut a);
                    eager.encode(text, &mut b);
                    assert_eq!(a, b, "{text:?}");
                    compared += 1;
                }
            }
            assert_eq!(lazy.trie(), eager.trie());
        }
        assert_eq!(compared, 4000);
    }

    /// Word by word with the cache gives the whole-text segmentation, on words that recur at
    /// different path sums, with half-integer scores (sums that tie on paper, so the cache must
    /// decline them) and with sums large enough to be rebased.
    #[test]
    fn word_cache_same_as_whole_text() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(9);
        let chars = ["a", "b", "é", "中", "x"];
        let (mut compared, mut texts) = (0, 0);
        for round in 0..60 {
            let mut pieces: Vec<String> = ["a", "b", "é", "▁"].iter().map(|c| c.to_string()).collect();
            for _ in 0..40 {
                let n = rng.gen_range(2..5);
                let w: String = (0..n).map(|_| chars[rng.gen_range(0..4)]).collect();
                pieces.push(if rng.gen_bool(0.4) { format!("▁{w}") } else { w });
            }
            pieces.sort();
            pieces.dedup();
            let scores: Vec<f32> = pieces
                .iter()
                .map(|_| match round % 3 {
                    0 => -(rng.gen_range(1..20) as f32) / 2.0,
                    1 => -rng.gen_range(1.0..20.0f32),
                    _ => -rng.gen_range(1.0..3000.0f32),
                })
                .collect();
            let trie = Trie::with_scores(pieces.iter().zip(&scores).enumerate().map(|(id, (p, &s))| (p.as_str(), id as u32, s)));
            let n = pieces.len();
            let min = scores.iter().copied().fold(f32::MAX, f32::min);
            let v = SpViterbi::new(trie, scores, n as u32, min - 10.0, vec![false; n]).with_word_cache(true);
            let words: Vec<String> = (0..30).map(|_| (0..rng.gen_range(1..6)).map(|_| chars[rng.gen_range(0..5)]).collect()).collect();
            for _ in 0..20 {
                let text: String = (0..rng.gen_range(1..300)).map(|_| format!("▁{}", words[rng.gen_range(0..words.len())])).collect();
                let (mut whole, mut by_words) = (Vec::new(), Vec::new());
                v.encode(text.as_bytes(), &mut whole);
                v.encode_words(&text, &mut by_words);
                assert_eq!(by_words, whole, "round {round}: {text:?}");
                compared += whole.len();
                texts += 1;
            }
        }
        assert!(texts == 1200 && compared > 100_000, "{texts} texts, {compared} segments");
    }
}
