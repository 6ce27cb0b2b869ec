//! BPE: byte-pair encoding as HF tokenizers runs it on one piece at a time.
//!
//! The piece is split into chars (with `continuing_subword_prefix` on all but the first and
//! `end_of_word_suffix` on the last), each mapped to its id, to `<0xNN>` byte tokens
//! (`byte_fallback`) or to the unk token (fused with its unknown neighbours when `fuse_unk`);
//! then [`word::Word::merge_all`] applies the merges on ids. Results of pieces shorter than
//! 256 bytes are cached per model.

pub mod backtrack;
mod barriers;
pub mod byte_level;
pub mod chars;
mod repeats;
pub mod trainer;
pub mod word;

use std::cell::RefCell;
use std::sync::{Arc, Mutex, OnceLock};

use rand::rngs::StdRng;
use rand::SeedableRng;
use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use backtrack::{BacktrackScratch, Backtracker};
use barriers::{Barriers, Part};
use byte_level::ByteLevelBpe;
use chars::{for_each_part, safe_cut_char, CharIds};
pub use word::{Merge, MergeMap, MergeQueue, Pair, Symbol, Word};

use super::cache::{Cache, Hashed, DEFAULT_CACHE_CAPACITY, MAX_CACHED_LENGTH};
use super::serialization::{deserialize_via_fields, missing, ModelFields};
use crate::base::vocab::{vocab_model_methods, ReverseVocab, Vocab, VocabMap};
use crate::base::{Model, Token};
use crate::{Error, Result};

/// Merges as pairs of token strings, in rank order (first = merged first).
pub type Merges = Vec<(String, String)>;

/// "No such token" in [`BPE`]'s byte table.
const NO_ID: u32 = u32::MAX;

/// The vocabulary token of a byte for `byte_fallback`: `<0x41>` for `A` (uppercase hex).
pub fn byte_token(b: u8) -> String {
    format!("<0x{b:02X}>")
}

/// The byte a `<0xNN>` token stands for (the inverse of [`byte_token`], any hex case).
pub(crate) fn byte_of(token: &str) -> Option<u8> {
    if token.len() == 6 && token.starts_with("<0x") && token.ends_with('>') {
        u8::from_str_radix(token.get(3..5)?, 16).ok()
    } else {
        None
    }
}

/// The ids of the 256 `<0xNN>` byte tokens ([`NO_ID`] where absent) found by `id_of`, or `None`
/// when the vocabulary has none of them.
pub(crate) fn byte_token_ids(id_of: impl Fn(&str) -> Option<u32>) -> Option<Box<[u32; 256]>> {
    let mut ids = Box::new([NO_ID; 256]);
    let mut any = false;
    for (b, slot) in ids.iter_mut().enumerate() {
        if let Some(id) = id_of(&byte_token(b as u8)) {
            *slot = id;
            any = true;
        }
    }
    any.then_some(ids)
}

/// Builds a [`BPE`] with HF's defaults: no dropout, no unk token, no prefix or suffix,
/// `fuse_unk`, `byte_fallback` and `ignore_merges` false, a 10,000-word cache.
#[derive(Debug, Clone)]
pub struct BpeBuilder {
    vocab: VocabMap,
    merges: Merges,
    dropout: Option<f32>,
    unk_token: Option<String>,
    continuing_subword_prefix: Option<String>,
    end_of_word_suffix: Option<String>,
    fuse_unk: bool,
    byte_fallback: bool,
    ignore_merges: bool,
    cache_capacity: usize,
    seed: Option<u64>,
    id_merges: Option<MergeMap>,
}

impl Default for BpeBuilder {
    fn default() -> Self {
        Self {
            vocab: VocabMap::default(),
            merges: Vec::new(),
            dropout: None,
            unk_token: None,
            continuing_subword_prefix: None,
            end_of_word_suffix: None,
            fuse_unk: false,
            byte_fallback: false,
            ignore_merges: false,
            cache_capacity: DEFAULT_CACHE_CAPACITY,
            seed: None,
            id_merges: None,
        }
    }
}

