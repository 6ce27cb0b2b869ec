//! Decoders: one file per family; `DecoderWrapper` is the closed set tokenizer.json uses.
//!
//! A decoder turns the token strings of a sequence of ids back into text. `decode_chain`
//! returns one string per remaining token (some decoders fuse them into one), so decoders can
//! be chained in a [`Sequence`] exactly as HF chains them.

pub mod bpe;
pub mod byte_fallback;
pub mod byte_level;
pub mod ctc;
pub mod fuse;
pub mod metaspace;
pub mod replace;
pub mod sentencepiece;
pub mod sequence;
pub mod strip;
pub mod wordpiece;

use serde::{Deserialize, Serialize};

pub use bpe::BPEDecoder;
pub use byte_fallback::ByteFallback;
pub use byte_level::ByteLevel;
pub use ctc::CTC;
pub use fuse::Fuse;
pub use metaspace::{Metaspace, PrependScheme};
pub use replace::{Replace, ReplacePattern};
pub use sequence::Sequence;
pub use strip::Strip;
pub use wordpiece::WordPiece;

use crate::base::Decoder;
use crate::Result;

/// Every decoder tokenizer.json can name, dispatched statically.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum DecoderWrapper {
    /// `{"type":"BPEDecoder","suffix":"</w>"}`
    #[serde(rename = "BPEDecoder")]
    BPE(BPEDecoder),
    /// `{"type":"ByteLevel",...}`
    ByteLevel(ByteLevel),
    /// `{"type":"WordPiece","prefix":"##","cleanup":true}`
    WordPiece(WordPiece),
    /// `{"type":"Metaspace","replacement":"▁","prepend_scheme":"always","split":true}`
    Metaspace(Metaspace),
    /// `{"type":"CTC",...}`
    CTC(CTC),
    /// `{"type":"Sequence","decoders":[...]}`
    Sequence(Sequence),
    /// `{"type":"Replace","pattern":{"String":"▁"},"content":" "}`
    Replace(Replace),
    /// `{"type":"Fuse"}`
    Fuse(Fuse),
    /// `{"type":"Strip","content":" ","start":1,"stop":0}`
    Strip(Strip),
    /// `{"type":"ByteFallback"}`
    ByteFallback(ByteFallback),
    /// sentencepiece's own decoding (tokenkit extension, for `.model` files).
    SentencePiece(crate::decoders::sentencepiece::SentencePieceDecoder),
}

impl Decoder for DecoderWrapper {
    fn decode_chain(&self, tokens: Vec<String>) -> Result<Vec<String>> {
        match self {
            Self::BPE(d) => d.decode_chain(tokens),
            Self::ByteLevel(d) => d.decode_chain(tokens),
            Self::WordPiece(d) => d.decode_chain(tokens),
            Self::Metaspace(d) => d.decode_chain(tokens),
            Self::CTC(d) => d.decode_chain(tokens),
            Self::Sequence(d) => d.decode_chain(tokens),
            Self::Replace(d) => d.decode_chain(tokens),
            Self::Fuse(d) => d.decode_chain(tokens),
            Self::Strip(d) => d.decode_chain(tokens),
            Self::ByteFallback(d) => d.decode_chain(tokens),
            Self::SentencePiece(d) => d.decode_chain(tokens),
        }
    }
}

macro_rules! impl_from {
    ($($variant:ident($ty:ty)),*) => {$(
        impl From<$ty> for DecoderWrapper {
            fn from(d: $ty) -> Self {
                DecoderWrapper::$variant(d)
            }
        }
    )*};
}
impl_from!(
    BPE(BPEDecoder),
    ByteLevel(ByteLevel),
    WordPiece(WordPiece),
    Metaspace(Metaspace),
    CTC(CTC),
    Sequence(Sequence),
    Replace(Replace),
    Fuse(Fuse),
    Strip(Strip),
    ByteFallback(ByteFallback),
    SentencePiece(crate::decoders::sentencepiece::SentencePieceDecoder)
);

#[cfg(test)]
mod oracle_tests;

/// Owned token strings for tests.
#[cfg(test)]
pub(crate) fn test_strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| (*x).to_owned()).collect()
}
