//! The parts of SentencePiece's `ModelProto` (sentencepiece_model.proto) that tokenkit reads
//! and writes (the trainer writes them with `prost::Message::encode_to_vec`), as hand-written
//! prost messages; every other field is skipped by prost when decoding.

/// A whole `.model` file.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ModelProto {
    /// The vocabulary, in id order.
    #[prost(message, repeated, tag = "1")]
    pub pieces: Vec<Piece>,
    /// Training options, some of which drive encoding (model type, byte fallback, ids).
    #[prost(message, optional, tag = "2")]
    pub trainer_spec: Option<TrainerSpec>,
    /// Normalization applied before encoding.
    #[prost(message, optional, tag = "3")]
    pub normalizer_spec: Option<NormalizerSpec>,
    /// Normalization applied to decoded text (rarely present).
    #[prost(message, optional, tag = "5")]
    pub denormalizer_spec: Option<NormalizerSpec>,
}

impl ModelProto {
    /// The `.model` file `raw` without its pieces (the specs alone): its top-level fields but
    /// the pieces, found by a walk over the field headers (a piece costs a varint key and a
    /// varint length, where decoding it costs a string), then decoded by prost as they stand
    /// in the file (in order, so repeated specs merge as protobuf merges them). A file the walk
    /// does not understand is decoded whole, which gives its error.
    pub fn decode_specs(raw: &[u8]) -> Result<Self, prost::DecodeError> {
        use prost::Message as _;
        match non_piece_fields(raw) {
            Some(fields) => Self::decode(fields.as_slice()),
            None => Self::decode(raw).map(|p| Self { pieces: Vec::new(), ..p }),
        }
    }
}

/// The bytes of every top-level field of a `ModelProto` but field 1 (the pieces), in order;
/// `None` for anything but well-formed varint, fixed and length-delimited fields.
fn non_piece_fields(raw: &[u8]) -> Option<Vec<u8>> {
    use prost::encoding::decode_varint;
    let mut out = Vec::new();
    let mut rest = raw;
    while !rest.is_empty() {
        // A piece (field 1, length-delimited) shorter than 128 bytes, as nearly all are: its key
        // and length are a byte each, skipped without the general walk below.
        if let [0x0A, len @ 0..=0x7F, ..] = *rest {
            rest = rest.get(2 + usize::from(len)..)?;
            continue;
        }
        let field = rest;
        let key = decode_varint(&mut rest).ok()?;
        let len = match key & 7 {
            0 => decode_varint(&mut rest).map(|_| 0).ok()?,
            1 => 8,
            2 => usize::try_from(decode_varint(&mut rest).ok()?).ok()?,
            5 => 4,
            _ => return None,
        };
        let header = field.len() - rest.len();
        let (body_end, next) = (header.checked_add(len)?, rest.get(len..)?);
        if key >> 3 != 1 {
            out.extend_from_slice(&field[..body_end]);
        }
        rest = next;
    }
    Some(out)
}

/// The type of a vocabulary piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum PieceType {
    /// An ordinary piece.
    Normal = 1,
    /// The unknown piece (`<unk>`), exactly one per model.
    Unknown = 2,
    /// A control symbol (`<s>`, `</s>`): never produced from text, decoded to nothing.
    Control = 3,
    /// A user-defined symbol: always one piece, never split.
    UserDefined = 4,
    /// A piece kept in the vocabulary but never produced.
    Unused = 5,
    /// A byte piece `<0xNN>` (byte fallback).
    Byte = 6,
}

/// One vocabulary piece.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Piece {
    /// The piece text (whitespace shown as `▁`).
    #[prost(string, optional, tag = "1")]
    pub piece: Option<String>,
    /// Its score: a log probability (Unigram) or minus the merge rank (BPE).
    #[prost(float, optional, tag = "2")]
    pub score: Option<f32>,
    /// Its [`PieceType`]; normal when absent.
    #[prost(enumeration = "PieceType", optional, tag = "3")]
    pub r#type: Option<i32>,
}

/// The algorithm a model was trained with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum ModelType {
    /// Unigram language model (Viterbi).
    Unigram = 1,
    /// Byte-pair encoding merged by piece score.
    Bpe = 2,
    /// Whitespace-delimited words.
    Word = 3,
    /// Single characters.
    Char = 4,
}

