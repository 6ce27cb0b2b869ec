//! [`SentencePiece`]: a `.model` file as a tokenkit model that normalizes and encodes exactly
//! as the `sentencepiece` library does.
//!
//! sentencepiece normalizes the whole input (with its own alignment), then runs Unigram or
//! BPE over the whole normalized string, then merges runs of unknown pieces or expands them
//! into bytes. Those semantics do not decompose into HF's normalizer / pre-tokenizer / model
//! stages (the charsmap is applied leftmost-longest, not per grapheme; whitespace removal
//! looks at normalized output), so this one model does all three, on the raw input, and
//! reports offsets as sentencepiece does (bytes of the original input).

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use base64::Engine as _;
use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use super::bpe::BpeTables;
use super::proto::{
    for_each_piece, piece_fields, piece_refs, trainer_model_type, ModelProto, ModelType, NBestSentencePieceText, NormalizerSpec,
    PieceBytes, PieceRef, PieceType, Scan, SentencePieceText, TextPiece, TrainerSpec,
};
use crate::base::vocab::{DistinctTokens, PushError, TokenSlots, Vocab};
use crate::base::{Model, Token};
use crate::models::cache::{Cache, DEFAULT_CACHE_CAPACITY};
use crate::models::unigram::lattice::pick_weighted;
use crate::models::unigram::spm::{user_defined_score, SpViterbi};
use crate::normalizers::sentencepiece::{Denormalizer, Normalized, SpNormalizer};
use crate::normalizers::Precompiled;
use crate::utils::table_cache::{self, Table};
use crate::utils::trie::Trie;
use crate::{Error, Result};

/// Penalty of an unknown char below the lowest normal piece score (`kUnkPenalty`).
const UNK_PENALTY: f32 = 10.0;

/// Which algorithm segments the normalized text.
#[derive(Debug)]
enum Algorithm {
    Unigram(Box<SpViterbi>),
    Bpe(Box<LazyBpe>),
    /// One piece per char (a user-defined symbol is one char).
    Char,
    /// One piece per word ([`split_into_words`]).
    Word,
}

/// BPE's tables, read from the table cache with the others, or else built once the model has
/// encoded [`LAZY_BPE_BYTES`] of text ([`SentencePiece::bpe_tables`]; they cost more to build
/// than sentencepiece's whole load, and short texts encode as fast on piece lookups alone).
#[derive(Debug, Default)]
struct LazyBpe {
    tables: OnceLock<BpeTables>,
    /// Bytes encoded without the tables.
    encoded: AtomicUsize,
}

/// How many bytes of text a BPE model encodes on piece lookups before it builds its tables
/// (about what the build costs, in lookups).
pub(crate) const LAZY_BPE_BYTES: usize = 256 << 10;

/// How many bytes of text a Unigram model encodes on piece lookups before it builds its trie,
/// per piece: about what the build costs, in lookups (callgrind, ALBERT and the Japanese 8k
/// model: the build costs 2,000-3,000 instructions a piece, a lookup of each prefix at each
/// char 650-700 a byte more than a walk of the trie).
pub(crate) const LAZY_UNIGRAM_BYTES_PER_PIECE: usize = 4;

/// A SentencePiece model (`.model` file) that encodes exactly as `sentencepiece` does.
#[derive(Clone)]
pub struct SentencePiece {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for SentencePiece {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SentencePiece")
            .field("vocab_size", &self.inner.vocab.len())
            .field("algorithm", &self.model_type())
            .field("unk_id", &self.inner.unk_id)
            .field("byte_fallback", &self.inner.byte_fallback)
            .finish()
    }
}

struct Inner {
    /// The file as read, kept for serialization and conversion (a view of the cache entry,
    /// which holds a copy, when the tables came from there).
    raw: Table<u8>,
    /// The file decoded, on demand ([`SentencePiece::proto`]: summaries, conversion).
    proto: OnceLock<ModelProto>,
    /// The trainer spec (small: the special pieces, the model type).
    trainer: TrainerSpec,
    /// The normalizer spec without its charsmap (which the normalizer holds).
    norm_spec: NormalizerSpec,
    /// The pieces, piece `i` with id `i`, and the piece → id table (from the table cache: views
    /// of the mapped entry).
    vocab: Vocab,
    scores: Table<f32>,
    /// Per piece its [`PieceType`] as the proto's number.
    kinds: Table<u8>,
    /// The pieces again, for the copies [`Model::tokenize`] makes (built on its first call).
    piece_slots: OnceLock<TokenSlots>,
    user_defined: Option<Trie>,
    normalizer: SpNormalizer,
    /// The rules applied to decoded text (`denormalizer_spec`), when there are any.
    denormalizer: Option<Denormalizer>,
    algorithm: Algorithm,
    unk_id: u32,
    byte_fallback: bool,
    byte_ids: Box<[u32; 256]>,
    /// BPE results per word, when words can be encoded one by one (see [`super::bpe::encode`]).
    bpe_words: Option<Cache<Box<[Segment]>>>,
    /// Words segment independently ([`words_independent`]; kept for the table cache entry).
    words_independent: bool,
    /// What the load did with the table cache (`tokenkit inspect` reports it).
    cache_status: table_cache::Status,
}

impl PartialEq for SentencePiece {
    fn eq(&self, o: &Self) -> bool {
        self.inner.raw == o.inner.raw
    }
}

/// A segment of normalized text: `(start, end, id)`, byte offsets.
pub(crate) type Segment = (u32, u32, u32);

/// Inputs longer than this (bytes) do not leave their normalization and segment buffers in
/// the thread's [`BUFFERS`].
const KEPT_BUFFER_BYTES: usize = 1 << 20;

thread_local! {
    static BUFFERS: RefCell<(Normalized, Vec<Segment>)> = RefCell::new(Default::default());
}

/// What a `.model` load builds from the pieces, kept whole in the table cache under the file's
/// bytes: the vocabulary with its lookup table, the scores and types, and the segmentation
/// tables. A load that finds it decodes no piece (only the specs) and builds nothing per piece.
///
/// The entry is named by a 128-bit XXH3 of the file (a SHA-256 of a 500 KB model costs a
/// third of a warm load) and holds the file's bytes, which a load compares with the file it
/// read: an entry is only ever used for the exact bytes it was built from, whatever the hash
/// (two files with the same hash would take turns rebuilding the entry, never share it).
struct Tables {
    /// The file's bytes, as stored in the entry (`None` when built).
    raw: Option<Table<u8>>,
    vocab: Vocab,
    scores: Table<f32>,
    kinds: Table<u8>,
    unk_id: u32,
    byte_ids: Box<[u32; 256]>,
    /// Words segment independently ([`words_independent`]).
    words_independent: bool,
    algorithm: AlgorithmTables,
}

/// The segmentation tables of [`Tables`].
enum AlgorithmTables {
    /// The trie of the normal and user-defined pieces, scored as the Viterbi adds them; `None`
    /// until a model built it (the Viterbi looks pieces up until then, [`SpViterbi::lazy`]).
    Unigram(Option<Trie>),
    /// BPE's tables, `None` until a model built them ([`LazyBpe`]).
    Bpe(Option<BpeTables>),
    None,
}

/// What [`Tables::write_table`] writes, borrowed (from [`Tables`], or from a loaded model).
struct TablesRef<'a> {
    vocab: &'a Vocab,
    scores: &'a [f32],
    kinds: &'a [u8],
    unk_id: u32,
    byte_ids: &'a [u32; 256],
    words_independent: bool,
    algorithm: AlgorithmRef<'a>,
}

