//! `tokenkit._tokenkit.SentencePieceCore`: the Rust side of `tokenkit.sentencepiece`
//! (the `sentencepiece` package's `SentencePieceProcessor`).
//!
//! Encoding a str or a list of them is one call: ids or pieces come back as Python lists made
//! straight from the model's output (no `Encoding` per line), batches run in parallel with the
//! GIL released. sentencepiece's `RewriteIds` (reverse, `<s>`/`</s>`, `emit_unk_piece`) is
//! applied here, to ids and pieces alike; argument defaults and dispatch stay in Python.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::LazyLock;

use pyo3::exceptions::{PyException, PyIndexError, PyOSError, PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};
use tokenkit::decoders::sentencepiece::SentencePieceDecoder;
use tokenkit::models::sentencepiece::model::normalizer_from_spec;
use tokenkit::models::sentencepiece::proto::{ModelProto, NormalizerSpec, PieceType, SentencePieceText, TextPiece};
use tokenkit::models::sentencepiece::SentencePiece;
use tokenkit::normalizers::sentencepiece::SpNormalizer;
use tokenkit::tokenizer::Model as _;

use crate::errors::{py_list, value_err};
use crate::{ids, pool, text};

/// The seed of the next sampled encoding: `SetRandomGeneratorSeed` sets it, every sampled text
/// takes the next one, so a run is reproducible after a seed is set (and a batch gives the
/// same samples for any thread count). Starts from a random value, as sentencepiece's does.
static NEXT_SEED: LazyLock<AtomicU64> = LazyLock::new(|| {
    use std::hash::BuildHasher as _;
    AtomicU64::new(std::collections::hash_map::RandomState::new().hash_one(std::process::id()))
});

/// `SetRandomGeneratorSeed`: the seed of the sampled encodings that follow.
#[pyfunction]
pub fn sentencepiece_set_random_seed(seed: u64) {
    NEXT_SEED.store(seed, Ordering::SeqCst);
}

/// sentencepiece's IndexError for an id outside the vocabulary.
fn out_of_range() -> PyErr {
    PyIndexError::new_err("piece id is out of range.")
}

/// What an encoding returns: ids, pieces as str, or pieces as bytes.
#[derive(Clone, Copy, PartialEq)]
enum Out {
    Ids,
    Pieces,
    Bytes,
}

/// The encode options sentencepiece applies to every output (its `RewriteIds`) and the
/// sampling parameters (`nbest_size`, `alpha`), when sampling.
struct Options {
    out: Out,
    add_bos: Option<u32>,
    add_eos: Option<u32>,
    reverse: bool,
    emit_unk_piece: bool,
    sampling: Option<(i64, f32)>,
}

/// A library error as sentencepiece reports a failed status: RuntimeError (IndexError for an
/// id out of range).
fn sp_err(e: tokenkit::Error) -> PyErr {
    match e {
        tokenkit::Error::IdOutOfRange { .. } => out_of_range(),
        e => PyRuntimeError::new_err(e.to_string()),
    }
}

/// [`pool::released`] for a library call, its errors as sentencepiece raises them.
fn released<T: Send>(py: Python<'_>, f: impl FnOnce() -> tokenkit::Result<T> + Send) -> PyResult<T> {
    pool::released(py, f)?.map_err(sp_err)
}

/// A str, or bytes holding UTF-8 (sentencepiece takes either), borrowed where it can be.
fn input_text<'a>(o: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, str>> {
    if let Ok(s) = o.downcast::<PyString>() {
        return text::utf8(s);
    }
    if let Ok(b) = o.downcast::<PyBytes>() {
        return std::str::from_utf8(b.as_bytes())
            .map(Cow::Borrowed)
            .map_err(|e| value_err(format!("input bytes are not valid UTF-8: {e}")));
    }
    Err(PyTypeError::new_err("Input must be str or bytes"))
}

