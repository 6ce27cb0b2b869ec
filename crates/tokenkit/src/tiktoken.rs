//! The tiktoken API over a [`Tokenizer`]: `encode_ordinary`, `encode` with
//! `allowed_special` / `disallowed_special` and tiktoken's error, batches, decoding to bytes
//! or text, single tokens, and a count that builds no id vector. Ids are tiktoken's ranks.
//!
//! An [`Encoding`] holds the tokenizer built by [`crate::formats::tiktoken::build_tokenizer`]
//! (the encoding *is* that pipeline) plus the id → bytes table tiktoken decodes with.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use aho_corasick::AhoCorasick;

use crate::base::normalized::is_continuation;
use crate::formats::tiktoken::{self as format, EncodingSpec};
use crate::models::bpe::byte_level::ByteLevelBpe;
use crate::tokenizer::byte_level_path::{extend_piece_ids, for_each_piece_ids, ids_plan, is_nfc};
use crate::tokenizer::Tokenizer;
use crate::utils::aho::leftmost_longest;
use crate::utils::regex::SysRegex;
use crate::utils::table_cache::{self, Table};
use crate::{Error, Result};

/// A set of special tokens given to [`Encoding::encode`]: all of them, or some by content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpecialTokens {
    /// Every special token of the encoding (tiktoken's `"all"`).
    All,
    /// These special tokens (an empty set is tiktoken's `()` / `set()`).
    Set(BTreeSet<String>),
}

impl SpecialTokens {
    /// No special token.
    pub fn none() -> Self {
        SpecialTokens::Set(BTreeSet::new())
    }

    /// The special tokens named in `tokens`.
    pub fn of<I: IntoIterator<Item = S>, S: Into<String>>(tokens: I) -> Self {
        SpecialTokens::Set(tokens.into_iter().map(Into::into).collect())
    }
}

/// A tiktoken encoding: a name, its pattern, ranks and special tokens.
#[derive(Debug, Clone)]
pub struct Encoding {
    name: String,
    pat_str: String,
    tokenizer: Tokenizer,
    /// The bytes of every id (ranks and specials; a rank's where a special token shares its
    /// id, as tiktoken decodes).
    id_bytes: IdBytes,
    /// The ranks, in order.
    rank_ids: Vec<u32>,
    /// The ranks of the model's ids, when they are not the ranks ([`format::RankOf`]).
    rank_of: format::RankOf,
    special_tokens: BTreeMap<String, u32>,
    /// Special-token contents in `special_ids` order, and their automaton.
    special_list: Vec<String>,
    special_ids: Vec<u32>,
    special_matcher: Option<AhoCorasick>,
    /// Rank ids ordered by their bytes (built on first use by `encode_with_unstable`).
    sorted_ranks: std::sync::OnceLock<Vec<u32>>,
    /// Whether text is NFC-normalized before encoding ([`Encoding::with_nfc`]).
    nfc: bool,
}

/// The bytes of each token id, in one buffer: indexed by id when the ids are dense enough
/// for a table (always for real encodings), by a map otherwise, so that a special token at
/// id 2^32 - 1 (which tiktoken accepts) costs one entry, not a table of 2^32.
#[derive(Debug, Clone)]
struct IdBytes {
    bytes: Table<u8>,
    spans: Spans,
    /// One more than the largest id (tiktoken's `n_vocab`).
    n_vocab: usize,
}

#[derive(Debug, Clone)]
enum Spans {
    /// `starts[id]..starts[id + 1]` in `bytes`; `present[id]` (1) when the id has a token.
    Dense { starts: Table<u32>, present: Table<u8> },
    /// id → its range in `bytes`.
    Sparse(ahash::AHashMap<u32, (u32, u32)>),
}

