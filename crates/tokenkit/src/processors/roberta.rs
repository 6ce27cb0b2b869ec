//! RobertaProcessing: `<s> A </s>` and `<s> A </s></s> B </s>`, every type id 0, with
//! ByteLevel offset trimming.

use serde::{Deserialize, Serialize};

use super::byte_level::trim_offsets;
use super::Frame;
use crate::base::column::Column;
use crate::base::{Encoding, PostProcessor};
use crate::Result;

fn default_true() -> bool {
    true
}

/// RoBERTa's post-processor. Serializes as
/// `{"type":"RobertaProcessing","sep":["</s>",2],"cls":["<s>",0],"trim_offsets":true,"add_prefix_space":true}`.
/// (HF requires `trim_offsets` and `add_prefix_space`; a file without them loads here with
/// HF's default `true`.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RobertaProcessing {
    /// The separator token and its id.
    pub sep: (String, u32),
    /// The classifier (start) token and its id.
    pub cls: (String, u32),
    /// Whether offsets are trimmed of the spaces a token starts or ends with.
    #[serde(default = "default_true")]
    pub trim_offsets: bool,
    /// Whether the pre-tokenizer added a space in front (it is kept in the first token's offsets).
    #[serde(default = "default_true")]
    pub add_prefix_space: bool,
}

impl Default for RobertaProcessing {
    fn default() -> Self {
        Self { sep: ("</s>".into(), 2), cls: ("<s>".into(), 0), trim_offsets: true, add_prefix_space: true }
    }
}

impl RobertaProcessing {
    /// A processor with these `sep` and `cls` tokens (`(token, id)`), trimming offsets.
    pub fn new(sep: (String, u32), cls: (String, u32)) -> Self {
        Self { sep, cls, ..Default::default() }
    }

    /// Sets `trim_offsets`.
    #[must_use]
    pub fn trim_offsets(mut self, v: bool) -> Self {
        self.trim_offsets = v;
        self
    }

    /// Sets `add_prefix_space`.
    #[must_use]
    pub fn add_prefix_space(mut self, v: bool) -> Self {
        self.add_prefix_space = v;
        self
    }
}

impl PostProcessor for RobertaProcessing {
    fn added_tokens(&self, is_pair: bool) -> usize {
        if is_pair {
            4
        } else {
            2
        }
    }

    fn process_encodings(&self, mut encodings: Vec<Encoding>, add_special_tokens: bool) -> Result<Vec<Encoding>> {
        for e in &mut encodings {
            if self.trim_offsets {
                trim_offsets(e, self.add_prefix_space);
                for o in &mut e.overflowing {
                    trim_offsets(o, self.add_prefix_space);
                }
            }
            // RoBERTa has a single segment: every type id is 0.
            e.type_ids = Column::same(0, e.len());
        }
        if !add_special_tokens {
            return Ok(encodings);
        }
        Ok(encodings
            .into_iter()
            .enumerate()
            .map(|(i, e)| {
                let before = if i == 0 { &self.cls } else { &self.sep };
                Frame { before: Some(before), after: &self.sep, special_type_id: 0, force_type_id: Some(0), sequence_id: i }.apply(e)
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::processors::PostProcessorWrapper;

    #[test]
    fn serde_matches_hf() {
        // HF 0.23.3: processors.RobertaProcessing(("</s>",2),("<s>",0)).__getstate__()
        let json = r#"{"type":"RobertaProcessing","sep":["</s>",2],"cls":["<s>",0],"trim_offsets":true,"add_prefix_space":true}"#;
        let p: PostProcessorWrapper = serde_json::from_str(json).unwrap();
        assert_eq!(p, PostProcessorWrapper::Roberta(RobertaProcessing::default()));
        assert_eq!(serde_json::to_string(&p).unwrap(), json);
        assert_eq!((p.added_tokens(false), p.added_tokens(true)), (2, 4));
        let short: PostProcessorWrapper = serde_json::from_str(r#"{"type":"RobertaProcessing","sep":["</s>",2],"cls":["<s>",0]}"#).unwrap();
        assert_eq!(short, p);
    }
}