/// [`AlgorithmTables`], borrowed.
enum AlgorithmRef<'a> {
    Unigram(Option<&'a Trie>),
    Bpe(Option<&'a BpeTables>),
    None,
}

/// The table cache key of the `.model` file `raw` (see [`Tables`]).
fn entry_key(raw: &[u8]) -> table_cache::Key {
    table_cache::Key::new("sentencepiece::Model", &[&twox_hash::XxHash3_128::oneshot(raw).to_le_bytes()])
}

/// Whether a piece of this type is in the Unigram trie (the Viterbi may segment into it).
fn in_unigram_trie(kind: u8) -> bool {
    kind == PieceType::Normal as u8 || kind == PieceType::UserDefined as u8
}

/// Whether a piece of this type is one text can turn into (BPE may merge into it).
fn is_mergeable(kind: u8) -> bool {
    [PieceType::Normal, PieceType::UserDefined, PieceType::Unused].iter().any(|&k| k as u8 == kind)
}

/// The pieces' tables as they are read, one piece at a time ([`Self::push`], checking each as
/// sentencepiece does), before [`Tables::build`] checks them as a whole.
struct PieceTables {
    byte_fallback: bool,
    unigram: bool,
    /// The pieces' texts (until [`Self::duplicate`] is found).
    vocab: DistinctTokens,
    scores: Vec<f32>,
    kinds: Vec<u8>,
    unk_id: Option<u32>,
    byte_ids: Box<[u32; 256]>,
    n_bytes: usize,
    /// The earlier piece whose text the first piece defined twice has (then the pieces after it
    /// are checked, not stored).
    duplicate: Option<u32>,
    /// Some mergeable piece has a `▁` after another char ([`words_independent`]).
    spaced: bool,
}

/// The pieces of a `.model` file as [`read_pieces`] gives them.
struct ReadPieces {
    tables: PieceTables,
    /// The vocabulary (`None` when a piece was refused).
    vocab: Option<Vocab>,
    /// The first piece's error, when one was refused.
    refused: Option<Error>,
}

impl PieceTables {
    /// Room for `pieces` pieces of `text_bytes` bytes of text, in a model trained by `trainer`.
    fn new(pieces: usize, text_bytes: usize, trainer: &TrainerSpec) -> Self {
        Self {
            byte_fallback: trainer.byte_fallback.unwrap_or(false),
            unigram: trainer_model_type(trainer) == ModelType::Unigram,
            vocab: DistinctTokens::with_capacity(pieces, text_bytes),
            scores: Vec::with_capacity(pieces),
            kinds: Vec::with_capacity(pieces),
            unk_id: None,
            byte_ids: Box::new([u32::MAX; 256]),
            n_bytes: 0,
            duplicate: None,
            spaced: false,
        }
    }

    /// Adds the next piece, or refuses it as sentencepiece does (the error names it). `bytes`
    /// starts with the piece's text and goes on as far as the file does (see
    /// [`DistinctTokens::push_in`]).
    #[inline]
    fn push(&mut self, p: PieceBytes<'_>, bytes: &[u8], err: &impl Fn(String) -> Error) -> Result<()> {
        let piece = p.piece;
        let kind = p.kind();
        let score = p.score.unwrap_or(0.0);
        // Most pieces: normal, of a few bytes, none a NUL, a finite score.
        let window = bytes.first_chunk::<16>().filter(|_| piece.len() <= 16);
        let plain = !piece.is_empty()
            && !window.map_or_else(|| piece.contains(&0), |w| has_nul(w, piece.len()))
            && (score.is_finite() || !self.unigram)
            && !matches!(kind, PieceType::Unknown | PieceType::Byte);
        if !plain {
            self.special(p, err)?;
        }
        self.scores.push(score);
        self.kinds.push(kind as u8);
        if !self.spaced && is_mergeable(kind as u8) {
            self.spaced = window.is_none_or(|w| !ascii_after_space(w, piece.len())) && space_inside(piece);
        }
        if self.duplicate.is_none() {
            match self.vocab.push_in(bytes, piece.len()) {
                Ok(()) => {}
                Err(PushError::Duplicate(earlier)) => self.duplicate = Some(earlier),
                Err(PushError::Full) => return Err(err("the pieces pass 4 GiB".into())),
            }
        }
        Ok(())
    }

    /// The vocabulary of the pieces pushed ([`DistinctTokens::finish`]), taken out.
    fn take_vocab(&mut self) -> Option<Vocab> {
        std::mem::replace(&mut self.vocab, DistinctTokens::with_capacity(0, 0)).finish()
    }

    /// The checks of [`Self::push`] for a piece that is not plain: refused, or the unknown
    /// piece, or a byte piece.
    #[inline(never)]
    fn special(&mut self, p: PieceBytes<'_>, err: &impl Fn(String) -> Error) -> Result<()> {
        let id = self.kinds.len();
        let piece = p.piece;
        // The text of a piece of a file whose pieces are UTF-8 ([`read_pieces`] reports an error
        // only then).
        let text = || String::from_utf8_lossy(piece);
        if piece.is_empty() {
            return Err(err(format!("piece {id} is empty")));
        }
        // sentencepiece refuses a NUL in any model, a non-finite score in a Unigram one (its
        // BPE ranks by position and loads such scores).
        if piece.contains(&0) {
            return Err(err(format!("piece {id} ({:?}) holds a NUL character", text())));
        }
        if let Some(score) = p.score.filter(|s| !s.is_finite() && self.unigram) {
            return Err(err(format!("piece {id} ({:?}): score {score} is not a finite number", text())));
        }
        match p.kind() {
            PieceType::Unknown => {
                if self.unk_id.replace(id as u32).is_some() {
                    return Err(err("the model has more than one unknown piece".into()));
                }
            }
            PieceType::Byte => {
                if !self.byte_fallback {
                    return Err(err(format!("byte piece {:?} in a model without byte_fallback", text())));
                }
                let b = std::str::from_utf8(piece)
                    .ok()
                    .and_then(parse_byte_piece)
                    .ok_or_else(|| err(format!("byte piece {:?} is not <0xNN>", text())))?;
                self.byte_ids[b as usize] = id as u32;
                self.n_bytes += 1;
            }
            PieceType::Normal | PieceType::UserDefined | PieceType::Unused | PieceType::Control => {}
        }
        Ok(())
    }
}

/// The first `len` bytes of `window` as two words, the bytes past `len` set to `pad`.
#[inline]
fn words(window: &[u8; 16], len: usize, pad: u64) -> [u64; 2] {
    let word = |i: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&window[i..i + 8]);
        u64::from_le_bytes(w)
    };
    // The bits of the first `n` bytes (`n` at most 8).
    let keep = |n: usize| if n >= 8 { u64::MAX } else { (1u64 << (8 * n)) - 1 };
    let (lo, hi) = (keep(len.min(8)), keep(len.saturating_sub(8)));
    [word(0) & lo | pad & !lo, word(8) & hi | pad & !hi]
}

/// Whether the first `len` bytes of `window` (`len` at most 16) hold a NUL, a word at a time.
#[inline]
fn has_nul(window: &[u8; 16], len: usize) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    words(window, len, u64::MAX).iter().any(|&x| x.wrapping_sub(ONES) & !x & (ONES << 7) != 0)
}

/// Whether the first `len` bytes of `window` (`len` at most 16) are ASCII after a first `▁`,
/// if any: then the piece has no `▁` but at its start ([`space_inside`] is false).
#[inline]
fn ascii_after_space(window: &[u8; 16], len: usize) -> bool {
    let [lo, hi] = words(window, len, 0);
    // `▁` is E2 96 81: its bytes dropped when it leads.
    let lo = if lo & 0xFF_FFFF == 0x81_96E2 { lo & !0xFF_FFFF } else { lo };
    (lo | hi) & 0x8080_8080_8080_8080 == 0
}