impl BpeBuilder {
    /// A builder with the defaults.
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets the vocabulary (token → id) and the merges (pairs of tokens, in rank order).
    pub fn vocab_and_merges(mut self, vocab: impl IntoIterator<Item = (String, u32)>, merges: Merges) -> Self {
        self.vocab = vocab.into_iter().collect();
        self.merges = merges;
        self
    }
    /// Probability in `[0, 1]` of skipping each merge (BPE-dropout); `None` or 0 disables it.
    pub fn dropout(mut self, p: Option<f32>) -> Self {
        self.dropout = p;
        self
    }
    /// Seeds the dropout random generator so results are reproducible.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }
    /// The token for chars that are not in the vocabulary.
    pub fn unk_token(mut self, t: Option<String>) -> Self {
        self.unk_token = t;
        self
    }
    /// Prefix of every char token but a word's first (e.g. `##`).
    pub fn continuing_subword_prefix(mut self, p: Option<String>) -> Self {
        self.continuing_subword_prefix = p;
        self
    }
    /// Suffix of a word's last char token (e.g. `</w>`).
    pub fn end_of_word_suffix(mut self, s: Option<String>) -> Self {
        self.end_of_word_suffix = s;
        self
    }
    /// Whether consecutive unknown chars become one unk token.
    pub fn fuse_unk(mut self, v: bool) -> Self {
        self.fuse_unk = v;
        self
    }
    /// Whether unknown chars become their UTF-8 bytes as `<0xNN>` tokens when all are present.
    pub fn byte_fallback(mut self, v: bool) -> Self {
        self.byte_fallback = v;
        self
    }
    /// Whether a piece found whole in the vocabulary is one token without merging.
    pub fn ignore_merges(mut self, v: bool) -> Self {
        self.ignore_merges = v;
        self
    }
    /// Sets the merges directly on ids (`(left, right)` → `(rank, merged id)`), in place of
    /// the string merges: several pairs may share a rank. This is how tiktoken rank files are
    /// loaded: every split of a token into two tokens is a pair whose rank is the token's rank.
    pub fn merge_map(mut self, merges: MergeMap) -> Self {
        self.id_merges = Some(merges);
        self
    }
    /// Number of words the cache holds; 0 disables it.
    pub fn cache_capacity(mut self, n: usize) -> Self {
        self.cache_capacity = n;
        self
    }

    /// Builds the model: checks the dropout and resolves every merge to ids.
    pub fn build(self) -> Result<BPE> {
        if let Some(p) = self.dropout {
            if !(0.0..=1.0).contains(&p) {
                return Err(Error::invalid(format!("BPE: dropout must be between 0 and 1 inclusive, got {p}")));
            }
        }
        let prefix_len = self.continuing_subword_prefix.as_ref().map_or(0, String::len);
        let given = self.id_merges.is_some();
        let mut merges = self.id_merges.unwrap_or_else(|| MergeMap::with_capacity(self.merges.len()));
        let mut joined = String::new();
        let mut resolved = Vec::with_capacity(if given { 0 } else { self.merges.len() });
        for (rank, (a, b)) in self.merges.iter().enumerate().filter(|_| !given) {
            let id_of = |t: &str| {
                self.vocab
                    .get(t)
                    .copied()
                    .ok_or_else(|| Error::invalid(format!("BPE merge #{rank} `{a} {b}`: token `{t}` is out of vocabulary")))
            };
            let (a_id, b_id) = (id_of(a)?, id_of(b)?);
            // The merged token drops the right side's `continuing_subword_prefix` (by length, as HF does).
            let rest = b.get(prefix_len..).ok_or_else(|| {
                Error::invalid(format!("BPE merge #{rank} `{a} {b}`: `{b}` is shorter than the continuing_subword_prefix"))
            })?;
            joined.clear();
            joined.push_str(a);
            joined.push_str(rest);
            let new_id = id_of(&joined)?;
            resolved.push(((a_id, b_id), (rank as u32, new_id)));
        }
        // In order: a repeated pair keeps its last rank, like HF's map insertion.
        merges.extend(resolved);
        let unk_id = self.unk_token.as_ref().and_then(|t| self.vocab.get(t).copied());
        let byte_ids = if self.byte_fallback { byte_token_ids(|t| self.vocab.get(t).copied()) } else { None };
        let prefix = self.continuing_subword_prefix.as_deref().filter(|p| !p.is_empty());
        let suffix = self.end_of_word_suffix.as_deref().filter(|s| !s.is_empty());
        let chars = CharIds::new(&self.vocab, "");
        let prefixed_chars = prefix.map(|p| CharIds::new(&self.vocab, p));
        // Two independent passes over large tables, side by side on a cold load.
        let (vocab, scan_exact) = if merges.len() >= PARALLEL_BUILD {
            rayon::join(|| Vocab::new(self.vocab), || merges.rank_follows_result())
        } else {
            (Vocab::new(self.vocab), merges.rank_follows_result())
        };
        let all_bytes = byte_ids.as_ref().is_some_and(|b| b.iter().all(|&id| id != NO_ID));
        let affixes = prefix.is_some() || suffix.is_some();
        let cut = safe_cut_char(&vocab, &merges, self.unk_token.as_deref(), all_bytes, affixes);
        // SentencePiece-style models only (byte fallback, or a `▁`/space cut char).
        let barriers = (!affixes && (self.byte_fallback || cut.is_some()))
            .then(|| Barriers::new(&merges, &chars, byte_ids.as_deref().filter(|_| all_bytes)))
            .flatten();
        Ok(BPE {
            vocab,
            chars,
            prefixed_chars,
            cut,
            barriers,
            scan_exact,
            affixes,
            backtracker: OnceLock::new(),
            byte_level: OnceLock::new(),
            merges,
            dropout: self.dropout,
            unk_token: self.unk_token,
            unk_id,
            continuing_subword_prefix: self.continuing_subword_prefix,
            end_of_word_suffix: self.end_of_word_suffix,
            fuse_unk: self.fuse_unk,
            byte_fallback: self.byte_fallback,
            byte_ids,
            ignore_merges: self.ignore_merges,
            cache: (self.cache_capacity > 0).then(|| Cache::new(self.cache_capacity)),
            seed: self.seed,
            rng: self.seed.map(|s| Mutex::new(StdRng::seed_from_u64(s))),
        })
    }
}

