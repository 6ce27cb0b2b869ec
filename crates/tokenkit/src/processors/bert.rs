//! BertProcessing: `[CLS] A [SEP]` and `[CLS] A [SEP] B [SEP]`, type ids 0 then 1.

use serde::{Deserialize, Serialize};

use super::Frame;
use crate::base::{Encoding, PostProcessor};
use crate::Result;

/// BERT's post-processor: `cls` before the first sequence, `sep` after each sequence.
/// Serializes as `{"type":"BertProcessing","sep":["[SEP]",102],"cls":["[CLS]",101]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BertProcessing {
    /// The separator token and its id.
    pub sep: (String, u32),
    /// The classifier token and its id.
    pub cls: (String, u32),
}

impl Default for BertProcessing {
    fn default() -> Self {
        Self { sep: ("[SEP]".into(), 102), cls: ("[CLS]".into(), 101) }
    }
}

impl BertProcessing {
    /// A processor with these `sep` and `cls` tokens (`(token, id)`).
    pub fn new(sep: (String, u32), cls: (String, u32)) -> Self {
        Self { sep, cls }
    }
}

impl PostProcessor for BertProcessing {
    fn added_tokens(&self, is_pair: bool) -> usize {
        if is_pair {
            3
        } else {
            2
        }
    }

    fn process_encodings(&self, encodings: Vec<Encoding>, add_special_tokens: bool) -> Result<Vec<Encoding>> {
        if !add_special_tokens {
            return Ok(encodings);
        }
        Ok(encodings
            .into_iter()
            .enumerate()
            .map(|(i, e)| {
                let frame = if i == 0 {
                    Frame { before: Some(&self.cls), after: &self.sep, special_type_id: 0, force_type_id: None, sequence_id: 0 }
                } else {
                    Frame { before: None, after: &self.sep, special_type_id: 1, force_type_id: None, sequence_id: i }
                };
                frame.apply(e)
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
        // HF 0.23.3: processors.BertProcessing(("[SEP]",102),("[CLS]",101)).__getstate__()
        let json = r#"{"type":"BertProcessing","sep":["[SEP]",102],"cls":["[CLS]",101]}"#;
        let p: PostProcessorWrapper = serde_json::from_str(json).unwrap();
        assert_eq!(p, PostProcessorWrapper::Bert(BertProcessing::default()));
        assert_eq!(serde_json::to_string(&p).unwrap(), json);
        assert_eq!(p.added_tokens(false), 2);
        assert_eq!(p.added_tokens(true), 3);
    }
}
