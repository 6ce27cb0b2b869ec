//! BPEDecoder: word-end suffixes (`</w>`) back to spaces.

use serde::{Deserialize, Serialize};

use crate::base::Decoder;
use crate::Result;

fn default_suffix() -> String {
    "</w>".into()
}

/// Replaces every occurrence of `suffix` in a token by a space (by nothing in the last token).
/// Serializes as `{"type":"BPEDecoder","suffix":"</w>"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BPEDecoder {
    /// The end-of-word suffix.
    #[serde(default = "default_suffix")]
    pub suffix: String,
}

impl Default for BPEDecoder {
    fn default() -> Self {
        Self { suffix: default_suffix() }
    }
}

impl BPEDecoder {
    /// A decoder for this suffix.
    pub fn new(suffix: String) -> Self {
        Self { suffix }
    }
}

impl Decoder for BPEDecoder {
    fn decode_chain(&self, mut tokens: Vec<String>) -> Result<Vec<String>> {
        let last = tokens.len().saturating_sub(1);
        for (i, token) in tokens.iter_mut().enumerate() {
            if token.contains(self.suffix.as_str()) {
                *token = token.replace(self.suffix.as_str(), if i == last { "" } else { " " });
            }
        }
        Ok(tokens)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decoders::DecoderWrapper;

    #[test]
    fn decodes_like_hf() {
        // HF 0.23.3: decoders.BPEDecoder().decode(["a</w>","b</w>c</w>","d</w>"]) == "a b c d"
        let toks = ["a</w>", "b</w>c</w>", "d</w>"].map(String::from).to_vec();
        assert_eq!(BPEDecoder::default().decode(toks).unwrap(), "a b c d");
        assert_eq!(BPEDecoder::default().decode(vec![]).unwrap(), "");
        let json = r#"{"type":"BPEDecoder","suffix":"</w>"}"#;
        let d: DecoderWrapper = serde_json::from_str(json).unwrap();
        assert_eq!(serde_json::to_string(&d).unwrap(), json);
    }
}
