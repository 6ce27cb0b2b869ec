//! SentencePiece `.model` files (protobuf `ModelProto`): reading them, encoding and decoding
//! exactly as the `sentencepiece` library does, and converting them to HF tokenizer.json.
//!
//! A `.model` loads as a [`Tokenizer`] with no normalizer and no pre-tokenizer, a
//! [`SentencePiece`] model that normalizes and segments the whole input itself, and a
//! [`SentencePieceDecoder`]: sentencepiece's normalization (leftmost-longest charsmap,
//! whitespace removal decided on normalized output) cannot be expressed as HF stages.

pub mod bpe;
pub mod convert;
pub mod decoder;
pub mod model;
pub mod normalizer;
pub mod proto;

use std::path::Path;

pub use decoder::SentencePieceDecoder;
pub use model::SentencePiece;

use crate::tokenizer::Tokenizer;
use crate::{Error, Result};

/// Whether the first bytes of a file look like a `ModelProto`: field 1 (`pieces`),
/// length-delimited, holding a piece message that starts with its `piece` string (field 1).
pub fn looks_like_model_proto(head: &[u8]) -> bool {
    if head.first() != Some(&0x0a) {
        return false;
    }
    // Skip the varint length of the first piece message.
    let Some(len_end) = head.iter().skip(1).take(5).position(|&b| b & 0x80 == 0) else {
        return false;
    };
    head.get(len_end + 2) == Some(&0x0a)
}

/// Reads a `.model` file into a [`SentencePiece`] model.
pub fn read_model(path: &Path) -> Result<SentencePiece> {
    let raw = std::fs::read(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
    SentencePiece::from_bytes(raw, &path.display().to_string())
}

/// Loads a `.model` file as a tokenizer that encodes and decodes as sentencepiece does.
pub fn from_model_file(path: &Path) -> Result<Tokenizer> {
    let model = read_model(path)?;
    let decoder = SentencePieceDecoder::from_model(&model);
    let mut tok = Tokenizer::new(model);
    tok.with_decoder(Some(decoder.into()));
    Ok(tok)
}

#[cfg(test)]
mod tests;
