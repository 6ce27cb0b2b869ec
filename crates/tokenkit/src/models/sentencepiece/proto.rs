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
        let mut scan = Scan::new(raw)?;
        if let (Some(range), Some(spec)) = (scan.charsmap.take(), scan.specs.normalizer_spec.as_mut()) {
            spec.precompiled_charsmap = Some(raw[range].to_vec());
        }
        Ok(scan.specs)
    }
}

/// What one walk over the field headers of a `.model` file finds ([`Scan::new`]): the specs,
/// decoded but for the normalizer's charsmap, which is only located (most of a spec's bytes:
/// the normalizer reads them in the file's bytes), and the sizes of the pieces, so that what is
/// built from them is allocated once.
#[derive(Debug, Default)]
pub struct Scan {
    /// The file without its pieces, as [`ModelProto::decode_specs`] decodes it, except that the
    /// normalizer spec has no charsmap when [`Self::charsmap`] is set.
    pub specs: ModelProto,
    /// Where the normalizer spec's charsmap is in the file (the last one: protobuf merges a
    /// repeated spec, the last value of a field wins).
    pub charsmap: Option<std::ops::Range<usize>>,
    /// How many pieces the file has (0 when prost decoded it).
    pub pieces: usize,
    /// The bytes of their texts (at least: a piece whose text does not come first in a short
    /// message counts as its whole message).
    pub text_bytes: usize,
}

impl Scan {
    /// Scans the `.model` file `raw` (see [`Scan`]); a file the walk does not take is decoded
    /// whole by prost (the charsmap then in the spec), which gives its error.
    pub fn new(raw: &[u8]) -> Result<Self, prost::DecodeError> {
        use prost::Message as _;
        let Some(mut scan) = Self::walk(raw) else {
            let specs = ModelProto::decode(raw).map(|p| ModelProto { pieces: Vec::new(), ..p })?;
            return Ok(Self { specs, ..Self::default() });
        };
        let specs = match scan.charsmap {
            Some(_) => std::mem::take(&mut scan.specs_bytes),
            // A normalizer spec the walk does not read (or none): every spec as it stands.
            None => fields(raw).flatten().filter(|f| f.key != PIECE_KEY).flat_map(|f| f.bytes.iter().copied()).collect(),
        };
        Ok(Self {
            specs: ModelProto::decode(specs.as_slice())?,
            charsmap: scan.charsmap.flatten(),
            pieces: scan.pieces,
            text_bytes: scan.text_bytes,
        })
    }

    /// The walk of [`Self::new`]: `None` for a file it does not take.
    fn walk(raw: &[u8]) -> Option<Walk> {
        let mut w = Walk { charsmap: Some(None), ..Walk::default() };
        let text_len = |body: &[u8]| match *body {
            [0x0A, len @ 0..=0x7F, ..] => usize::from(len),
            _ => body.len(),
        };
        // The pieces before any other field (all of them in every file seen), shorter than 128
        // bytes (nearly all): counted in a loop of their own.
        let mut rest = raw;
        while let [0x0A, len @ 0..=0x7F, ref tail @ ..] = *rest {
            let Some(body) = tail.get(..usize::from(len)) else { break };
            w.pieces += 1;
            w.text_bytes += text_len(body);
            rest = &tail[body.len()..];
        }
        let base = raw.len() - rest.len();
        for f in fields(rest) {
            let f = Field { at: base + f?.at, ..f? };
            match f.key {
                PIECE_KEY => {
                    w.pieces += 1;
                    w.text_bytes += text_len(f.body);
                }
                k if k >> 3 == 1 => return None,
                // The normalizer spec without its charsmap, which is located; when its fields do
                // not walk, the specs are taken as they stand (`charsmap` is `None`).
                NORMALIZER_SPEC_KEY if w.charsmap.is_some() => match spec_without_charsmap(f.body) {
                    Some((kept, found)) => {
                        w.specs_bytes.push(NORMALIZER_SPEC_KEY as u8);
                        prost::encoding::encode_varint(kept.len() as u64, &mut w.specs_bytes);
                        w.specs_bytes.extend_from_slice(&kept);
                        if let Some(range) = found {
                            w.charsmap = Some(Some(f.at + range.start..f.at + range.end));
                        }
                    }
                    None => w.charsmap = None,
                },
                _ => w.specs_bytes.extend_from_slice(f.bytes),
            }
        }
        Some(w)
    }
}

/// What [`Scan::walk`] finds.
#[derive(Default)]
struct Walk {
    /// The specs' fields, the normalizer spec's without its charsmap.
    specs_bytes: Vec<u8>,
    /// Where the charsmap is (`Some(None)`: nowhere), `None` when a normalizer spec does not walk.
    charsmap: Option<Option<std::ops::Range<usize>>>,
    pieces: usize,
    text_bytes: usize,
}

