//! A bounded, sharded word cache shared by threads (BPE and Unigram keep one per model).
//!
//! Results never depend on the cache: it only remembers what the model computed. Each shard
//! is behind its own `RwLock`, and a contended lock is treated as a miss instead of waiting,
//! so parallel encoding never blocks on it.
//!
//! Unlike HF's cache, which stops taking words once full, each shard keeps two generations:
//! when the current one is full it becomes the previous one (the older previous one is
//! dropped) and a new one starts. A long run of new text (a code file after prose) thus gets
//! its own words cached instead of missing on every one of them, while words in use stay
//! found in one generation or the other.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::RwLock;

/// Number of shards; a power of two.
const SHARDS: usize = 16;

/// How many entries a model's cache holds by default (HF's default capacity).
pub const DEFAULT_CACHE_CAPACITY: usize = 10_000;

/// Pieces this long (in bytes) or longer are not cached (HF's limit).
pub const MAX_CACHED_LENGTH: usize = 256;

/// Hasher for keys that are already hashes: passes the `u64` through.
#[derive(Default)]
struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// The key's hash → the key and its value. The key is hashed once per lookup; two keys
/// with the same hash keep the first one.
type Map<V> = HashMap<u64, (Box<[u8]>, V), BuildHasherDefault<PassThrough>>;

/// The two generations of one part of a [`Cache`].
struct Generations<V> {
    current: Map<V>,
    previous: Map<V>,
}

/// One lock-protected part of a [`Cache`].
type Shard<V> = RwLock<Generations<V>>;

/// String → `V` cache with a fixed capacity per generation (see the module doc).
pub struct Cache<V> {
    shards: Box<[Shard<V>]>,
    shard_capacity: usize,
}

/// A key with its hash, computed once for a lookup and the insert that may follow a miss.
#[derive(Debug, Clone, Copy)]
pub struct Hashed<'k> {
    key: &'k [u8],
    hash: u64,
}

impl<'k> Hashed<'k> {
    /// Hashes `key` (any bytes: a string or a raw byte-level piece).
    #[inline]
    pub fn new(key: &'k [u8]) -> Self {
        Self { key, hash: crate::base::vocab::hash_bytes(key, 0) }
    }
}

impl<V> Cache<V> {
    /// A cache whose generations hold up to `capacity` entries each.
    pub fn new(capacity: usize) -> Self {
        Self {
            shards: (0..SHARDS).map(|_| RwLock::new(Generations { current: HashMap::default(), previous: HashMap::default() })).collect(),
            shard_capacity: capacity.div_ceil(SHARDS),
        }
    }

    /// The same capacity, no entries (what a clone of a model starts with).
    pub fn fresh(&self) -> Self {
        Self::new(self.shard_capacity * SHARDS)
    }

    /// The shard of a hashed key (chosen by the top bits, the map uses the low ones).
    #[inline]
    fn shard(&self, k: &Hashed<'_>) -> &Shard<V> {
        &self.shards[(k.hash >> 60) as usize & (SHARDS - 1)]
    }

    /// Runs `f` on the cached value of `key`, if there is one and its shard is not being written.
    #[inline]
    pub fn with<R>(&self, key: &str, f: impl FnOnce(&V) -> R) -> Option<R> {
        self.with_hashed(&Hashed::new(key.as_bytes()), f)
    }

    /// [`Cache::with`] on a key hashed already.
    #[inline]
    pub fn with_hashed<R>(&self, k: &Hashed<'_>, f: impl FnOnce(&V) -> R) -> Option<R> {
        let shard = self.shard(k).try_read().ok()?;
        match shard.current.get(&k.hash).or_else(|| shard.previous.get(&k.hash)) {
            Some((key, v)) if **key == *k.key => Some(f(v)),
            _ => None,
        }
    }

    /// Remembers `value` for `key` unless the shard is busy, starting a new generation when
    /// the current one is full.
    pub fn insert(&self, key: &str, value: V) {
        self.insert_hashed(&Hashed::new(key.as_bytes()), value);
    }