impl IdBytes {
    /// The table of `tokens` (id, bytes; ids distinct).
    fn new(tokens: &[(u32, &[u8])]) -> Self {
        let n_vocab = tokens.iter().map(|&(id, _)| id as usize + 1).max().unwrap_or(0);
        let mut bytes = Vec::with_capacity(tokens.iter().map(|(_, t)| t.len()).sum());
        let spans = if crate::base::vocab::fits_dense_table(n_vocab, tokens.len()) {
            let mut per_id: Vec<Option<&[u8]>> = vec![None; n_vocab];
            for &(id, t) in tokens {
                per_id[id as usize] = Some(t);
            }
            let mut starts = Vec::with_capacity(n_vocab + 1);
            let mut present = Vec::with_capacity(n_vocab);
            for t in &per_id {
                starts.push(bytes.len() as u32);
                bytes.extend_from_slice(t.unwrap_or_default());
                present.push(u8::from(t.is_some()));
            }
            starts.push(bytes.len() as u32);
            Spans::Dense { starts: starts.into(), present: present.into() }
        } else {
            let mut map = ahash::AHashMap::with_capacity(tokens.len());
            for &(id, t) in tokens {
                let start = bytes.len() as u32;
                bytes.extend_from_slice(t);
                map.insert(id, (start, bytes.len() as u32));
            }
            Spans::Sparse(map)
        };
        Self { bytes: bytes.into(), spans, n_vocab }
    }

    /// Writes the table, for [`table_cache`].
    fn write_table(&self, w: &mut table_cache::Writer) {
        w.table(&self.bytes);
        w.len(self.n_vocab);
        match &self.spans {
            Spans::Dense { starts, present } => {
                w.bool(true);
                w.table(starts);
                w.table(present);
            }
            Spans::Sparse(map) => {
                w.bool(false);
                let mut entries: Vec<(u32, (u32, u32))> = map.iter().map(|(&id, &span)| (id, span)).collect();
                entries.sort_unstable();
                w.len(entries.len());
                for (id, (start, end)) in entries {
                    [id, start, end].into_iter().for_each(|v| w.u32(v));
                }
            }
        }
    }

    /// Reads what [`IdBytes::write_table`] wrote, checking every span against the bytes.
    fn read_table(r: &mut table_cache::Reader<'_>) -> Result<Self> {
        let bad = || Error::invalid("table cache: malformed id bytes");
        let bytes: Table<u8> = r.table()?;
        let n_vocab = r.len(0)?;
        let in_bounds = |start: u32, end: u32| start <= end && end as usize <= bytes.len();
        let spans = if r.bool()? {
            let (starts, present): (Table<u32>, Table<u8>) = (r.table()?, r.table()?);
            if starts.len() != n_vocab + 1 || present.len() != n_vocab || !starts.windows(2).all(|w| in_bounds(w[0], w[1])) {
                return Err(bad());
            }
            Spans::Dense { starts, present }
        } else {
            let n = r.len(12)?;
            let mut map = ahash::AHashMap::with_capacity(n);
            for _ in 0..n {
                let (id, start, end) = (r.u32()?, r.u32()?, r.u32()?);
                if !in_bounds(start, end) {
                    return Err(bad());
                }
                map.insert(id, (start, end));
            }
            Spans::Sparse(map)
        };
        Ok(Self { bytes, spans, n_vocab })
    }

    /// The bytes of `id`, `None` for an id without a token.
    #[inline]
    fn get(&self, id: u32) -> Option<&[u8]> {
        let (start, end) = match &self.spans {
            Spans::Dense { starts, present } => {
                let i = id as usize;
                if *present.get(i)? == 0 {
                    return None;
                }
                (starts[i], starts[i + 1])
            }
            Spans::Sparse(map) => *map.get(&id)?,
        };
        Some(&self.bytes[start as usize..end as usize])
    }
}

/// Where an id given by [`Encoding::encode_segments`] stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    /// The first id of a regex piece of ordinary text.
    PieceStart,
    /// A further id of the same piece.
    InPiece,
    /// A special token.
    Special,
}

/// A part of a text cut at special tokens ([`Encoding::for_each_segment`]).
enum Segment<'t> {
    /// Ordinary text (possibly empty).
    Text(&'t str),
    /// The id of an allowed special token.
    Special(u32),
}

/// tiktoken's error for a disallowed special token found in the text.
pub fn disallowed_special_error(token: &str) -> Error {
    let message = format!(
        "Encountered text corresponding to disallowed special token {t}.\n\
         If you want this text to be encoded as a special token, pass it to `allowed_special`, e.g. `allowed_special={{{t}, ...}}`.\n\
         If you want this text to be encoded as normal text, disable the check for this token by passing `disallowed_special=(enc.special_tokens_set - {{{t}}})`.\n\
         To disable this check for all special tokens, pass `disallowed_special=()`.\n",
        t = py_repr(token)
    );
    Error::DisallowedSpecialToken { token: token.to_owned(), message }
}

/// Python's `repr` of a str (enough for special tokens: quotes and backslash escapes).
fn py_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

