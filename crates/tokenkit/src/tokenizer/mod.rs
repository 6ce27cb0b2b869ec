//! The tokenizer pipeline: added tokens → normalizer → pre-tokenizer → model → post-processor.

pub mod added_vocabulary;
mod bert_path;
pub(crate) mod byte_level_path;
pub mod decode_stream;
mod pipeline;
#[cfg(test)]
mod plan_tests;
pub mod serialization;
mod sp_chain;
mod sp_path;
pub mod utils;

// The shared types live in the bottom layer (`crate::base`); their old paths stay valid.
pub use crate::base::{
    default_process, process_by_parts, Decoder, Model, Normalizer, OffsetType, Offsets, PostProcessor, PreTokenizer, Token,
};
pub use crate::base::{encoding, normalized, pattern, pre_tokenized, sequence_ranges};

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

pub use added_vocabulary::{AddedToken, AddedVocabulary};
pub use decode_stream::DecodeStream;
pub use encoding::{Encoding, PaddingDirection, TruncationDirection};
pub use normalized::{NormalizedString, OffsetReferential, Range, SplitDelimiterBehavior};
pub use pipeline::EncodePlan;
pub use pre_tokenized::{PreTokenizedString, Split};
pub use sequence_ranges::SequenceRanges;
pub use utils::{PaddingParams, PaddingStrategy, TruncationParams, TruncationStrategy};

use crate::decoders::DecoderWrapper;
use crate::models::ModelWrapper;
use crate::normalizers::NormalizerWrapper;
use crate::pre_tokenizers::PreTokenizerWrapper;
use crate::processors::PostProcessorWrapper;
use crate::{Error, Result};
use pipeline::{Pipeline, Stages};

/// One sequence of input: raw text, or text already split into words.
#[derive(Debug, Clone)]
pub enum InputSequence<'s> {
    /// Raw text.
    Raw(Cow<'s, str>),
    /// Words (each word is pre-tokenized further, but never merged with another).
    PreTokenized(Vec<Cow<'s, str>>),
}

impl<'s> From<&'s str> for InputSequence<'s> {
    fn from(s: &'s str) -> Self {
        InputSequence::Raw(Cow::Borrowed(s))
    }
}
impl From<String> for InputSequence<'_> {
    fn from(s: String) -> Self {
        InputSequence::Raw(Cow::Owned(s))
    }
}
impl<'s> From<&'s String> for InputSequence<'s> {
    fn from(s: &'s String) -> Self {
        InputSequence::Raw(Cow::Borrowed(s))
    }
}
impl<'s> From<Vec<&'s str>> for InputSequence<'s> {
    fn from(v: Vec<&'s str>) -> Self {
        InputSequence::PreTokenized(v.into_iter().map(Cow::Borrowed).collect())
    }
}
impl<'s> From<&'s [&'s str]> for InputSequence<'s> {
    fn from(v: &'s [&'s str]) -> Self {
        InputSequence::PreTokenized(v.iter().map(|s| Cow::Borrowed(*s)).collect())
    }
}
impl From<Vec<String>> for InputSequence<'_> {
    fn from(v: Vec<String>) -> Self {
        InputSequence::PreTokenized(v.into_iter().map(Cow::Owned).collect())
    }
}

/// What `encode` takes: one sequence or a pair.
#[derive(Debug, Clone)]
pub enum EncodeInput<'s> {
    /// One sequence.
    Single(InputSequence<'s>),
    /// A pair of sequences (type ids 0 and 1).
    Dual(InputSequence<'s>, InputSequence<'s>),
}

impl InputSequence<'_> {
    /// Length of the text in bytes (of all the words, for a pre-tokenized sequence).
    pub fn len(&self) -> usize {
        match self {
            InputSequence::Raw(s) => s.len(),
            InputSequence::PreTokenized(words) => words.iter().map(|w| w.len()).sum(),
        }
    }

    /// Whether there is no text.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl EncodeInput<'_> {
    /// Length of the text in bytes, of both sequences of a pair.
    pub fn len(&self) -> usize {
        match self {
            EncodeInput::Single(s) => s.len(),
            EncodeInput::Dual(a, b) => a.len() + b.len(),
        }
    }

    /// Whether there is no text.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<'s, I: Into<InputSequence<'s>>> From<I> for EncodeInput<'s> {
    fn from(i: I) -> Self {
        EncodeInput::Single(i.into())
    }
}
impl<'s, I1: Into<InputSequence<'s>>, I2: Into<InputSequence<'s>>> From<(I1, I2)> for EncodeInput<'s> {
    fn from((a, b): (I1, I2)) -> Self {
        EncodeInput::Dual(a.into(), b.into())
    }
}

