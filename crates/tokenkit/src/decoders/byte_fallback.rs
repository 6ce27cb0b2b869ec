//! ByteFallback: `<0xNN>` byte tokens back to text.

use serde::{Deserialize, Serialize};

use crate::base::Decoder;
use crate::models::bpe::byte_of;
use crate::Result;

/// Joins each run of consecutive `<0xNN>` tokens into its bytes: a valid UTF-8 run becomes one
/// string; an invalid run becomes one U+FFFD per byte (HF's rule, not `from_utf8_lossy`).
/// Other tokens pass through. Serializes as `{"type":"ByteFallback"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ByteFallback {}

impl ByteFallback {
    /// The decoder.
    pub fn new() -> Self {
        Self {}
    }
}

/// Moves the pending byte run into `out` as text.
fn flush(bytes: &mut Vec<u8>, out: &mut Vec<String>) {
    if bytes.is_empty() {
        return;
    }
    match String::from_utf8(std::mem::take(bytes)) {
        Ok(s) => out.push(s),
        Err(e) => {
            let n = e.as_bytes().len();
            out.extend(std::iter::repeat_n("\u{FFFD}".to_owned(), n));
        }
    }
}

impl Decoder for ByteFallback {
    fn decode_chain(&self, tokens: Vec<String>) -> Result<Vec<String>> {
        let mut out = Vec::with_capacity(tokens.len());
        let mut bytes = Vec::new();
        for token in tokens {
            match byte_of(&token) {
                Some(b) => bytes.push(b),
                None => {
                    flush(&mut bytes, &mut out);
                    out.push(token);
                }
            }
        }
        flush(&mut bytes, &mut out);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_like_hf() {
        // HF 0.23.3: decoders.ByteFallback().decode([...]) == "���a��������"
        let toks = ["<0x+F>", "<0xE2>", "<0x82>", "a", "<0xE2>", "<0x82>", "<0xAC>", "<0xe2>", "<0x82>", "<0xac>", "<0xC3>", "<0x28>"];
        let out = ByteFallback::new().decode(toks.map(String::from).to_vec()).unwrap();
        assert_eq!(out, format!("{}a{}", "\u{FFFD}".repeat(3), "\u{FFFD}".repeat(8)));
        let out = ByteFallback::new().decode_chain(["<0xE2>", "<0x82>", "<0xAC>", "b"].map(String::from).to_vec()).unwrap();
        assert_eq!(out, ["€", "b"]);
        assert_eq!(byte_of("<0xé>"), None);
    }
}