impl Encoding {
    /// An encoding from its parts, as tiktoken's `Encoding(name, pat_str=, mergeable_ranks=,
    /// special_tokens=)`: any rank table tiktoken accepts (holes, far ranks, special ids
    /// anywhere, 2^32 - 1 included) gives tiktoken's ids, in memory proportional to the
    /// table; `explicit_n_vocab` is checked when given, as tiktoken checks it.
    pub fn new(
        name: &str,
        pat_str: &str,
        ranks: impl Into<format::Ranks>,
        special_tokens: &[(String, u32)],
        explicit_n_vocab: Option<u32>,
    ) -> Result<Self> {
        let ranks: format::Ranks = ranks.into();
        let desc = Self::describe(name, pat_str, special_tokens, explicit_n_vocab, false);
        let key = || table_cache::Key::new("tiktoken::Encoding(ranks)", &[desc.as_bytes(), &ranks.digest()]);
        Self::cached(key, name, pat_str, special_tokens, || Self::build(name, pat_str, &ranks, special_tokens, explicit_n_vocab))
    }

    /// The encoding stored under the key `key` makes (only when the cache is on: it hashes the
    /// whole table) in the [`table_cache`] (as `name`, `pat_str` and `special_tokens` make it),
    /// else the one `build` makes, then stored.
    fn cached(
        key: impl FnOnce() -> table_cache::Key,
        name: &str,
        pat_str: &str,
        special_tokens: &[(String, u32)],
        build: impl FnOnce() -> Result<Self>,
    ) -> Result<Self> {
        let read = |p: &table_cache::Payload| Self::read_table(name, pat_str, special_tokens, p.reader());
        Ok(table_cache::cached_status_keyed(key, read, build, Self::write_table)?.0)
    }

    /// [`Encoding::new`] without the cache.
    fn build(
        name: &str,
        pat_str: &str,
        ranks: &format::Ranks,
        special_tokens: &[(String, u32)],
        explicit_n_vocab: Option<u32>,
    ) -> Result<Self> {
        // Two special tokens may share an id (o200k_harmony's <|endofprompt|> and
        // <|reserved_200018|>): both encode to it; the first one given is what it decodes
        // to (as in tiktoken) and the one the tokenizer pipeline holds.
        let first_per_id = Self::first_per_id(special_tokens);
        let (tokenizer, rank_of) = format::build_tokenizer(ranks, pat_str, &first_per_id)?;
        let special_map: BTreeMap<String, u32> = special_tokens.iter().cloned().collect();
        // Special tokens first: where a rank has the same id, its bytes are what it decodes to.
        let tokens: Vec<(u32, &[u8])> = first_per_id.iter().map(|(c, id)| (*id, c.as_bytes())).chain(ranks.iter()).collect();
        let id_bytes = IdBytes::new(&tokens);
        if let Some(n) = explicit_n_vocab {
            if n as usize != id_bytes.n_vocab || ranks.len() + special_map.len() != n as usize {
                return Err(Error::invalid(format!(
                    "{name}: expected {n} tokens, have {} ranks and {} special tokens (max id {})",
                    ranks.len(),
                    special_map.len(),
                    id_bytes.n_vocab.saturating_sub(1)
                )));
            }
        }
        let rank_ids = ranks.iter().map(|(rank, _)| rank).collect();
        Self::assemble(name, pat_str, tokenizer, id_bytes, rank_ids, rank_of, special_map)
    }

    /// The encoding from its built parts: the special-token tables and automaton are made here.
    fn assemble(
        name: &str,
        pat_str: &str,
        tokenizer: Tokenizer,
        id_bytes: IdBytes,
        rank_ids: Vec<u32>,
        rank_of: format::RankOf,
        special_map: BTreeMap<String, u32>,
    ) -> Result<Self> {
        let (special_list, special_ids): (Vec<String>, Vec<u32>) = special_map.iter().map(|(c, &id)| (c.clone(), id)).unzip();
        let special_matcher = if special_list.is_empty() {
            None
        } else {
            Some(leftmost_longest(&special_list).map_err(|e| Error::invalid(format!("{name}: special tokens: {e}")))?)
        };
        Ok(Self {
            name: name.to_owned(),
            pat_str: pat_str.to_owned(),
            tokenizer,
            id_bytes,
            rank_ids,
            rank_of,
            special_tokens: special_map,
            special_list,
            special_ids,
            special_matcher,
            sorted_ranks: std::sync::OnceLock::new(),
            nfc: false,
        })
    }

