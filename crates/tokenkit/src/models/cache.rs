//! A bounded, sharded word cache shared by threads (BPE and Unigram keep one per model).
//!
//! Results never depend on the cache: it only remembers what the model computed. Each shard
//! is behind its own `RwLock`, and a contended lock is treated as a miss instead of waiting,
//! so parallel encoding never blocks on it.

use std::sync::RwLock;

use ahash::AHashMap;

/// Number of shards; a power of two.
const SHARDS: usize = 16;

/// How many entries a model's cache holds by default (HF's default capacity).
pub const DEFAULT_CACHE_CAPACITY: usize = 10_000;

/// Pieces this long (in bytes) or longer are not cached (HF's limit).
pub const MAX_CACHED_LENGTH: usize = 256;

/// One lock-protected part of a [`Cache`].
type Shard<V> = RwLock<AHashMap<Box<str>, V>>;

/// String → `V` cache with a fixed capacity; once a shard is full, new entries are dropped.
pub struct Cache<V> {
    shards: Box<[Shard<V>]>,
    shard_capacity: usize,
    hasher: ahash::RandomState,
}

impl<V> Cache<V> {
    /// A cache holding up to `capacity` entries in total.
    pub fn new(capacity: usize) -> Self {
        Self {
            shards: (0..SHARDS).map(|_| RwLock::new(AHashMap::new())).collect(),
            shard_capacity: capacity.div_ceil(SHARDS),
            hasher: ahash::RandomState::with_seeds(0x5eed, 0xcafe, 0xf00d, 0xbeef),
        }
    }

    /// The same capacity, no entries (what a clone of a model starts with).
    pub fn fresh(&self) -> Self {
        Self::new(self.shard_capacity * SHARDS)
    }

    fn shard(&self, key: &str) -> &Shard<V> {
        &self.shards[(self.hasher.hash_one(key) as usize) & (SHARDS - 1)]
    }

    /// Runs `f` on the cached value of `key`, if there is one and its shard is not being written.
    #[inline]
    pub fn with<R>(&self, key: &str, f: impl FnOnce(&V) -> R) -> Option<R> {
        let shard = self.shard(key).try_read().ok()?;
        shard.get(key).map(f)
    }

    /// Remembers `value` for `key` unless the shard is full or busy.
    pub fn insert(&self, key: &str, value: V) {
        if let Ok(mut shard) = self.shard(key).try_write() {
            if shard.len() < self.shard_capacity {
                shard.insert(key.into(), value);
            }
        }
    }

    /// Forgets every entry.
    pub fn clear(&self) {
        for s in self.shards.iter() {
            if let Ok(mut s) = s.write() {
                s.clear();
            }
        }
    }
}

impl<V> std::fmt::Debug for Cache<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache").field("capacity", &(self.shard_capacity * SHARDS)).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded() {
        let c = Cache::new(16);
        for i in 0..1000 {
            c.insert(&i.to_string(), i);
        }
        let hits = (0..1000).filter(|i| c.with(&i.to_string(), |v| *v == *i).unwrap_or(false)).count();
        assert!(hits > 0 && hits <= 16, "{hits}");
        c.clear();
        assert_eq!(c.with("0", |v| *v), None);
    }
}