/// The training options: those that matter to encoding and decoding, and those `tokenkit
/// inspect` summarises.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrainerSpec {
    /// The training input files.
    #[prost(string, repeated, tag = "1")]
    pub input: Vec<String>,
    /// Output name prefix given at training time.
    #[prost(string, optional, tag = "2")]
    pub model_prefix: Option<String>,
    /// Share of characters covered by the vocabulary (the rest map to unk or bytes).
    #[prost(float, optional, tag = "10")]
    pub character_coverage: Option<f32>,
    /// Sentences sampled from the input (0: all).
    #[prost(uint64, optional, tag = "11")]
    pub input_sentence_size: Option<u64>,
    /// Unigram: share of pieces kept by each pruning.
    #[prost(float, optional, tag = "15")]
    pub shrinking_factor: Option<f32>,
    /// Unigram: EM iterations between prunings.
    #[prost(int32, optional, tag = "17")]
    pub num_sub_iterations: Option<i32>,
    /// Longest piece, in chars.
    #[prost(int32, optional, tag = "20")]
    pub max_sentencepiece_length: Option<i32>,
    /// Pieces never span Unicode scripts.
    #[prost(bool, optional, tag = "21")]
    pub split_by_unicode_script: Option<bool>,
    /// Pieces never span whitespace.
    #[prost(bool, optional, tag = "22")]
    pub split_by_whitespace: Option<bool>,
    /// Pieces never span a digit and a non-digit.
    #[prost(bool, optional, tag = "23")]
    pub split_by_number: Option<bool>,
    /// Control symbols added at training time.
    #[prost(string, repeated, tag = "30")]
    pub control_symbols: Vec<String>,
    /// User-defined symbols added at training time.
    #[prost(string, repeated, tag = "31")]
    pub user_defined_symbols: Vec<String>,
    /// The [`ModelType`]; Unigram when absent.
    #[prost(enumeration = "ModelType", optional, tag = "3")]
    pub model_type: Option<i32>,
    /// Vocabulary size asked for at training time.
    #[prost(int32, optional, tag = "4")]
    pub vocab_size: Option<i32>,
    /// Whitespace is attached to the end of pieces rather than their start.
    #[prost(bool, optional, tag = "24")]
    pub treat_whitespace_as_suffix: Option<bool>,
    /// Digits were split into single pieces at training time.
    #[prost(bool, optional, tag = "25")]
    pub split_digits: Option<bool>,
    /// Unknown chars become `<0xNN>` byte pieces.
    #[prost(bool, optional, tag = "35")]
    pub byte_fallback: Option<bool>,
    /// Id of the unknown piece (default 0).
    #[prost(int32, optional, tag = "40")]
    pub unk_id: Option<i32>,
    /// Id of the beginning-of-sentence piece (default 1, -1 for none).
    #[prost(int32, optional, tag = "41")]
    pub bos_id: Option<i32>,
    /// Id of the end-of-sentence piece (default 2, -1 for none).
    #[prost(int32, optional, tag = "42")]
    pub eos_id: Option<i32>,
    /// Id of the padding piece (default -1: none).
    #[prost(int32, optional, tag = "43")]
    pub pad_id: Option<i32>,
    /// Input format (`text`).
    #[prost(string, optional, tag = "7")]
    pub input_format: Option<String>,
    /// Sentences kept for the self test (0: none).
    #[prost(int32, optional, tag = "6")]
    pub self_test_sample_size: Option<i32>,
    /// Sampled sentences are chosen at random rather than the first ones.
    #[prost(bool, optional, tag = "19")]
    pub shuffle_input_sentence: Option<bool>,
    /// Unigram: number of seed pieces.
    #[prost(int32, optional, tag = "14")]
    pub seed_sentencepiece_size: Option<i32>,
    /// Threads used for training.
    #[prost(int32, optional, tag = "16")]
    pub num_threads: Option<i32>,
    /// Longer input sentences, in bytes, are skipped.
    #[prost(int32, optional, tag = "18")]
    pub max_sentence_length: Option<i32>,
    /// Pieces made only of whitespace are allowed.
    #[prost(bool, optional, tag = "26")]
    pub allow_whitespace_only_pieces: Option<bool>,
    /// The `.vocab` file has scores.
    #[prost(bool, optional, tag = "32")]
    pub vocabulary_output_piece_score: Option<bool>,
    /// The vocabulary must have exactly `vocab_size` pieces.
    #[prost(bool, optional, tag = "33")]
    pub hard_vocab_limit: Option<bool>,
    /// Word/char models: keep every piece.
    #[prost(bool, optional, tag = "34")]
    pub use_all_vocab: Option<bool>,
    /// Sets a larger suffix array type (no effect in tokenkit).
    #[prost(bool, optional, tag = "49")]
    pub train_extremely_large_corpus: Option<bool>,
    /// Text an unknown piece decodes to (default `" ⁇ "`).
    #[prost(string, optional, tag = "44")]
    pub unk_surface: Option<String>,
    /// Surface of the unknown piece (default `<unk>`).
    #[prost(string, optional, tag = "45")]
    pub unk_piece: Option<String>,
    /// Surface of the bos piece (default `<s>`).
    #[prost(string, optional, tag = "46")]
    pub bos_piece: Option<String>,
    /// Surface of the eos piece (default `</s>`).
    #[prost(string, optional, tag = "47")]
    pub eos_piece: Option<String>,
    /// Surface of the pad piece (default `<pad>`).
    #[prost(string, optional, tag = "48")]
    pub pad_piece: Option<String>,
}