/// The tokens of [`Tokenizer::encode_by_ranges`] as they are made: for a model whose token
/// strings are its vocabulary's, plain columns (ids, offsets, words) and the few strings that
/// are not looked up in the vocabulary (added tokens), the encoding built from them at the
/// end; for another model, the encoding itself.
enum RangeTokens<'v> {
    Vocab {
        vocab: &'v std::sync::Arc<crate::base::vocab::ReverseVocab>,
        ids: Vec<u32>,
        offsets: Vec<Offsets>,
        words: Vec<Option<u32>>,
        explicit: Vec<(usize, String)>,
        type_id: u32,
    },
    Encoding(Encoding, u32),
}

impl<'v> RangeTokens<'v> {
    fn new(vocab: Option<&'v std::sync::Arc<crate::base::vocab::ReverseVocab>>, capacity: usize, type_id: u32) -> Self {
        match vocab {
            Some(vocab) => RangeTokens::Vocab {
                vocab,
                ids: Vec::with_capacity(capacity),
                offsets: Vec::with_capacity(capacity),
                words: Vec::with_capacity(capacity),
                explicit: Vec::new(),
                type_id,
            },
            None => RangeTokens::Encoding(Encoding::with_capacity(capacity), type_id),
        }
    }

    /// Appends an ordinary token with its string.
    fn push(&mut self, id: u32, token: &str, offsets: Offsets, word: Option<u32>) {
        match self {
            RangeTokens::Vocab { ids, offsets: offs, words, explicit, .. } => {
                explicit.push((ids.len(), token.to_owned()));
                ids.push(id);
                offs.push(offsets);
                words.push(word);
            }
            RangeTokens::Encoding(enc, type_id) => enc.push_token(id, token.to_owned(), offsets, word, *type_id),
        }
    }

    fn into_encoding(self) -> Encoding {
        match self {
            RangeTokens::Vocab { vocab, ids, offsets, words, explicit, type_id } => {
                Encoding::from_vocab_tokens(ids, offsets, words, type_id, vocab, explicit)
            }
            RangeTokens::Encoding(enc, _) => enc,
        }
    }
}

/// A complete tokenizer: the pipeline, the added vocabulary, padding and truncation.
#[derive(Debug, Clone)]
pub struct Tokenizer {
    /// The stages encoding runs, changed only through [`Pipeline::update`].
    pub(crate) pipeline: Pipeline,
    pub(crate) decoder: Option<DecoderWrapper>,
    pub(crate) truncation: Option<TruncationParams>,
    pub(crate) padding: Option<PaddingParams>,
}

impl Tokenizer {
    /// A tokenizer with just a model.
    pub fn new(model: impl Into<ModelWrapper>) -> Self {
        Self {
            pipeline: Pipeline::new(Stages {
                normalizer: None,
                pre_tokenizer: None,
                model: model.into(),
                post_processor: None,
                added_vocabulary: AddedVocabulary::new(),
            }),
            decoder: None,
            truncation: None,
            padding: None,
        }
    }

