//! GPT-2's byte ↔ printable-char table, shared by the ByteLevel normalizer, pre-tokenizer,
//! post-processor and decoder.

use std::sync::LazyLock;

/// `BYTES_CHAR[b]` is the printable char GPT-2 uses for byte `b`.
pub static BYTES_CHAR: LazyLock<[char; 256]> = LazyLock::new(|| {
    let mut table = ['\0'; 256];
    let printable = |b: u32| (b'!' as u32..=b'~' as u32).contains(&b) || (0xA1..=0xAC).contains(&b) || (0xAE..=0xFF).contains(&b);
    let mut n = 0;
    for b in 0..256u32 {
        table[b as usize] = if printable(b) {
            char::from_u32(b).unwrap()
        } else {
            n += 1;
            char::from_u32(255 + n).unwrap()
        };
    }
    table
});

/// The inverse table: printable char → byte.
pub static CHAR_BYTES: LazyLock<std::collections::HashMap<char, u8>> =
    LazyLock::new(|| BYTES_CHAR.iter().enumerate().map(|(b, c)| (*c, b as u8)).collect());

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_gpt2() {
        assert_eq!(BYTES_CHAR[b' ' as usize], 'Ġ');
        assert_eq!(BYTES_CHAR[b'\n' as usize], 'Ċ');
        assert_eq!(BYTES_CHAR[b'a' as usize], 'a');
        assert_eq!(CHAR_BYTES.len(), 256);
    }
}
