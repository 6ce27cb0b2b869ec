//! GPT-2's byte-to-printable-char mapping as a normalizer.

use crate::base::{NormalizedString, Normalizer};
use crate::normalizers::impl_unit_serde;
use crate::utils::byte_level::BYTES_CHAR;
use crate::Result;

/// Replaces every UTF-8 byte of the text by its GPT-2 printable char (`' '` → `'Ġ'`, ...); all
/// the chars of one original char keep its alignment. JSON `{"type":"ByteLevel"}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ByteLevel;

impl_unit_serde!(ByteLevel);

impl ByteLevel {
    /// The 256 chars a byte-level text is made of.
    pub fn alphabet() -> std::collections::HashSet<char> {
        BYTES_CHAR.iter().copied().collect()
    }
}

impl Normalizer for ByteLevel {
    fn normalize(&self, n: &mut NormalizedString) -> Result<()> {
        if n.is_empty() {
            return Ok(());
        }
        let table = &*BYTES_CHAR;
        let mut buf = [0u8; 4];
        // The first byte's char replaces `c`, the others are inserted after it: all of them
        // aligned with `c`, in one pass.
        n.try_rewrite_chars(|c, out| {
            out.extend(c.encode_utf8(&mut buf).bytes().map(|b| table[b as usize]));
            true
        });
        Ok(())
    }
}
