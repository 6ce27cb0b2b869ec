//! Replace: a string or regex pattern replaced by some content in each token.

use serde::{Deserialize, Serialize};

use crate::base::pattern::Pattern;
use crate::base::Decoder;
use crate::utils::pattern::{Matcher, StringOrRegex};
use crate::{Error, Result};

/// What [`Replace`] looks for. Serializes as `{"String":"▁"}` or `{"Regex":"\\s+"}`.
pub type ReplacePattern = StringOrRegex;

/// Replaces every non-overlapping match of `pattern` in each token by `content`.
/// Serializes as `{"type":"Replace","pattern":{"String":"▁"},"content":" "}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "ReplaceFields")]
pub struct Replace {
    pattern: ReplacePattern,
    content: String,
    #[serde(skip)]
    matcher: Matcher,
}

#[derive(Deserialize)]
struct ReplaceFields {
    pattern: ReplacePattern,
    content: String,
}

impl TryFrom<ReplaceFields> for Replace {
    type Error = Error;
    fn try_from(f: ReplaceFields) -> Result<Self> {
        Replace::new(f.pattern, f.content)
    }
}

impl PartialEq for Replace {
    fn eq(&self, other: &Self) -> bool {
        self.pattern == other.pattern && self.content == other.content
    }
}

impl Replace {
    /// A decoder replacing `pattern` by `content`; an error if a regex pattern does not compile.
    pub fn new(pattern: impl Into<ReplacePattern>, content: impl Into<String>) -> Result<Self> {
        let pattern = pattern.into();
        let matcher = Matcher::new(&pattern)?;
        Ok(Self { pattern, content: content.into(), matcher })
    }

    /// The pattern.
    pub fn pattern(&self) -> &ReplacePattern {
        &self.pattern
    }

    /// The replacement.
    pub fn content(&self) -> &str {
        &self.content
    }

    fn replace(&self, token: String) -> Result<String> {
        match &self.matcher {
            Matcher::Literal(s) => Ok(if token.contains(s.as_str()) { token.replace(s.as_str(), &self.content) } else { token }),
            Matcher::Regex(re) => {
                let mut out = String::with_capacity(token.len());
                for ((start, end), is_match) in re.find_matches(&token)? {
                    out.push_str(if is_match { &self.content } else { &token[start..end] });
                }
                Ok(out)
            }
        }
    }
}

impl Decoder for Replace {
    fn decode_chain(&self, tokens: Vec<String>) -> Result<Vec<String>> {
        tokens.into_iter().map(|t| self.replace(t)).collect()
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
