//! Models: `bpe`, `wordpiece`, `wordlevel`, `unigram`, each with its files side by side;
//! `ModelWrapper` is the closed set tokenizer.json uses.
//!
//! Every model turns one piece into tokens whose offsets are bytes into that piece, and
//! serializes to exactly the JSON HF tokenizers 0.23 writes.

pub mod bpe;
pub mod cache;
pub mod sentencepiece;
pub mod serialization;
pub mod training;
pub mod unigram;
pub mod wordlevel;
pub mod wordpiece;

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::base::{Model, Token};
use crate::Result;

pub use bpe::{BpeBuilder, BPE};
pub use unigram::Unigram;
pub use wordlevel::WordLevel;
pub use wordpiece::WordPiece;

use crate::base::vocab::ReverseVocab;
use serialization::{de_error, ModelFields};

/// Every model tokenizer.json can name, dispatched statically.
///
/// Reading accepts the `type` tag or, for legacy files without it, infers the model from
/// its fields (see [`ModelFields::model_type`]).
// One per tokenizer: boxing BPE would only add an indirection on the hot path.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum ModelWrapper {
    /// Byte-pair encoding.
    BPE(BPE),
    /// Greedy longest-match WordPiece.
    WordPiece(WordPiece),
    /// Whole-word lookup.
    WordLevel(WordLevel),
    /// Unigram language model.
    Unigram(Unigram),
    /// A SentencePiece `.model` (normalizes and segments as sentencepiece does).
    SentencePiece(crate::models::sentencepiece::SentencePiece),
}

macro_rules! dispatch {
    ($self:expr, $m:ident => $e:expr) => {
        match $self {
            ModelWrapper::BPE($m) => $e,
            ModelWrapper::WordPiece($m) => $e,
            ModelWrapper::WordLevel($m) => $e,
            ModelWrapper::Unigram($m) => $e,
            ModelWrapper::SentencePiece($m) => $e,
        }
    };
}

macro_rules! impl_from {
    ($($t:ident),*) => {$(
        impl From<$t> for ModelWrapper {
            fn from(m: $t) -> Self {
                ModelWrapper::$t(m)
            }
        }
    )*};
}
impl_from!(BPE, WordPiece, WordLevel, Unigram);

impl From<crate::models::sentencepiece::SentencePiece> for ModelWrapper {
    fn from(m: crate::models::sentencepiece::SentencePiece) -> Self {
        ModelWrapper::SentencePiece(m)
    }
}

