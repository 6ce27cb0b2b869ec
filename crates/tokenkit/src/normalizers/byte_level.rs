//! GPT-2's byte-to-printable-char mapping as a normalizer.

use std::sync::LazyLock;

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

/// The UTF-8 of each byte's char: its length and bytes.
static BYTES_UTF8: LazyLock<[(u8, [u8; 4]); 256]> = LazyLock::new(|| {
    (*BYTES_CHAR).map(|c| {
        let mut utf8 = [0u8; 4];
        let n = c.encode_utf8(&mut utf8).len() as u8;
        (n, utf8)
    })
});

impl Normalizer for ByteLevel {
    fn normalize(&self, n: &mut NormalizedString) -> Result<()> {
        if n.is_empty() {
            return Ok(());
        }
        // Each UTF-8 byte becomes its char; the chars of one original char keep its alignment.
        n.map_bytes(&BYTES_UTF8);
        Ok(())
    }
}