/// Reads the pieces of the `.model` file `raw` (scanned as `scan`, trained by `trainer`) in one
/// walk over the file, each piece's text copied once from the file's bytes. A file the walk does
/// not take, or whose pieces are not all text, is decoded by prost: an error when it is no
/// `ModelProto` (the only error; a piece sentencepiece refuses is [`ReadPieces::refused`]).
fn read_pieces(
    raw: &[u8],
    scan: &Scan,
    trainer: &TrainerSpec,
    err: &impl Fn(String) -> Error,
    not_a_model: impl Fn(prost::DecodeError) -> Error,
) -> Result<ReadPieces> {
    let mut tables = PieceTables::new(scan.pieces, scan.text_bytes, trainer);
    let mut refused = None;
    let walked = for_each_piece(raw, |at, body| {
        let p = piece_fields(body)?;
        // The piece's text and the file after it (`piece_fields` gives a text within `body`).
        let from = at + (p.piece.as_ptr() as usize - body.as_ptr() as usize);
        match tables.push(p, &raw[from..], err) {
            Ok(()) => Some(()),
            Err(e) => {
                refused = Some(e);
                None
            }
        }
    });
    match (walked, refused) {
        // A piece is refused once the file is known to be a model whose pieces are text (else
        // it is prost's error).
        (_, Some(e)) if piece_refs(raw).is_some() => return Ok(ReadPieces { tables, vocab: None, refused: Some(e) }),
        (Some(()), None) => {
            if let Some(vocab) = tables.take_vocab() {
                return Ok(ReadPieces { tables, vocab: Some(vocab), refused: None });
            }
        }
        _ => {}
    }
    let decoded = prost::Message::decode(raw).map_err(not_a_model)?;
    let decoded: ModelProto = decoded;
    let mut tables = PieceTables::new(decoded.pieces.len(), 0, trainer);
    for p in &decoded.pieces {
        let p = PieceBytes::from(PieceRef::from(p));
        if let Err(e) = tables.push(p, p.piece, err) {
            return Ok(ReadPieces { tables, vocab: None, refused: Some(e) });
        }
    }
    let vocab = tables.take_vocab();
    Ok(ReadPieces { tables, vocab, refused: None })
}

impl Tables {
    /// Builds the tables from the `.model` file `raw` (scanned as `scan`, its specs `trainer` and
    /// `norm_spec`, its charsmap `charsmap`), checking the pieces and the charsmap as
    /// sentencepiece does.
    fn build(
        raw: &[u8],
        scan: &Scan,
        trainer: &TrainerSpec,
        norm_spec: &NormalizerSpec,
        charsmap: Option<&Precompiled>,
        err: impl Fn(String) -> Error,
        not_a_model: impl Fn(prost::DecodeError) -> Error,
    ) -> Result<Self> {
        let ReadPieces { tables, vocab, refused } = read_pieces(raw, scan, trainer, &err, not_a_model)?;
        if tables.kinds.is_empty() && refused.is_none() {
            return Err(err("the model has no pieces".into()));
        }
        if let Some(c) = charsmap {
            c.check_trie_cached().map_err(|e| err(format!("normalizer_spec: {e}")))?;
        }
        if let Some(e) = refused {
            return Err(e);
        }
        let PieceTables { unigram, byte_fallback, scores, kinds, unk_id, byte_ids, n_bytes, duplicate, spaced, .. } = tables;
        let vocab = vocab.ok_or_else(|| err("the pieces are not UTF-8 text".into()))?;
        if let Some(earlier) = duplicate {
            return Err(err(format!("piece {:?} is defined twice", vocab.token(earlier).unwrap_or_default())));
        }
        let any_mergeable = kinds.iter().any(|&k| is_mergeable(k));
        if !any_mergeable && unigram {
            // sentencepiece's Unigram: "no pieces are loaded" (only control, unknown and byte
            // pieces); its BPE loads such a model.
            return Err(err("the model has no normal, user-defined or unused piece".into()));
        }
        let unk_id = unk_id.ok_or_else(|| err("the model has no unknown piece (type UNKNOWN), which sentencepiece requires".into()))?;
        if byte_fallback && n_bytes != 256 {
            return Err(err(format!("byte_fallback is set but the model has {n_bytes} byte pieces, not 256")));
        }
        let words_independent = words_independent(norm_spec, trainer) && !spaced;
        let algorithm = match trainer_model_type(trainer) {
            // Built when first needed ([`SpViterbi::lazy`], [`LazyBpe`]).
            ModelType::Unigram => AlgorithmTables::Unigram(None),
            ModelType::Bpe => AlgorithmTables::Bpe(None),
            ModelType::Char | ModelType::Word => AlgorithmTables::None,
        };
        Ok(Self { raw: None, vocab, scores: scores.into(), kinds: kinds.into(), unk_id, byte_ids, words_independent, algorithm })
    }

    /// The entry of the tables built from the file `raw`.
    fn write_table(&self, raw: &[u8]) -> Option<Vec<u8>> {
        let algorithm = match &self.algorithm {
            AlgorithmTables::Unigram(trie) => AlgorithmRef::Unigram(trie.as_ref()),
            AlgorithmTables::Bpe(t) => AlgorithmRef::Bpe(t.as_ref()),
            AlgorithmTables::None => AlgorithmRef::None,
        };
        TablesRef {
            vocab: &self.vocab,
            scores: &self.scores,
            kinds: &self.kinds,
            unk_id: self.unk_id,
            byte_ids: &self.byte_ids,
            words_independent: self.words_independent,
            algorithm,
        }
        .write_table(raw)
    }

    /// Reads what [`Self::write_table`] wrote, checking that it was built from the file `raw`
    /// and fits a model of type `model_type`: every id one of the pieces, every type a known one.
    fn read_table(mut r: table_cache::Reader<'_>, raw: &[u8], model_type: ModelType) -> Result<Self> {
        let bad = || Error::invalid("table cache: malformed SentencePiece model");
        let stored: Table<u8> = r.table()?;
        if *stored != *raw {
            return Err(Error::invalid("table cache: the entry was built from another file"));
        }
        // Only compared: the model keeps these bytes to serialize or convert it, which reads
        // them back from the file when it does.
        stored.release_pages();
        let vocab = Vocab::read_table(&mut r)?;
        let n = vocab.len();
        let (scores, kinds): (Table<f32>, Table<u8>) = (r.table()?, r.table()?);
        let unk_id = r.u32()?;
        let byte_ids: Box<[u32; 256]> = r.u32s()?.into_boxed_slice().try_into().map_err(|_| bad())?;
        let words_independent = r.bool()?;
        let algorithm = match (r.u32()?, model_type) {
            (1, ModelType::Unigram) => AlgorithmTables::Unigram(Some(Trie::read_table(&mut r, n)?)),
            (3, ModelType::Unigram) => AlgorithmTables::Unigram(None),
            (2, ModelType::Bpe) => AlgorithmTables::Bpe(if r.bool()? { Some(BpeTables::read_table(&mut r, n)?) } else { None }),
            (0, ModelType::Char | ModelType::Word) => AlgorithmTables::None,
            _ => return Err(bad()),
        };
        r.finish()?;
        let ok = scores.len() == n
            && kinds.len() == n
            && kinds.iter().all(|&k| PieceType::try_from(i32::from(k)).is_ok())
            && kinds.get(unk_id as usize) == Some(&(PieceType::Unknown as u8))
            && byte_ids.iter().all(|&b| b == u32::MAX || (b as usize) < n);
        if !ok {
            return Err(bad());
        }
        Ok(Self { raw: Some(stored), vocab, scores, kinds, unk_id, byte_ids, words_independent, algorithm })
    }
}

impl TablesRef<'_> {
    /// The entry of these tables, built from the file `raw` ([`Tables::read_table`] reads it).
    fn write_table(&self, raw: &[u8]) -> Option<Vec<u8>> {
        let mut w = table_cache::Writer::default();
        w.table(raw);
        if !self.vocab.write_table(&mut w) {
            return None;
        }
        w.table(self.scores);
        w.table(self.kinds);
        w.u32(self.unk_id);
        w.u32s(&self.byte_ids[..]);
        w.bool(self.words_independent);
        match &self.algorithm {
            AlgorithmRef::Unigram(Some(trie)) => {
                w.u32(1);
                trie.write_table(&mut w);
            }
            AlgorithmRef::Unigram(None) => w.u32(3),
            AlgorithmRef::Bpe(t) => {
                w.u32(2);
                w.bool(t.is_some());
                if let Some(t) = t {
                    t.write_table(&mut w);
                }
            }
            AlgorithmRef::None => w.u32(0),
        }
        Some(w.buf)
    }
}

/// The score of each piece as sentencepiece's Unigram adds it: its score, or for a
/// user-defined piece `GetUserDefinedScore` of its length in bytes (sentencepiece 0.2.3).
fn viterbi_scores(vocab: &Vocab, scores: &[f32], kinds: &[u8]) -> Vec<f32> {
    vocab
        .iter()
        .map(|(p, id)| if kinds[id as usize] == PieceType::UserDefined as u8 { user_defined_score(p.len()) } else { scores[id as usize] })
        .collect()
}

