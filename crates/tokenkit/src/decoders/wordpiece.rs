//! WordPiece decoder: joins sub-word tokens (`##` continuation prefix) back into words.

use serde::{Deserialize, Serialize};

use crate::base::Decoder;
use crate::Result;

fn default_prefix() -> String {
    "##".into()
}
fn default_true() -> bool {
    true
}

/// Removes the continuation `prefix` of a token, or puts a space before a token without it
/// (never before the first token), then optionally applies [`cleanup`].
/// Serializes as `{"type":"WordPiece","prefix":"##","cleanup":true}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WordPiece {
    /// The prefix that marks a token continuing the previous one.
    #[serde(default = "default_prefix")]
    pub prefix: String,
    /// Whether to undo the spaces tokenization puts before punctuation and contractions.
    #[serde(default = "default_true")]
    pub cleanup: bool,
}

impl Default for WordPiece {
    fn default() -> Self {
        Self { prefix: default_prefix(), cleanup: true }
    }
}

impl WordPiece {
    /// A decoder with this prefix and cleanup setting.
    pub fn new(prefix: String, cleanup: bool) -> Self {
        Self { prefix, cleanup }
    }
}

/// The replacements of [`cleanup`], applied in this order.
const CLEANUPS: [(&str, &str); 11] = [
    (" .", "."),
    (" ?", "?"),
    (" !", "!"),
    (" ,", ","),
    (" ' ", "'"),
    (" n't", "n't"),
    (" 'm", "'m"),
    (" do not", " don't"),
    (" 's", "'s"),
    (" 've", "'ve"),
    (" 're", "'re"),
];

/// Removes the spaces BERT-style tokenization leaves before punctuation and English
/// contractions (`" ."` → `"."`, `" n't"` → `"n't"`, `" do not"` → `" don't"`, ...), as HF does.
pub fn cleanup(s: &mut String) {
    // Every pattern starts with a space: most tokens need no work.
    if !s.contains(' ') {
        return;
    }
    for (from, to) in CLEANUPS {
        if s.contains(from) {
            *s = s.replace(from, to);
        }
    }
}

impl Decoder for WordPiece {
    fn decode_chain(&self, mut tokens: Vec<String>) -> Result<Vec<String>> {
        for (i, token) in tokens.iter_mut().enumerate() {
            if i != 0 {
                if token.starts_with(&self.prefix) {
                    token.drain(..self.prefix.len());
                } else {
                    token.insert(0, ' ');
                }
            }
            if self.cleanup {
                cleanup(token);
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
        // HF 0.23.3: decoders.WordPiece().decode([...])
        let toks = ["##a", "b", "##c", " .", "do", "not", "'s", "x ' y", "##"];
        let out = WordPiece::default().decode(toks.iter().map(|t| (*t).to_owned()).collect()).unwrap();
        assert_eq!(out, "##a bc . do not's x'y");
        assert_eq!(WordPiece::default().decode(vec![]).unwrap(), "");
    }

    #[test]
    fn serde_matches_hf() {
        let json = r###"{"type":"WordPiece","prefix":"##","cleanup":true}"###;
        let d: DecoderWrapper = serde_json::from_str(json).unwrap();
        assert_eq!(d, DecoderWrapper::WordPiece(WordPiece::default()));
        assert_eq!(serde_json::to_string(&d).unwrap(), json);
    }
}
