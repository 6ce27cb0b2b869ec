//! CTC decoder: collapses repeated tokens and removes padding (speech models' output).

use serde::{Deserialize, Serialize};

use super::wordpiece::cleanup;
use crate::base::Decoder;
use crate::Result;

fn default_pad() -> String {
    "<pad>".into()
}
fn default_delimiter() -> String {
    "|".into()
}
fn default_true() -> bool {
    true
}

/// Merges runs of identical tokens, removes `pad_token`, and (with `cleanup`) applies the
/// WordPiece [`cleanup`] and turns `word_delimiter_token` into spaces; tokens left empty are
/// dropped. Serializes as `{"type":"CTC","pad_token":"<pad>","word_delimiter_token":"|","cleanup":true}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[allow(clippy::upper_case_acronyms)]
pub struct CTC {
    /// The blank token.
    #[serde(default = "default_pad")]
    pub pad_token: String,
    /// The token between words.
    #[serde(default = "default_delimiter")]
    pub word_delimiter_token: String,
    /// Whether to clean up spaces and turn delimiters into spaces.
    #[serde(default = "default_true")]
    pub cleanup: bool,
}

impl Default for CTC {
    fn default() -> Self {
        Self { pad_token: default_pad(), word_delimiter_token: default_delimiter(), cleanup: true }
    }
}

impl CTC {
    /// A CTC decoder with these settings.
    pub fn new(pad_token: String, word_delimiter_token: String, cleanup: bool) -> Self {
        Self { pad_token, word_delimiter_token, cleanup }
    }
}

impl Decoder for CTC {
    fn decode_chain(&self, mut tokens: Vec<String>) -> Result<Vec<String>> {
        tokens.dedup();
        Ok(tokens
            .into_iter()
            .filter_map(|mut t| {
                if !self.pad_token.is_empty() && t.contains(self.pad_token.as_str()) {
                    t = t.replace(self.pad_token.as_str(), "");
                }
                if self.cleanup {
                    cleanup(&mut t);
                    if t.contains(self.word_delimiter_token.as_str()) {
                        t = t.replace(self.word_delimiter_token.as_str(), " ");
                    }
                }
                (!t.is_empty()).then_some(t)
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decoders::DecoderWrapper;

    #[test]
    fn decodes_like_hf() {
        // HF 0.23.3: decoders.CTC().decode([...]) == "hello w's."
        let toks = ["<pad>", "h", "h", "e", "<pad>", "l", "l", "<pad>", "l", "o", "|", "|", "w", "'s", " ."];
        assert_eq!(CTC::default().decode(toks.map(String::from).to_vec()).unwrap(), "hello w's.");
        let json = r#"{"type":"CTC","pad_token":"<pad>","word_delimiter_token":"|","cleanup":true}"#;
        let d: DecoderWrapper = serde_json::from_str(json).unwrap();
        assert_eq!(serde_json::to_string(&d).unwrap(), json);
    }
}