impl SentencePiece {
    /// Reads the model back from its tokenizer.json form (`model_proto`: base64 of the
    /// `.model` file, as [`Serialize`] writes it).
    pub(crate) fn from_fields(f: crate::models::serialization::ModelFields) -> Result<Self> {
        use base64::Engine as _;
        let b64 = f.model_proto.ok_or_else(|| crate::models::serialization::missing("SentencePiece", "model_proto"))?;
        let raw = base64::engine::general_purpose::STANDARD
            .decode(b64.as_bytes())
            .map_err(|e| Error::invalid(format!("SentencePiece model: `model_proto` is not valid base64: {e}")))?;
        Self::from_bytes(raw, "SentencePiece model_proto")
    }

    /// Reads a model from the bytes of a `.model` file; `name` names it in errors.
    ///
    /// The pieces' tables ([`Tables`]) come from the table cache when an earlier load of the
    /// same bytes stored them; then only the specs are decoded. Otherwise the whole file is
    /// decoded and checked, the tables built and stored.
    pub fn from_bytes(raw: Vec<u8>, name: &str) -> Result<Self> {
        let raw: Table<u8> = raw.into();
        let err = |msg: String| Error::invalid(format!("{name}: {msg}"));
        let not_a_model = |e: prost::DecodeError| err(format!("not a valid SentencePiece model (protobuf ModelProto): {e}"));
        let scan = Scan::new(&raw).map_err(not_a_model)?;
        let specs = &scan.specs;
        let trainer = specs.trainer_spec.clone().unwrap_or_default();
        let mut norm_spec = specs.normalizer_spec.clone().unwrap_or_default();
        let model_type = trainer_model_type(&trainer);
        // The charsmap goes to the normalizer, which checks it when the tables are built (a model
        // whose tables were stored passed that check). It stays in the file's bytes (those the
        // model keeps), unless prost decoded the specs.
        let decoded_charsmap = norm_spec.precompiled_charsmap.take().filter(|c| !c.is_empty());
        let charsmap_in = |file: &Table<u8>| {
            let blob = match (&scan.charsmap, &decoded_charsmap) {
                (Some(range), _) if !range.is_empty() => file.slice(range.clone()),
                (None, Some(bytes)) => bytes.clone().into(),
                _ => return Ok(None),
            };
            Precompiled::from_table(blob).map(Some).map_err(|e| err(format!("normalizer_spec: {e}")))
        };
        let mut charsmap = charsmap_in(&raw)?;
        let key = || entry_key(&raw);
        let build = || Tables::build(&raw, &scan, &trainer, &norm_spec, charsmap.as_ref(), err, not_a_model);
        let (tables, cache_status) =
            table_cache::cached_status_keyed(key, |p| Tables::read_table(p.reader(), &raw, model_type), build, |t| t.write_table(&raw))?;
        let Tables { raw: stored, vocab, scores, kinds, unk_id, byte_ids, words_independent, algorithm } = tables;
        // The model keeps the entry's copy of the file (the bytes read are freed): the charsmap
        // is read there.
        if let Some(stored) = &stored {
            if charsmap.is_some() && scan.charsmap.is_some() {
                charsmap = charsmap_in(stored)?;
            }
        }
        let byte_fallback = trainer.byte_fallback.unwrap_or(false);
        let user_defined: Vec<(&str, u32)> = (0..vocab.len() as u32)
            .filter(|&id| kinds[id as usize] == PieceType::UserDefined as u8)
            .filter_map(|id| Some((vocab.token(id)?, id)))
            .collect();
        let user_defined_strs: Vec<&str> = user_defined.iter().map(|&(p, _)| p).collect();
        let user_trie = (!user_defined.is_empty()).then(|| Trie::new(user_defined.iter().copied()));
        let normalizer = SpNormalizer::new(
            charsmap,
            &user_defined_strs,
            norm_spec.add_dummy_prefix(),
            norm_spec.remove_extra_whitespaces(),
            norm_spec.escape_whitespaces(),
            trainer.treat_whitespace_as_suffix.unwrap_or(false),
        );
        let denormalizer = match &scan.specs.denormalizer_spec {
            Some(spec) => Denormalizer::from_spec(
                spec.precompiled_charsmap.as_deref(),
                spec.add_dummy_prefix(),
                spec.remove_extra_whitespaces(),
                spec.escape_whitespaces(),
            )
            .map_err(|e| err(format!("denormalizer_spec: {e}")))?,
            None => None,
        };
        let algorithm = match algorithm {
            AlgorithmTables::Unigram(trie) => {
                // sentencepiece 0.2.3: the lowest normal score (`FLT_MAX` when there is none).
                let normal = PieceType::Normal as u8;
                let min = kinds.iter().zip(scores.iter()).filter(|(k, _)| **k == normal).fold(f32::MAX, |m, (_, &s)| m.min(s));
                let user = kinds.iter().map(|&k| k == PieceType::UserDefined as u8).collect();
                let (v_scores, unk_score) = (viterbi_scores(&vocab, &scores, &kinds), min - UNK_PENALTY);
                let viterbi = match trie {
                    Some(trie) => SpViterbi::new(trie, v_scores, unk_id, unk_score, user),
                    None => SpViterbi::lazy(vocab.clone(), kinds.clone(), in_unigram_trie, v_scores, unk_id, unk_score, user),
                };
                Algorithm::Unigram(Box::new(viterbi.with_word_cache(words_independent)))
            }
            AlgorithmTables::Bpe(t) => {
                Algorithm::Bpe(Box::new(LazyBpe { tables: t.map(OnceLock::from).unwrap_or_default(), ..Default::default() }))
            }
            AlgorithmTables::None if model_type == ModelType::Char => Algorithm::Char,
            AlgorithmTables::None => Algorithm::Word,
        };
        let bpe_words = (model_type == ModelType::Bpe && words_independent).then(|| Cache::new(DEFAULT_CACHE_CAPACITY));
        Ok(Self {
            inner: Arc::new(Inner {
                // The file's copy in the entry, when there is one: the bytes read are freed.
                raw: stored.unwrap_or(raw),
                // Not kept from a build: a string per piece, which the vocabulary holds flat.
                proto: OnceLock::new(),
                trainer,
                norm_spec,
                vocab,
                scores,
                kinds,
                piece_slots: OnceLock::new(),
                user_defined: user_trie,
                normalizer,
                denormalizer,
                algorithm,
                unk_id,
                byte_fallback,
                byte_ids,
                bpe_words,
                words_independent,
                cache_status,
            }),
        })
    }

    /// The parsed `ModelProto`, decoded from the file's bytes on the first call.
    pub fn proto(&self) -> &ModelProto {
        use prost::Message as _;
        // The bytes decoded when the model was read (or when its tables were stored).
        self.inner.proto.get_or_init(|| ModelProto::decode(&*self.inner.raw).unwrap_or_default())
    }
    /// The trainer spec.
    pub fn trainer_spec(&self) -> &TrainerSpec {
        &self.inner.trainer
    }
    /// The normalizer spec, without its charsmap (see [`Self::normalizer`] and [`Self::proto`]).
    pub fn normalizer_spec(&self) -> &NormalizerSpec {
        &self.inner.norm_spec
    }
    /// The model type (Unigram, BPE, word, char).
    pub fn model_type(&self) -> ModelType {
        trainer_model_type(&self.inner.trainer)
    }
    /// The score of piece `id`.
    pub fn score(&self, id: u32) -> Option<f32> {
        self.inner.scores.get(id as usize).copied()
    }
    /// What loading the model did with the table cache.
    pub fn cache_status(&self) -> &table_cache::Status {
        &self.inner.cache_status
    }
    /// The `.model` file's bytes, as read.
    pub fn to_bytes(&self) -> &[u8] {
        &self.inner.raw
    }
    /// The type of piece `id`.
    pub fn kind(&self, id: u32) -> Option<PieceType> {
        self.inner.kinds.get(id as usize).and_then(|&k| PieceType::try_from(i32::from(k)).ok())
    }
    /// The id of the unknown piece.
    pub fn unk_id(&self) -> u32 {
        self.inner.unk_id
    }
    /// Whether unknown chars become byte pieces.
    pub fn byte_fallback(&self) -> bool {
        self.inner.byte_fallback
    }
    /// The normalizer.
    pub fn normalizer(&self) -> &SpNormalizer {
        &self.inner.normalizer
    }
    /// The rules applied to decoded text, when the model has a denormalizer spec.
    pub fn denormalizer(&self) -> Option<&Denormalizer> {
        self.inner.denormalizer.as_ref()
    }
    /// The BPE lookup tables (empty for a Unigram model).
    /// BPE's tables for an encode of `bytes` of text: `None` while they are not built and the
    /// model has encoded less than [`LAZY_BPE_BYTES`] without them (then pieces are looked up
    /// by their text), else the tables, built now if need be.
    pub(crate) fn bpe_tables(&self, bytes: usize) -> Option<&BpeTables> {
        let Algorithm::Bpe(lazy) = &self.inner.algorithm else { return None };
        if let Some(t) = lazy.tables.get() {
            return Some(t);
        }
        if lazy.encoded.fetch_add(bytes, Ordering::Relaxed).saturating_add(bytes) < LAZY_BPE_BYTES {
            return None;
        }
        Some(self.built_bpe_tables())
    }

