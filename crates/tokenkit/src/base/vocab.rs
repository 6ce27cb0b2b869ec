//! Vocabulary tables shared by the map-vocabulary models (BPE, WordPiece, WordLevel): the
//! token → id map, the id → token reverse table and their serialization in id order.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use ahash::AHashMap;
use serde::ser::{Serialize, SerializeMap, Serializer};

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

/// Id → token table. Dense (a vector indexed by id, holes allowed) for normal vocabularies,
/// sparse (a hash map) when the ids are too spread out for a vector.
#[derive(Debug, Clone, PartialEq)]
pub enum ReverseVocab {
    /// `table[id]` is the token of `id`, `None` for a hole.
    Dense(Vec<Option<String>>),
    /// Id → token for vocabularies with very large ids.
    Sparse(AHashMap<u32, String>),
}

impl Default for ReverseVocab {
    fn default() -> Self {
        ReverseVocab::Dense(Vec::new())
    }
}

impl ReverseVocab {
    /// Builds the reverse of `vocab`. When two tokens share an id, the one that sorts last
    /// keeps it, so the result does not depend on hash order.
    pub fn new(vocab: &VocabMap) -> Self {
        let max = vocab.values().copied().max();
        let mut entries: Vec<(&String, u32)> = vocab.iter().map(|(t, &i)| (t, i)).collect();
        if entries.len() > 1 && has_shared_ids(vocab) {
            entries.sort_unstable();
        }
        match max {
            Some(max) if !fits_dense_table(max as usize + 1, vocab.len()) => {
                ReverseVocab::Sparse(entries.into_iter().map(|(t, i)| (i, t.clone())).collect())
            }
            _ => {
                let mut table = vec![None; max.map_or(0, |m| m as usize + 1)];
                for (t, i) in entries {
                    table[i as usize] = Some(t.clone());
                }
                ReverseVocab::Dense(table)
            }
        }
    }

    /// The token of `id`.
    #[inline]
    pub fn get(&self, id: u32) -> Option<&str> {
        match self {
            ReverseVocab::Dense(v) => v.get(id as usize)?.as_deref(),
            ReverseVocab::Sparse(m) => m.get(&id).map(String::as_str),
        }
    }

    /// `(token, id)` pairs in increasing id order (how HF writes a vocabulary).
    pub fn ordered(&self) -> Vec<(&str, u32)> {
        match self {
            ReverseVocab::Dense(v) => v.iter().enumerate().filter_map(|(i, t)| Some((t.as_deref()?, i as u32))).collect(),
            ReverseVocab::Sparse(m) => {
                let mut v: Vec<(&str, u32)> = m.iter().map(|(&i, t)| (t.as_str(), i)).collect();
                v.sort_unstable_by_key(|&(_, i)| i);
                v
            }
        }
    }
}

fn has_shared_ids(vocab: &VocabMap) -> bool {
    let mut seen = ahash::AHashSet::with_capacity(vocab.len());
    vocab.values().any(|&i| !seen.insert(i))
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

/// The vocabulary as the std `HashMap` the [`crate::Model`] trait returns.
pub fn to_std_map(vocab: &VocabMap) -> HashMap<String, u32> {
    vocab.iter().map(|(t, &i)| (t.clone(), i)).collect()
}

/// A token ↔ id vocabulary: the map and its reverse, kept together.
#[derive(Debug, Clone, Default)]
pub struct Vocab {
    map: VocabMap,
    /// Shared with the encodings whose token strings are looked up in it.
    reverse: Arc<ReverseVocab>,
    /// Whether two tokens have the same id (then `reverse` gives only one of them).
    shared_ids: bool,
}

impl PartialEq for Vocab {
    fn eq(&self, o: &Self) -> bool {
        self.map == o.map
    }
}

impl Vocab {
    /// Builds both directions.
    pub fn new(map: VocabMap) -> Self {
        Self { reverse: Arc::new(ReverseVocab::new(&map)), shared_ids: has_shared_ids(&map), map }
    }
    /// The id of `token`.
    #[inline]
    pub fn id(&self, token: &str) -> Option<u32> {
        self.map.get(token).copied()
    }
    /// The token of `id`.
    #[inline]
    pub fn token(&self, id: u32) -> Option<&str> {
        self.reverse.get(id)
    }
    /// Whether some tokens share an id.
    pub(crate) fn has_shared_ids(&self) -> bool {
        self.shared_ids
    }
    /// The id → token table, to share.
    pub(crate) fn reverse(&self) -> &Arc<ReverseVocab> {
        &self.reverse
    }
    /// The token → id map.
    pub fn map(&self) -> &VocabMap {
        &self.map
    }
    /// Number of tokens.
    pub fn len(&self) -> usize {
        self.map.len()
    }
    /// Whether there is no token.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
    /// Serializes as a JSON object in id order.
    pub fn ordered(&self) -> OrderedVocab<'_> {
        OrderedVocab(&self.reverse)
    }
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
            $crate::base::vocab::to_std_map(self.vocab.map())
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
        let ordered = self.reverse.ordered();
        w.u32s(&ordered.iter().map(|&(_, id)| id).collect::<Vec<u32>>());
        w.u32s(&ordered.iter().map(|&(t, _)| t.len() as u32).collect::<Vec<u32>>());
        w.bytes(ordered.iter().map(|&(t, _)| t).collect::<String>().as_bytes());
        true
    }

    /// Reads what [`Vocab::write_table`] wrote (ids increasing, hence distinct).
    pub(crate) fn read_table(r: &mut crate::utils::table_cache::Reader<'_>) -> crate::Result<Self> {
        let bad = || crate::Error::invalid("table cache: malformed vocabulary");
        let (ids, lens) = (r.u32s()?, r.u32s()?);
        let text = std::str::from_utf8(r.bytes()?).map_err(|_| bad())?;
        if ids.len() != lens.len() || !ids.windows(2).all(|w| w[0] < w[1]) {
            return Err(bad());
        }
        let mut map = VocabMap::with_capacity_and_hasher(ids.len(), Default::default());
        let dense = ids.last().is_none_or(|&max| fits_dense_table(max as usize + 1, ids.len()));
        let mut table: Vec<Option<String>> = if dense { vec![None; ids.last().map_or(0, |&m| m as usize + 1)] } else { Vec::new() };
        let mut sparse = AHashMap::new();
        let mut at = 0usize;
        for (&id, &len) in ids.iter().zip(&lens) {
            let token = text.get(at..at + len as usize).ok_or_else(bad)?;
            at += len as usize;
            map.insert(token.to_owned(), id);
            if dense {
                table[id as usize] = Some(token.to_owned());
            } else {
                sparse.insert(id, token.to_owned());
            }
        }
        if at != text.len() {
            return Err(bad());
        }
        let reverse = if dense { ReverseVocab::Dense(table) } else { ReverseVocab::Sparse(sparse) };
        Ok(Self { map, reverse: Arc::new(reverse), shared_ids: false })
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
        assert!(matches!(r, ReverseVocab::Sparse(_)));
        assert_eq!(r.get(4_000_000_000), Some("a"));
        assert_eq!(serde_json::to_string(&OrderedVocab(&r)).unwrap(), r#"{"b":1,"a":4000000000}"#);
    }
}