/// Merges from which [`BpeBuilder::build`] runs its independent passes in parallel (below,
/// waking the thread pool costs more than it saves).
const PARALLEL_BUILD: usize = 1 << 15;

/// A cached word: `(id, byte length)` per token.
type CachedWord = Box<[(u32, u32)]>;

thread_local! {
    /// Scratch word, queue and pair list reused by every merge on this thread.
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Scratch buffers larger than this many symbols are released after use.
const SCRATCH_KEEP: usize = 1 << 16;

/// Words of at most this many symbols are merged by scanning ([`Word::merge_small`]).
pub(crate) const SMALL_WORD: usize = 48;

/// Words longer than this many bytes are encoded by the [`Backtracker`] when it applies.
const LONG_WORD: usize = 64;

/// Buffers for merging one word.
#[derive(Default)]
struct Scratch {
    word: Word,
    queue: MergeQueue,
    pairs: Vec<u64>,
    ids: Vec<u32>,
    backtrack: BacktrackScratch,
}

/// The BPE model (HF `models.BPE`).
pub struct BPE {
    vocab: Vocab,
    /// Ids of the single-char tokens.
    chars: CharIds,
    /// Ids of the `continuing_subword_prefix` + char tokens, when there is a prefix.
    prefixed_chars: Option<CharIds>,
    /// Where pieces can be cut without changing the result (see [`safe_cut_char`]).
    cut: Option<char>,
    /// The chars whose symbols no merge touches, around which words are cut (see
    /// [`Barriers`]); only for SentencePiece-style models without affixes.
    barriers: Option<Barriers>,
    /// Whether merges making the same token have the same rank (always so when no two merges
    /// make the same token), so short words may be merged by scanning.
    scan_exact: bool,
    /// Whether there is a `continuing_subword_prefix` or an `end_of_word_suffix`.
    affixes: bool,
    /// The linear-time encoder of long words, built on first use (`None`: the merges do not
    /// allow it).
    backtracker: OnceLock<Option<Arc<Backtracker>>>,
    /// The raw-byte encoder of a byte-level model, built on first use (`None`: the model is
    /// not one, see [`ByteLevelBpe::new`]).
    byte_level: OnceLock<Option<Arc<ByteLevelBpe>>>,
    merges: MergeMap,
    dropout: Option<f32>,
    unk_token: Option<String>,
    unk_id: Option<u32>,
    continuing_subword_prefix: Option<String>,
    end_of_word_suffix: Option<String>,
    fuse_unk: bool,
    byte_fallback: bool,
    byte_ids: Option<Box<[u32; 256]>>,
    ignore_merges: bool,
    cache: Option<Cache<CachedWord>>,
    seed: Option<u64>,
    rng: Option<Mutex<StdRng>>,
}

impl Default for BPE {
    fn default() -> Self {
        Self::builder().build().unwrap_or_else(|_| unreachable!("the default BPE is valid"))
    }
}

impl Clone for BPE {
    /// The clone starts with an empty cache; a seeded generator continues from its current state.
    fn clone(&self) -> Self {
        Self {
            vocab: self.vocab.clone(),
            chars: self.chars.clone(),
            prefixed_chars: self.prefixed_chars.clone(),
            cut: self.cut,
            barriers: self.barriers.clone(),
            scan_exact: self.scan_exact,
            affixes: self.affixes,
            backtracker: self.backtracker.clone(),
            byte_level: self.byte_level.clone(),
            merges: self.merges.clone(),
            dropout: self.dropout,
            unk_token: self.unk_token.clone(),
            unk_id: self.unk_id,
            continuing_subword_prefix: self.continuing_subword_prefix.clone(),
            end_of_word_suffix: self.end_of_word_suffix.clone(),
            fuse_unk: self.fuse_unk,
            byte_fallback: self.byte_fallback,
            byte_ids: self.byte_ids.clone(),
            ignore_merges: self.ignore_merges,
            cache: self.cache.as_ref().map(Cache::fresh),
            seed: self.seed,
            rng: self.rng.as_ref().map(|r| Mutex::new(r.lock().map(|g| g.clone()).unwrap_or_else(|p| p.into_inner().clone()))),
        }
    }
}

impl PartialEq for BPE {
    /// Same vocabulary, merges and options (the cache and the random state are not compared).
    fn eq(&self, o: &Self) -> bool {
        self.vocab == o.vocab
            && self.merges == o.merges
            && self.dropout == o.dropout
            && self.unk_token == o.unk_token
            && self.continuing_subword_prefix == o.continuing_subword_prefix
            && self.end_of_word_suffix == o.end_of_word_suffix
            && self.fuse_unk == o.fuse_unk
            && self.byte_fallback == o.byte_fallback
            && self.ignore_merges == o.ignore_merges
    }
}

impl std::fmt::Debug for BPE {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BPE")
            .field("vocab_size", &self.vocab.len())
            .field("merges", &self.merges.len())
            .field("dropout", &self.dropout)
            .field("unk_token", &self.unk_token)
            .field("continuing_subword_prefix", &self.continuing_subword_prefix)
            .field("end_of_word_suffix", &self.end_of_word_suffix)
            .field("fuse_unk", &self.fuse_unk)
            .field("byte_fallback", &self.byte_fallback)
            .field("ignore_merges", &self.ignore_merges)
            .finish()
    }
}