    /// Whether BPE's tables are built (or were read from the table cache).
    #[cfg(test)]
    pub(crate) fn bpe_tables_built(&self) -> bool {
        matches!(&self.inner.algorithm, Algorithm::Bpe(lazy) if lazy.tables.get().is_some())
    }

    /// BPE's tables, built now if they are not (empty tables for another algorithm). A build
    /// stores the model's complete entry in the table cache, when the cache is on.
    pub(crate) fn built_bpe_tables(&self) -> &BpeTables {
        static EMPTY: OnceLock<BpeTables> = OnceLock::new();
        let Algorithm::Bpe(lazy) = &self.inner.algorithm else { return EMPTY.get_or_init(Default::default) };
        lazy.tables.get_or_init(|| {
            let inner = &*self.inner;
            let kinds = &inner.kinds;
            let any_unused = kinds.contains(&(PieceType::Unused as u8));
            let tables = BpeTables::new(&inner.vocab, &inner.scores, |id| is_mergeable(kinds[id as usize]), any_unused);
            self.store_entry(AlgorithmRef::Bpe(Some(&tables)));
            tables
        })
    }

    /// Replaces the model's table cache entry (when the cache is on) with one holding
    /// `algorithm`'s tables, just built.
    fn store_entry(&self, algorithm: AlgorithmRef<'_>) {
        let inner = &*self.inner;
        let entry = TablesRef {
            vocab: &inner.vocab,
            scores: &inner.scores,
            kinds: &inner.kinds,
            unk_id: inner.unk_id,
            byte_ids: &inner.byte_ids,
            words_independent: inner.words_independent,
            algorithm,
        };
        table_cache::replace(|| entry_key(&inner.raw), || entry.write_table(&inner.raw));
    }

