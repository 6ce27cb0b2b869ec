//! The SentencePiece model: normalizes and segments the whole input itself (Unigram or BPE),
//! exactly as the `sentencepiece` library does. Reading `.model` files and converting them to
//! tokenizer.json is `crate::formats::sentencepiece`; the normalizer is
//! `crate::normalizers::sentencepiece`, the decoder `crate::decoders::sentencepiece`.

pub mod bpe;
pub mod model;
pub mod proto;

pub use model::SentencePiece;
