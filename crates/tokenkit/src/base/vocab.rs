//! Vocabulary tables shared by the map-vocabulary models (BPE, WordPiece, WordLevel): the
//! tokens in a few flat arrays (no allocation per token, read from the table cache as they
//! are), the token → id hash table over them, and their serialization in id order.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, OnceLock};

use ahash::AHashMap;
use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::utils::table_cache::Table;

/// Token → id map used by the models ([`StrHasher`]: these lookups are on the hot path).
pub type VocabMap = HashMap<String, u32, BuildHasherDefault<StrHasher>>;

pub use crate::utils::hash_bytes;

/// [`Hasher`] for the vocabulary's string keys, built on [`hash_bytes`]. Vocabularies come
/// from model files, not from the text being encoded, so a keyed hash buys nothing here.
#[derive(Default, Clone, Copy)]
pub struct StrHasher(u64);

impl Hasher for StrHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        self.0 = hash_bytes(bytes, self.0);
    }
    #[inline]
    fn write_u8(&mut self, b: u8) {
        // `str`'s terminator: mixed in cheaply, the finalizer already ran on the bytes.
        self.0 = self.0.rotate_left(5) ^ u64::from(b);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Ids above `DENSE_SLACK + 2 * len` switch the reverse table to a hash map, so a vocabulary
/// with a huge stray id cannot make us allocate gigabytes.
const DENSE_SLACK: usize = 1 << 16;

/// Whether a table indexed by id, of `n_ids` entries (one more than the largest id), is the
/// right home for `count` entries: the id → token tables are dense unless that would waste
/// more than twice the entries plus [`DENSE_SLACK`] (a stray id of 2^32 - 1 would ask for
/// gigabytes), and then a hash map.
pub(crate) fn fits_dense_table(n_ids: usize, count: usize) -> bool {
    n_ids <= DENSE_SLACK + 2 * count + 1
}

/// "No entry" in [`ById::Dense`].
const NO_ENTRY: u32 = u32::MAX;

/// Where the entry of an id is, in a [`ReverseVocab`].
#[derive(Debug, Clone, PartialEq)]
enum ById {
    /// Entry `i` has id `i` (ids `0..n`, each once: most vocabularies).
    Identity,
    /// `table[id]` is the entry of `id`, [`NO_ENTRY`] for a hole.
    Dense(Vec<u32>),
    /// Id → entry, for vocabularies with very large ids.
    Sparse(AHashMap<u32, u32>),
}

/// The tokens of a vocabulary in a few flat arrays (no allocation per token): entry `e` is the
/// token `text[starts[e]..starts[e + 1]]` with id `ids[e]`, the entries sorted by id then
/// token. This is the id → token table; when two tokens share an id, the one that sorts last
/// is its token (so the result does not depend on hash order), the others are entries only the
/// token → id table ([`Vocab`]) finds.
#[derive(Debug, Clone, PartialEq)]
pub struct ReverseVocab {
    text: String,
    /// One more than the entries; every one on a char boundary of `text`, non-decreasing.
    starts: Table<u32>,
    /// Non-decreasing.
    ids: Table<u32>,
    by_id: ById,
}

impl Default for ReverseVocab {
    fn default() -> Self {
        Self { text: String::new(), starts: vec![0].into(), ids: Table::default(), by_id: ById::Identity }
    }
}

impl ReverseVocab {
    /// Builds the reverse of `vocab`.
    pub fn new(vocab: &VocabMap) -> Self {
        if let Some(entries) = Self::placed_by_id(vocab) {
            return Self::from_sorted(&entries);
        }
        let mut entries: Vec<(u32, &str)> = vocab.iter().map(|(t, &i)| (i, t.as_str())).collect();
        entries.sort_unstable();
        Self::from_sorted(&entries)
    }

    /// `vocab`'s entries in id order, each put at its id in a table indexed by id (no sort:
    /// a 100k-token vocabulary sorted cost 40M instructions), when the ids are distinct and
    /// [dense enough](fits_dense_table) (most vocabularies); `None` otherwise.
    fn placed_by_id(vocab: &VocabMap) -> Option<Vec<(u32, &str)>> {
        let n_ids = vocab.values().max().map_or(0, |&m| m as usize + 1);
        if !fits_dense_table(n_ids, vocab.len()) {
            return None;
        }
        let mut at: Vec<Option<&str>> = vec![None; n_ids];
        for (t, &id) in vocab {
            if at[id as usize].replace(t.as_str()).is_some() {
                return None; // a shared id: the sort orders the tokens of an id
            }
        }
        Some((0..).zip(at).filter_map(|(id, t)| Some((id, t?))).collect())
    }

    /// The table of tokens whose ids are their positions (`0, 1, ...`).
    pub fn from_tokens<'a>(tokens: impl IntoIterator<Item = &'a str>) -> Self {
        let (mut text, mut starts, mut ids) = (String::new(), vec![0], Vec::new());
        for t in tokens {
            text.push_str(t);
            ids.push(ids.len() as u32);
            starts.push(text.len() as u32);
        }
        Self { text, starts: starts.into(), ids: ids.into(), by_id: ById::Identity }
    }

    /// The table of `entries`, sorted by id then token.
    fn from_sorted(entries: &[(u32, &str)]) -> Self {
        let mut text = String::with_capacity(entries.iter().map(|(_, t)| t.len()).sum());
        let mut starts = Vec::with_capacity(entries.len() + 1);
        starts.push(0);
        for (_, t) in entries {
            text.push_str(t);
            starts.push(text.len() as u32);
        }
        let ids: Vec<u32> = entries.iter().map(|&(i, _)| i).collect();
        let by_id = Self::index(&ids);
        Self { text, starts: starts.into(), ids: ids.into(), by_id }
    }

    /// The id → entry index of `ids` (non-decreasing): the last entry of an id is its own.
    fn index(ids: &[u32]) -> ById {
        if ids.iter().enumerate().all(|(e, &id)| id as usize == e) {
            return ById::Identity;
        }
        let n_ids = ids.last().map_or(0, |&m| m as usize + 1);
        if fits_dense_table(n_ids, ids.len()) {
            let mut table = vec![NO_ENTRY; n_ids];
            for (e, &id) in ids.iter().enumerate() {
                table[id as usize] = e as u32;
            }
            ById::Dense(table)
        } else {
            ById::Sparse(ids.iter().enumerate().map(|(e, &id)| (id, e as u32)).collect())
        }
    }

    /// The number of entries (tokens, shared ids counted once per token).
    fn entries(&self) -> usize {
        self.ids.len()
    }

    /// The token of entry `e` (< [`Self::entries`]).
    #[inline]
    fn entry(&self, e: usize) -> &str {
        &self.text[self.starts[e] as usize..self.starts[e + 1] as usize]
    }

    /// The token of `id`.
    #[inline]
    pub fn get(&self, id: u32) -> Option<&str> {
        let e = match &self.by_id {
            ById::Identity => id as usize,
            ById::Dense(t) => match *t.get(id as usize)? {
                NO_ENTRY => return None,
                e => e as usize,
            },
            ById::Sparse(m) => *m.get(&id)? as usize,
        };
        (e < self.ids.len()).then(|| self.entry(e))
    }

    /// Whether the ids are too spread out for a table indexed by id.
    #[cfg(test)]
    fn is_sparse(&self) -> bool {
        matches!(self.by_id, ById::Sparse(_))
    }

    /// `(token, id)` pairs in increasing id order (how HF writes a vocabulary), one per id.
    pub fn ordered(&self) -> Vec<(&str, u32)> {
        (0..self.entries()).filter(|&e| self.ids.get(e + 1) != Some(&self.ids[e])).map(|e| (self.entry(e), self.ids[e])).collect()
    }

    /// Every `(token, id)` pair, in increasing id order (tokens sharing an id by token).
    fn all(&self) -> impl Iterator<Item = (&str, u32)> + '_ {
        (0..self.entries()).map(|e| (self.entry(e), self.ids[e]))
    }
}