/// A SentencePiece `.model`, its decoder and its special ids.
#[pyclass(module = "tokenkit", name = "SentencePieceCore", frozen)]
pub struct PySentencePieceCore {
    model: SentencePiece,
    decoder: SentencePieceDecoder,
    unk: Option<u32>,
    bos: Option<u32>,
    eos: Option<u32>,
    pad: Option<u32>,
}

impl PySentencePieceCore {
    fn new(model: SentencePiece) -> Self {
        let trainer = model.trainer_spec().clone();
        // As sentencepiece's `bos_id()` and the others: the id of the trainer spec's piece
        // when that piece has the expected type, else none (-1).
        let special = |piece: Option<String>, default: &str, kind: PieceType| {
            let id = model.token_to_id(piece.as_deref().unwrap_or(default)).unwrap_or(model.unk_id());
            (model.kind(id) == Some(kind)).then_some(id)
        };
        Self {
            decoder: SentencePieceDecoder::from_model(&model),
            unk: special(trainer.unk_piece, "<unk>", PieceType::Unknown),
            bos: special(trainer.bos_piece, "<s>", PieceType::Control),
            eos: special(trainer.eos_piece, "</s>", PieceType::Control),
            pad: special(trainer.pad_piece, "<pad>", PieceType::Control),
            model,
        }
    }

    /// The id `id` as an index into the vocabulary (IndexError when out of range).
    fn index(&self, id: i64) -> PyResult<u32> {
        u32::try_from(id).ok().filter(|&i| (i as usize) < self.model.get_vocab_size()).ok_or_else(out_of_range)
    }

    fn piece(&self, id: u32) -> &str {
        self.model.id_to_token(id).unwrap_or_default()
    }

    fn options(
        &self,
        out: &str,
        add_bos: bool,
        add_eos: bool,
        reverse: bool,
        emit_unk_piece: bool,
        sampling: Option<(i64, f32)>,
    ) -> PyResult<Options> {
        let out = match out {
            "ids" => Out::Ids,
            "pieces" => Out::Pieces,
            "bytes" => Out::Bytes,
            other => return Err(value_err(format!("unknown output kind {other:?}"))),
        };
        let special = |wanted: bool, id: Option<u32>, name: &str| match (wanted, id) {
            (false, _) => Ok(None),
            (true, Some(id)) => Ok(Some(id)),
            (true, None) => Err(value_err(format!("{name} token is not defined as a control symbol in this model."))),
        };
        Ok(Options {
            out,
            add_bos: special(add_bos, self.bos, "BOS")?,
            add_eos: special(add_eos, self.eos, "EOS")?,
            reverse,
            emit_unk_piece,
            sampling,
        })
    }

    /// The ids of one text, rewritten as the options say.
    fn encode_ids(&self, text: &str, o: &Options, seed: u64) -> tokenkit::Result<Vec<u32>> {
        let ids = match o.sampling {
            None => self.model.encode_ids(text)?,
            Some((nbest_size, alpha)) => self.model.sample_encode(text, nbest_size, alpha, seed)?.into_iter().map(|t| t.id).collect(),
        };
        Ok(self.rewrite(ids, o, |id| id))
    }

