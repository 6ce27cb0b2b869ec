//! tokenkit: load, encode, decode and train tokenizers — HF `tokenizer.json`, tiktoken and
//! SentencePiece models — with output identical to each format's reference library.
//!
//! The pipeline is HF's: added tokens are cut out, the rest is normalized, pre-tokenized
//! into pieces, each piece goes through the model, and a post-processor adds special tokens.
//! Offsets inside Rust are bytes of the original input unless a function says otherwise.
//!
//! # Layers
//!
//! A module imports from its own layer and the layers below it, never from above; within a
//! layer the imports form no cycle. Test code may reach up (it compares a layer with what is
//! built on it). `tests/layers.rs` checks this list and prints the module graph:
//!
//! 1. `error`, `utils`: the error type and helpers that know nothing of tokenizers.
//! 2. `base`: the types and traits every stage shares (`NormalizedString`,
//!    `PreTokenizedString`, `Encoding`, `Token`, `Normalizer`, `PreTokenizer`, `Model`,
//!    `PostProcessor`, `Decoder`).
//! 3. `normalizers`, `pre_tokenizers`, `models`, `processors`, `decoders`, `chat_template`: the
//!    components, each owning its rules (SentencePiece's model, normalizer and decoder
//!    included).
//! 4. `tokenizer`: composes the components (added tokens, the encode plans, padding, truncation).
//! 5. `formats`: reads and writes files (tokenizer.json, .tiktoken, SentencePiece .model, …).
//! 6. `tiktoken`, `trainers`, `loader`: tiktoken's surface, training's front end, and any file
//!    loaded by its detected format ([`load`], [`inspect_file`]; a `.tiktoken` rank file
//!    through `tiktoken::Encoding`).
//! 7. `data`, `corpus`, `tools`: whole datasets into training shards (`tokenkit tokenize`) and
//!    measured (`tokenkit stats`), over any tokenizer; corpus preparation (`tokenkit corpus`:
//!    PII, dedup) on `data`'s reader; pictures of encodings (the visualiser).

pub mod base;
pub mod chat_template;
pub mod corpus;
pub mod data;
pub mod decoders;
pub mod error;
pub mod formats;
pub mod loader;
pub mod models;
pub mod normalizers;
pub mod pre_tokenizers;
pub mod processors;
pub mod tiktoken;
pub mod tokenizer;
pub mod tools;
pub mod trainers;
pub mod utils;

#[cfg(test)]
mod test_fixtures;

pub use base::{
    AddedToken, Decoder, Encoding, Model, NormalizedString, Normalizer, OffsetType, Offsets, PaddingDirection, PostProcessor,
    PreTokenizedString, PreTokenizer, Token, TruncationDirection,
};
pub use error::{Error, Result};
pub use loader::{inspect_file, load, load_for_save};
pub use tokenizer::{
    DecodeStream, EncodeInput, InputSequence, PaddingParams, PaddingStrategy, Tokenizer, TruncationParams, TruncationStrategy,
};
