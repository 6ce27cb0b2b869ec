//! Metaspace decoder: the `▁` meta-symbol back to spaces (SentencePiece style).

use serde::{Deserialize, Serialize};

use crate::base::Decoder;
use crate::{Error, Result};

/// When the Metaspace pre-tokenizer prepends the replacement char to a piece. Serializes as
/// `"first"`, `"never"` or `"always"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PrependScheme {
    /// Only before the first piece of the input.
    First,
    /// Never.
    Never,
    /// Before every piece.
    #[default]
    Always,
}

/// Turns each `replacement` char back into a space; in the first token, where the
/// pre-tokenizer may have prepended it, every replacement char is dropped instead (unless
/// `prepend_scheme` is `never`). Serializes as
/// `{"type":"Metaspace","replacement":"▁","prepend_scheme":"always","split":true}`; the legacy
/// `add_prefix_space` (and `str_rep`) fields are read too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "MetaspaceFields")]
pub struct Metaspace {
    /// The char standing for a space.
    pub replacement: char,
    /// Where the pre-tokenizer prepends it.
    pub prepend_scheme: PrependScheme,
    /// Whether the pre-tokenizer splits on it (unused when decoding).
    pub split: bool,
}

impl Default for Metaspace {
    fn default() -> Self {
        Self { replacement: '▁', prepend_scheme: PrependScheme::Always, split: true }
    }
}

impl Metaspace {
    /// A Metaspace decoder with these settings.
    pub fn new(replacement: char, prepend_scheme: PrependScheme, split: bool) -> Self {
        Self { replacement, prepend_scheme, split }
    }
}

/// Every form of the Metaspace object found in tokenizer.json files.
#[derive(Deserialize)]
struct MetaspaceFields {
    #[serde(default = "default_replacement")]
    replacement: char,
    add_prefix_space: Option<bool>,
    prepend_scheme: Option<PrependScheme>,
    split: Option<bool>,
}

fn default_replacement() -> char {
    '▁'
}

impl TryFrom<MetaspaceFields> for Metaspace {
    type Error = Error;
    fn try_from(f: MetaspaceFields) -> Result<Self> {
        let prepend_scheme = match (f.add_prefix_space, f.prepend_scheme) {
            (Some(false), Some(s)) if s != PrependScheme::Never => {
                return Err(Error::invalid(format!(
                    "Metaspace: add_prefix_space false does not match prepend_scheme {:?}",
                    format!("{s:?}").to_lowercase()
                )))
            }
            // Legacy files: `add_prefix_space: false` alone meant "never" (HF 0.23 rejects it).
            (Some(false), _) => PrependScheme::Never,
            (_, s) => s.unwrap_or_default(),
        };
        Ok(Self { replacement: f.replacement, prepend_scheme, split: f.split.unwrap_or(true) })
    }
}

impl Decoder for Metaspace {
    fn decode_chain(&self, mut tokens: Vec<String>) -> Result<Vec<String>> {
        for (i, token) in tokens.iter_mut().enumerate() {
            if !token.contains(self.replacement) {
                continue;
            }
            let drop = i == 0 && self.prepend_scheme != PrependScheme::Never;
            let mut out = String::with_capacity(token.len());
            for c in token.chars() {
                if c != self.replacement {
                    out.push(c);
                } else if !drop {
                    out.push(' ');
                }
            }
            *token = out;
        }
        Ok(tokens)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decoders::test_strings as s;
    use crate::decoders::DecoderWrapper;

    #[test]
    fn decodes_like_hf() {
        // HF 0.23.3: decoders.Metaspace(prepend_scheme=...).decode(["▁▁a","▁b▁","c"])
        let toks = s(&["▁▁a", "▁b▁", "c"]);
        assert_eq!(Metaspace::default().decode(toks.clone()).unwrap(), "a b c");
        assert_eq!(Metaspace::new('▁', PrependScheme::First, true).decode(toks.clone()).unwrap(), "a b c");
        assert_eq!(Metaspace::new('▁', PrependScheme::Never, true).decode(toks).unwrap(), "  a b c");
    }

    #[test]
    fn serde_matches_hf() {
        // HF 0.23.3 writes the xlnet fixture's legacy decoder back in the new form.
        let legacy = r#"{"type":"Metaspace","replacement":"▁","str_rep":"▁","add_prefix_space":true}"#;
        let json = r#"{"type":"Metaspace","replacement":"▁","prepend_scheme":"always","split":true}"#;
        let d: DecoderWrapper = serde_json::from_str(legacy).unwrap();
        assert_eq!(serde_json::to_string(&d).unwrap(), json);
        let d: DecoderWrapper = serde_json::from_str(json).unwrap();
        assert_eq!(serde_json::to_string(&d).unwrap(), json);
        let first = r#"{"type":"Metaspace","replacement":"▁","prepend_scheme":"first","split":false}"#;
        let d: DecoderWrapper = serde_json::from_str(first).unwrap();
        assert_eq!(serde_json::to_string(&d).unwrap(), first);
        let never: DecoderWrapper = serde_json::from_str(r#"{"type":"Metaspace","replacement":"▁","add_prefix_space":false}"#).unwrap();
        assert_eq!(never, DecoderWrapper::Metaspace(Metaspace::new('▁', PrependScheme::Never, true)));
        // Contradictory settings and a multi-char replacement are errors, as in HF.
        assert!(serde_json::from_str::<DecoderWrapper>(r#"{"type":"Metaspace","replacement":"▁","add_prefix_space":false,"prepend_scheme":"first"}"#).is_err());
        assert!(serde_json::from_str::<DecoderWrapper>(r#"{"type":"Metaspace","replacement":"ab"}"#).is_err());
    }
}