impl BPE {
    /// A builder with HF's defaults.
    pub fn builder() -> BpeBuilder {
        BpeBuilder::new()
    }

    /// A model from a vocabulary and merges, every other option at its default.
    pub fn new(vocab: impl IntoIterator<Item = (String, u32)>, merges: Merges) -> Result<Self> {
        Self::builder().vocab_and_merges(vocab, merges).build()
    }

    /// Seeds the dropout random generator, so encodings with dropout are reproducible.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self.rng = Some(Mutex::new(StdRng::seed_from_u64(seed)));
        self
    }

    /// The merge table on ids: `(left, right)` → `(rank, merged id)`.
    pub fn merge_map(&self) -> &MergeMap {
        &self.merges
    }

    /// The merges as token pairs, in rank order.
    pub fn merges(&self) -> Vec<(&str, &str)> {
        let mut ranked: Vec<(u32, Pair)> = self.merges.iter().map(|(pair, (rank, _))| (rank, pair)).collect();
        // Pairs sharing a rank (tiktoken rank maps) come in id order, deterministically.
        ranked.sort_unstable();
        ranked.into_iter().map(|(_, (a, b))| (self.vocab.token(a).unwrap_or_default(), self.vocab.token(b).unwrap_or_default())).collect()
    }

    /// The vocabulary (token → id and id → token).
    pub fn vocab(&self) -> &Vocab {
        &self.vocab
    }
    /// Dropout probability.
    pub fn dropout(&self) -> Option<f32> {
        self.dropout
    }
    /// The unk token.
    pub fn unk_token(&self) -> Option<&str> {
        self.unk_token.as_deref()
    }
    /// The continuing-subword prefix.
    pub fn continuing_subword_prefix(&self) -> Option<&str> {
        self.continuing_subword_prefix.as_deref()
    }
    /// The end-of-word suffix.
    pub fn end_of_word_suffix(&self) -> Option<&str> {
        self.end_of_word_suffix.as_deref()
    }
    /// Whether unknown chars are fused into one unk token.
    pub fn fuse_unk(&self) -> bool {
        self.fuse_unk
    }
    /// Whether unknown chars fall back to `<0xNN>` byte tokens.
    pub fn byte_fallback(&self) -> bool {
        self.byte_fallback
    }
    /// Whether whole-piece vocabulary hits skip merging.
    pub fn ignore_merges(&self) -> bool {
        self.ignore_merges
    }

    /// Forgets the cached words.
    pub fn clear_cache(&self) {
        if let Some(c) = &self.cache {
            c.clear();
        }
    }

    /// Replaces the cache with an empty one of `capacity` words (0 disables it).
    pub fn resize_cache(&mut self, capacity: usize) {
        self.cache = (capacity > 0).then(|| Cache::new(capacity));
    }

    fn unk_error(&self) -> Error {
        Error::MissingToken(format!("BPE: the unk token `{}` is not in the vocabulary", self.unk_token.as_deref().unwrap_or_default()))
    }

    /// Splits `w` into initial symbols (chars, byte tokens, unk) into `word`, HF's way.
    fn fill_word(&self, w: &str, word: &mut Word) -> Result<()> {
        let prefix = self.continuing_subword_prefix.as_deref().filter(|p| !p.is_empty());
        let suffix = self.end_of_word_suffix.as_deref().filter(|s| !s.is_empty());
        let mut buf = String::new();
        let mut unk: Option<(u32, u32)> = None;
        for (start, c) in w.char_indices() {
            let end = start + c.len_utf8();
            let byte_len = c.len_utf8() as u32;
            let add_prefix = prefix.is_some() && start > 0;
            let add_suffix = suffix.is_some() && end == w.len();
            // The affixed char as a string, built only when a table cannot answer.
            let affixed = |buf: &mut String| {
                buf.clear();
                if add_prefix {
                    buf.push_str(prefix.unwrap_or_default());
                }
                buf.push(c);
                if add_suffix {
                    buf.push_str(suffix.unwrap_or_default());
                }
            };
            let id = match (add_prefix, add_suffix, &self.prefixed_chars) {
                (false, false, _) => self.chars.get(c),
                (true, false, Some(table)) => table.get(c),
                _ => {
                    affixed(&mut buf);
                    self.vocab.id(&buf)
                }
            };
            if let Some(id) = id {
                if let Some((unk_id, unk_len)) = unk.take() {
                    word.add(unk_id, unk_len);
                }
                word.add(id, byte_len);
                continue;
            }
            // Byte fallback covers the affixed string, one byte per token (HF's behaviour,
            // pending unk tokens included).
            if let Some(bytes) = &self.byte_ids {
                affixed(&mut buf);
                if buf.bytes().all(|b| bytes[b as usize] != NO_ID) {
                    for b in buf.bytes() {
                        word.add(bytes[b as usize], 1);
                    }
                    continue;
                }
            }
            if self.unk_token.is_some() {
                let unk_id = self.unk_id.ok_or_else(|| self.unk_error())?;
                unk = match unk {
                    Some((id, len)) if self.fuse_unk => Some((id, len + byte_len)),
                    Some((id, len)) => {
                        word.add(id, len);
                        Some((unk_id, byte_len))
                    }
                    None => Some((unk_id, byte_len)),
                };
            }
        }
        if let Some((unk_id, unk_len)) = unk {
            word.add(unk_id, unk_len);
        }
        Ok(())
    }

    /// The linear-time encoder of long words (built on first call), when the merges allow
    /// one (see [`Backtracker::new`]).
    pub fn backtracker(&self) -> Option<&Backtracker> {
        self.backtracker.get_or_init(|| Backtracker::new(&self.vocab, &self.merges, &self.chars).map(Arc::new)).as_deref()
    }

    /// The raw-byte encoder, when this is a byte-level model it gives the same tokens for:
    /// every byte char is a token, no affixes, no dropout (see [`ByteLevelBpe`]).
    pub fn byte_level(&self) -> Option<&ByteLevelBpe> {
        if self.affixes || self.active_dropout().is_some() {
            return None;
        }
        self.byte_level
            .get_or_init(|| ByteLevelBpe::new(&self.vocab, &self.merges, &self.chars, self.ignore_merges).map(Arc::new))
            .as_deref()
    }

    /// The ids of the word `w` by the merge loop alone (no cache, no cut into parts, no
    /// backtracking, no dropout): the reference the fast paths are tested against.
    pub fn merge_loop_ids(&self, w: &str) -> Result<Vec<u32>> {
        let mut word = Word::default();
        self.fill_word(w, &mut word)?;
        word.merge_all::<StdRng>(&self.merges, &mut MergeQueue::new(), None);
        Ok(word.ids().collect())
    }

    /// The linear-time encoder, when `w` is long enough to need it and it gives the merge
    /// loop's result: no dropout or affixes, and every char of `w` a token.
    fn long_word_encoder(&self, w: &str) -> Option<&Backtracker> {
        if w.len() <= LONG_WORD || self.affixes || self.active_dropout().is_some() {
            return None;
        }
        let bt = self.backtracker()?;
        w.chars().all(|c| self.chars.get(c).is_some()).then_some(bt)
    }

    /// The dropout probability when it is active (`Some(p)` with `p > 0`).
    fn active_dropout(&self) -> Option<f32> {
        self.dropout.filter(|&p| p > 0.0)
    }

    /// Runs the string-level BPE on `w` and hands the merged word to `f`.
    fn with_merged_word<R>(&self, w: &str, f: impl FnOnce(&Word) -> R) -> Result<R> {
        SCRATCH.with(|scratch| {
            let mut guard = scratch.try_borrow_mut();
            let mut local = Scratch::default();
            let Scratch { word, queue, pairs, ids, backtrack } = match guard.as_deref_mut() {
                Ok(s) => s,
                Err(_) => &mut local,
            };
            word.clear();
            if let Some(bt) = self.long_word_encoder(w) {
                ids.clear();
                if bt.encode(w.as_bytes(), ids, backtrack) {
                    for &id in ids.iter() {
                        word.add(id, bt.token_len(id));
                    }
                    let out = f(word);
                    if word.capacity() > SCRATCH_KEEP {
                        *word = Word::default();
                        *ids = Vec::new();
                        backtrack.release_positions();
                    }
                    return Ok(out);
                }
            }
            self.fill_word(w, word)?;
            match self.active_dropout() {
                None if self.scan_exact && word.len() <= SMALL_WORD => word.merge_small(&self.merges, pairs),
                None => word.merge_all::<StdRng>(&self.merges, queue, None),
                Some(p) => match &self.rng {
                    Some(rng) => {
                        let mut rng = rng.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                        word.merge_all(&self.merges, queue, Some((p, &mut *rng)))
                    }
                    None => word.merge_all(&self.merges, queue, Some((p, &mut rand::thread_rng()))),
                },
            }
            let out = f(word);
            if word.capacity() > SCRATCH_KEEP || queue.capacity() > SCRATCH_KEEP {
                *word = Word::default();
                *queue = MergeQueue::new();
            }
            Ok(out)
        })
    }

    fn token(&self, id: u32, offsets: (usize, usize)) -> Token {
        Token::new(id, self.vocab.token(id).unwrap_or_default().to_owned(), offsets)
    }

    /// Merges one word (a whole piece or a part of one) through the cache, calling `emit`
    /// with `(id, byte length)` of each token in order. With [`Barriers`], a word missing
    /// from the cache is cut around its barrier chars first: a short word is cached whole, the
    /// parts of a long one (too long to cache) each through the cache.
    #[inline]
    fn merge_word_cached(&self, w: &str, mut emit: impl FnMut(u32, u32)) -> Result<()> {
        let cache = self.cache_for(w);
        if let Some((c, k)) = &cache {
            if c.with_hashed(k, |syms| syms.iter().for_each(|&(id, len)| emit(id, len))).is_some() {
                return Ok(());
            }
        }
        let Some(barriers) = &self.barriers else {
            return self.merge_uncached(w, cache, emit);
        };
        if let Some((c, k)) = cache {
            let mut symbols: Vec<(u32, u32)> = Vec::new();
            barriers.for_each_part(w, &self.chars, |part| match part {
                Part::Fixed(id, len) => {
                    symbols.push((id, len));
                    Ok(())
                }
                Part::Merge(p) => self.merge_uncached(p, None, |id, len| symbols.push((id, len))),
            })?;
            symbols.iter().for_each(|&(id, len)| emit(id, len));
            c.insert_hashed(&k, symbols.into_boxed_slice());
            return Ok(());
        }
        barriers.for_each_part(w, &self.chars, |part| match part {
            Part::Fixed(id, len) => {
                emit(id, len);
                Ok(())
            }
            Part::Merge(p) if p.len() == w.len() => self.merge_uncached(p, None, &mut emit),
            Part::Merge(p) => self.merge_part_cached(p, &mut emit),
        })
    }

    /// The cache and `w` hashed for it (once, for the lookup and the insert after a miss),
    /// when `w` is short enough to cache.
    #[inline]
    fn cache_for<'w>(&self, w: &'w str) -> Option<(&Cache<CachedWord>, Hashed<'w>)> {
        let c = self.cache.as_ref().filter(|_| w.len() < MAX_CACHED_LENGTH)?;
        Some((c, Hashed::new(w.as_bytes())))
    }

    /// A part of a long word cut by [`Barriers`]: through the cache, without cutting again.
    fn merge_part_cached(&self, w: &str, mut emit: impl FnMut(u32, u32)) -> Result<()> {
        let cache = self.cache_for(w);
        if let Some((c, k)) = &cache {
            if c.with_hashed(k, |syms| syms.iter().for_each(|&(id, len)| emit(id, len))).is_some() {
                return Ok(());
            }
        }
        self.merge_uncached(w, cache, emit)
    }

    /// Merges `w` whole (backtracking or merge loop), then caches the result in `cache`
    /// (with `w` hashed).
    fn merge_uncached(&self, w: &str, cache: Option<(&Cache<CachedWord>, Hashed<'_>)>, mut emit: impl FnMut(u32, u32)) -> Result<()> {
        let cached = self.with_merged_word(w, |word| {
            let symbols = word.symbols().iter().map(|s| (s.id, s.len));
            symbols.clone().for_each(|(id, len)| emit(id, len));
            cache.is_some().then(|| symbols.collect::<CachedWord>())
        })?;
        if let (Some((c, k)), Some(v)) = (cache, cached) {
            c.insert_hashed(&k, v);
        }
        Ok(())
    }

    /// Merges one word through the cache, appending its tokens to `out` from byte `*pos` on.
    fn tokenize_word(&self, w: &str, pos: &mut usize, out: &mut Vec<Token>) -> Result<()> {
        self.merge_word_cached(w, |id, len| {
            let start = *pos;
            *pos += len as usize;
            out.push(self.token(id, (start, *pos)));
        })
    }

    /// Appends the ids of `sequence`'s tokens to `out`: the ids [`Model::tokenize`] gives,
    /// without building token strings or offsets (the hot path of id-only encoders).
    pub fn tokenize_ids(&self, sequence: &str, out: &mut Vec<u32>) -> Result<()> {
        if sequence.is_empty() {
            return Ok(());
        }
        if u32::try_from(sequence.len()).is_err() {
            return Err(Error::invalid("BPE: a piece longer than 4 GiB cannot be tokenized"));
        }
        if self.active_dropout().is_some() {
            return self.with_merged_word(sequence, |w| out.extend(w.ids()));
        }
        if self.ignore_merges {
            if let Some(id) = self.vocab.id(sequence) {
                out.push(id);
                return Ok(());
            }
        }
        match self.cut {
            Some(c) => for_each_part(sequence, c, |part| self.merge_word_cached(part, |id, _| out.push(id))),
            None => self.merge_word_cached(sequence, |id, _| out.push(id)),
        }
    }
}