    /// The Unigram trie of `v` (this model's Viterbi), built now if it is not; a build stores
    /// the model's complete entry in the table cache, when the cache is on.
    fn built_unigram_trie<'a>(&self, v: &'a SpViterbi) -> &'a Trie {
        let (trie, now) = v.build_trie();
        if now {
            self.store_entry(AlgorithmRef::Unigram(Some(trie)));
        }
        trie
    }

    /// Whether the Unigram trie is built (or was read from the table cache).
    #[cfg(test)]
    pub(crate) fn unigram_trie_built(&self) -> bool {
        matches!(&self.inner.algorithm, Algorithm::Unigram(v) if v.trie_built())
    }
    /// The per-word BPE cache, when words are independent.
    pub(crate) fn bpe_word_cache(&self) -> Option<&Cache<Box<[Segment]>>> {
        self.inner.bpe_words.as_ref()
    }
    pub(crate) fn user_defined_trie(&self) -> Option<&Trie> {
        self.inner.user_defined.as_ref()
    }
    /// The id of a normal, user-defined or unused piece (what BPE may merge into).
    pub(crate) fn mergeable_id(&self, piece: &str) -> Option<u32> {
        self.inner.vocab.id(piece).filter(|&id| is_mergeable(self.inner.kinds[id as usize]))
    }
    pub(crate) fn is_unused(&self, id: u32) -> bool {
        self.inner.kinds.get(id as usize) == Some(&(PieceType::Unused as u8))
    }
    /// `PieceToId`: the id of any piece, or the unknown id.
    pub(crate) fn piece_to_id_or_unk(&self, piece: &str) -> u32 {
        self.piece_id(piece).unwrap_or(self.inner.unk_id)
    }
    /// The id of any piece.
    pub(crate) fn piece_id(&self, piece: &str) -> Option<u32> {
        self.inner.vocab.id(piece)
    }

    /// Segments normalized text into `(start, end, id)` byte ranges.
    fn segment(&self, text: &str, out: &mut Vec<Segment>) {
        match &self.inner.algorithm {
            Algorithm::Unigram(v) => {
                // Pieces are looked up until the model has encoded enough text to pay for the trie.
                if v.trie_due(text.len(), LAZY_UNIGRAM_BYTES_PER_PIECE * self.inner.vocab.len()) {
                    self.built_unigram_trie(v);
                }
                v.encode_words(text, out)
            }
            Algorithm::Bpe(_) => super::bpe::encode(self, text, out),
            Algorithm::Char => {
                // sentencepiece's character model: a user-defined symbol or one char at a time.
                out.clear();
                let mut i = 0;
                while i < text.len() {
                    let len = match super::bpe::user_defined_prefix(self, &text.as_bytes()[i..]) {
                        Some((len, _)) => len,
                        None => text[i..].chars().next().map_or(1, char::len_utf8),
                    };
                    out.push(self.whole_piece(text, i, i + len));
                    i += len;
                }
            }
            Algorithm::Word => {
                out.clear();
                split_into_words(text, |s, e| out.push(self.whole_piece(text, s, e)));
            }
        }
    }

    /// `text[s..e]` as one segment, as sentencepiece's character and word models look it up:
    /// a normal or user-defined piece, else the unknown piece.
    fn whole_piece(&self, text: &str, s: usize, e: usize) -> Segment {
        let id = self.mergeable_id(&text[s..e]).filter(|&id| !self.is_unused(id)).unwrap_or(self.inner.unk_id);
        (s as u32, e as u32, id)
    }

    /// Encodes `input`, calling `f(id, piece, (start, end))` per token with byte offsets into
    /// `input` (sentencepiece's `begin`/`end`).
    pub fn encode_with(&self, input: &str, mut f: impl FnMut(u32, &str, (usize, usize))) -> Result<()> {
        self.for_each_span(input, |id, offsets, unk_text| f(id, self.piece_or(id, unk_text), offsets))
    }

    /// Encodes `input` into `make(id, unk_text, (start, end), has_surface)` per token (as
    /// [`Self::emit`] calls it), in a vector sized once the segments are known; offsets are
    /// `(0, 0)` unless `OFFSETS` (which saves tracking them through the normalizer).
    fn collect<const OFFSETS: bool, T>(
        &self,
        input: &str,
        mut make: impl FnMut(u32, Option<&str>, (usize, usize), bool) -> T,
    ) -> Result<Vec<T>> {
        self.with_normalized::<OFFSETS, _>(input, |norm, segs| {
            self.segment(&norm.text, segs);
            let mut out = Vec::with_capacity(self.token_bound(segs));
            self.emit::<OFFSETS>(norm, segs, |id, unk_text, offsets, surface| out.push(make(id, unk_text, offsets, surface)));
            out
        })
    }

    /// sentencepiece's limit on `nbest_size` (`kMaxNBestSize`; larger sizes are an error there).
    pub const MAX_NBEST_SIZE: usize = 512;

    fn check_nbest_size(n: usize) -> Result<()> {
        if n > Self::MAX_NBEST_SIZE {
            return Err(Error::invalid(format!(
                "SentencePiece: nbest_size must be at most {} (as in sentencepiece), got {n}",
                Self::MAX_NBEST_SIZE
            )));
        }
        Ok(())
    }

    fn unigram(&self, what: &str) -> Result<&SpViterbi> {
        match &self.inner.algorithm {
            Algorithm::Unigram(v) => {
                // The lattice walks the trie.
                self.built_unigram_trie(v);
                Ok(v)
            }
            _ => Err(Error::invalid(format!("SentencePiece: {what} needs a Unigram model (this one is {:?})", self.model_type()))),
        }
    }

    /// Subword regularisation (Unigram only): ids of a segmentation sampled with weight
    /// `exp(alpha * score)` over all segmentations (sentencepiece's `enable_sampling=True,
    /// nbest_size=-1`), reproducible for a given `seed`.
    pub fn sample_encode_ids(&self, input: &str, alpha: f32, seed: u64) -> Result<Vec<u32>> {
        Ok(self.sample_encode(input, -1, alpha, seed)?.into_iter().map(|t| t.id).collect())
    }

    /// Subword regularisation (Unigram only), as sentencepiece's `SampleEncode` chooses:
    /// `nbest_size` 0 or 1 is the best segmentation; above 1, one of the `nbest_size` best
    /// segmentations drawn with probability proportional to `exp(alpha * score)`; below 0, a
    /// segmentation drawn from all of them with weight `exp(alpha * score)`. The draws come
    /// from a generator seeded with `seed` (reproducible; not sentencepiece's generator).
    /// Tokens carry byte offsets into `input`.
    pub fn sample_encode(&self, input: &str, nbest_size: i64, alpha: f32, seed: u64) -> Result<Vec<Token>> {
        self.sample_rows(input, nbest_size, alpha, seed, |id, unk_text, offsets, _| self.token(id, unk_text, offsets))
    }

    /// [`Self::sample_encode`] into `make(id, unk_text, (start, end), has_surface)` per token
    /// (as [`Self::emit`] calls it).
    fn sample_rows<T>(
        &self,
        input: &str,
        nbest_size: i64,
        alpha: f32,
        seed: u64,
        mut make: impl FnMut(u32, Option<&str>, (usize, usize), bool) -> T,
    ) -> Result<Vec<T>> {
        use rand::SeedableRng as _;
        let viterbi = self.unigram("sampling")?;
        Self::check_nbest_size(usize::try_from(nbest_size).unwrap_or(0))?;
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let mut out = Vec::new();
        self.with_normalized::<true, _>(input, |norm, segs| {
            match nbest_size {
                0 | 1 => viterbi.encode(norm.text.as_bytes(), segs),
                n if n > 1 => {
                    let nbests = viterbi.nbest(norm.text.as_bytes(), n as usize);
                    let logp: Vec<f64> = nbests.iter().map(|(_, score)| alpha as f64 * *score as f64).collect();
                    let max = logp.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    let weights: Vec<f64> = logp.iter().map(|l| (l - max).exp()).collect();
                    let pick = pick_weighted(&weights, &mut rng);
                    segs.clear();
                    segs.extend_from_slice(&nbests[pick].0);
                }
                _ => viterbi.sample(norm.text.as_bytes(), alpha, &mut rng, segs),
            }
            self.emit::<true>(norm, segs, |id, unk_text, offsets, surface| out.push(make(id, unk_text, offsets, surface)))
        })?;
        Ok(out)
    }

    /// The `n` best segmentations of `input` (Unigram only; sentencepiece's `NBestEncode`),
    /// best first, each as tokens (byte offsets into `input`) with its score, the sum of its
    /// piece scores. `n` above 512 is an error (as in sentencepiece), 0 counts as 1; with
    /// `n == 1` the result is the ordinary encoding with score 0, as sentencepiece reports it.
    pub fn nbest_encode(&self, input: &str, n: usize) -> Result<Vec<(Vec<Token>, f32)>> {
        self.nbest_rows(input, n, |id, unk_text, offsets, _| self.token(id, unk_text, offsets))
    }

    /// [`Self::nbest_encode`] into `make(id, unk_text, (start, end), has_surface)` per token
    /// (as [`Self::emit`] calls it).
    fn nbest_rows<T>(
        &self,
        input: &str,
        n: usize,
        mut make: impl FnMut(u32, Option<&str>, (usize, usize), bool) -> T,
    ) -> Result<Vec<(Vec<T>, f32)>> {
        let viterbi = self.unigram("n-best encoding")?;
        Self::check_nbest_size(n)?;
        self.with_normalized::<true, _>(input, |norm, _| {
            viterbi
                .nbest(norm.text.as_bytes(), n)
                .into_iter()
                .map(|(segs, score)| {
                    let mut row = Vec::with_capacity(self.token_bound(&segs));
                    self.emit::<true>(norm, &segs, |id, unk_text, offsets, surface| row.push(make(id, unk_text, offsets, surface)));
                    (row, score)
                })
                .collect()
        })
    }

    /// Ids of the `n` best segmentations of `input` with their scores (see [`Self::nbest_encode`]).
    pub fn nbest_encode_ids(&self, input: &str, n: usize) -> Result<Vec<(Vec<u32>, f32)>> {
        self.nbest_rows(input, n, |id, _, _, _| id)
    }

    /// sentencepiece's `Encode` (or `SampleEncode`, with `sampling = Some((nbest_size, alpha,
    /// seed))` as [`Self::sample_encode`] takes them) into a `SentencePieceText`: the input, and
    /// per piece its id, its piece (the normalized text of an unknown piece), its surface in
    /// `input` and the surface's byte offsets, set and unset as sentencepiece sets them.
    pub fn encode_text(&self, input: &str, sampling: Option<(i64, f32, u64)>) -> Result<SentencePieceText> {
        let make = |id, unk_text: Option<&str>, offsets, surface| self.text_piece(input, id, unk_text, offsets, surface);
        let pieces = match sampling {
            None => self.collect::<true, _>(input, make)?,
            Some((nbest_size, alpha, seed)) => self.sample_rows(input, nbest_size, alpha, seed, make)?,
        };
        Ok(SentencePieceText { text: Some(input.to_owned()), pieces, score: None })
    }

    /// sentencepiece's `NBestEncode` into an `NBestSentencePieceText`: each of the `n` best
    /// segmentations as [`Self::encode_text`] gives one, with its score.
    pub fn nbest_encode_text(&self, input: &str, n: usize) -> Result<NBestSentencePieceText> {
        let rows = self
            .nbest_rows(input, n, |id, unk_text: Option<&str>, offsets, surface| self.text_piece(input, id, unk_text, offsets, surface))?;
        let nbests = rows
            .into_iter()
            .map(|(pieces, score)| SentencePieceText { text: Some(input.to_owned()), pieces, score: Some(score) })
            .collect();
        Ok(NBestSentencePieceText { nbests })
    }

    /// One piece of a `SentencePieceText` (see [`Self::encode_text`]).
    fn text_piece(&self, input: &str, id: u32, unk_text: Option<&str>, (begin, end): (usize, usize), surface: bool) -> TextPiece {
        TextPiece {
            piece: Some(self.piece_or(id, unk_text).to_owned()),
            id: Some(id),
            surface: surface.then(|| input[begin..end].to_owned()),
            // Inputs are under 4 GiB (`with_normalized` checks).
            begin: Some(begin as u32),
            end: Some(end as u32),
        }
    }

    /// Normalizes `input` into this thread's buffers (with the original offsets when
    /// `OFFSETS`) and runs `body` on the normalized text and a scratch segment buffer.
    fn with_normalized<const OFFSETS: bool, R>(&self, input: &str, body: impl FnOnce(&Normalized, &mut Vec<Segment>) -> R) -> Result<R> {
        if u32::try_from(input.len()).is_err() {
            return Err(Error::invalid("SentencePiece: an input longer than 4 GiB cannot be encoded"));
        }
        Ok(BUFFERS.with(|cell| {
            let mut guard = cell.try_borrow_mut();
            let mut local = Default::default();
            let (norm, segs) = match guard.as_deref_mut() {
                Ok(b) => b,
                Err(_) => &mut local,
            };
            if OFFSETS {
                self.inner.normalizer.normalize(input, norm);
            } else {
                self.inner.normalizer.normalize_text(input, norm);
            }
            let result = body(norm, segs);
            // The buffers of one huge input (a 50 MB line: the text and 12 bytes per segment)
            // are not kept for the thread's lifetime.
            if input.len() > KEPT_BUFFER_BYTES {
                (*norm, *segs) = Default::default();
            }
            result
        }))
    }

    /// Turns segments of the normalized text into tokens as sentencepiece does: runs of
    /// unknown pieces merged into one, or expanded to byte pieces with byte fallback; calls
    /// `f(id, unk_text, (start, end), has_surface)` per token with byte offsets into the
    /// original input (`(0, 0)` unless `OFFSETS`: `norm` has none then). `unk_text` is the
    /// normalized text an unknown piece covers, `None` for the other tokens, whose piece is the
    /// vocabulary's (not read here: most callers want the id alone, or a copy from
    /// [`TokenSlots`]). `has_surface` is false for the byte pieces of a char but its last,
    /// which stand for no text of their own (sentencepiece leaves their surface unset).
    fn emit<const OFFSETS: bool>(&self, norm: &Normalized, segs: &[Segment], mut f: impl FnMut(u32, Option<&str>, (usize, usize), bool)) {
        let text = norm.text.as_str();
        let inner = &*self.inner;
        let mut aligner = norm.aligner();
        // The original offsets of `text[s..e]`. Segments are contiguous: the start of one is
        // the end of the one before, whose offset is kept.
        let mut last = (usize::MAX, 0);
        let mut span = |s: usize, e: usize| {
            if !OFFSETS {
                return (0, 0);
            }
            let ob = if s == last.0 { last.1 } else { aligner.orig(s) };
            let oe = aligner.orig(e);
            last = (e, oe);
            (ob, oe)
        };
        // A run of unknown pieces being merged (without byte fallback): its start and end in
        // `text`.
        let mut unk_run: Option<(usize, usize)> = None;
        for &(s, e, id) in segs {
            let (s, e) = (s as usize, e as usize);
            if id != inner.unk_id {
                if let Some((us, ue)) = unk_run.take() {
                    f(inner.unk_id, Some(&text[us..ue]), span(us, ue), true);
                }
                f(id, None, span(s, e), true);
            } else if inner.byte_fallback {
                let (ob, oe) = span(s, e);
                let w = &text.as_bytes()[s..e];
                for (i, &b) in w.iter().enumerate() {
                    let bid = inner.byte_ids[b as usize];
                    let last = i + 1 == w.len();
                    f(bid, None, if last { (ob, oe) } else { (ob, ob) }, last);
                }
            } else {
                match &mut unk_run {
                    Some(run) => run.1 = e,
                    None => unk_run = Some((s, e)),
                }
            }
        }
        if let Some((us, ue)) = unk_run {
            f(inner.unk_id, Some(&text[us..ue]), span(us, ue), true);
        }
    }

    /// How many tokens [`Self::emit`] makes of `segs` at most (with byte fallback, an unknown
    /// piece makes one per byte).
    fn token_bound(&self, segs: &[Segment]) -> usize {
        if !self.inner.byte_fallback {
            return segs.len();
        }
        let unk = self.inner.unk_id;
        segs.iter().map(|&(s, e, id)| if id == unk { (e - s) as usize } else { 1 }).sum()
    }

    /// A token's piece: `unk_text` when given (see [`Self::emit`]), else piece `id`.
    fn piece_or<'a>(&'a self, id: u32, unk_text: Option<&'a str>) -> &'a str {
        unk_text.unwrap_or_else(|| self.inner.vocab.token(id).unwrap_or_default())
    }

    /// The token [`Self::emit`] reports, its value an owned copy of [`Self::piece_or`].
    #[inline]
    fn token(&self, id: u32, unk_text: Option<&str>, offsets: (usize, usize)) -> Token {
        let value = match unk_text {
            Some(text) => text.to_owned(),
            None => {
                let slots = self.inner.piece_slots.get_or_init(|| TokenSlots::new(self.inner.vocab.iter().map(|(p, _)| p)));
                slots.to_owned(id).unwrap_or_else(|| self.inner.vocab.token(id).unwrap_or_default().to_owned())
            }
        };
        Token::new(id, value, offsets)
    }

    /// Calls `f(id, (start, end), unk_text)` per token of `input`, byte offsets into it, as
    /// [`Model::tokenize`] gives the tokens but without their strings: `unk_text` is the text
    /// of a run of unknown pieces (the token's string), `None` where the string is piece `id`.
    pub(crate) fn for_each_span(&self, input: &str, mut f: impl FnMut(u32, (usize, usize), Option<&str>)) -> Result<()> {
        self.with_normalized::<true, _>(input, |norm, segs| {
            self.segment(&norm.text, segs);
            self.emit::<true>(norm, segs, |id, unk_text, offsets, _| f(id, offsets, unk_text))
        })
    }

    /// The id → piece table, which encodings share to build their token strings lazily.
    pub(crate) fn reverse_vocab(&self) -> &std::sync::Arc<crate::base::vocab::ReverseVocab> {
        self.inner.vocab.reverse()
    }

    /// Encodes `input` to ids.
    pub fn encode_ids(&self, input: &str) -> Result<Vec<u32>> {
        self.collect::<false, _>(input, |id, _, _, _| id)
    }

    /// Encodes `input` to pieces, as sentencepiece's `EncodeAsPieces`: each token's piece, or
    /// for an unknown piece the normalized text it covers. Only those are allocated.
    pub fn encode_pieces(&self, input: &str) -> Result<Vec<Cow<'_, str>>> {
        let inner = &*self.inner;
        self.collect::<false, _>(input, |id, unk_text, _, _| match unk_text {
            Some(text) => Cow::Owned(text.to_owned()),
            None => Cow::Borrowed(inner.vocab.token(id).unwrap_or_default()),
        })
    }
}