/// The fields of the `NormalizerSpec` message `spec` but its charsmap, and where the charsmap
/// is in `spec` (the last one); `None` when the fields do not walk.
fn spec_without_charsmap(spec: &[u8]) -> Option<(Vec<u8>, Option<std::ops::Range<usize>>)> {
    let (mut kept, mut found) = (Vec::new(), None);
    for g in fields(spec) {
        let g = g?;
        match g.key {
            CHARSMAP_KEY => found = Some(g.at..g.at + g.body.len()),
            _ => kept.extend_from_slice(g.bytes),
        }
    }
    Some((kept, found))
}

/// The key of a piece (`ModelProto` field 1, length-delimited).
pub(crate) const PIECE_KEY: u64 = 0x0A;
/// The key of the normalizer spec (`ModelProto` field 3, length-delimited).
const NORMALIZER_SPEC_KEY: u64 = 0x1A;
/// The key of the charsmap (`NormalizerSpec` field 2, length-delimited).
const CHARSMAP_KEY: u64 = 0x12;

/// A piece of a `.model` file as [`Piece`] decodes it, its text borrowed from the file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PieceRef<'a> {
    /// The piece text (empty when absent).
    pub piece: &'a str,
    /// Its score.
    pub score: Option<f32>,
    /// Its [`PieceType`] as stored.
    pub r#type: Option<i32>,
}

impl<'a> From<&'a Piece> for PieceRef<'a> {
    fn from(p: &'a Piece) -> Self {
        Self { piece: p.piece.as_deref().unwrap_or_default(), score: p.score, r#type: p.r#type }
    }
}

impl PieceRef<'_> {
    /// The piece type; an unknown enum value reads as normal, as protobuf does.
    pub fn kind(&self) -> PieceType {
        kind_of(self.r#type)
    }
}

/// The pieces of the `.model` file `raw`, in order, as prost decodes them but without a string
/// per piece: `None` for a file the walk does not take as it stands (a wire type or field that
/// prost would reject or that the walk does not read), which prost then decodes (and rejects).
/// The specs are not read (see [`ModelProto::decode_specs`]).
pub fn piece_refs(raw: &[u8]) -> Option<Vec<PieceRef<'_>>> {
    let mut pieces = Vec::new();
    for_each_piece(raw, |_, body| {
        pieces.push(piece_ref(body)?);
        Some(())
    })?;
    Some(pieces)
}

/// Calls `f(at, body)` for each piece of the `.model` file `raw`, in order, `body` its message
/// and `at` where that starts in `raw`; `None` as soon as `f` says so, or for a file the walk
/// does not take ([`piece_refs`]).
#[inline]
pub(crate) fn for_each_piece<'a>(raw: &'a [u8], mut f: impl FnMut(usize, &'a [u8]) -> Option<()>) -> Option<()> {
    for field in fields(raw) {
        let field = field?;
        match field.key {
            PIECE_KEY => f(field.at, field.body)?,
            k if k >> 3 == 1 => return None,
            _ => {}
        }
    }
    Some(())
}

/// One `Piece` message: its fields in order, a later one replacing an earlier one, as prost
/// merges them; unknown fields skipped.
fn piece_ref(m: &[u8]) -> Option<PieceRef<'_>> {
    let p = piece_fields(m)?;
    Some(PieceRef { piece: utf8(p.piece)?, score: p.score, r#type: p.r#type })
}

/// A piece of a `.model` file as [`Piece`] decodes it but that its text is bytes, not checked
/// to be UTF-8 (see [`piece_fields`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PieceBytes<'a> {
    /// The piece text, within the message it was read from (empty at its start when absent).
    pub piece: &'a [u8],
    /// Its score.
    pub score: Option<f32>,
    /// Its [`PieceType`] as stored.
    pub r#type: Option<i32>,
}

impl<'a> From<PieceRef<'a>> for PieceBytes<'a> {
    fn from(p: PieceRef<'a>) -> Self {
        Self { piece: p.piece.as_bytes(), score: p.score, r#type: p.r#type }
    }
}

impl PieceBytes<'_> {
    /// The piece type; an unknown enum value reads as normal, as protobuf does.
    pub fn kind(&self) -> PieceType {
        kind_of(self.r#type)
    }
}