impl BPE {
    /// Calls `emit(id, byte length)` for each token [`Model::tokenize`] gives for `sequence`,
    /// in order, without building token strings (the SentencePiece-style direct path of the
    /// tokenizer fills its `Encoding` from these).
    pub(crate) fn tokenize_with(&self, sequence: &str, mut emit: impl FnMut(u32, u32)) -> Result<()> {
        if sequence.is_empty() {
            return Ok(());
        }
        if u32::try_from(sequence.len()).is_err() {
            return Err(Error::invalid("BPE: a piece longer than 4 GiB cannot be tokenized"));
        }
        if self.active_dropout().is_some() {
            return self.with_merged_word(sequence, |w| w.symbols().iter().for_each(|s| emit(s.id, s.len)));
        }
        if self.ignore_merges {
            if let Some(id) = self.vocab.id(sequence) {
                emit(id, sequence.len() as u32);
                return Ok(());
            }
        }
        match self.cut {
            Some(c) => for_each_part(sequence, c, |part| self.merge_word_cached(part, &mut emit)),
            None => self.merge_word_cached(sequence, emit),
        }
    }

    /// Whether the string of every token [`Model::tokenize`] gives is the vocabulary string
    /// of its id (what [`tokenize_with`](Self::tokenize_with) callers assume): not so only
    /// when a piece found whole (`ignore_merges`) shares its id with another token.
    pub(crate) fn tokens_are_vocab_strings(&self) -> bool {
        !(self.ignore_merges && self.vocab.has_shared_ids())
    }

