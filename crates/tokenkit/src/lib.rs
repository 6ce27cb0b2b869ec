//! tokenkit: load, encode, decode and train tokenizers — HF `tokenizer.json`, tiktoken and
//! SentencePiece models — with output identical to each format's reference library.
//!
//! The pipeline is HF's: added tokens are cut out, the rest is normalized, pre-tokenized
//! into pieces, each piece goes through the model, and a post-processor adds special tokens.
//! Offsets inside Rust are bytes of the original input unless a function says otherwise.

pub mod chat_template;
pub mod data;
pub mod decoders;
pub mod error;
pub mod formats;
pub mod models;
pub mod normalizers;
pub mod pre_tokenizers;
pub mod processors;
pub mod tiktoken;
pub mod tokenizer;
pub mod trainers;
pub mod utils;

#[cfg(test)]
mod test_fixtures;

pub use error::{Error, Result};
pub use tokenizer::{
    AddedToken, DecodeStream, Decoder, EncodeInput, Encoding, InputSequence, Model, NormalizedString, Normalizer,
    OffsetType, Offsets, PaddingDirection, PaddingParams, PaddingStrategy, PostProcessor, PreTokenizedString,
    PreTokenizer, Token, Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy,
};