/// Serializes a vocabulary as a JSON object in increasing id order.
pub struct OrderedVocab<'a>(pub &'a ReverseVocab);

impl Serialize for OrderedVocab<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let entries = self.0.ordered();
        let mut map = serializer.serialize_map(Some(entries.len()))?;
        for (token, id) in entries {
            map.serialize_entry(token, &id)?;
        }
        map.end()
    }
}

/// A token ↔ id vocabulary: the tokens in flat arrays ([`ReverseVocab`], the id → token
/// direction) and a hash table of their entries keyed by the token's bytes (token → id), built
/// on the first lookup (encoding a byte-level text never looks a token up by its string) and
/// stored with the vocabulary in the table cache, so a load from the cache hashes no token.
#[derive(Debug, Clone, Default)]
pub struct Vocab {
    /// Shared with the encodings whose token strings are looked up in it.
    reverse: Arc<ReverseVocab>,
    /// The token → entry table.
    by_token: OnceLock<TokenIndex>,
    /// Whether two tokens have the same id (then `reverse` gives only one of them).
    shared_ids: bool,
}

/// The token → entry table of a [`ReverseVocab`] whose tokens are distinct: open addressing
/// (linear probing, at most half full) over entry indices, hashed by [`token_hash`]; a flat
/// array, so the table cache holds it as it is.
#[derive(Debug, Clone)]
struct TokenIndex {
    /// A power of two of slots, each an entry or [`NO_ENTRY`].
    slots: Table<u32>,
}

