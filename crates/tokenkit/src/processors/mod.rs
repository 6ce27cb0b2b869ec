//! Post-processors: one file per family; `PostProcessorWrapper` is the closed set tokenizer.json uses.
//!
//! A post-processor receives the encodings of one input (the sequence and, for a pair, the
//! second sequence) after the model, adds the special tokens, sets type ids and sequence
//! ranges, and may adjust offsets (ByteLevel trimming). Offsets are in whatever unit the
//! encodings already use (bytes or chars); processors only move them by whole tokens' counts.

pub mod bert;
pub mod byte_level;
pub mod roberta;
pub mod sequence;
pub mod template;

use serde::{Deserialize, Serialize};

pub use bert::BertProcessing;
pub use byte_level::ByteLevel;
pub use roberta::RobertaProcessing;
pub use sequence::Sequence;
pub use template::{Piece, SpecialToken, Template, TemplateProcessing, TemplateProcessingBuilder, Tokens};

use crate::base::column::Column;
use crate::base::{Encoding, PostProcessor};
use crate::Result;

/// Every post-processor tokenizer.json can name, dispatched statically.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum PostProcessorWrapper {
    /// `{"type":"RobertaProcessing",...}`
    #[serde(rename = "RobertaProcessing")]
    Roberta(RobertaProcessing),
    /// `{"type":"BertProcessing",...}`
    #[serde(rename = "BertProcessing")]
    Bert(BertProcessing),
    /// `{"type":"ByteLevel",...}`
    ByteLevel(ByteLevel),
    /// `{"type":"TemplateProcessing",...}`
    #[serde(rename = "TemplateProcessing")]
    Template(TemplateProcessing),
    /// `{"type":"Sequence","processors":[...]}`
    Sequence(Sequence),
}

impl PostProcessor for PostProcessorWrapper {
    fn added_tokens(&self, is_pair: bool) -> usize {
        match self {
            Self::Roberta(p) => p.added_tokens(is_pair),
            Self::Bert(p) => p.added_tokens(is_pair),
            Self::ByteLevel(p) => p.added_tokens(is_pair),
            Self::Template(p) => p.added_tokens(is_pair),
            Self::Sequence(p) => p.added_tokens(is_pair),
        }
    }

    fn process_encodings(&self, encodings: Vec<Encoding>, add_special_tokens: bool) -> Result<Vec<Encoding>> {
        match self {
            Self::Roberta(p) => p.process_encodings(encodings, add_special_tokens),
            Self::Bert(p) => p.process_encodings(encodings, add_special_tokens),
            Self::ByteLevel(p) => p.process_encodings(encodings, add_special_tokens),
            Self::Template(p) => p.process_encodings(encodings, add_special_tokens),
            Self::Sequence(p) => p.process_encodings(encodings, add_special_tokens),
        }
    }

    fn process(&self, encoding: Encoding, pair: Option<Encoding>, add_special_tokens: bool) -> Result<Encoding> {
        match self {
            Self::Roberta(p) => p.process(encoding, pair, add_special_tokens),
            Self::Bert(p) => p.process(encoding, pair, add_special_tokens),
            Self::ByteLevel(p) => p.process(encoding, pair, add_special_tokens),
            Self::Template(p) => p.process(encoding, pair, add_special_tokens),
            Self::Sequence(p) => p.process(encoding, pair, add_special_tokens),
        }
    }
}

macro_rules! impl_from {
    ($($variant:ident($ty:ty)),*) => {$(
        impl From<$ty> for PostProcessorWrapper {
            fn from(p: $ty) -> Self {
                PostProcessorWrapper::$variant(p)
            }
        }
    )*};
}
impl_from!(Roberta(RobertaProcessing), Bert(BertProcessing), ByteLevel(ByteLevel), Template(TemplateProcessing), Sequence(Sequence));

/// How [`surround`] frames one sequence with special tokens (Bert and Roberta styles).
pub(crate) struct Frame<'a> {
    /// Token put before the sequence, if any.
    pub before: Option<&'a (String, u32)>,
    /// Token put after the sequence.
    pub after: &'a (String, u32),
    /// Type id of the added tokens.
    pub special_type_id: u32,
    /// When set, every token of the result gets this type id (Roberta's rule).
    pub force_type_id: Option<u32>,
    /// The sequence index the range of the content is recorded under.
    pub sequence_id: usize,
}

impl Frame<'_> {
    /// Frames `encoding` and, separately, each of its overflowing parts.
    pub(crate) fn apply(&self, mut encoding: Encoding) -> Encoding {
        let overflowing = encoding.take_overflowing().into_iter().map(|o| self.apply_one(o)).collect();
        let mut out = self.apply_one(encoding);
        out.overflowing = overflowing;
        out
    }

    fn apply_one(&self, e: Encoding) -> Encoding {
        let n_before = usize::from(self.before.is_some());
        let n = e.len() + n_before + 1;
        let mut out = Encoding::with_capacity(n);
        let push_special = |out: &mut Encoding, (token, id): &(String, u32)| out.push_special(*id, token, self.special_type_id);
        if let Some(b) = self.before {
            push_special(&mut out, b);
        }
        let len = e.len();
        out.tokens.append(n_before, e.tokens, &e.ids);
        out.ids.extend(e.ids);
        out.type_ids.append(e.type_ids);
        out.words.extend(e.words);
        out.offsets.extend(e.offsets);
        out.special_tokens_mask.push_same(0, len);
        out.attention_mask.push_same(1, len);
        push_special(&mut out, self.after);
        if let Some(t) = self.force_type_id {
            out.type_ids = Column::same(t, out.len());
        }
        out.sequence_ranges.insert(self.sequence_id, n_before..n - 1);
        out
    }
}

#[cfg(test)]
mod oracle_tests;