/// The normalizer a `NormalizerSpec` describes (its charsmap checked), with the model's
/// user-defined pieces (never normalized) and its `treat_whitespace_as_suffix`.
pub fn normalizer_from_spec(spec: &NormalizerSpec, user_defined: &[&str], treat_whitespace_as_suffix: bool) -> Result<SpNormalizer> {
    let charsmap = match spec.precompiled_charsmap.as_deref() {
        Some(bytes) if !bytes.is_empty() => {
            let charsmap = Precompiled::from_bytes(bytes)?;
            charsmap.check_trie_cached()?;
            Some(charsmap)
        }
        _ => None,
    };
    Ok(SpNormalizer::new(
        charsmap,
        user_defined,
        spec.add_dummy_prefix(),
        spec.remove_extra_whitespaces(),
        spec.escape_whitespaces(),
        treat_whitespace_as_suffix,
    ))
}

/// sentencepiece's `SplitIntoWords` (as its word model and trainers call it): `f(start, end)`
/// for each word of `text`, a word starting at the start and at each `▁`.
pub fn split_into_words(text: &str, mut f: impl FnMut(usize, usize)) {
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if c == '\u{2581}' && i > start {
            f(start, i);
            start = i;
        }
    }
    if start < text.len() {
        f(start, text.len());
    }
}

/// Whether words (each starting at a `▁` after a non-`▁` char) segment independently, as far as
/// the specs say: spaces are escaped as prefixes. Then they do unless some mergeable piece has a
/// `▁` after a non-`▁` char ([`space_inside`]), which could span such a `▁`.
fn words_independent(norm_spec: &NormalizerSpec, trainer: &TrainerSpec) -> bool {
    norm_spec.escape_whitespaces() && !trainer.treat_whitespace_as_suffix.unwrap_or(false)
}

/// Whether the piece `p` has a `▁` after a char that is not one ([`words_independent`]).
#[inline]
fn space_inside(p: &[u8]) -> bool {
    // On bytes (a search for a char or string pattern sets up a searcher per piece, a cost per
    // piece above the rest of an uncached load's).
    let space = crate::normalizers::sentencepiece::SPACE_SYMBOL.as_bytes();
    let mut rest = p;
    while let Some(r) = rest.strip_prefix(space) {
        rest = r;
    }
    // Most pieces have no byte of `▁` left (a plain loop: pieces are a few bytes).
    match rest.iter().position(|&b| b == space[0]) {
        None => false,
        Some(at) => rest[at..].windows(3).any(|w| w == space),
    }
}