impl TokenIndex {
    /// The table of `r`'s entries, whose tokens must be distinct.
    fn new(r: &ReverseVocab) -> Self {
        let mut slots = vec![NO_ENTRY; (r.entries() * 2).max(2).next_power_of_two()];
        for e in 0..r.entries() {
            let token = r.entry(e).as_bytes();
            // A token found would be a duplicate (none, as said): never equal.
            if let Ok(i) = probe(&slots, token, |_| false) {
                slots[i] = e as u32;
            }
        }
        Self { slots: slots.into() }
    }

    /// The entry of `token` in `r`.
    #[inline]
    fn find(&self, r: &ReverseVocab, token: &str) -> Option<u32> {
        probe(&self.slots, token.as_bytes(), |e| r.entry(e as usize) == token).err()
    }
}

/// Where `token` is in `slots` (a [`TokenIndex`]'s), probing from its hash: `Err(e)` when it is
/// the token of the entry `e` there (`is(e)` says whether it is), else `Ok` with the free slot
/// where it would go.
#[inline]
fn probe(slots: &[u32], token: &[u8], is: impl Fn(u32) -> bool) -> Result<usize, u32> {
    let mask = slots.len() - 1;
    let mut i = token_hash(token) as usize & mask;
    loop {
        match slots[i] {
            NO_ENTRY => return Ok(i),
            e if is(e) => return Err(e),
            _ => i = (i + 1) & mask,
        }
    }
}