    /// The pieces of one text, rewritten as the options say.
    fn encode_pieces(&self, text: &str, o: &Options, seed: u64) -> tokenkit::Result<Vec<Cow<'_, str>>> {
        let mut pieces = match o.sampling {
            None => self.model.encode_pieces(text)?,
            Some((nbest_size, alpha)) => {
                self.model.sample_encode(text, nbest_size, alpha, seed)?.into_iter().map(|t| Cow::Owned(t.value)).collect()
            }
        };
        self.emit_unk(&mut pieces, o);
        Ok(self.rewrite(pieces, o, |id| Cow::Borrowed(self.piece(id))))
    }

    /// `emit_unk_piece`: every piece that is not in the vocabulary becomes the unknown piece
    /// (sentencepiece tests `PieceToId(piece) == unk_id`).
    fn emit_unk<'a>(&'a self, pieces: &mut [Cow<'a, str>], o: &Options) {
        if !o.emit_unk_piece {
            return;
        }
        let unk = self.model.unk_id();
        for p in pieces {
            if self.model.token_to_id(p).unwrap_or(unk) == unk {
                *p = Cow::Borrowed(self.piece(unk));
            }
        }
    }

    /// sentencepiece's `RewriteIds`: reversed, then `<s>` before and `</s>` after.
    fn rewrite<T>(&self, mut row: Vec<T>, o: &Options, item: impl Fn(u32) -> T) -> Vec<T> {
        if o.reverse {
            row.reverse();
        }
        if let Some(bos) = o.add_bos {
            row.insert(0, item(bos));
        }
        if let Some(eos) = o.add_eos {
            row.push(item(eos));
        }
        row
    }

    /// A Python list of pieces, as str or as bytes.
    fn piece_list<'py, S: AsRef<str>>(py: Python<'py>, pieces: &[S], out: Out) -> PyResult<Bound<'py, PyList>> {
        if out == Out::Bytes {
            py_list(py, pieces.iter().map(|p| PyBytes::new(py, p.as_ref().as_bytes())))
        } else {
            py_list(py, pieces.iter().map(|p| PyString::new(py, p.as_ref())))
        }
    }

    /// `f(text, seed)` on every text of a batch, each text with its own seed.
    fn encode_batch<T: Send>(
        &self,
        py: Python<'_>,
        texts: &[Cow<'_, str>],
        threads: i64,
        f: impl Fn(&str, u64) -> tokenkit::Result<T> + Send + Sync,
    ) -> PyResult<Vec<T>> {
        let base = NEXT_SEED.fetch_add(texts.len() as u64, Ordering::SeqCst);
        let items = texts.iter().enumerate().collect();
        run_batch(py, items, threads, |(_, t)| t.len(), |(i, t)| f(t, base.wrapping_add(i as u64)))
    }

    /// The pieces of decoded ids.
    fn pieces_of(&self, ids: &[i64]) -> PyResult<Vec<&str>> {
        ids.iter().map(|&id| Ok(self.piece(self.index(id)?))).collect()
    }
}