/// One `Piece` message as [`piece_ref`] reads it, its text left as bytes.
#[inline]
pub(crate) fn piece_fields(mut m: &[u8]) -> Option<PieceBytes<'_>> {
    use prost::encoding::decode_varint;
    // Nearly every piece is its text (shorter than 128 bytes), its score and maybe a one-byte
    // type, once each and in this order: read without the general walk.
    if let [0x0A, len @ 0..=0x7F, rest @ ..] = m {
        if let Some((piece, tail)) = rest.split_at_checked(usize::from(*len)) {
            let r#type = match *tail {
                [0x15, _, _, _, _] => Some(None),
                [0x15, _, _, _, _, 0x18, t @ 0..=0x7F] => Some(Some(i32::from(t))),
                _ => None,
            };
            if let Some(r#type) = r#type {
                let score = f32::from_le_bytes([tail[1], tail[2], tail[3], tail[4]]);
                return Some(PieceBytes { piece, score: Some(score), r#type });
            }
        }
    }
    // An absent text is the empty slice at the message's start, so it is in the message too.
    let mut p = PieceBytes { piece: &m[..0], score: None, r#type: None };
    while !m.is_empty() {
        // Nearly every key is one byte: fields 1 to 15.
        let key = match m[0] {
            k @ 0..=0x7F => {
                m = &m[1..];
                u64::from(k)
            }
            _ => decode_varint(&mut m).ok().filter(|&k| k <= u64::from(u32::MAX))?,
        };
        match (key >> 3, key & 7) {
            (0, _) => return None,
            (1, 2) => {
                let len = usize::try_from(decode_varint(&mut m).ok()?).ok()?;
                p.piece = m.get(..len)?;
                m = &m[len..];
            }
            (2, 5) => {
                p.score = Some(f32::from_le_bytes(m.get(..4)?.try_into().ok()?));
                m = &m[4..];
            }
            // An `int32` enumeration: the varint's low 32 bits.
            (3, 0) => p.r#type = Some(decode_varint(&mut m).ok()? as i32),
            (1..=3, _) => return None,
            (_, wire) => {
                let len = skip_len(&mut m, wire)?;
                m = m.get(len..)?;
            }
        }
    }
    Some(p)
}

/// `bytes` as text when it is valid UTF-8: most pieces are a few ASCII bytes after an optional
/// `▁`, which a plain loop checks in a fraction of what `from_utf8` costs on a few bytes.
#[inline]
fn utf8(bytes: &[u8]) -> Option<&str> {
    let tail = bytes.strip_prefix("\u{2581}".as_bytes()).unwrap_or(bytes);
    if tail.iter().all(|&b| b < 0x80) {
        // SAFETY: ASCII bytes are valid UTF-8.
        return Some(unsafe { std::str::from_utf8_unchecked(bytes) });
    }
    std::str::from_utf8(bytes).ok()
}

/// The length of the body of a field of wire type `wire` whose key was read from `rest`
/// (reading a varint's body, or a length prefix, from `rest`); `None` for groups and bad wire
/// types.
fn skip_len(rest: &mut &[u8], wire: u64) -> Option<usize> {
    use prost::encoding::decode_varint;
    match wire {
        0 => decode_varint(rest).map(|_| 0).ok(),
        1 => Some(8),
        2 => usize::try_from(decode_varint(rest).ok()?).ok(),
        5 => Some(4),
        _ => None,
    }
}

/// One field of a protobuf message, as [`fields`] finds it.
#[derive(Clone, Copy)]
pub(crate) struct Field<'a> {
    /// Its key (field number and wire type).
    pub key: u64,
    /// The whole field: key, length (when length-delimited) and body.
    pub bytes: &'a [u8],
    /// Its body: the bytes after a length, a fixed-size value, or a varint.
    pub body: &'a [u8],
    /// Where the body starts in the message.
    pub at: usize,
}

/// The fields of the message `msg`, in order; a `None` (the last item) for anything but
/// well-formed varint, fixed and length-delimited fields.
#[inline]
pub(crate) fn fields(msg: &[u8]) -> Fields<'_> {
    Fields { msg, rest: msg }
}

/// The iterator of [`fields`].
pub(crate) struct Fields<'a> {
    msg: &'a [u8],
    rest: &'a [u8],
}

impl<'a> Iterator for Fields<'a> {
    type Item = Option<Field<'a>>;

    #[inline]
    fn next(&mut self) -> Option<Option<Field<'a>>> {
        if self.rest.is_empty() {
            return None;
        }
        let start = self.msg.len() - self.rest.len();
        // A field with key 0x0A (a piece) shorter than 128 bytes, as nearly all pieces are: its
        // key and length are a byte each, read without the general walk below.
        if let [0x0A, len @ 0..=0x7F, ..] = *self.rest {
            let end = 2 + usize::from(len);
            if let Some(bytes) = self.rest.get(..end) {
                self.rest = &self.rest[end..];
                return Some(Some(Field { key: 0x0A, bytes, body: &bytes[2..], at: start + 2 }));
            }
        }
        let field = self.field(start);
        if field.is_none() {
            self.rest = &[];
        }
        Some(field)
    }
}

impl<'a> Fields<'a> {
    /// The field at `start`, read in general.
    fn field(&mut self, start: usize) -> Option<Field<'a>> {
        use prost::encoding::decode_varint;
        let field = self.rest;
        let mut rest = field;
        let key = decode_varint(&mut rest).ok()?;
        let key_end = field.len() - rest.len();
        let len = skip_len(&mut rest, key & 7)?;
        let header = field.len() - rest.len();
        let (body_end, next) = (header.checked_add(len)?, rest.get(len..)?);
        // A varint's body is its bytes after the key.
        let body_start = if key & 7 == 0 { key_end } else { header };
        self.rest = next;
        Some(Field { key, bytes: &field[..body_end], body: &field[body_start..body_end], at: start + body_start })
    }
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
        kind_of(self.r#type)
    }
}

/// A stored piece type; an unknown enum value reads as normal, as protobuf does.
fn kind_of(t: Option<i32>) -> PieceType {
    t.and_then(|t| PieceType::try_from(t).ok()).unwrap_or(PieceType::Normal)
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