/// The hash of a token in a [`TokenIndex`]: its bytes read as a few fixed-size words (a short
/// token as two overlapping halves, a long one 8 bytes at a time, its last 8 bytes overlapping),
/// each mixed in by a 64 x 64 → 128-bit multiply folded to 64 bits (wyhash's), so that tokens of a
/// few bytes, most of a vocabulary, take no loop and no copy of their own length. Vocabularies
/// come from model files, not from the text being encoded, so a keyed hash buys nothing here; the
/// table kept in the table cache needs the same hash in every process.
#[inline]
pub(crate) fn token_hash(t: &[u8]) -> u64 {
    const P0: u64 = 0xa076_1d64_78bd_642f;
    const P1: u64 = 0xe703_7ed1_a0b4_28db;
    let mum = |a: u64, b: u64| {
        let r = u128::from(a) * u128::from(b);
        (r as u64) ^ (r >> 64) as u64
    };
    let n = t.len();
    let mut h = n as u64 ^ P0;
    let last = match n {
        0 => 0,
        1..=3 => u64::from(t[0]) | u64::from(t[n / 2]) << 8 | u64::from(t[n - 1]) << 16,
        4..=8 => {
            let half = |i: usize| {
                let mut w = [0u8; 4];
                w.copy_from_slice(&t[i..i + 4]);
                u64::from(u32::from_le_bytes(w))
            };
            half(0) | half(n - 4) << 32
        }
        _ => {
            let word = |c: &[u8]| {
                let mut w = [0u8; 8];
                w.copy_from_slice(&c[..8]);
                u64::from_le_bytes(w)
            };
            let mut chunks = t.chunks_exact(8);
            for c in &mut chunks {
                h = mum(h ^ word(c), P1);
            }
            if chunks.remainder().is_empty() {
                0
            } else {
                word(&t[n - 8..])
            }
        }
    };
    mum(h ^ last, P1)
}

/// Why [`DistinctTokens::push`] did not add a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushError {
    /// The token is the one of this earlier id.
    Duplicate(u32),
    /// The tokens would pass 4 GiB, or 2^31 of them (or [`DistinctTokens::push_in`] was given
    /// fewer bytes than the token's).
    Full,
}

/// Builds the [`Vocab`] of distinct tokens given in id order (the token of id `i` the `i`-th
/// one: a SentencePiece model's pieces), its token → id table filled as the tokens come: a
/// file's pieces are read, stored and indexed in one pass, each while its bytes are at hand.
/// Tokens are bytes, checked to be text once they are all in ([`Self::finish`]).
#[derive(Debug)]
pub struct DistinctTokens {
    text: Vec<u8>,
    starts: Vec<u32>,
    /// [`TokenIndex`]'s slots, at most half full.
    slots: Vec<u32>,
}

impl DistinctTokens {
    /// Room for `tokens` tokens of `text_bytes` bytes in all (more are taken, at the cost of
    /// growing).
    pub fn with_capacity(tokens: usize, text_bytes: usize) -> Self {
        let mut starts = Vec::with_capacity(tokens + 1);
        starts.push(0);
        Self { text: Vec::with_capacity(text_bytes), starts, slots: vec![NO_ENTRY; (tokens * 2).max(2).next_power_of_two()] }
    }

    /// The number of tokens added.
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// Whether no token was added.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The token of entry `e`.
    #[inline]
    fn entry(&self, e: u32) -> &[u8] {
        let e = e as usize;
        &self.text[self.starts[e] as usize..self.starts[e + 1] as usize]
    }

    /// Adds `token`, with the next id; nothing when it is an earlier token, or when the
    /// tokens would pass 4 GiB.
    #[inline]
    pub fn push(&mut self, token: &[u8]) -> Result<(), PushError> {
        self.push_in(token, token.len())
    }

    /// [`Self::push`] of the token `bytes[..len]`, the bytes after it read too, not stored: a
    /// token of at most 16 bytes is copied as 16 (a copy of its own length is a call to `memcpy`,
    /// whose branches on the length cost more than the copy).
    #[inline]
    pub fn push_in(&mut self, bytes: &[u8], len: usize) -> Result<(), PushError> {
        let token = bytes.get(..len).ok_or(PushError::Full)?;
        let e = self.len();
        let end = u32::try_from(self.text.len() + token.len()).map_err(|_| PushError::Full)?;
        if e >= (NO_ENTRY >> 1) as usize {
            return Err(PushError::Full);
        }
        if 2 * (e + 1) > self.slots.len() {
            // Past the capacity: twice the slots, the tokens so far put in again.
            self.slots = vec![NO_ENTRY; self.slots.len() * 2];
            for e in 0..e as u32 {
                if let Ok(i) = probe(&self.slots, self.entry(e), |_| false) {
                    self.slots[i] = e;
                }
            }
        }
        let slot = probe(&self.slots, token, |o| self.entry(o) == token).map_err(PushError::Duplicate)?;
        self.slots[slot] = e as u32;
        match bytes.first_chunk::<16>() {
            Some(window) if len <= 16 => {
                let at = self.text.len();
                self.text.extend_from_slice(window);
                self.text.truncate(at + len);
            }
            _ => self.text.extend_from_slice(token),
        }
        self.starts.push(end);
        Ok(())
    }

