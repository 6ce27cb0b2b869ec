//! The bottom layer every stage shares: the string types a tokenizer works on
//! ([`NormalizedString`], [`PreTokenizedString`]), what it produces ([`Token`], [`Encoding`]),
//! the vocabulary tables, and the traits each stage implements ([`Normalizer`],
//! [`PreTokenizer`], [`Model`], [`PostProcessor`], [`Decoder`]). It imports no component and
//! nothing of `tokenizer`'s composition.

pub mod added_token;
pub(crate) mod column;
pub mod encoding;
pub mod normalized;
pub(crate) mod normalized_fast;
pub mod pattern;
pub mod pre_tokenized;
pub mod sequence_ranges;
pub(crate) mod token_strings;
pub mod vocab;

use std::collections::HashMap;

pub use added_token::AddedToken;
pub use encoding::{Encoding, PaddingDirection, TruncationDirection};
pub use normalized::{NormalizedString, OffsetReferential, Range, SplitDelimiterBehavior};
pub use pre_tokenized::{PreTokenizedString, Split};
pub use sequence_ranges::SequenceRanges;

use crate::Result;

/// A `(start, end)` range; bytes or chars depending on where it comes from (see each field).
pub type Offsets = (usize, usize);

/// One token produced by a model: offsets are bytes into the piece the model was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// Its id.
    pub id: u32,
    /// Its string in the vocabulary.
    pub value: String,
    /// Byte offsets into the piece.
    pub offsets: Offsets,
}

impl Token {
    /// Builds a token.
    pub fn new(id: u32, value: String, offsets: Offsets) -> Self {
        Self { id, value, offsets }
    }
}

/// The unit offsets are reported in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffsetType {
    /// Bytes of the UTF-8 input.
    Byte,
    /// Unicode scalar values (chars), as HF reports offsets to Python.
    Char,
}

/// Str → str with alignment tracking.
pub trait Normalizer {
    /// Normalizes in place.
    fn normalize(&self, normalized: &mut NormalizedString) -> Result<()>;
}

/// Cuts the input into pieces (words) for the model.
pub trait PreTokenizer {
    /// Splits in place.
    fn pre_tokenize(&self, pretokenized: &mut PreTokenizedString) -> Result<()>;
}

/// Piece → tokens, and the vocabulary.
pub trait Model {
    /// Tokens of one piece; offsets are bytes into `sequence`.
    fn tokenize(&self, sequence: &str) -> Result<Vec<Token>>;
    /// The id of a token.
    fn token_to_id(&self, token: &str) -> Option<u32>;
    /// The token of an id.
    fn id_to_token(&self, id: u32) -> Option<&str>;
    /// The whole vocabulary.
    fn get_vocab(&self) -> HashMap<String, u32>;
    /// The vocabulary size.
    fn get_vocab_size(&self) -> usize;
}

/// Adds special tokens, sets type ids, merges pairs.
pub trait PostProcessor {
    /// How many tokens it adds to a single input (`is_pair` false) or a pair.
    fn added_tokens(&self, is_pair: bool) -> usize;
    /// Processes the encodings of the sequences (already given sequence and type ids).
    fn process_encodings(&self, encodings: Vec<Encoding>, add_special_tokens: bool) -> Result<Vec<Encoding>>;
    /// Processes one input (and its pair) into the final encoding.
    fn process(&self, encoding: Encoding, pair: Option<Encoding>, add_special_tokens: bool) -> Result<Encoding> {
        process_by_parts(self, encoding, pair, add_special_tokens)
    }
}

/// What [`PostProcessor::process`] does unless a processor has a quicker way to the same
/// result: each sequence gets its index as sequence and type id, the processor turns them
/// into parts ([`PostProcessor::process_encodings`]) and the parts are concatenated.
pub fn process_by_parts<P: PostProcessor + ?Sized>(
    p: &P,
    encoding: Encoding,
    pair: Option<Encoding>,
    add_special_tokens: bool,
) -> Result<Encoding> {
    let mut encodings = match pair {
        Some(p) => vec![encoding, p],
        None => vec![encoding],
    };
    for (i, e) in encodings.iter_mut().enumerate() {
        e.set_sequence_id(i);
        for o in e.get_overflowing_mut() {
            o.set_sequence_id(i);
        }
        e.type_ids = column::Column::same(i as u32, e.len());
    }
    let encodings = p.process_encodings(encodings, add_special_tokens)?;
    Ok(Encoding::merge(encodings, false))
}

/// Processing when there is no post-processor: pairs are concatenated.
pub fn default_process(encodings: Vec<Encoding>) -> Encoding {
    if encodings.len() == 1 {
        return encodings.into_iter().next().unwrap_or_default();
    }
    let mut out = Encoding::default();
    for (i, mut e) in encodings.into_iter().enumerate() {
        e.set_sequence_id(i);
        out.merge_with(e, false);
    }
    out
}

/// Tokens → text.
pub trait Decoder {
    /// Decodes token by token (each output string belongs to one input token).
    fn decode_chain(&self, tokens: Vec<String>) -> Result<Vec<String>>;
    /// Decodes into one string.
    fn decode(&self, tokens: Vec<String>) -> Result<String> {
        Ok(self.decode_chain(tokens)?.concat())
    }
}
