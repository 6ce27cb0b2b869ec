//! Metaspace decoder: the `▁` meta-symbol back to spaces (SentencePiece style). The type is the
//! pre-tokenizer's ([`crate::pre_tokenizers::Metaspace`]), as in HF: one struct, one serde form.

use crate::base::Decoder;
pub use crate::pre_tokenizers::metaspace::{Metaspace, PrependScheme};
use crate::Result;

/// Turns each `replacement` char back into a space; in the first token, where the
/// pre-tokenizer may have prepended it, every replacement char is dropped instead (unless
/// `prepend_scheme` is `never`).
impl Decoder for Metaspace {
    fn decode_chain(&self, mut tokens: Vec<String>) -> Result<Vec<String>> {
        for (i, token) in tokens.iter_mut().enumerate() {
            let replacement = self.get_replacement();
            if !token.contains(replacement) {
                continue;
            }
            let drop = i == 0 && self.prepend_scheme != PrependScheme::Never;
            let mut out = String::with_capacity(token.len());
            for c in token.chars() {
                if c != replacement {
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
        assert!(serde_json::from_str::<DecoderWrapper>(
            r#"{"type":"Metaspace","replacement":"▁","add_prefix_space":false,"prepend_scheme":"first"}"#
        )
        .is_err());
        assert!(serde_json::from_str::<DecoderWrapper>(r#"{"type":"Metaspace","replacement":"ab"}"#).is_err());
        assert!(serde_json::from_str::<DecoderWrapper>(r#"{"type":"Metaspace"}"#).is_err());
    }
}