    /// The vocabulary; `None` when the tokens are not text (each one UTF-8).
    pub fn finish(self) -> Option<Vocab> {
        let Self { text, starts, slots } = self;
        // Checked with SIMD at once (most tokens are a few bytes), then each token's start: a
        // text cut at char boundaries is text in every part.
        simdutf8::basic::from_utf8(&text).ok()?;
        if !starts.iter().all(|&s| text.get(s as usize).is_none_or(|&b| !is_continuation(b))) {
            return None;
        }
        // SAFETY: checked just above.
        let text = unsafe { String::from_utf8_unchecked(text) };
        let ids: Vec<u32> = (0..starts.len() as u32 - 1).collect();
        let reverse = ReverseVocab { text, starts: starts.into(), ids: ids.into(), by_id: ById::Identity };
        let vocab = Vocab::from_reverse(reverse);
        let _ = vocab.by_token.set(TokenIndex { slots: slots.into() });
        Some(vocab)
    }
}

/// Whether `b` continues a UTF-8 char (`0b10xx_xxxx`).
#[inline]
fn is_continuation(b: u8) -> bool {
    (b as i8) < -0x40
}

impl PartialEq for Vocab {
    fn eq(&self, o: &Self) -> bool {
        // Both sorted by id then token: equal exactly when the token → id maps are.
        self.reverse.text == o.reverse.text && self.reverse.starts == o.reverse.starts && self.reverse.ids == o.reverse.ids
    }
}

impl Vocab {
    /// Builds both directions.
    pub fn new(map: VocabMap) -> Self {
        // The keys of a map are distinct, as the token → id table needs.
        Self::from_reverse(ReverseVocab::new(&map))
    }