    /// The id → token table, which encodings share to build their token strings lazily.
    #[inline]
    pub(crate) fn reverse_vocab(&self) -> &Arc<ReverseVocab> {
        self.vocab.reverse()
    }
}

impl Model for BPE {
    fn tokenize(&self, sequence: &str) -> Result<Vec<Token>> {
        if sequence.is_empty() {
            return Ok(Vec::new());
        }
        if u32::try_from(sequence.len()).is_err() {
            return Err(Error::invalid("BPE: a piece longer than 4 GiB cannot be tokenized"));
        }
        if self.active_dropout().is_some() {
            return self.with_merged_word(sequence, |w| w.tokens().map(|(id, o)| self.token(id, o)).collect());
        }
        if self.ignore_merges {
            if let Some(id) = self.vocab.id(sequence) {
                return Ok(vec![Token::new(id, sequence.to_owned(), (0, sequence.len()))]);
            }
        }
        let mut out = Vec::new();
        let mut pos = 0;
        match self.cut {
            // Offsets run on from the previous part's tokens, not from where the part starts,
            // as they would over the whole piece.
            Some(c) => for_each_part(sequence, c, |part| self.tokenize_word(part, &mut pos, &mut out))?,
            None => self.tokenize_word(sequence, &mut pos, &mut out)?,
        }
        Ok(out)
    }

