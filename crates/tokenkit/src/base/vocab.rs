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
        let mut entries: Vec<(u32, &str)> = vocab.iter().map(|(t, &i)| (i, t.as_str())).collect();
        entries.sort_unstable();
        Self::from_sorted(&entries)
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

/// The hash of a token in [`Vocab`]'s table (vocabularies come from model files, not from the
/// text being encoded, so a keyed hash buys nothing here; it is the same in every process, as
/// the table kept in the table cache needs).
#[inline]
fn hash_token(token: &str) -> u64 {
    hash_bytes(token.as_bytes(), 0)
}

/// The token → entry table of a [`ReverseVocab`] whose tokens are distinct: open addressing
/// (linear probing, at most half full) over entry indices, hashed by [`hash_token`]; a flat
/// array, so the table cache holds it as it is.
#[derive(Debug, Clone)]
struct TokenIndex {
    /// A power of two of slots, each an entry or [`NO_ENTRY`].
    slots: Table<u32>,
}

impl TokenIndex {
    /// The table of `r`'s entries, whose tokens must be distinct.
    fn new(r: &ReverseVocab) -> Self {
        Self::build(r, false).unwrap_or_else(|_| unreachable!("duplicates are only looked for when asked"))
    }

    /// The table of `r`'s entries; with `check`, `Err(e)` for the first entry `e` whose token
    /// an earlier entry has.
    fn build(r: &ReverseVocab, check: bool) -> Result<Self, usize> {
        let n = r.entries();
        let mut slots = vec![NO_ENTRY; (n * 2).max(2).next_power_of_two()];
        let mask = slots.len() - 1;
        for e in 0..n {
            let token = r.entry(e);
            let mut i = hash_token(token) as usize & mask;
            while slots[i] != NO_ENTRY {
                if check && r.entry(slots[i] as usize) == token {
                    return Err(e);
                }
                i = (i + 1) & mask;
            }
            slots[i] = e as u32;
        }
        Ok(Self { slots: slots.into() })
    }

    /// The entry of `token` in `r`.
    #[inline]
    fn find(&self, r: &ReverseVocab, token: &str) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let mut i = hash_token(token) as usize & mask;
        loop {
            match self.slots[i] {
                NO_ENTRY => return None,
                e if r.entry(e as usize) == token => return Some(e),
                _ => i = (i + 1) & mask,
            }
        }
    }
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
        let reverse = ReverseVocab::from_tokens(tokens);
        let index = TokenIndex::build(&reverse, true)?;
        let vocab = Self::from_reverse(reverse);
        let _ = vocab.by_token.set(index);
        Ok(vocab)
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

    #[test]
    fn sparse_ids_do_not_allocate_a_huge_table() {
        let vocab: VocabMap = [("a".to_string(), 4_000_000_000), ("b".to_string(), 1)].into_iter().collect();
        let r = ReverseVocab::new(&vocab);
        assert!(r.is_sparse());
        assert_eq!(r.get(4_000_000_000), Some("a"));
        assert_eq!(serde_json::to_string(&OrderedVocab(&r)).unwrap(), r#"{"b":1,"a":4000000000}"#);
    }
}