#[pymethods]
impl PySentencePieceCore {
    /// A model from the bytes of a `.model` file (`model_proto`).
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: Vec<u8>) -> PyResult<Self> {
        let model = released(py, || SentencePiece::from_bytes(data, "model_proto"))?;
        Ok(Self::new(model))
    }

    /// A model read from a `.model` file.
    #[staticmethod]
    fn from_file(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        let model = released(py, || tokenkit::formats::sentencepiece::read_model(&path))?;
        Ok(Self::new(model))
    }

    /// Encodes a str (or UTF-8 bytes) to a list, or a list of them to a list of lists: `out`
    /// is `"ids"`, `"pieces"` or `"bytes"` (pieces as bytes); `sampling` is `(nbest_size,
    /// alpha)` for subword regularisation (Unigram models); `num_threads` 1 keeps a batch on
    /// this thread.
    #[pyo3(signature = (input, out, add_bos, add_eos, reverse, emit_unk_piece, sampling = None, num_threads = -1))]
    #[allow(clippy::too_many_arguments)]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        input: &Bound<'py, PyAny>,
        out: &str,
        add_bos: bool,
        add_eos: bool,
        reverse: bool,
        emit_unk_piece: bool,
        sampling: Option<(i64, f32)>,
        num_threads: i64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let o = self.options(out, add_bos, add_eos, reverse, emit_unk_piece, sampling)?;
        if let Ok(batch) = input.downcast::<PyList>() {
            let items: Vec<Bound<'py, PyAny>> = batch.iter().collect();
            let texts = items.iter().map(input_text).collect::<PyResult<Vec<_>>>()?;
            if o.out == Out::Ids {
                return Ok(ids::lists(py, &self.encode_batch(py, &texts, num_threads, |t, seed| self.encode_ids(t, &o, seed))?)?.into_any());
            }
            let rows = self.encode_batch(py, &texts, num_threads, |t, seed| self.encode_pieces(t, &o, seed))?;
            let lists = rows.iter().map(|r| Self::piece_list(py, r, o.out)).collect::<PyResult<Vec<_>>>()?;
            return Ok(py_list(py, lists.into_iter())?.into_any());
        }
        let text = input_text(input)?;
        let seed = if o.sampling.is_some() { NEXT_SEED.fetch_add(1, Ordering::SeqCst) } else { 0 };
        if o.out == Out::Ids {
            return Ok(ids::list(py, &released(py, || self.encode_ids(&text, &o, seed))?)?.into_any());
        }
        let pieces = released(py, || self.encode_pieces(&text, &o, seed))?;
        Ok(Self::piece_list(py, &pieces, o.out)?.into_any())
    }

    /// The `nbest_size` best segmentations of a str (Unigram models): a list of
    /// `(ids or pieces, score)`, best first, each rewritten as `encode` does.
    #[pyo3(signature = (input, nbest_size, out, add_bos, add_eos, reverse, emit_unk_piece))]
    #[allow(clippy::too_many_arguments)]
    fn nbest<'py>(
        &self,
        py: Python<'py>,
        input: &Bound<'py, PyAny>,
        nbest_size: usize,
        out: &str,
        add_bos: bool,
        add_eos: bool,
        reverse: bool,
        emit_unk_piece: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let o = self.options(out, add_bos, add_eos, reverse, emit_unk_piece, None)?;
        let text = input_text(input)?;
        let nbests = released(py, || self.model.nbest_encode(&text, nbest_size))?;
        let rows = nbests.into_iter().map(|(tokens, score)| {
            let row = if o.out == Out::Ids {
                ids::list(py, &self.rewrite(tokens.iter().map(|t| t.id).collect(), &o, |id| id))?
            } else {
                let mut pieces: Vec<Cow<'_, str>> = tokens.iter().map(|t| Cow::Borrowed(t.value.as_str())).collect();
                self.emit_unk(&mut pieces, &o);
                Self::piece_list(py, &self.rewrite(pieces, &o, |id| Cow::Borrowed(self.piece(id))), o.out)?
            };
            Ok((row, score))
        });
        py_list(py, rows.collect::<PyResult<Vec<_>>>()?.into_iter())
    }

    /// Encodes a str (or UTF-8 bytes), or a list of them, into sentencepiece's
    /// `SentencePieceText`: `out` is `"serialized"` (its protobuf bytes) or `"offsets"` (the
    /// `{"ids", "pieces", "offsets"}` dict of sentencepiece's `offset_mapping`, offsets in
    /// chars unless `return_bytes`); `sampling` as in `encode`.
    #[pyo3(signature = (input, out, sampling = None, return_bytes = false, num_threads = -1))]
    fn encode_text<'py>(
        &self,
        py: Python<'py>,
        input: &Bound<'py, PyAny>,
        out: &str,
        sampling: Option<(i64, f32)>,
        return_bytes: bool,
        num_threads: i64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let encode = |t: &str, seed: u64| self.model.encode_text(t, sampling.map(|(n, alpha)| (n, alpha, seed)));
        if let Ok(batch) = input.downcast::<PyList>() {
            let items: Vec<Bound<'py, PyAny>> = batch.iter().collect();
            let texts = items.iter().map(input_text).collect::<PyResult<Vec<_>>>()?;
            let spts = self.encode_batch(py, &texts, num_threads, encode)?;
            let rows = spts.iter().map(|spt| text_out(py, spt, out, return_bytes, false)).collect::<PyResult<Vec<_>>>()?;
            return Ok(py_list(py, rows.into_iter())?.into_any());
        }
        let text = input_text(input)?;
        let seed = if sampling.is_some() { NEXT_SEED.fetch_add(1, Ordering::SeqCst) } else { 0 };
        let spt = released(py, || encode(&text, seed))?;
        text_out(py, &spt, out, return_bytes, false)
    }

    /// The `nbest_size` best segmentations of a str as a serialized `NBestSentencePieceText`.
    fn nbest_text<'py>(&self, py: Python<'py>, input: &Bound<'py, PyAny>, nbest_size: usize) -> PyResult<Bound<'py, PyBytes>> {
        use prost::Message as _;
        let text = input_text(input)?;
        let nbest = released(py, || self.model.nbest_encode_text(&text, nbest_size))?;
        Ok(PyBytes::new(py, &nbest.encode_to_vec()))
    }

    /// Decodes one sequence of ids (`pieces` false) or pieces, or a batch of them, into
    /// sentencepiece's `SentencePieceText`; `out` and `return_bytes` as in `encode_text`
    /// (the offsets dict has the decoded text too).
    #[pyo3(signature = (input, pieces, batch, out, return_bytes = false, num_threads = -1))]
    #[allow(clippy::too_many_arguments)]
    fn decode_text<'py>(
        &self,
        py: Python<'py>,
        input: &Bound<'py, PyAny>,
        pieces: bool,
        batch: bool,
        out: &str,
        return_bytes: bool,
        num_threads: i64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let rows: Vec<Vec<String>> = match (pieces, batch) {
            (true, true) => input.extract()?,
            (true, false) => vec![input.extract()?],
            (false, true) => {
                let ids: Vec<Vec<i64>> = input.extract()?;
                ids.iter().map(|r| Ok(self.pieces_of(r)?.into_iter().map(str::to_owned).collect())).collect::<PyResult<_>>()?
            }
            (false, false) => vec![self.pieces_of(&input.extract::<Vec<i64>>()?)?.into_iter().map(str::to_owned).collect()],
        };
        let spts = run_batch(py, rows.iter().collect(), num_threads, |r| r.len(), |r| Ok(self.decode_spt(r)))?;
        let outs = spts.iter().map(|spt| text_out(py, spt, out, return_bytes, true)).collect::<PyResult<Vec<_>>>()?;
        if batch {
            return Ok(py_list(py, outs.into_iter())?.into_any());
        }
        Ok(outs.into_iter().next().expect("one row"))
    }

    /// The normalized text and, per normalized char (per byte for bytes input) and the end,
    /// the offset in the input it comes from (sentencepiece's `Normalize(with_offsets=True)`).
    fn normalize_with_offsets<'py>(&self, py: Python<'py>, input: &Bound<'py, PyAny>) -> PyResult<(Bound<'py, PyAny>, Vec<usize>)> {
        normalize_with_offsets(py, self.model.normalizer(), input)
    }

    /// Decodes ids (each checked: IndexError when out of range).
    fn decode_ids(&self, py: Python<'_>, ids: Vec<i64>) -> PyResult<String> {
        let pieces = self.pieces_of(&ids)?;
        Ok(py.allow_threads(|| self.decoder.decode_pieces(&pieces)))
    }

    /// Decodes each list of ids, in parallel.
    fn decode_ids_batch(&self, py: Python<'_>, batch: Vec<Vec<i64>>, num_threads: i64) -> PyResult<Vec<String>> {
        let rows = batch.iter().map(|ids| self.pieces_of(ids)).collect::<PyResult<Vec<_>>>()?;
        run_batch(py, rows.iter().collect(), num_threads, |r| r.len(), |r| Ok(self.decoder.decode_pieces(r)))
    }

    /// Decodes pieces (a piece not in the vocabulary is its own text).
    fn decode_pieces(&self, py: Python<'_>, pieces: Vec<String>) -> String {
        py.allow_threads(|| self.decode(&pieces))
    }

    /// Decodes each list of pieces, in parallel.
    fn decode_pieces_batch(&self, py: Python<'_>, batch: Vec<Vec<String>>, num_threads: i64) -> PyResult<Vec<String>> {
        run_batch(py, batch.iter().collect(), num_threads, |r| r.len(), |r| Ok(self.decode(r)))
    }

    /// The normalized text sentencepiece segments (`Normalize`).
    fn normalize<'py>(&self, py: Python<'py>, input: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        normalize(py, self.model.normalizer(), input)
    }

    /// The number of pieces.
    fn piece_size(&self) -> usize {
        self.model.get_vocab_size()
    }
    /// The id of a piece, or the unknown id.
    fn piece_to_id(&self, piece: &str) -> u32 {
        self.model.token_to_id(piece).unwrap_or(self.model.unk_id())
    }
    fn id_to_piece(&self, id: i64) -> PyResult<&str> {
        Ok(self.piece(self.index(id)?))
    }
    fn score(&self, id: i64) -> PyResult<f32> {
        let id = self.index(id)?;
        Ok(self.model.score(id).unwrap_or(0.0))
    }
    /// The proto's type number of piece `id` (1 normal, 2 unknown, 3 control, 4 user-defined,
    /// 5 unused, 6 byte).
    fn kind(&self, id: i64) -> PyResult<i32> {
        let id = self.index(id)?;
        Ok(self.model.kind(id).map_or(0, |k| k as i32))
    }
    /// `(unk, bos, eos, pad)` ids, -1 where the model has none.
    fn special_ids(&self) -> (i64, i64, i64, i64) {
        let id = |o: Option<u32>| o.map_or(-1, i64::from);
        (id(self.unk), id(self.bos), id(self.eos), id(self.pad))
    }
    /// The `.model` file's bytes.
    fn serialized<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.model.to_bytes())
    }
}