    /// Loads a tokenizer.json file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let data = std::fs::read_to_string(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
        Self::from_str_with_context(&data, &path.display().to_string())
    }

    /// Parses tokenizer.json content.
    pub fn from_json(json: &str) -> Result<Self> {
        Self::from_str_with_context(json, "tokenizer.json")
    }

    /// Parses `json`, or reads what an earlier parse of the same text built from the table
    /// cache ([`Tokenizer::cached`]); errors name `context`.
    fn from_str_with_context(json: &str, context: &str) -> Result<Self> {
        Self::cached(serialization::JSON_KIND, json.as_bytes(), || Self::parse_json(json, context))
    }

    fn parse_json(json: &str, context: &str) -> Result<Self> {
        serde_json::from_str(json).map_err(|e| Error::Json { context: context.to_owned(), message: e.to_string() })
    }

    /// [`Tokenizer::from_json`] without the table cache.
    #[cfg(test)]
    pub(crate) fn from_json_uncached(json: &str) -> Result<Self> {
        Self::parse_json(json, "tokenizer.json")
    }

    /// Serializes to tokenizer.json content.
    pub fn to_json(&self, pretty: bool) -> Result<String> {
        let r = if pretty { serde_json::to_string_pretty(self) } else { serde_json::to_string(self) };
        r.map_err(|e| Error::Json { context: "saving tokenizer".into(), message: e.to_string() })
    }

    /// Saves as a tokenizer.json file, atomically: a failed or interrupted save leaves the file
    /// that was there (see [`crate::utils::atomic_file`]).
    pub fn save(&self, path: impl AsRef<Path>, pretty: bool) -> Result<()> {
        crate::utils::atomic_file::write_atomic(path, self.to_json(pretty)?.as_bytes())
    }

    /// The normalizer.
    pub fn get_normalizer(&self) -> Option<&NormalizerWrapper> {
        self.pipeline.normalizer.as_ref()
    }
    /// Sets the normalizer (normalized added tokens are re-normalized with it).
    pub fn with_normalizer(&mut self, n: Option<NormalizerWrapper>) -> Result<&mut Self> {
        self.pipeline.update(|s| {
            s.normalizer = n;
            s.added_vocabulary.refresh_normalized_tokens(&s.model, s.normalizer.as_ref())
        })?;
        Ok(self)
    }
    /// The pre-tokenizer.
    pub fn get_pre_tokenizer(&self) -> Option<&PreTokenizerWrapper> {
        self.pipeline.pre_tokenizer.as_ref()
    }
    /// Sets the pre-tokenizer.
    pub fn with_pre_tokenizer(&mut self, p: Option<PreTokenizerWrapper>) -> &mut Self {
        self.pipeline.update(|s| s.pre_tokenizer = p);
        self
    }
    /// The model.
    pub fn get_model(&self) -> &ModelWrapper {
        &self.pipeline.model
    }
    /// Sets the model.
    pub fn with_model(&mut self, m: ModelWrapper) -> &mut Self {
        self.pipeline.update(|s| s.model = m);
        self
    }
    /// The post-processor.
    pub fn get_post_processor(&self) -> Option<&PostProcessorWrapper> {
        self.pipeline.post_processor.as_ref()
    }
    /// Sets the post-processor.
    pub fn with_post_processor(&mut self, p: Option<PostProcessorWrapper>) -> &mut Self {
        self.pipeline.update(|s| s.post_processor = p);
        self
    }
    /// The decoder.
    pub fn get_decoder(&self) -> Option<&DecoderWrapper> {
        self.decoder.as_ref()
    }
    /// Sets the decoder.
    pub fn with_decoder(&mut self, d: Option<DecoderWrapper>) -> &mut Self {
        self.decoder = d;
        self
    }
    /// The truncation settings.
    pub fn get_truncation(&self) -> Option<&TruncationParams> {
        self.truncation.as_ref()
    }
    /// Sets truncation; an error if the stride leaves no room (HF's rule).
    pub fn with_truncation(&mut self, t: Option<TruncationParams>) -> Result<&mut Self> {
        if let Some(p) = &t {
            let n_added = self.get_n_added_tokens(false);
            let effective = p.max_length.saturating_sub(n_added);
            if effective < p.stride {
                return Err(Error::invalid(format!(
                    "truncation stride {} is greater than or equal to the effective max length {} (= {} max length - {} added special tokens)",
                    p.stride, effective, p.max_length, n_added
                )));
            }
        }
        self.truncation = t;
        Ok(self)
    }
    /// The padding settings.
    pub fn get_padding(&self) -> Option<&PaddingParams> {
        self.padding.as_ref()
    }
    /// Sets padding; an error for a length past [`MAX_PADDING_LENGTH`](utils::MAX_PADDING_LENGTH).
    pub fn with_padding(&mut self, p: Option<PaddingParams>) -> Result<&mut Self> {
        if let Some(p) = &p {
            p.validate()?;
        }
        self.padding = p;
        Ok(self)
    }
    /// The added vocabulary.
    pub fn get_added_vocabulary(&self) -> &AddedVocabulary {
        &self.pipeline.added_vocabulary
    }
    /// Whether special tokens are encoded as plain text.
    pub fn set_encode_special_tokens(&mut self, v: bool) {
        self.pipeline.update(|s| s.added_vocabulary.set_encode_special_tokens(v));
    }

    /// The name of the encode plan this tokenizer runs ([`EncodePlan::name`]): `"general"`,
    /// or the direct path chosen for its pipeline (`"byte-level"`, `"sentencepiece"`,
    /// `"bert"`). Chosen once after each change of the pipeline.
    pub fn plan_name(&self) -> &'static str {
        self.encode_plan().name()
    }

    /// The encode plan this tokenizer runs.
    pub fn encode_plan(&self) -> EncodePlan {
        self.pipeline.plan()
    }

    /// Forces the general path (each stage in turn, as HF runs them) instead of the plan
    /// chosen for the pipeline (`false` goes back to choosing). The output is the same either
    /// way; this is for testing and measuring the plans. `TOKENKIT_PLAN=general` in the
    /// environment forces it for every tokenizer of the process.
    pub fn force_general_path(&mut self, general: bool) -> &mut Self {
        self.pipeline.set_general_only(general);
        self
    }

    /// The vocabulary, with or without the added tokens.
    pub fn get_vocab(&self, with_added_tokens: bool) -> HashMap<String, u32> {
        let mut v = self.pipeline.model.get_vocab();
        if with_added_tokens {
            for (t, id) in self.pipeline.added_vocabulary.get_vocab() {
                v.insert(t.clone(), *id);
            }
        }
        v
    }

    /// Vocabulary size, with or without the added tokens (counted once when also in the model).
    pub fn get_vocab_size(&self, with_added_tokens: bool) -> usize {
        if with_added_tokens {
            let model_size = self.pipeline.model.get_vocab_size();
            let extra = self.pipeline.added_vocabulary.get_vocab().keys().filter(|t| self.pipeline.model.token_to_id(t).is_none()).count();
            model_size + extra
        } else {
            self.pipeline.model.get_vocab_size()
        }
    }

    /// The id of a token (added tokens first).
    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.pipeline.added_vocabulary.token_to_id(token, &self.pipeline.model)
    }

    /// The token of an id (added tokens first).
    pub fn id_to_token(&self, id: u32) -> Option<&str> {
        self.pipeline.added_vocabulary.simple_id_to_token(id).or_else(|| self.pipeline.model.id_to_token(id))
    }

    /// Adds tokens; returns how many were new.
    pub fn add_tokens(&mut self, tokens: &[AddedToken]) -> Result<usize> {
        self.pipeline.update(|s| s.added_vocabulary.add_tokens(tokens, &s.model, s.normalizer.as_ref()))
    }

    /// Adds tokens as special tokens; returns how many were new.
    pub fn add_special_tokens(&mut self, tokens: &[AddedToken]) -> Result<usize> {
        let tokens: Vec<AddedToken> = tokens.iter().map(|t| t.clone().special(true)).collect();
        self.add_tokens(&tokens)
    }

    /// Number of tokens the post-processor adds.
    pub fn get_n_added_tokens(&self, is_pair: bool) -> usize {
        self.pipeline.post_processor.as_ref().map_or(0, |p| p.added_tokens(is_pair))
    }

    /// Normalizes `sequence` (added tokens cut out first), as the pipeline does.
    pub fn normalize(&self, sequence: &str) -> Result<NormalizedString> {
        let mut n = NormalizedString::from(sequence);
        if let Some(norm) = &self.pipeline.normalizer {
            norm.normalize(&mut n)?;
        }
        Ok(n)
    }

    fn do_pre_tokenize(&self, mut p: PreTokenizedString) -> Result<PreTokenizedString> {
        if let Some(pt) = &self.pipeline.pre_tokenizer {
            pt.pre_tokenize(&mut p)?;
        }
        Ok(p)
    }

    fn encode_single_sequence(&self, sequence: InputSequence, type_id: u32, offset_type: OffsetType) -> Result<Encoding> {
        let direct = self.pipeline.direct();
        let encode_one = |word_idx: Option<u32>, s: &str| -> Result<Encoding> {
            match direct.as_ref().and_then(|d| d.encode(&self.pipeline, s, word_idx, type_id, offset_type)) {
                Some(encoded) => encoded,
                None => self.encode_general(s, word_idx, type_id, offset_type),
            }
        };
        match sequence {
            InputSequence::Raw(s) => encode_one(None, &s),
            InputSequence::PreTokenized(words) => {
                let mut out = Encoding::default();
                for (i, w) in words.iter().enumerate() {
                    out.merge_with(encode_one(Some(i as u32), w)?, false);
                }
                Ok(out)
            }
        }
    }

    /// The general path: added tokens, normalizer, pre-tokenizer, model on each piece.
    fn encode_general(&self, s: &str, word_idx: Option<u32>, type_id: u32, offset_type: OffsetType) -> Result<Encoding> {
        let normalized = self.pipeline.added_vocabulary.extract_and_normalize(self.pipeline.normalizer.as_ref(), s)?;
        match &self.pipeline.pre_tokenizer {
            None => return self.encode_by_ranges(normalized, None, word_idx, type_id, offset_type),
            Some(pt) if pt.has_split_ranges() => return self.encode_by_ranges(normalized, Some(pt), word_idx, type_id, offset_type),
            Some(_) => {}
        }
        let mut pre = self.do_pre_tokenize(normalized)?;
        pre.tokenize(|n| self.pipeline.model.tokenize(n.get()))?;
        pre.into_encoding(word_idx, type_id, offset_type)
    }

    /// The model on each piece of a pre-tokenizer that only cuts the text (or on each segment
    /// when there is no pre-tokenizer), without making a `NormalizedString` per piece: the
    /// same tokens, word indices and offsets as the general path (offsets go through the
    /// alignments of the normalized segment).
    fn encode_by_ranges(
        &self,
        pre: PreTokenizedString,
        pre_tokenizer: Option<&PreTokenizerWrapper>,
        word_idx: Option<u32>,
        type_id: u32,
        offset_type: OffsetType,
    ) -> Result<Encoding> {
        let offsets_in = normalized::OffsetsIn::new(pre.original(), offset_type);
        let mut out = RangeTokens::new(self.pipeline.model.span_vocab(), pre.original().len() / 4, type_id);
        let mut word: u32 = 0;
        let mut ranges = Vec::new();
        let mut spans = Vec::new();
        let offsets = |n: &NormalizedString, o: Offsets| offsets_in.convert(n.offsets_in_input(o));
        for split in pre.splits() {
            let n = &split.normalized;
            if let Some(tokens) = &split.tokens {
                for t in tokens {
                    out.push(t.id, &t.value, offsets(n, t.offsets), Some(word_idx.unwrap_or(word)));
                }
                word += 1;
                continue;
            }
            let s = n.get();
            ranges.clear();
            match pre_tokenizer {
                Some(pt) => {
                    pt.split_ranges(s, &mut ranges)?;
                }
                None => ranges.push((0, s.len())),
            }
            for &(ws, we) in &ranges {
                if ws == we {
                    continue;
                }
                let w = Some(word_idx.unwrap_or(word));
                word += 1;
                // The strings of the model's tokens are its vocabulary's: looked up lazily.
                if let RangeTokens::Vocab { ids, offsets: offs, words, explicit, .. } = &mut out {
                    self.pipeline.model.for_each_span(&s[ws..we], &mut spans, |id, (ts, te), string| {
                        if let Some(string) = string {
                            explicit.push((ids.len(), string.to_owned()));
                        }
                        ids.push(id);
                        offs.push(offsets(n, (ws + ts, ws + te)));
                        words.push(w);
                    })?;
                    continue;
                }
                for t in self.pipeline.model.tokenize(&s[ws..we])? {
                    out.push(t.id, &t.value, offsets(n, (ws + t.offsets.0, ws + t.offsets.1)), w);
                }
            }
        }
        Ok(out.into_encoding())
    }

    fn encode_with(&self, input: EncodeInput, add_special_tokens: bool, offset_type: OffsetType) -> Result<Encoding> {
        let (seq, pair) = match input {
            EncodeInput::Single(s) => (s, None),
            EncodeInput::Dual(a, b) => (a, Some(b)),
        };
        let encoding = self.encode_single_sequence(seq, 0, offset_type)?;
        let pair = pair.map(|p| self.encode_single_sequence(p, 1, offset_type)).transpose()?;
        self.post_process(encoding, pair, add_special_tokens)
    }

    /// Encodes one input; offsets are bytes of the input.
    pub fn encode<'s>(&self, input: impl Into<EncodeInput<'s>>, add_special_tokens: bool) -> Result<Encoding> {
        self.encode_with(input.into(), add_special_tokens, OffsetType::Byte)
    }

    /// Encodes one input; offsets are chars of the input, as HF reports them to Python.
    pub fn encode_char_offsets<'s>(&self, input: impl Into<EncodeInput<'s>>, add_special_tokens: bool) -> Result<Encoding> {
        self.encode_with(input.into(), add_special_tokens, OffsetType::Char)
    }

    /// Truncation, post-processing and padding of one encoded input.
    pub fn post_process(&self, encoding: Encoding, pair: Option<Encoding>, add_special_tokens: bool) -> Result<Encoding> {
        // The common case handed straight on: an encoding is a few hundred bytes, and each
        // step below would copy it (and the pair) again.
        if let (None, None, Some(p)) = (&self.truncation, &self.padding, &self.pipeline.post_processor) {
            return p.process(encoding, pair, add_special_tokens);
        }
        let (encoding, pair) = match &self.truncation {
            Some(t) => {
                let n_added = self.get_n_added_tokens(pair.is_some());
                if add_special_tokens && n_added > t.max_length {
                    // HF computes `max_length - n_added` in usize: the underflow wraps and the
                    // whole text comes out untruncated. Keeping only the special tokens would
                    // silently drop the text instead; neither is what was asked for.
                    return Err(Error::invalid(format!(
                        "truncation max_length {} is smaller than the {n_added} special tokens the post-processor adds{}: \
                         it must be at least {n_added} (or encode without special tokens)",
                        t.max_length,
                        if pair.is_some() { " to a pair" } else { "" }
                    )));
                }
                if add_special_tokens && n_added > 0 {
                    let params = TruncationParams { max_length: t.max_length - n_added, ..t.clone() };
                    utils::truncate_encodings(encoding, pair, &params)?
                } else {
                    utils::truncate_encodings(encoding, pair, t)?
                }
            }
            None => (encoding, pair),
        };
        let mut final_encoding = match &self.pipeline.post_processor {
            Some(p) => p.process(encoding, pair, add_special_tokens)?,
            None => {
                let mut v = vec![encoding];
                v.extend(pair);
                default_process(v)
            }
        };
        if let Some(p) = &self.padding {
            utils::pad_encodings(std::slice::from_mut(&mut final_encoding), p)?;
        }
        Ok(final_encoding)
    }

    fn encode_batch_with<'s, E: Into<EncodeInput<'s>> + Send>(
        &self,
        inputs: Vec<E>,
        add_special_tokens: bool,
        offset_type: OffsetType,
    ) -> Result<Vec<Encoding>> {
        let inputs = inputs.into_iter().map(Into::into);
        let mut encodings =
            crate::utils::parallel::try_map(inputs, EncodeInput::len, |i| self.encode_with(i, add_special_tokens, offset_type))?;
        if let Some(p) = &self.padding {
            utils::pad_encodings(&mut encodings, p)?;
        }
        Ok(encodings)
    }

    /// Encodes many inputs in parallel (results in input order), then pads them together.
    /// Offsets are bytes.
    pub fn encode_batch<'s, E: Into<EncodeInput<'s>> + Send>(&self, inputs: Vec<E>, add_special_tokens: bool) -> Result<Vec<Encoding>> {
        self.encode_batch_with(inputs, add_special_tokens, OffsetType::Byte)
    }

    /// [`encode_batch`](Self::encode_batch) with char offsets.
    pub fn encode_batch_char_offsets<'s, E: Into<EncodeInput<'s>> + Send>(
        &self,
        inputs: Vec<E>,
        add_special_tokens: bool,
    ) -> Result<Vec<Encoding>> {
        self.encode_batch_with(inputs, add_special_tokens, OffsetType::Char)
    }

    /// The token strings of `ids`; an error naming the first id that is not in the vocabulary.
    fn ids_to_tokens(&self, ids: &[u32], skip_special_tokens: bool) -> Result<Vec<String>> {
        let mut tokens = Vec::with_capacity(ids.len());
        for &id in ids {
            let t = self.id_to_token(id).ok_or(Error::IdOutOfRange { id, vocab_size: self.get_vocab_size(true) })?;
            if skip_special_tokens && self.pipeline.added_vocabulary.is_special_token(t) {
                continue;
            }
            tokens.push(t.to_owned());
        }
        Ok(tokens)
    }

    /// Decodes ids to text. Unlike HF (which silently drops them), an id outside the
    /// vocabulary is an error.
    pub fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String> {
        let tokens = self.ids_to_tokens(ids, skip_special_tokens)?;
        match &self.decoder {
            Some(d) => d.decode(tokens),
            None => Ok(tokens.join(" ")),
        }
    }

    /// Decodes many id sequences in parallel.
    pub fn decode_batch(&self, sequences: &[&[u32]], skip_special_tokens: bool) -> Result<Vec<String>> {
        crate::utils::parallel::try_map(sequences, |ids| ids.len(), |ids| self.decode(ids, skip_special_tokens))
    }

    /// A streaming decoder: feed ids one at a time, get text when it is complete.
    pub fn decode_stream(&self, skip_special_tokens: bool) -> DecodeStream<'_> {
        DecodeStream::new(self, skip_special_tokens)
    }
}
