//! Small shared helpers.

pub(crate) mod aho;
pub mod atomic_file;
pub mod byte_level;
pub mod byte_size;
pub(crate) mod char_memo;
pub mod lexers;
pub mod nfc;
pub mod parallel;
pub mod pattern;
pub mod regex;
pub mod sorted_runs;
pub mod suffix_array;
pub mod table_cache;
pub mod trie;
pub(crate) mod used_slots;

/// A fast 64-bit hash of a byte string: 8 bytes per multiply, then murmur3's finalizer, so
/// both the low bits and the top bits are well mixed.
#[inline]
pub fn hash_bytes(bytes: &[u8], seed: u64) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = (seed ^ bytes.len() as u64).wrapping_mul(K);
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(K).rotate_left(29);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(K).rotate_left(29);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}