    /// The special tokens with the first content of each id (the one it decodes to and the
    /// pipeline holds), in the order given.
    fn first_per_id(special_tokens: &[(String, u32)]) -> Vec<(String, u32)> {
        let mut ids_seen = ahash::AHashSet::new();
        special_tokens.iter().filter(|(_, id)| ids_seen.insert(*id)).cloned().collect()
    }

    /// What an encoding is besides its ranks, for the cache key.
    fn describe(name: &str, pat_str: &str, special_tokens: &[(String, u32)], n_vocab: Option<u32>, nfc: bool) -> String {
        let mut desc = format!("{name}\0{pat_str}\0{n_vocab:?}\0{nfc}");
        for (content, id) in special_tokens {
            desc.push_str(&format!("\0{id}:{content}"));
        }
        desc
    }

    /// Writes the built tables (model, id bytes, ranks) for [`table_cache`]; `None` when the
    /// model is not one the cache holds.
    fn write_table(&self) -> Option<Vec<u8>> {
        let crate::models::ModelWrapper::BPE(bpe) = self.tokenizer.get_model() else { return None };
        let mut w = table_cache::Writer::default();
        if !bpe.write_table(&mut w) {
            return None;
        }
        self.id_bytes.write_table(&mut w);
        w.u32s(&self.rank_ids);
        w.bool(self.rank_of.is_some());
        w.u32s(self.rank_of.as_deref().unwrap_or_default());
        Some(w.buf)
    }

    /// The encoding of `spec` from tables [`Encoding::write_table`] wrote.
    fn read_table(name: &str, pat_str: &str, special_tokens: &[(String, u32)], mut r: table_cache::Reader<'_>) -> Result<Self> {
        let bpe = crate::models::bpe::BPE::read_table(&mut r)?;
        let id_bytes = IdBytes::read_table(&mut r)?;
        let rank_ids = r.u32s()?;
        let has_rank_of = r.bool()?;
        let rank_of = Some(r.u32s()?.into_boxed_slice()).filter(|_| has_rank_of);
        r.finish()?;
        let tokenizer = format::pipeline(bpe, pat_str, &Self::first_per_id(special_tokens))?;
        let special_map = special_tokens.iter().cloned().collect();
        Self::assemble(name, pat_str, tokenizer, id_bytes, rank_ids, rank_of, special_map)
    }

    /// This encoding with text NFC-normalized before it is encoded (special tokens are matched
    /// in the normalized text), as Qwen's tokenizers do; the pipeline gets an NFC normalizer,
    /// so that it saves as Qwen's tokenizer.json does. Byte input (`encode_bytes`,
    /// `encode_single_piece`) is not normalized.
    pub fn with_nfc(mut self) -> Result<Self> {
        self.tokenizer.with_normalizer(Some(crate::normalizers::NormalizerWrapper::NFC(crate::normalizers::NFC)))?;
        self.nfc = true;
        Ok(self)
    }