impl PySentencePieceCore {
    /// sentencepiece's `Decode` into a `SentencePieceText`: the decoded text, and per piece
    /// its id (the unknown id for a piece not in the vocabulary), its surface and the
    /// surface's byte offsets.
    fn decode_spt(&self, pieces: &[String]) -> SentencePieceText {
        let in_vocab = |p: &str| self.model.token_to_id(p).is_some();
        let (raw, spans) = self.decoder.decode_pieces_spans(pieces, in_vocab);
        let pieces = pieces
            .iter()
            .zip(&spans)
            .map(|(p, &(begin, end))| TextPiece {
                piece: Some(p.clone()),
                id: Some(self.model.token_to_id(p).unwrap_or(self.model.unk_id())),
                surface: Some(raw[begin..end].to_owned()),
                begin: Some(begin as u32),
                end: Some(end as u32),
            })
            .collect();
        SentencePieceText { text: Some(self.decoder.denormalize(raw)), pieces, score: None }
    }

    /// sentencepiece's `DecodePieces` of pieces that may not be in the vocabulary (ids go
    /// straight to the decoder: their pieces are).
    fn decode<S: AsRef<str>>(&self, pieces: &[S]) -> String {
        self.decoder.decode_pieces_with(pieces, |p| self.model.token_to_id(p).is_some())
    }
}