    vocab_model_methods!();
}

impl Serialize for BPE {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut m = serializer.serialize_struct("BPE", 10)?;
        m.serialize_field("type", "BPE")?;
        m.serialize_field("dropout", &self.dropout)?;
        m.serialize_field("unk_token", &self.unk_token)?;
        m.serialize_field("continuing_subword_prefix", &self.continuing_subword_prefix)?;
        m.serialize_field("end_of_word_suffix", &self.end_of_word_suffix)?;
        m.serialize_field("fuse_unk", &self.fuse_unk)?;
        m.serialize_field("byte_fallback", &self.byte_fallback)?;
        m.serialize_field("ignore_merges", &self.ignore_merges)?;
        m.serialize_field("vocab", &self.vocab.ordered())?;
        m.serialize_field("merges", &self.merges())?;
        m.end()
    }
}

impl BPE {
    /// Builds the model from the fields of a tokenizer.json model object.
    pub(crate) fn from_fields(mut f: ModelFields) -> Result<Self> {
        f.expect_type("BPE")?;
        let vocab = f.take_vocab_map("BPE")?;
        let merges = f.merges.take().ok_or_else(|| missing("BPE", "merges"))?;
        BpeBuilder {
            vocab,
            merges,
            dropout: f.dropout.flatten(),
            unk_token: f.unk_token.flatten(),
            continuing_subword_prefix: f.continuing_subword_prefix.flatten(),
            end_of_word_suffix: f.end_of_word_suffix.flatten(),
            fuse_unk: f.fuse_unk.flatten().unwrap_or(false),
            byte_fallback: f.byte_fallback.flatten().unwrap_or(false),
            ignore_merges: f.ignore_merges.flatten().unwrap_or(false),
            ..BpeBuilder::default()
        }
        .build()
    }
}