    /// The vocabulary of `tokens`, the token of id `i` the `i`-th one (a SentencePiece model's
    /// pieces); `Err(i)` when token `i` is also an earlier one.
    pub fn from_distinct_tokens<'a>(tokens: impl IntoIterator<Item = &'a str>) -> Result<Self, usize> {
        let tokens = tokens.into_iter();
        let mut b = DistinctTokens::with_capacity(tokens.size_hint().0, 0);
        for (i, t) in tokens.enumerate() {
            b.push(t.as_bytes()).map_err(|_| i)?;
        }
        // The tokens are text, and fewer than 4 GiB of it (`push` says so).
        Ok(b.finish().unwrap_or_else(|| unreachable!("tokens given as text are text")))
    }

    /// The vocabulary of `reverse`'s entries, whose tokens must be distinct.
    fn from_reverse(reverse: ReverseVocab) -> Self {
        let shared_ids = reverse.ids.windows(2).any(|w| w[0] == w[1]);
        Self { reverse: Arc::new(reverse), by_token: OnceLock::new(), shared_ids }
    }

    /// The token → entry table.
    fn by_token(&self) -> &TokenIndex {
        self.by_token.get_or_init(|| TokenIndex::new(&self.reverse))
    }

    /// The id of `token`.
    #[inline]
    pub fn id(&self, token: &str) -> Option<u32> {
        let r = &*self.reverse;
        self.by_token().find(r, token).map(|e| r.ids[e as usize])
    }
    /// The token of `id`.
    #[inline]
    pub fn token(&self, id: u32) -> Option<&str> {
        self.reverse.get(id)
    }
    /// Whether `token` is in the vocabulary.
    pub fn contains(&self, token: &str) -> bool {
        self.id(token).is_some()
    }
    /// Every `(token, id)` pair, in increasing id order (tokens that share an id by token).
    pub fn iter(&self) -> impl Iterator<Item = (&str, u32)> + '_ {
        self.reverse.all()
    }
    /// The `(token, id)` pairs of [`Vocab::iter`] at positions `range` of it (clamped to
    /// [`Vocab::len`]), for work split into parts.
    pub(crate) fn iter_range(&self, range: std::ops::Range<usize>) -> impl Iterator<Item = (&str, u32)> + '_ {
        let r = &*self.reverse;
        (range.start.min(r.entries())..range.end.min(r.entries())).map(move |e| (r.entry(e), r.ids[e]))
    }
    /// Whether some tokens share an id.
    pub(crate) fn has_shared_ids(&self) -> bool {
        self.shared_ids
    }
    /// The id → token table, to share.
    pub(crate) fn reverse(&self) -> &Arc<ReverseVocab> {
        &self.reverse
    }
    /// The vocabulary as the std `HashMap` the [`crate::Model`] trait returns.
    pub fn to_std_map(&self) -> HashMap<String, u32> {
        self.iter().map(|(t, i)| (t.to_owned(), i)).collect()
    }
    /// Number of tokens.
    pub fn len(&self) -> usize {
        self.reverse.entries()
    }
    /// Whether there is no token.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Serializes as a JSON object in id order.
    pub fn ordered(&self) -> OrderedVocab<'_> {
        OrderedVocab(&self.reverse)
    }
}

/// The vocabulary as the std `HashMap` the [`crate::Model`] trait returns.
pub fn to_std_map(vocab: &VocabMap) -> HashMap<String, u32> {
    vocab.iter().map(|(t, &i)| (t.clone(), i)).collect()
}

/// Owned copies of tokens by id, for the models that return a `String` per token: each token
/// of at most 15 bytes sits in a 16-byte slot of one string (padded with NULs, its length in
/// the slot's last byte), and a copy takes the whole slot and cuts it to that length. Every
/// short token then takes the same fixed-size copy, where copying its own bytes calls
/// `memcpy`, whose branches on the size mispredict on text whose token lengths vary (0.7
/// mispredictions per token, llama2 on the mixed corpus), and the slot is all the copy reads
/// (no string header to load first).
#[derive(Debug, Clone, Default)]
pub struct TokenSlots {
    slots: String,
}

/// Bytes per slot in [`TokenSlots`]; the last one holds the length.
const SLOT: usize = 16;

impl TokenSlots {
    /// The slots of `tokens`, the token of id `i` the `i`-th one.
    pub fn new<'a>(tokens: impl IntoIterator<Item = &'a str>) -> Self {
        let mut slots = String::new();
        for t in tokens {
            let start = slots.len();
            if t.len() < SLOT {
                slots.push_str(t);
            }
            // NULs and a length below 128 keep the slot valid UTF-8; a long token gets the
            // length `SLOT`, "not here".
            slots.extend(std::iter::repeat_n('\0', start + SLOT - 1 - slots.len()));
            slots.push(char::from(t.len().min(SLOT) as u8));
        }
        Self { slots }
    }

    /// A copy of the token of `id`; `None` when it is longer than 15 bytes or `id` has no slot.
    #[inline]
    pub fn to_owned(&self, id: u32) -> Option<String> {
        let start = (id as usize).checked_mul(SLOT)?;
        let slot = self.slots.get(start..start.checked_add(SLOT)?)?;
        let len = usize::from(slot.as_bytes()[SLOT - 1]);
        if len >= SLOT {
            return None;
        }
        let mut s = slot.to_owned();
        s.truncate(len);
        Some(s)
    }
}