impl ModelWrapper {
    /// The model's `type` in tokenizer.json (`BPE`, `WordPiece`, `WordLevel`, `Unigram`,
    /// `SentencePiece`).
    pub fn type_name(&self) -> &'static str {
        match self {
            ModelWrapper::BPE(_) => "BPE",
            ModelWrapper::WordPiece(_) => "WordPiece",
            ModelWrapper::WordLevel(_) => "WordLevel",
            ModelWrapper::Unigram(_) => "Unigram",
            ModelWrapper::SentencePiece(_) => "SentencePiece",
        }
    }

    /// Builds the model a tokenizer.json model object describes.
    pub fn from_fields(fields: ModelFields) -> Result<Self> {
        Ok(match fields.model_type()? {
            "BPE" => BPE::from_fields(fields)?.into(),
            "WordPiece" => WordPiece::from_fields(fields)?.into(),
            "WordLevel" => WordLevel::from_fields(fields)?.into(),
            "SentencePiece" => crate::models::sentencepiece::SentencePiece::from_fields(fields)?.into(),
            _ => Unigram::from_fields(fields)?.into(),
        })
    }

    /// The id → token table when every token [`for_each_span`](Self::for_each_span) gives
    /// without a string has the vocabulary string of its id (BPE, WordPiece, SentencePiece):
    /// encodings then fill their token strings from it lazily.
    pub(crate) fn span_vocab(&self) -> Option<&Arc<ReverseVocab>> {
        match self {
            ModelWrapper::BPE(m) => m.tokens_are_vocab_strings().then(|| m.reverse_vocab()),
            ModelWrapper::WordPiece(m) => m.tokens_are_vocab_strings().then(|| m.reverse_vocab()),
            ModelWrapper::SentencePiece(m) => Some(m.reverse_vocab()),
            _ => None,
        }
    }

    /// Calls `f(id, byte offsets into sequence, string)` per token of `sequence`: the tokens
    /// [`Model::tokenize`] gives, with the string only where it is not the vocabulary string
    /// of the id (BPE and WordPiece never; sentencepiece's unknown pieces, which carry the text
    /// they cover), so that no string is built for the others. `scratch` is a buffer the call
    /// may use (WordPiece's subwords of a word), kept by the caller across calls.
    pub(crate) fn for_each_span(
        &self,
        sequence: &str,
        scratch: &mut Vec<(u32, crate::Offsets)>,
        mut f: impl FnMut(u32, crate::Offsets, Option<&str>),
    ) -> Result<()> {
        match self {
            ModelWrapper::BPE(m) => {
                let mut pos = 0;
                m.tokenize_with(sequence, |id, len| {
                    let start = pos;
                    pos += len as usize;
                    f(id, (start, pos), None);
                })
            }
            ModelWrapper::WordPiece(m) => {
                scratch.clear();
                m.tokenize_spans(sequence, scratch)?;
                scratch.iter().for_each(|&(id, offsets)| f(id, offsets, None));
                Ok(())
            }
            ModelWrapper::SentencePiece(m) => m.for_each_span(sequence, f),
            other => {
                other.tokenize(sequence)?.iter().for_each(|t| f(t.id, t.offsets, Some(&t.value)));
                Ok(())
            }
        }
    }

    /// The id of the unknown token, when the model has one in its vocabulary.
    pub fn unk_id(&self) -> Option<u32> {
        match self {
            ModelWrapper::BPE(m) => m.unk_token().and_then(|t| m.token_to_id(t)),
            ModelWrapper::WordPiece(m) => m.token_to_id(m.unk_token()),
            ModelWrapper::WordLevel(m) => m.token_to_id(m.unk_token()),
            ModelWrapper::Unigram(m) => m.unk_id().map(|id| id as u32),
            ModelWrapper::SentencePiece(m) => Some(m.unk_id()),
        }
    }

    /// Whether `id` is a byte piece of byte fallback (`<0x41>`, a model with byte fallback on).
    pub fn is_byte_fallback(&self, id: u32) -> bool {
        let byte_token = |on: bool, m: &dyn Model| on && m.id_to_token(id).is_some_and(|t| crate::models::bpe::byte_of(t).is_some());
        match self {
            ModelWrapper::BPE(m) => byte_token(m.byte_fallback(), m),
            ModelWrapper::Unigram(m) => byte_token(m.byte_fallback(), m),
            ModelWrapper::SentencePiece(m) => m.kind(id) == Some(crate::models::sentencepiece::proto::PieceType::Byte),
            ModelWrapper::WordPiece(_) | ModelWrapper::WordLevel(_) => false,
        }
    }

    /// Forgets cached words (BPE, Unigram).
    pub fn clear_cache(&self) {
        match self {
            ModelWrapper::BPE(m) => m.clear_cache(),
            ModelWrapper::Unigram(m) => m.clear_cache(),
            _ => {}
        }
    }
}

impl Serialize for ModelWrapper {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        dispatch!(self, m => m.serialize(serializer))
    }
}

impl<'de> Deserialize<'de> for ModelWrapper {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        ModelWrapper::from_fields(ModelFields::deserialize(d)?).map_err(de_error)
    }
}

impl Model for ModelWrapper {
    fn tokenize(&self, sequence: &str) -> Result<Vec<Token>> {
        dispatch!(self, m => m.tokenize(sequence))
    }
    fn token_to_id(&self, token: &str) -> Option<u32> {
        dispatch!(self, m => m.token_to_id(token))
    }
    fn id_to_token(&self, id: u32) -> Option<&str> {
        dispatch!(self, m => m.id_to_token(id))
    }
    fn get_vocab(&self) -> HashMap<String, u32> {
        dispatch!(self, m => m.get_vocab())
    }
    fn get_vocab_size(&self) -> usize {
        dispatch!(self, m => m.get_vocab_size())
    }
}

#[cfg(test)]
mod tests;