    /// `text` as it is encoded: NFC-normalized when the encoding says so.
    fn normalized<'t>(&self, text: &'t str) -> Cow<'t, str> {
        use unicode_normalization_alignments::UnicodeNormalization;
        if !self.nfc || is_nfc(text) {
            return Cow::Borrowed(text);
        }
        Cow::Owned(text.nfc().map(|(c, _)| c).collect())
    }

    /// A named encoding (`cl100k_base`, `o200k_base`, ...; see [`format::ENCODING_NAMES`]),
    /// its rank file found in the data directories ([`format::data_dirs`]).
    pub fn get(name: &str) -> Result<Self> {
        let spec = EncodingSpec::named(name)?;
        let (path, sha256) = format::locate_spec_file(&spec)?;
        Self::load_spec(spec, &path, sha256)
    }

    /// A named encoding read from an explicit rank file.
    ///
    /// The built tables come from the [`table_cache`] when an earlier load of the same file and
    /// spec (by the same library) stored them, and are stored there after a build.
    pub fn from_spec(spec: EncodingSpec, rank_file: &Path) -> Result<Self> {
        Self::load_spec(spec, rank_file, None)
    }

    /// [`Encoding::from_spec`], the file's bytes checked against `sha256` when given (one
    /// read and one hash serve the check and the cache key).
    fn load_spec(spec: EncodingSpec, rank_file: &Path, sha256: Option<&str>) -> Result<Self> {
        let data = std::fs::read(rank_file).map_err(|source| Error::Io { path: rank_file.to_owned(), source })?;
        if let Some(want) = sha256 {
            let name = rank_file.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            format::check_sha256(rank_file, name, &format::sha256(&data), want)?;
        }
        let desc = Self::describe(&spec.name, &spec.pat_str, &spec.special_tokens, spec.explicit_n_vocab, spec.nfc);
        // XXH3-128 of the file, as `.model` entries are keyed (the sha256 above is a check of
        // a known file, not needed to name its tables): hashed only when the cache is on.
        let key = || {
            let digest = twox_hash::XxHash3_128::oneshot(&data).to_le_bytes();
            table_cache::Key::new("tiktoken::Encoding(rank file)", &[desc.as_bytes(), &digest])
        };
        let enc = Self::cached(key, &spec.name, &spec.pat_str, &spec.special_tokens, || {
            let ranks = format::parse_rank_file(&data, &rank_file.display().to_string())?;
            Self::build(&spec.name, &spec.pat_str, &ranks, &spec.special_tokens, spec.explicit_n_vocab)
                .map_err(|e| Error::invalid(format!("{}: {e}", rank_file.display())))
        })?;
        if spec.nfc {
            enc.with_nfc()
        } else {
            Ok(enc)
        }
    }

    /// A rank file with the pattern and special tokens of the named encoding its file name
    /// stands for (`cl100k_base.tiktoken`), or of `name` when given.
    pub fn from_file(path: &Path, name: Option<&str>) -> Result<Self> {
        let spec = match name {
            Some(n) => EncodingSpec::named(n)?,
            None => EncodingSpec::for_file_name(path).ok_or_else(|| {
                Error::invalid(format!(
                    "{}: the encoding cannot be told from the file name; name it (one of: {})",
                    path.display(),
                    format::ENCODING_NAMES.join(", ")
                ))
            })?,
        };
        Self::from_spec(spec, path)
    }

    /// GPT-2's original `encoder.json` + `vocab.bpe`, as tiktoken's `gpt2` encoding.
    pub fn from_gpt2_files(encoder_json: &Path, vocab_bpe: &Path) -> Result<Self> {
        let spec = EncodingSpec::named("gpt2")?;
        let ranks = format::gpt2_ranks(encoder_json, vocab_bpe)?;
        Self::new("gpt2", &spec.pat_str, ranks, &spec.special_tokens, spec.explicit_n_vocab)
    }

    /// The encoding's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The pattern as tiktoken has it.
    pub fn pat_str(&self) -> &str {
        &self.pat_str
    }
    /// The pipeline this encoding runs. Its ids are the ranks for every rank table whose
    /// ranks are dense (all real encodings); for a sparse one they are the model's own ids
    /// ([`format::RankOf`]): save it through [`Encoding::tokenizer_with_rank_ids`].
    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// The pipeline, when its ids are tiktoken's (to save it as tokenizer.json and use it with
    /// HF); an error for a sparse rank table, which has no such form.
    pub fn tokenizer_with_rank_ids(&self) -> Result<&Tokenizer> {
        match self.rank_of {
            None => Ok(&self.tokenizer),
            Some(_) => Err(Error::invalid(format!(
                "{}: the ranks are too sparse (or lack a single byte, or reach 2^32 - 1) for a tokenizer.json \
                 pipeline with tiktoken's ids",
                self.name
            ))),
        }
    }
    /// One more than the largest token id.
    pub fn n_vocab(&self) -> usize {
        self.id_bytes.n_vocab
    }
    /// The largest token id.
    pub fn max_token_value(&self) -> u32 {
        self.id_bytes.n_vocab.saturating_sub(1) as u32
    }
    /// The id of `<|endoftext|>`, if the encoding has it.
    pub fn eot_token(&self) -> Option<u32> {
        self.special_tokens.get("<|endoftext|>").copied()
    }
    /// The special tokens: content → id.
    pub fn special_tokens(&self) -> &BTreeMap<String, u32> {
        &self.special_tokens
    }
    /// The contents of the special tokens.
    pub fn special_tokens_set(&self) -> BTreeSet<String> {
        self.special_tokens.keys().cloned().collect()
    }
    /// Whether `id` is a special token.
    pub fn is_special_token(&self, id: u32) -> bool {
        self.special_ids.contains(&id)
    }
    /// The token of each rank (the mergeable ranks), in rank order.
    pub fn token_byte_values(&self) -> Vec<&[u8]> {
        self.rank_ids.iter().filter_map(|&id| self.token_bytes(id)).collect()
    }

    /// Whether `id` is a rank.
    fn is_rank(&self, id: u32) -> bool {
        self.rank_ids.binary_search(&id).is_ok()
    }

    /// The id tiktoken gives for the model's id `id` (the same id, unless the ranks are
    /// sparse); an error for a byte that has no rank, which tiktoken cannot encode either.
    #[inline]
    fn rank_of(&self, id: u32) -> Result<u32> {
        let Some(rank_of) = &self.rank_of else { return Ok(id) };
        rank_of.get(id as usize).copied().ok_or_else(|| {
            use crate::tokenizer::Model as _;
            let byte = self.plan().ok().and_then(|(bpe, _, _)| bpe.id_to_token(id)).and_then(format::byte_level_bytes);
            Error::invalid(format!(
                "{}: the text has a byte ({byte:02x?}) that the rank table has no token for and no merge takes \
                 (tiktoken fails on it too)",
                self.name
            ))
        })
    }

    /// [`Encoding::rank_of`] of every id of `ids`, in place.
    #[inline]
    fn to_ranks(&self, ids: &mut [u32]) -> Result<()> {
        if self.rank_of.is_some() {
            for id in ids {
                *id = self.rank_of(*id)?;
            }
        }
        Ok(())
    }

    fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        self.id_bytes.get(id)
    }

    /// The parts of the pipeline the encoding runs (its NFC, if any, is applied by the
    /// callers to the whole text: [`Encoding::normalized`]).
    fn plan(&self) -> Result<(&crate::models::bpe::BPE, &ByteLevelBpe, &SysRegex)> {
        let (bpe, raw, regex, _nfc) =
            ids_plan(&self.tokenizer).ok_or_else(|| Error::invalid("tiktoken encoding without a byte-level BPE pipeline"))?;
        Ok((bpe, raw, regex))
    }

    /// Encodes `text` ignoring special tokens (their text is ordinary text).
    pub fn encode_ordinary(&self, text: &str) -> Result<Vec<u32>> {
        let text = self.normalized(text);
        let mut out = Vec::with_capacity(text.len() / 4 + 1);
        self.encode_ordinary_into(&text, &mut out)?;
        Ok(out)
    }

    fn encode_ordinary_into(&self, text: &str, out: &mut Vec<u32>) -> Result<()> {
        let (_, raw, regex) = self.plan()?;
        let start = out.len();
        extend_piece_ids(raw, regex, text, out)?;
        self.to_ranks(&mut out[start..])
    }

    /// The number of tokens of `encode_ordinary(text)`, without building the ids.
    pub fn count_ordinary(&self, text: &str) -> Result<usize> {
        if self.rank_of.is_some() {
            // A byte without a rank is an error, as in encoding.
            return Ok(self.encode_ordinary(text)?.len());
        }
        let (_, raw, regex) = self.plan()?;
        let mut n = 0;
        for_each_piece_ids(raw, regex, &self.normalized(text), |_, _| n += 1)?;
        Ok(n)
    }

    /// The allowed set as ids-by-content, and a check of the disallowed ones (tiktoken's
    /// defaults: allowed none, disallowed all others).
    fn resolve(&self, text: &str, allowed: &SpecialTokens, disallowed: &SpecialTokens) -> Result<Vec<bool>> {
        let allowed_mask: Vec<bool> = match allowed {
            SpecialTokens::All => vec![true; self.special_list.len()],
            SpecialTokens::Set(s) => self.special_list.iter().map(|c| s.contains(c)).collect(),
        };
        let disallowed_mask: Vec<bool> = match disallowed {
            SpecialTokens::All => allowed_mask.iter().map(|a| !a).collect(),
            SpecialTokens::Set(s) => self.special_list.iter().map(|c| s.contains(c)).collect(),
        };
        // tiktoken searches for any disallowed token (given by content, known or not).
        if let SpecialTokens::Set(s) = disallowed {
            let unknown: Vec<&String> = s.iter().filter(|c| !self.special_tokens.contains_key(*c)).collect();
            if !unknown.is_empty() {
                let patterns: Vec<&String> = s.iter().filter(|c| !c.is_empty()).collect();
                let ac = leftmost_longest(&patterns).map_err(|e| Error::invalid(e.to_string()))?;
                if let Some(m) = ac.find(text) {
                    return Err(disallowed_special_error(&text[m.range()]));
                }
                return Ok(allowed_mask);
            }
        }
        if disallowed_mask.iter().any(|&d| d) {
            if let Some(ac) = &self.special_matcher {
                // The leftmost disallowed token; overlapping matches are looked at one by one.
                let mut from = 0;
                while let Some(m) = ac.find(aho_corasick::Input::new(text).range(from..)) {
                    if disallowed_mask[m.pattern().as_usize()] {
                        return Err(disallowed_special_error(&self.special_list[m.pattern().as_usize()]));
                    }
                    from = m.start() + 1;
                }
            }
        }
        Ok(allowed_mask)
    }

    /// Encodes `text` as tiktoken's `encode(text, allowed_special=, disallowed_special=)`:
    /// allowed special tokens become their ids, disallowed ones found in the text give
    /// tiktoken's error, the others are ordinary text.
    pub fn encode(&self, text: &str, allowed: &SpecialTokens, disallowed: &SpecialTokens) -> Result<Vec<u32>> {
        let text = &*self.normalized(text);
        let allowed_mask = self.resolve(text, allowed, disallowed)?;
        let (_, raw, regex) = self.plan()?;
        let mut out = Vec::with_capacity(text.len() / 4 + 1);
        let mut failed = Ok(());
        self.for_each_segment(text, &allowed_mask, |segment| match segment {
            Segment::Text(t) if failed.is_ok() => {
                let start = out.len();
                failed = extend_piece_ids(raw, regex, t, &mut out).and_then(|()| self.to_ranks(&mut out[start..]));
            }
            Segment::Text(_) => {}
            Segment::Special(id) => out.push(id),
        });
        failed.map(|()| out)
    }

    /// The number of tokens of `encode(text, ...)`, without building the ids of ordinary text.
    pub fn count(&self, text: &str, allowed: &SpecialTokens, disallowed: &SpecialTokens) -> Result<usize> {
        let text = &*self.normalized(text);
        let allowed_mask = self.resolve(text, allowed, disallowed)?;
        let mut n = 0;
        self.encode_segments(text, &allowed_mask, |_, _| n += 1)?;
        Ok(n)
    }

    /// Walks `text` cut at the allowed special tokens (`allowed_mask` by special-token index),
    /// calling `sink(id, at)` in text order with the ids of ordinary text and of each special
    /// token; `at` tells which (and where regex pieces start).
    fn encode_segments(&self, text: &str, allowed_mask: &[bool], mut sink: impl FnMut(u32, At)) -> Result<()> {
        let (_, raw, regex) = self.plan()?;
        let mut failed = Ok(());
        self.for_each_segment(text, allowed_mask, |segment| match segment {
            Segment::Text(t) if failed.is_ok() => {
                let mut unranked = Ok(());
                let found = for_each_piece_ids(raw, regex, t, |id, first| match self.rank_of(id) {
                    Ok(id) => sink(id, if first { At::PieceStart } else { At::InPiece }),
                    Err(e) => {
                        if unranked.is_ok() {
                            unranked = Err(e);
                        }
                    }
                });
                failed = found.and(unranked);
            }
            Segment::Text(_) => {}
            Segment::Special(id) => sink(id, At::Special),
        });
        failed
    }

    /// Cuts `text` at the allowed special tokens (`allowed_mask` by special-token index),
    /// calling `each` on the ordinary text between them and on each one, in text order.
    fn for_each_segment<'t>(&self, text: &'t str, allowed_mask: &[bool], mut each: impl FnMut(Segment<'t>)) {
        let Some(ac) = self.special_matcher.as_ref().filter(|_| allowed_mask.iter().any(|&a| a)) else {
            each(Segment::Text(text));
            return;
        };
        let (mut start, mut from) = (0, 0);
        while let Some(m) = ac.find(aho_corasick::Input::new(text).range(from..)) {
            let k = m.pattern().as_usize();
            if !allowed_mask[k] {
                from = m.start() + 1;
                continue;
            }
            each(Segment::Text(&text[start..m.start()]));
            each(Segment::Special(self.special_ids[k]));
            start = m.end();
            from = start;
        }
        each(Segment::Text(&text[start..]));
    }

    /// [`Encoding::encode`] on each text, in parallel; the first error stops the batch.
    pub fn encode_batch(&self, texts: &[&str], allowed: &SpecialTokens, disallowed: &SpecialTokens) -> Result<Vec<Vec<u32>>> {
        crate::utils::parallel::try_map(texts, |t| t.len(), |t| self.encode(t, allowed, disallowed))
    }

    /// [`Encoding::encode_ordinary`] on each text, in parallel.
    pub fn encode_ordinary_batch(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>> {
        crate::utils::parallel::try_map(texts, |t| t.len(), |t| self.encode_ordinary(t))
    }

    /// The id of the token whose bytes are `bytes` (a rank or a special token).
    pub fn encode_single_token(&self, bytes: &[u8]) -> Result<u32> {
        if let Some(id) = std::str::from_utf8(bytes).ok().and_then(|s| self.special_tokens.get(s)) {
            return Ok(*id);
        }
        let (bpe, _, _) = self.plan()?;
        let s = format::byte_level_string(bytes);
        use crate::tokenizer::Model as _;
        bpe.token_to_id(&s)
            .and_then(|id| self.rank_of(id).ok())
            .filter(|&id| self.is_rank(id))
            .ok_or_else(|| Error::invalid(format!("no single token has the bytes {bytes:?}")))
    }

    /// The bytes of token `id`.
    pub fn decode_single_token_bytes(&self, id: u32) -> Result<&[u8]> {
        self.token_bytes(id).ok_or(Error::IdOutOfRange { id, vocab_size: self.n_vocab() })
    }

    /// The bytes of each token.
    pub fn decode_tokens_bytes(&self, ids: &[u32]) -> Result<Vec<&[u8]>> {
        ids.iter().map(|&id| self.decode_single_token_bytes(id)).collect()
    }

    /// The concatenated bytes of the tokens.
    pub fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(ids.len() * 4);
        for &id in ids {
            out.extend_from_slice(self.decode_single_token_bytes(id)?);
        }
        Ok(out)
    }

    /// The text of the tokens; invalid UTF-8 becomes U+FFFD (tiktoken's `errors="replace"`).
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        Ok(String::from_utf8_lossy(&self.decode_bytes(ids)?).into_owned())
    }

    /// The text of the tokens; an error when the bytes are not valid UTF-8
    /// (tiktoken's `errors="strict"`).
    pub fn decode_strict(&self, ids: &[u32]) -> Result<String> {
        String::from_utf8(self.decode_bytes(ids)?).map_err(|e| {
            Error::invalid(format!("'utf-8' codec can't decode the tokens: invalid byte at offset {}", e.utf8_error().valid_up_to()))
        })
    }

    /// The text and, per token, the char offset where it starts (tiktoken's
    /// `decode_with_offsets`: a token starting with a continuation byte starts in the char
    /// before). Errors when the bytes are not valid UTF-8.
    pub fn decode_with_offsets(&self, ids: &[u32]) -> Result<(String, Vec<usize>)> {
        let mut offsets = Vec::with_capacity(ids.len());
        let mut text_len = 0usize;
        for &id in ids {
            let t = self.decode_single_token_bytes(id)?;
            let starts_inside = t.first().is_some_and(|&b| is_continuation(b));
            offsets.push(text_len.saturating_sub(usize::from(starts_inside)));
            text_len += t.iter().filter(|&&b| !is_continuation(b)).count();
        }
        Ok((self.decode_strict(ids)?, offsets))
    }

    /// What `tokenkit inspect` prints for the encoding: its name, pattern, vocabulary and
    /// special tokens, then the pipeline it runs ([`crate::formats::inspect`]).
    pub fn inspect(&self) -> String {
        let mut by_id: Vec<(&u32, &String)> = self.special_tokens.iter().map(|(t, id)| (id, t)).collect();
        by_id.sort();
        let specials: Vec<String> = by_id.iter().map(|(id, t)| format!("{id}={t:?}")).collect();
        format!(
            "format:         tiktoken encoding {} ({} ranks; n_vocab {}, eot_token {})\n\
             pattern:        {}\n\
             special tokens: {}\n\
             as a tokenizer.json pipeline:\n{}",
            self.name,
            self.rank_ids.len(),
            self.n_vocab(),
            self.eot_token().map_or("none".into(), |t| t.to_string()),
            self.pat_str,
            crate::formats::list(&specials, 24),
            crate::formats::inspect(&self.tokenizer)
        )
    }
}

mod unstable;

#[cfg(test)]
mod tests;
