//! ByteLevel as a decoder: GPT-2's printable chars back to bytes, then UTF-8.

use std::sync::LazyLock;

use crate::base::Decoder;
pub use crate::pre_tokenizers::byte_level::ByteLevel;
use crate::utils::byte_level::BYTES_CHAR;
use crate::Result;

/// Highest code point `BYTES_CHAR` uses, plus one.
const TABLE_LEN: usize = 324;

/// `CHAR_TO_BYTE[c]` is the byte GPT-2's table maps to char `c`, or `u16::MAX` for none.
/// A flat array: this runs once per char of every decoded token.
static CHAR_TO_BYTE: LazyLock<[u16; TABLE_LEN]> = LazyLock::new(|| {
    let mut t = [u16::MAX; TABLE_LEN];
    for (b, c) in BYTES_CHAR.iter().enumerate() {
        t[*c as usize] = b as u16;
    }
    t
});

/// The byte GPT-2's table maps to `c`, if any.
fn char_byte(c: char) -> Option<u8> {
    CHAR_TO_BYTE.get(c as usize).and_then(|&b| u8::try_from(b).ok())
}

impl Decoder for ByteLevel {
    /// One string: the bytes of all tokens, decoded as UTF-8 with each invalid sequence replaced
    /// by U+FFFD (`from_utf8_lossy`). A token with a char outside the table contributes its own
    /// UTF-8 bytes, as HF does.
    fn decode_chain(&self, tokens: Vec<String>) -> Result<Vec<String>> {
        let mut bytes = Vec::with_capacity(tokens.iter().map(String::len).sum());
        for token in &tokens {
            let start = bytes.len();
            for c in token.chars() {
                match char_byte(c) {
                    Some(b) => bytes.push(b),
                    None => {
                        bytes.truncate(start);
                        bytes.extend_from_slice(token.as_bytes());
                        break;
                    }
                }
            }
        }
        let text = String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        Ok(vec![text])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decoders::test_strings as s;
    use crate::decoders::DecoderWrapper;

    #[test]
    fn decodes_like_hf() {
        // HF 0.23.3: decoders.ByteLevel().decode([...])
        let d = ByteLevel::default();
        assert_eq!(d.decode(s(&["Ġh", "é", "âĤ", "¬", "Ġ", "ä¸", "x\u{4e00}"])).unwrap(), " h\u{FFFD}€ \u{FFFD}x一");
        assert_eq!(d.decode(s(&["âĤ", "ĠĠ", "\u{e2}"])).unwrap(), "\u{FFFD}  \u{FFFD}");
        assert_eq!(d.decode(vec![]).unwrap(), "");
        for b in 0..=255u8 {
            assert_eq!(char_byte(BYTES_CHAR[b as usize]), Some(b));
        }
    }

    #[test]
    fn serde_matches_hf() {
        // HF 0.23.3: decoders.ByteLevel().__getstate__()
        let json = r#"{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true}"#;
        let d: DecoderWrapper = serde_json::from_str(json).unwrap();
        assert_eq!(serde_json::to_string(&d).unwrap(), json);
    }
}