/// `f` on every item: in parallel on the process's pool (the calling thread taking part), or
/// on this thread alone when `threads` is 1 (sentencepiece's `num_threads=1`); results in
/// item order, the first error in item order raised.
fn run_batch<I: Send, T: Send>(
    py: Python<'_>,
    items: Vec<I>,
    threads: i64,
    weight: impl Fn(&I) -> usize + Send,
    f: impl Fn(I) -> tokenkit::Result<T> + Send + Sync,
) -> PyResult<Vec<T>> {
    if threads == 1 {
        return released(py, || items.into_iter().map(f).collect());
    }
    // Library errors come back as plain Exceptions (a KeyboardInterrupt as itself).
    pool::run_interruptible(py, || tokenkit::utils::parallel::try_map(items, weight, f)).map_err(|e| {
        if e.get_type(py).is(py.get_type::<PyException>()) {
            PyRuntimeError::new_err(e.value(py).to_string())
        } else {
            e
        }
    })
}

/// A `SentencePieceText` as Python wants it: `"serialized"` gives its protobuf bytes,
/// `"offsets"` sentencepiece's `offset_mapping` dict (`ids`, `pieces`, `offsets`, and `text`
/// when `with_text`), pieces and text as bytes and offsets in bytes when `return_bytes`, else
/// as str with offsets in chars.
fn text_out<'py>(py: Python<'py>, spt: &SentencePieceText, out: &str, return_bytes: bool, with_text: bool) -> PyResult<Bound<'py, PyAny>> {
    use prost::Message as _;
    match out {
        "serialized" => Ok(PyBytes::new(py, &spt.encode_to_vec()).into_any()),
        "offsets" => {
            let text = spt.text.as_deref().unwrap_or_default();
            let chars = (!return_bytes).then(|| char_offsets(text));
            let offset = |o: Option<u32>| -> PyResult<usize> {
                let o = o.unwrap_or(0) as usize;
                match &chars {
                    None => Ok(o),
                    Some(c) => c.get(o).copied().ok_or_else(|| value_err("Invalid piece offsets in SentencePieceText")),
                }
            };
            let dict = pyo3::types::PyDict::new(py);
            if with_text {
                dict.set_item("text", str_or_bytes(py, text, return_bytes))?;
            }
            dict.set_item("ids", spt.pieces.iter().map(|p| p.id.unwrap_or(0)).collect::<Vec<_>>())?;
            let pieces = spt.pieces.iter().map(|p| str_or_bytes(py, p.piece.as_deref().unwrap_or_default(), return_bytes));
            dict.set_item("pieces", py_list(py, pieces.collect::<Vec<_>>().into_iter())?)?;
            let offsets = spt.pieces.iter().map(|p| Ok((offset(p.begin)?, offset(p.end)?))).collect::<PyResult<Vec<_>>>()?;
            dict.set_item("offsets", offsets)?;
            Ok(dict.into_any())
        }
        other => Err(value_err(format!("unknown output kind {other:?}"))),
    }
}