/// The byte of a `<0xNN>` piece.
pub(crate) fn parse_byte_piece(piece: &str) -> Option<u8> {
    let hex = piece.strip_prefix("<0x")?.strip_suffix('>')?;
    if hex.len() != 2 {
        return None;
    }
    u8::from_str_radix(hex, 16).ok()
}

impl Model for SentencePiece {
    fn tokenize(&self, sequence: &str) -> Result<Vec<Token>> {
        self.collect::<true, _>(sequence, |id, unk_text, offsets, _| self.token(id, unk_text, offsets))
    }

    fn token_to_id(&self, token: &str) -> Option<u32> {
        self.inner.vocab.id(token)
    }

    fn id_to_token(&self, id: u32) -> Option<&str> {
        self.inner.vocab.token(id)
    }

    fn get_vocab(&self) -> HashMap<String, u32> {
        self.inner.vocab.to_std_map()
    }

    fn get_vocab_size(&self) -> usize {
        self.inner.vocab.len()
    }
}

impl Serialize for SentencePiece {
    /// `{"type":"SentencePiece","model_proto":"<base64 of the .model file>"}` (a tokenkit
    /// extension; `tokenkit save` converts to HF's layout instead).
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut m = serializer.serialize_struct("SentencePiece", 2)?;
        m.serialize_field("type", "SentencePiece")?;
        m.serialize_field("model_proto", &base64::engine::general_purpose::STANDARD.encode(&*self.inner.raw))?;
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry is used only for the file it was built from: the tables of one model, read
    /// back for its own bytes, write the same entry; for another model's bytes (as a hash
    /// collision would give) they are rejected.
    #[test]
    fn cached_model_tables_are_only_used_for_their_own_file() {
        let (Some(a), Some(b)) = (crate::test_fixtures::get("hub/llama2.model"), crate::test_fixtures::get("hub/mistral03.model")) else {
            return;
        };
        let (a, b) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
        let scan = Scan::new(&a).unwrap();
        let (trainer, norm_spec) =
            (scan.specs.trainer_spec.clone().unwrap_or_default(), scan.specs.normalizer_spec.clone().unwrap_or_default());
        let tables = Tables::build(&a, &scan, &trainer, &norm_spec, None, Error::invalid, |e| Error::invalid(e.to_string())).unwrap();
        let entry = tables.write_table(&a).unwrap();
        let back = Tables::read_table(table_cache::Reader::new(&entry), &a, ModelType::Bpe).unwrap();
        assert_eq!(back.write_table(&a).unwrap(), entry);
        assert_eq!(back.raw.as_deref(), Some(a.as_slice()));
        assert!(Tables::read_table(table_cache::Reader::new(&entry), &b, ModelType::Bpe).is_err());
        assert!(Tables::read_table(table_cache::Reader::new(&entry), &a[..a.len() - 1], ModelType::Bpe).is_err());
    }

    /// An encoding's tokens, built lazily from the model's spans ([`SentencePiece::for_each_span`]),
    /// are the tokens [`Model::tokenize`] makes: ids, strings and offsets, runs of unknown
    /// pieces (whose string is their text) included.
    #[test]
    fn encodings_from_spans_have_the_tokens_of_tokenize() {
        let sources: [&[&str]; 4] = [
            &["en/botchan.txt"],
            &["ja/wagahai.txt", "builtin/ja/sample.txt"],
            &["zh/lunyu.txt", "builtin/zh/sample.txt"],
            &["mixed/utf8_input.txt", "builtin/mixed/sample.txt"],
        ];
        let texts: Vec<String> = sources
            .iter()
            .flat_map(|c| {
                let text = std::fs::read_to_string(crate::test_fixtures::corpus_file(c)).unwrap();
                text.lines().filter(|l| !l.trim().is_empty()).take(40).map(str::to_owned).collect::<Vec<_>>()
            })
            .collect();
        let (mut tokens, mut unknown, mut models) = (0, 0, 0);
        for rel in [
            "hub/llama2.model",
            "registry/sentencepiece/botchan_en_bpe_1000.model",
            "registry/sentencepiece/botchan_en_unigram_1000.model",
            "registry/sentencepiece/kyoto_ja_unigram_8000.model",
        ] {
            let Some(path) = crate::test_fixtures::get(rel) else { continue };
            let model = SentencePiece::from_bytes(std::fs::read(path).unwrap(), rel).unwrap();
            let tok = crate::Tokenizer::new(model.clone());
            for text in &texts {
                let enc = tok.encode(text.as_str(), false).unwrap();
                let want = model.tokenize(text).unwrap();
                let got: Vec<_> =
                    (0..enc.len()).map(|i| (enc.get_ids()[i], enc.get_tokens()[i].to_string(), enc.get_offsets()[i])).collect();
                let want: Vec<_> = want.iter().map(|t| (t.id, t.value.clone(), t.offsets)).collect();
                assert_eq!(got, want, "{rel}: {text:?}");
                tokens += want.len();
                unknown += want.iter().filter(|t| t.0 == model.unk_id()).count();
            }
            models += 1;
        }
        assert!(models >= 3 && unknown > 0, "{models} models, {unknown} unknown tokens");
        eprintln!("{tokens} tokens of {} texts, {unknown} unknown, identical on {models} models", texts.len());
    }

    /// The tables read in one walk over the file ([`read_pieces`]) hold prost's decode of it,
    /// piece for piece, on real models of each kind; whether words are independent is what the
    /// pieces' strings say.
    #[test]
    fn pieces_read_in_one_walk_are_prosts() {
        use prost::Message as _;
        let rels = [
            "hub/llama2.model",
            "hub/mistral03.model",
            "hub/xlnet_base_cased.model",
            "registry/albert/spiece.model",
            "registry/sentencepiece/kyoto_ja_unigram_8000.model",
            "registry/sentencepiece/botchan_en_bpe_1000.model",
        ];
        let mut read = 0;
        for rel in rels {
            let Some(path) = crate::test_fixtures::get(rel) else { continue };
            let raw = std::fs::read(path).unwrap();
            let proto = ModelProto::decode(raw.as_slice()).unwrap();
            let scan = Scan::new(&raw).unwrap();
            let (trainer, norm_spec) = (proto.trainer_spec.clone().unwrap_or_default(), proto.normalizer_spec.clone().unwrap_or_default());
            let t = Tables::build(&raw, &scan, &trainer, &norm_spec, None, Error::invalid, |e| Error::invalid(e.to_string())).unwrap();
            assert_eq!(
                (scan.pieces, t.vocab.len(), t.scores.len(), t.kinds.len()),
                (proto.pieces.len(), scan.pieces, scan.pieces, scan.pieces),
                "{rel}"
            );
            for (id, p) in proto.pieces.iter().enumerate() {
                let piece = p.piece.as_deref().unwrap();
                assert_eq!((t.vocab.token(id as u32), t.vocab.id(piece)), (Some(piece), Some(id as u32)), "{rel} {id}");
                assert_eq!((t.scores[id], t.kinds[id]), (p.score.unwrap_or(0.0), p.kind() as u8), "{rel} {id}");
                if p.kind() == PieceType::Byte {
                    assert_eq!(t.byte_ids[parse_byte_piece(piece).unwrap() as usize], id as u32, "{rel} {id}");
                }
            }
            let unk = proto.pieces.iter().position(|p| p.kind() == PieceType::Unknown).unwrap();
            assert_eq!(t.unk_id as usize, unk, "{rel}");
            let spaced = proto
                .pieces
                .iter()
                .filter(|p| is_mergeable(p.kind() as u8))
                .any(|p| p.piece.as_deref().unwrap().trim_start_matches('\u{2581}').contains('\u{2581}'));
            assert_eq!(t.words_independent, words_independent(&norm_spec, &trainer) && !spaced, "{rel}");
            read += 1;
        }
        eprintln!("{read} of {} models read", rels.len());
    }
}