impl BPE {
    /// Writes the built model, its raw-byte encoder included, for
    /// [`crate::utils::table_cache`]: `false` (nothing usable written) for a model outside
    /// what the cache holds, which is a byte-level model as tiktoken rank files make (no
    /// dropout, unk token, affixes, byte fallback or shared ids).
    pub(crate) fn write_table(&self, w: &mut crate::utils::table_cache::Writer) -> bool {
        let plain = self.dropout.is_none()
            && self.unk_token.is_none()
            && !self.affixes
            && !self.byte_fallback
            && self.barriers.is_none()
            && self.prefixed_chars.is_none()
            && self.seed.is_none();
        let Some(byte_level) = self.byte_level().filter(|_| plain) else { return false };
        if !self.vocab.write_table(w) {
            return false;
        }
        self.chars.write_table(w);
        self.merges.write_table(w);
        w.u32(self.cut.map_or(u32::MAX, u32::from));
        w.bool(self.scan_exact);
        w.bool(self.fuse_unk);
        w.bool(self.ignore_merges);
        w.bool(self.cache.is_some());
        // Without affixes each is absent or empty: which one is kept, as it is saved.
        w.bool(self.continuing_subword_prefix.is_some());
        w.bool(self.end_of_word_suffix.is_some());
        byte_level.write_table(w);
        true
    }

    /// Reads what [`BPE::write_table`] wrote.
    pub(crate) fn read_table(r: &mut crate::utils::table_cache::Reader<'_>) -> Result<Self> {
        let vocab = Vocab::read_table(r)?;
        let chars = CharIds::read_table(r)?;
        let merges = MergeMap::read_table(r)?;
        let cut = match r.u32()? {
            u32::MAX => None,
            c => Some(char::from_u32(c).ok_or_else(|| Error::invalid("table cache: malformed cut char"))?),
        };
        let (scan_exact, fuse_unk, ignore_merges, cached) = (r.bool()?, r.bool()?, r.bool()?, r.bool()?);
        let (empty_prefix, empty_suffix) = (r.bool()?, r.bool()?);
        let byte_level = ByteLevelBpe::read_table(r, &merges)?;
        Ok(BPE {
            vocab,
            chars,
            prefixed_chars: None,
            cut,
            barriers: None,
            scan_exact,
            affixes: false,
            backtracker: OnceLock::new(),
            byte_level: OnceLock::from(Some(Arc::new(byte_level))),
            merges,
            dropout: None,
            unk_token: None,
            unk_id: None,
            continuing_subword_prefix: empty_prefix.then(String::new),
            end_of_word_suffix: empty_suffix.then(String::new),
            fuse_unk,
            byte_fallback: false,
            byte_ids: None,
            ignore_merges,
            cache: cached.then(|| Cache::new(DEFAULT_CACHE_CAPACITY)),
            seed: None,
            rng: None,
        })
    }
}

deserialize_via_fields!(BPE);

#[cfg(test)]
mod tests;