fn str_or_bytes<'py>(py: Python<'py>, s: &str, bytes: bool) -> Bound<'py, PyAny> {
    if bytes {
        PyBytes::new(py, s.as_bytes()).into_any()
    } else {
        PyString::new(py, s).into_any()
    }
}

/// For each byte offset of `text` and its end, the index of the char it is in.
fn char_offsets(text: &str) -> Vec<usize> {
    let mut out = Vec::with_capacity(text.len() + 1);
    for (i, c) in text.chars().enumerate() {
        out.extend(std::iter::repeat_n(i, c.len_utf8()));
    }
    out.push(text.chars().count());
    out
}

/// `normalizer` on a str or UTF-8 bytes: the normalized text, as bytes for bytes input.
fn normalize<'py>(py: Python<'py>, normalizer: &SpNormalizer, input: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let is_bytes = input.is_instance_of::<PyBytes>();
    let text = input_text(input)?;
    let norm = py.allow_threads(|| {
        let mut out = tokenkit::normalizers::sentencepiece::Normalized::default();
        normalizer.normalize_text(&text, &mut out);
        out.text
    });
    Ok(str_or_bytes(py, &norm, is_bytes))
}

/// `normalizer` on a str or UTF-8 bytes with sentencepiece's offsets: per normalized byte
/// (and the end) the input byte it comes from; for a str, per normalized char the input char
/// (sentencepiece's `ConvertToUnicodeAlignment`: a char takes its last byte's offset).
fn normalize_with_offsets<'py>(
    py: Python<'py>,
    normalizer: &SpNormalizer,
    input: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyAny>, Vec<usize>)> {
    let is_bytes = input.is_instance_of::<PyBytes>();
    let text = input_text(input)?;
    let (norm, offsets) = py.allow_threads(|| normalizer.normalize_with_offsets(&text));
    if is_bytes {
        return Ok((PyBytes::new(py, norm.as_bytes()).into_any(), offsets));
    }
    let orig_chars = char_offsets(&text);
    let norm_chars = char_offsets(&norm);
    let mut chars = vec![0; norm_chars.last().copied().unwrap_or(0) + 1];
    for (i, &o) in offsets.iter().enumerate() {
        if let (Some(&n), Some(&c)) = (norm_chars.get(i), orig_chars.get(o)) {
            chars[n] = c;
        }
    }
    Ok((PyString::new(py, &norm).into_any(), chars))
}