/// The four vocabulary methods of [`crate::Model`] for a model whose `vocab` field is a [`Vocab`].
macro_rules! vocab_model_methods {
    () => {
        fn token_to_id(&self, token: &str) -> Option<u32> {
            self.vocab.id(token)
        }
        fn id_to_token(&self, id: u32) -> Option<&str> {
            self.vocab.token(id)
        }
        fn get_vocab(&self) -> std::collections::HashMap<String, u32> {
            self.vocab.to_std_map()
        }
        fn get_vocab_size(&self) -> usize {
            self.vocab.len()
        }
    };
}
pub(crate) use vocab_model_methods;

impl Vocab {
    /// Writes the tokens in id order, for [`crate::utils::table_cache`]; `false` (nothing
    /// written) when two tokens share an id, which the id-ordered form cannot hold.
    pub(crate) fn write_table(&self, w: &mut crate::utils::table_cache::Writer) -> bool {
        if self.shared_ids {
            return false;
        }
        w.table(&self.reverse.ids);
        w.table(&self.reverse.starts);
        w.bytes(self.reverse.text.as_bytes());
        w.table(&self.by_token().slots);
        true
    }

    /// Reads what [`Vocab::write_table`] wrote (ids increasing, hence distinct): the arrays as
    /// they are (views of a mapped entry), the token → id table included.
    pub(crate) fn read_table(r: &mut crate::utils::table_cache::Reader<'_>) -> crate::Result<Self> {
        let bad = || crate::Error::invalid("table cache: malformed vocabulary");
        let (ids, starts): (Table<u32>, Table<u32>) = (r.table()?, r.table()?);
        // Checked with SIMD: a plain check of a vocabulary's text (mostly multi-byte chars, `▁`) is
        // a large part of a load from the cache.
        let text = simdutf8::basic::from_utf8(r.bytes()?).map_err(|_| bad())?;
        let index: Table<u32> = r.table()?;
        let spans_ok = starts.first() == Some(&0)
            && starts.last() == Some(&(text.len() as u32))
            && starts.windows(2).all(|w| w[0] <= w[1])
            && starts.iter().all(|&s| text.is_char_boundary(s as usize));
        if starts.len() != ids.len() + 1 || !spans_ok || !ids.windows(2).all(|w| w[0] < w[1]) {
            return Err(bad());
        }
        // Every slot is empty or an entry, in a power of two of slots, more than the entries.
        if !index.len().is_power_of_two() || index.len() <= ids.len() || index.iter().any(|&e| e != NO_ENTRY && e as usize >= ids.len()) {
            return Err(bad());
        }
        // Tokens are distinct: the entry was written from a vocabulary, and its checksum holds.
        let by_id = ReverseVocab::index(&ids);
        let vocab = Self::from_reverse(ReverseVocab { text: text.to_owned(), starts, ids, by_id });
        let _ = vocab.by_token.set(TokenIndex { slots: index });
        Ok(vocab)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holes_and_order() {
        let vocab: VocabMap = [("b".to_string(), 2), ("a".to_string(), 0)].into_iter().collect();
        let r = ReverseVocab::new(&vocab);
        assert_eq!(r.get(0), Some("a"));
        assert_eq!(r.get(1), None);
        assert_eq!(r.get(7), None);
        assert_eq!(serde_json::to_string(&OrderedVocab(&r)).unwrap(), r#"{"a":0,"b":2}"#);
    }

    /// Tokens pushed one by one, past the capacity they were sized for, are found by id and by
    /// text; a token pushed again is refused (naming the first), as are bytes that are not text
    /// (a token not UTF-8, or a char cut between two tokens). A token pushed with the bytes after
    /// it ([`DistinctTokens::push_in`]) is the same token.
    #[test]
    fn distinct_tokens() {
        let tokens: Vec<String> = (0..2000).map(|i| format!("\u{2581}t{i}")).chain(["".into(), "x".repeat(40), "é".into()]).collect();
        let mut b = DistinctTokens::with_capacity(3, 4);
        for (i, t) in tokens.iter().enumerate() {
            if i % 2 == 0 {
                b.push(t.as_bytes()).unwrap();
            } else {
                let followed = format!("{t}and what follows it in the file");
                b.push_in(followed.as_bytes(), t.len()).unwrap();
            }
        }
        assert_eq!(b.push(b"\xE2\x96\x81t7"), Err(PushError::Duplicate(7)));
        assert_eq!(b.push_in(b"t", 2), Err(PushError::Full));
        let vocab = b.finish().unwrap();
        assert_eq!(vocab.len(), tokens.len());
        for (i, t) in tokens.iter().enumerate() {
            assert_eq!((vocab.id(t), vocab.token(i as u32)), (Some(i as u32), Some(t.as_str())), "{t:?}");
        }
        assert_eq!((vocab.id("\u{2581}t2000"), vocab.id("x")), (None, None));
        assert_eq!(Vocab::from_distinct_tokens(["a", "b", "a"]).err(), Some(2));
        for cut in [&[b"a".as_slice(), b"\xFF"][..], &[b"\xC3", b"\xA9"]] {
            let mut b = DistinctTokens::with_capacity(2, 2);
            cut.iter().for_each(|t| b.push(t).unwrap());
            assert!(b.finish().is_none(), "{cut:?}");
        }
    }

    #[test]
    fn token_slots() {
        let long = "x".repeat(16);
        let tokens = ["", "a", "\u{2581}the", "<0xE4>", "123456789012345", long.as_str(), "\u{1F600}"];
        let slots = TokenSlots::new(tokens);
        for (id, t) in tokens.iter().enumerate() {
            let got = slots.to_owned(id as u32);
            assert_eq!(got.as_deref(), (t.len() < 16).then_some(*t), "{t:?}");
        }
        assert_eq!(slots.to_owned(tokens.len() as u32), None);
        assert_eq!(slots.to_owned(u32::MAX), None);
    }

    /// Tokens put at their ids (distinct ids) and tokens sorted (shared ids: the last token of
    /// an id in token order is its own) give every pair in id then token order.
    #[test]
    fn placed_and_sorted_ids() {
        let distinct: VocabMap = (0..300u32).rev().filter(|i| i % 7 != 3).map(|i| (format!("t{}", 1000 - i), i)).collect();
        let r = ReverseVocab::new(&distinct);
        assert!(ReverseVocab::placed_by_id(&distinct).is_some());
        let want: Vec<(String, u32)> = (0..300u32).filter(|i| i % 7 != 3).map(|i| (format!("t{}", 1000 - i), i)).collect();
        assert_eq!(r.all().map(|(t, i)| (t.to_owned(), i)).collect::<Vec<_>>(), want);
        assert_eq!((r.get(3), r.get(4)), (None, Some("t996")));
        let shared: VocabMap = [("z", 1), ("b", 1), ("a", 0), ("y", 1)].into_iter().map(|(t, i)| (t.to_string(), i)).collect();
        assert!(ReverseVocab::placed_by_id(&shared).is_none());
        let r = ReverseVocab::new(&shared);
        assert_eq!(r.all().collect::<Vec<_>>(), [("a", 0), ("b", 1), ("y", 1), ("z", 1)]);
        assert_eq!(r.get(1), Some("z"));
    }

    #[test]
    fn sparse_ids_do_not_allocate_a_huge_table() {
        let vocab: VocabMap = [("a".to_string(), 4_000_000_000), ("b".to_string(), 1)].into_iter().collect();
        let r = ReverseVocab::new(&vocab);
        assert!(r.is_sparse());
        assert_eq!(r.get(4_000_000_000), Some("a"));
        assert_eq!(serde_json::to_string(&OrderedVocab(&r)).unwrap(), r#"{"b":1,"a":4000000000}"#);
    }
}
