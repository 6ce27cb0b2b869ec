//! Replace as a decoder: a string or regex pattern replaced by some content in each token. The
//! type is the normalizer's ([`crate::normalizers::Replace`]), as in HF: one struct, one serde form.

use crate::base::pattern::Pattern;
use crate::base::Decoder;
pub use crate::normalizers::replace::{Replace, ReplacePattern};
use crate::utils::pattern::Matcher;
use crate::Result;

/// `token` with every match of the pattern replaced.
fn replace(r: &Replace, token: String) -> Result<String> {
    match r.matcher() {
        Matcher::Literal(s) => Ok(if token.contains(s.as_str()) { token.replace(s.as_str(), r.content()) } else { token }),
        Matcher::Regex(re) => {
            let mut out = String::with_capacity(token.len());
            for ((start, end), is_match) in re.find_matches(&token)? {
                out.push_str(if is_match { r.content() } else { &token[start..end] });
            }
            Ok(out)
        }
    }
}

impl Decoder for Replace {
    fn decode_chain(&self, tokens: Vec<String>) -> Result<Vec<String>> {
        tokens.into_iter().map(|t| replace(self, t)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decoders::test_strings as s;
    use crate::decoders::DecoderWrapper;

    #[test]
    fn replaces_like_hf() {
        // HF 0.23.3: decoders.Replace(pattern, content).decode_chain-equivalents
        assert_eq!(Replace::new("", "X").unwrap().decode_chain(s(&["ab", ""])).unwrap(), ["XaXbX", ""]);
        assert_eq!(Replace::new("a", "X").unwrap().decode_chain(s(&["ab", "", "aaa"])).unwrap(), ["Xb", "", "XXX"]);
        let re = Replace::new(ReplacePattern::Regex("a+".into()), "b").unwrap();
        assert_eq!(re.decode_chain(s(&["caaat", "aa"])).unwrap(), ["cbt", "b"]);
    }

    #[test]
    fn serde_matches_hf() {
        let json = r#"{"type":"Replace","pattern":{"String":"▁"},"content":" "}"#;
        let d: DecoderWrapper = serde_json::from_str(json).unwrap();
        assert_eq!(serde_json::to_string(&d).unwrap(), json);
        let json = r#"{"type":"Replace","pattern":{"Regex":"a+"},"content":"b"}"#;
        let d: DecoderWrapper = serde_json::from_str(json).unwrap();
        assert_eq!(serde_json::to_string(&d).unwrap(), json);
        // A regex that does not compile, or a bare string pattern, is a load error (as in HF).
        let e = serde_json::from_str::<DecoderWrapper>(r#"{"type":"Replace","pattern":{"Regex":"(a"},"content":"b"}"#).unwrap_err();
        assert!(e.to_string().contains("(a"), "{e}");
        assert!(serde_json::from_str::<DecoderWrapper>(r#"{"type":"Replace","pattern":"a","content":"b"}"#).is_err());
    }
}