    /// [`Cache::insert`] of a key hashed already (by the lookup that missed).
    pub fn insert_hashed(&self, k: &Hashed<'_>, value: V) {
        if self.shard_capacity == 0 {
            return;
        }
        if let Ok(mut shard) = self.shard(k).try_write() {
            if shard.current.len() >= self.shard_capacity {
                let Generations { current, previous } = &mut *shard;
                std::mem::swap(current, previous);
                current.clear();
            }
            shard.current.entry(k.hash).or_insert_with(|| (k.key.into(), value));
        }
    }

    /// Forgets every entry.
    pub fn clear(&self) {
        for s in self.shards.iter() {
            if let Ok(mut s) = s.write() {
                s.current.clear();
                s.previous.clear();
            }
        }
    }
}

impl<V> std::fmt::Debug for Cache<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache").field("capacity", &(self.shard_capacity * SHARDS)).finish()
    }
}

/// Admission on second sight, for a cache whose entries cost more to make than the plain
/// result (a Unigram word's entry needs a second Viterbi table): a key is admitted when it
/// was seen since the last reset. Text where most words occur once (code, a long tail of
/// names) then pays one bit test per word instead of making entries that are never used
/// again. A bit per key hash; all bits are cleared after `limit` new keys, so the bits stay
/// sparse. Races between threads only change which words are admitted, never a result.
pub struct Doorkeeper {
    bits: Box<[AtomicU64]>,
    new_keys: AtomicUsize,
    limit: usize,
}

impl Doorkeeper {
    /// `2^log2_bits` bits, cleared after a quarter of them were set.
    pub fn new(log2_bits: u32) -> Self {
        let words = (1usize << log2_bits) / 64;
        Self { bits: (0..words.max(1)).map(|_| AtomicU64::new(0)).collect(), new_keys: AtomicUsize::new(0), limit: (words.max(1) * 64) / 4 }
    }

    /// The same size, nothing seen.
    pub fn fresh(&self) -> Self {
        Self::new((self.bits.len() * 64).trailing_zeros())
    }

    /// Whether `k` was seen since the last reset; remembers it.
    #[inline]
    pub fn seen_before(&self, k: &Hashed<'_>) -> bool {
        let i = k.hash as usize & (self.bits.len() * 64 - 1);
        let (word, bit) = (&self.bits[i / 64], 1u64 << (i % 64));
        if word.load(Ordering::Relaxed) & bit != 0 {
            return true;
        }
        word.fetch_or(bit, Ordering::Relaxed);
        if self.new_keys.fetch_add(1, Ordering::Relaxed) + 1 >= self.limit {
            self.new_keys.store(0, Ordering::Relaxed);
            for w in self.bits.iter() {
                w.store(0, Ordering::Relaxed);
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doorkeeper_admits_on_second_sight_and_forgets_after_its_limit() {
        let door = Doorkeeper::new(8); // 256 bits, cleared after 64 new keys
        let words: Vec<String> = (0..1000).map(|i| format!("word{i}")).collect();
        let key = |w: &str| Hashed::new(w.as_bytes()).hash;
        assert!(!door.seen_before(&Hashed::new(b"first")));
        assert!(door.seen_before(&Hashed::new(b"first")));
        // Enough new keys (distinct bits) to reach the limit: everything is forgotten.
        let mut bits = std::collections::HashSet::new();
        bits.insert(key("first") & 255);
        let mut added = 1;
        for w in &words {
            if bits.insert(key(w) & 255) {
                assert!(!door.seen_before(&Hashed::new(w.as_bytes())));
                added += 1;
                if added == 64 {
                    break;
                }
            }
        }
        assert_eq!(added, 64, "not enough distinct bits in the sample");
        assert!(!door.seen_before(&Hashed::new(b"first")));
    }

    #[test]
    fn bounded() {
        let c = Cache::new(16);
        for i in 0..1000 {
            c.insert(&i.to_string(), i);
        }
        let hits = (0..1000).filter(|i| c.with(&i.to_string(), |v| *v == *i).unwrap_or(false)).count();
        assert!(hits > 0 && hits <= 32, "{hits}");
        // The latest entries are kept.
        assert_eq!(c.with("999", |v| *v), Some(999));
        c.clear();
        assert_eq!(c.with("0", |v| *v), None);
    }
}