/// `tokenkit._tokenkit.SentencePieceNormalizerCore`: sentencepiece's `SentencePieceNormalizer`,
/// a `NormalizerSpec` and the normalizer it describes (as sentencepiece builds it: without the
/// model's user-defined pieces).
#[pyclass(module = "tokenkit", name = "SentencePieceNormalizerCore")]
pub struct PySentencePieceNormalizerCore {
    spec: NormalizerSpec,
    normalizer: SpNormalizer,
}

impl PySentencePieceNormalizerCore {
    fn from_spec(spec: NormalizerSpec) -> PyResult<Self> {
        let normalizer = normalizer_from_spec(&spec, &[], false).map_err(|e| value_err(format!("normalizer_spec: {e}")))?;
        Ok(Self { spec, normalizer })
    }

    fn decode<M: prost::Message + Default>(data: &[u8], what: &str) -> PyResult<M> {
        M::decode(data).map_err(|e| PyRuntimeError::new_err(format!("{what}: not a valid protobuf message: {e}")))
    }
}

#[pymethods]
impl PySentencePieceNormalizerCore {
    /// The normalizer of a serialized `ModelProto` (a `.model` file's bytes).
    #[staticmethod]
    fn from_model_proto(data: &[u8]) -> PyResult<Self> {
        let proto: ModelProto = Self::decode(data, "model_proto")?;
        Self::from_spec(proto.normalizer_spec.unwrap_or_default())
    }

    /// The normalizer of a `.model` file.
    #[staticmethod]
    fn from_model_file(path: std::path::PathBuf) -> PyResult<Self> {
        let data = std::fs::read(&path).map_err(|e| PyOSError::new_err(format!("{}: {e}", path.display())))?;
        Self::from_model_proto(&data)
    }

    /// The normalizer of a serialized `NormalizerSpec`.
    #[staticmethod]
    fn from_normalizer_spec(data: &[u8]) -> PyResult<Self> {
        Self::from_spec(Self::decode(data, "normalizer_spec")?)
    }

    /// A built-in rule: nmt_nfkc, nfkc, nmt_nfkc_cf, nfkc_cf or identity.
    #[staticmethod]
    fn from_rule_name(name: &str) -> PyResult<Self> {
        let charsmap = tokenkit::formats::sentencepiece::charsmaps::charsmap(name).map_err(|e| value_err(e.to_string()))?;
        Self::from_spec(NormalizerSpec { name: Some(name.to_owned()), precompiled_charsmap: Some(charsmap), ..Default::default() })
    }

    /// Sets `add_dummy_prefix`, `escape_whitespaces` or `remove_extra_whitespaces`.
    fn set_flag(&mut self, name: &str, value: bool) -> PyResult<()> {
        match name {
            "add_dummy_prefix" => self.spec.add_dummy_prefix = Some(value),
            "escape_whitespaces" => self.spec.escape_whitespaces = Some(value),
            "remove_extra_whitespaces" => self.spec.remove_extra_whitespaces = Some(value),
            other => return Err(value_err(format!("unknown normalizer flag {other:?}"))),
        }
        *self = Self::from_spec(std::mem::take(&mut self.spec))?;
        Ok(())
    }

    /// The normalized text of a str (bytes give bytes).
    fn normalize<'py>(&self, py: Python<'py>, input: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        normalize(py, &self.normalizer, input)
    }

    /// The normalized text with offsets (see `SentencePieceCore.normalize_with_offsets`).
    fn normalize_with_offsets<'py>(&self, py: Python<'py>, input: &Bound<'py, PyAny>) -> PyResult<(Bound<'py, PyAny>, Vec<usize>)> {
        normalize_with_offsets(py, &self.normalizer, input)
    }

    /// A `ModelProto` holding only the normalizer spec, serialized.
    fn serialized_model_proto<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        use prost::Message as _;
        let proto = ModelProto { normalizer_spec: Some(self.spec.clone()), ..Default::default() };
        PyBytes::new(py, &proto.encode_to_vec())
    }

    /// The normalizer spec, serialized.
    fn serialized_normalizer_spec<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        use prost::Message as _;
        PyBytes::new(py, &self.spec.encode_to_vec())
    }
}