/// Normalization options.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NormalizerSpec {
    /// Name of the rule set the charsmap was compiled from (`nmt_nfkc`, `identity`, ...).
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    /// The compiled rules (see [`crate::normalizers::Precompiled`]); empty for identity.
    #[prost(bytes = "vec", optional, tag = "2")]
    pub precompiled_charsmap: Option<Vec<u8>>,
    /// Prepend a space (`▁`) to the text (default true).
    #[prost(bool, optional, tag = "3", default = "true")]
    pub add_dummy_prefix: Option<bool>,
    /// Drop leading and trailing spaces and squeeze runs of spaces (default true).
    #[prost(bool, optional, tag = "4", default = "true")]
    pub remove_extra_whitespaces: Option<bool>,
    /// Replace spaces with `▁` (default true).
    #[prost(bool, optional, tag = "5", default = "true")]
    pub escape_whitespaces: Option<bool>,
    /// The rule file the charsmap was compiled from, when given by path (kept so a spec reads
    /// and writes back the same).
    #[prost(string, optional, tag = "6")]
    pub normalization_rule_tsv: Option<String>,
}

impl ModelProto {
    /// The model type of the trainer spec; Unigram when absent or unknown, as sentencepiece reads it.
    pub fn model_type(&self) -> ModelType {
        self.trainer_spec.as_ref().map_or(ModelType::Unigram, trainer_model_type)
    }
}

/// The model type of a trainer spec; Unigram when absent or unknown, as sentencepiece reads it.
pub fn trainer_model_type(t: &TrainerSpec) -> ModelType {
    t.model_type.and_then(|t| ModelType::try_from(t).ok()).unwrap_or(ModelType::Unigram)
}

impl Piece {
    /// The piece type; an unknown enum value reads as normal, as protobuf does.
    pub fn kind(&self) -> PieceType {
        self.r#type.and_then(|t| PieceType::try_from(t).ok()).unwrap_or(PieceType::Normal)
    }
}

/// An encoding or decoding with its surfaces: sentencepiece's `SentencePieceText`
/// (sentencepiece.proto), what its `*AsProto` methods return. Fields left unset by
/// sentencepiece stay `None` here, so the serialized bytes are the same.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SentencePieceText {
    /// The input (for an encoding) or the decoded text.
    #[prost(string, optional, tag = "1")]
    pub text: Option<String>,
    /// The pieces in order.
    #[prost(message, repeated, tag = "2")]
    pub pieces: Vec<TextPiece>,
    /// The segmentation's score (set by n-best encoding only).
    #[prost(float, optional, tag = "3")]
    pub score: Option<f32>,
}

/// One piece of a [`SentencePieceText`] (sentencepiece's `SentencePieceText.SentencePiece`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TextPiece {
    /// The piece (for an unknown piece, the normalized text it covers).
    #[prost(string, optional, tag = "1")]
    pub piece: Option<String>,
    /// Its id.
    #[prost(uint32, optional, tag = "2")]
    pub id: Option<u32>,
    /// The text it stands for: `text[begin..end]` (unset for control pieces and all but the
    /// last byte piece of a char).
    #[prost(string, optional, tag = "3")]
    pub surface: Option<String>,
    /// Byte offset in `text` where its surface starts.
    #[prost(uint32, optional, tag = "4")]
    pub begin: Option<u32>,
    /// Byte offset in `text` where its surface ends.
    #[prost(uint32, optional, tag = "5")]
    pub end: Option<u32>,
}

/// The n best encodings of a text, best first (sentencepiece's `NBestSentencePieceText`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct NBestSentencePieceText {
    /// One [`SentencePieceText`] per segmentation, each with its score.
    #[prost(message, repeated, tag = "1")]
    pub nbests: Vec<SentencePieceText>,
}
