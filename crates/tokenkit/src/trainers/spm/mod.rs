//! Training SentencePiece models (`spm_train`, `SentencePieceTrainer.train`): the sentencepiece
//! trainer's options and input rules, writing `PREFIX.model` (a `ModelProto` that the
//! `sentencepiece` library loads) and `PREFIX.vocab`.
//!
//! ```no_run
//! use tokenkit::trainers::spm::{self, SpmTrainerSpec};
//! let spec = SpmTrainerSpec::parse_args("--input=corpus.txt --model_prefix=m --vocab_size=8000 --model_type=bpe")?;
//! let proto = spm::train_files(&spec)?;
//! spm::save(&proto, "m")?;
//! # Ok::<(), tokenkit::Error>(())
//! ```
//!
//! The input goes through sentencepiece's steps (`trainer_interface.cc`): lines without their
//! `\n`, empty ones, those longer than `max_sentence_length` bytes and those holding `▅` are
//! skipped; `input_sentence_size` keeps the first sentences or, with
//! `shuffle_input_sentence`, a random sample (reservoir sampling with a fixed seed; not the
//! same sample as sentencepiece's); each sentence is normalized by the chosen rule and its
//! meta pieces (unk, bos, eos, pad, control and user-defined symbols, bytes) are replaced by a
//! boundary; the alphabet is the most frequent chars up to `character_coverage`, and rarer
//! chars become unknown. Unlike sentencepiece, sentences are counted (in parallel, as a map of
//! distinct words) rather than kept, so memory grows with the distinct words.
//!
//! BPE, char and word models have the same pieces and scores as sentencepiece's; Unigram uses
//! tokenkit's Unigram trainer with sentencepiece 0.2.3's seeds, EM and pruning
//! ([`crate::models::unigram::trainer::SpmInput`]) on the same sentences, words and alphabet.

mod bpe;
mod options;
#[cfg(test)]
mod tests;

use std::io::{BufRead, BufReader};
use std::path::Path;

use ahash::AHashMap;
use aho_corasick::{AhoCorasick, MatchKind};
use rand::{Rng, SeedableRng};
use rayon::prelude::*;

use crate::models::unigram::trainer::piece_rules::{PieceRules, BOUNDARY, UNK_CHAR};
pub use options::SpmTrainerSpec;

use super::{count_words, NoProgress, WordCounts};
use crate::formats::sentencepiece::charsmaps;
use crate::formats::sentencepiece::normalizer::{Normalized, SpNormalizer};
use crate::formats::sentencepiece::proto::{ModelProto, ModelType, NormalizerSpec, Piece, PieceType, TrainerSpec};
use crate::normalizers::Precompiled;
use crate::{Error, Result};

/// The pieces with a fixed id (unk, bos, eos, pad, control and user-defined symbols, bytes),
/// placed as sentencepiece's `InitMetaPieces` does.
fn meta_pieces(spec: &SpmTrainerSpec) -> Result<std::collections::BTreeMap<i32, (String, PieceType)>> {
    let mut meta = std::collections::BTreeMap::new();
    let err = |m: String| Err(Error::invalid(format!("sentencepiece trainer: {m}")));
    let mut has_unk = false;
    for (name, id, piece) in [
        ("unk", spec.unk_id, &spec.unk_piece),
        ("bos", spec.bos_id, &spec.bos_piece),
        ("eos", spec.eos_id, &spec.eos_piece),
        ("pad", spec.pad_id, &spec.pad_piece),
    ] {
        if id < 0 {
            continue;
        }
        let is_unk = *piece == spec.unk_piece;
        if id >= spec.vocab_size || meta.contains_key(&id) || (has_unk && is_unk) {
            return err(format!("{name}_id={id} ({piece:?}) is out of range or already taken (vocab_size {})", spec.vocab_size));
        }
        has_unk |= is_unk;
        meta.insert(id, (piece.clone(), if is_unk { PieceType::Unknown } else { PieceType::Control }));
    }
    if !has_unk {
        return err(format!("{} must be defined (unk_id must not be -1)", spec.unk_piece));
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut next = 0;
    let symbols = spec.control_symbols.iter().map(|s| (s.clone(), PieceType::Control));
    let symbols = symbols.chain(spec.user_defined_symbols.iter().map(|s| (s.clone(), PieceType::UserDefined)));
    let bytes = (0..256).filter(|_| spec.byte_fallback).map(|b| (format!("<0x{b:02X}>"), PieceType::Byte));
    for (w, kind) in symbols.chain(bytes) {
        if !seen.insert(w.clone()) {
            return err(format!("{w} is already defined. duplicated symbols are not allowed."));
        }
        if w == spec.unk_piece {
            return err(format!("{w} must not be defined with --control_symbols and --user_defined_symbols."));
        }
        let special = [(spec.bos_id, &spec.bos_piece), (spec.eos_id, &spec.eos_piece), (spec.pad_id, &spec.pad_piece)];
        if let Some(&(id, _)) = special.iter().find(|(id, p)| **p == w && *id >= 0) {
            meta.get_mut(&id).expect("placed above").1 = kind;
        } else {
            while meta.contains_key(&next) {
                next += 1;
            }
            meta.insert(next, (w, kind));
        }
    }
    Ok(meta)
}

/// The piece rules of `spec`.
fn piece_rules(spec: &SpmTrainerSpec) -> PieceRules {
    PieceRules {
        max_len: spec.max_sentencepiece_length.max(0) as usize,
        split_by_whitespace: spec.split_by_whitespace,
        split_by_unicode_script: spec.split_by_unicode_script,
        split_by_number: spec.split_by_number,
        split_digits: spec.split_digits,
    }
}

/// `SplitIntoWords`: a new word at the start and at each `▁`.
fn split_into_words(s: &str, mut f: impl FnMut(&str)) {
    crate::models::sentencepiece::model::split_into_words(s, |start, end| f(&s[start..end]));
}

/// Reads the sentences of `files`: each line without its `\n`, in order (sentencepiece's
/// reader); a line that is not UTF-8 is an error naming the file and line.
pub fn read_lines(files: &[String]) -> impl Iterator<Item = Result<String>> + '_ {
    files.iter().flat_map(|path| {
        let opened = std::fs::File::open(path).map_err(|source| Error::Io { path: path.into(), source });
        let (reader, first_err) = match opened {
            Ok(f) => (Some(BufReader::new(f)), None),
            Err(e) => (None, Some(e)),
        };
        let mut line_no = 0u64;
        let lines = reader.into_iter().flat_map(move |mut r| {
            std::iter::from_fn(move || {
                let mut buf = Vec::new();
                match r.read_until(b'\n', &mut buf) {
                    Ok(0) => None,
                    Ok(_) => {
                        line_no += 1;
                        if buf.last() == Some(&b'\n') {
                            buf.pop();
                        }
                        Some(String::from_utf8(buf).map_err(|_| Error::invalid(format!("{path}:{line_no}: the line is not valid UTF-8"))))
                    }
                    Err(source) => Some(Err(Error::Io { path: path.into(), source })),
                }
            })
        });
        first_err.map(Err).into_iter().chain(lines)
    })
}

/// sentencepiece's input filter: empty sentences, those longer than `max_sentence_length` bytes
/// and those holding `▅` are skipped.
fn keep_sentence(spec: &SpmTrainerSpec, s: &str) -> bool {
    !s.is_empty() && s.len() <= spec.max_sentence_length as usize && !s.contains(UNK_CHAR)
}

/// sentencepiece's input filter and `input_sentence_size` selection.
fn select_sentences<I: Iterator<Item = Result<String>>>(spec: &SpmTrainerSpec, sentences: I) -> Result<Vec<String>> {
    let wanted = spec.input_sentence_size as usize;
    let mut kept = Vec::new();
    let mut total = 0usize;
    let mut rng = rand::rngs::StdRng::seed_from_u64(12345678);
    for s in sentences {
        let s = s?;
        if !keep_sentence(spec, &s) {
            continue;
        }
        total += 1;
        if wanted == 0 {
            kept.push(s);
        } else if !spec.shuffle_input_sentence {
            kept.push(s);
            if kept.len() >= wanted {
                break;
            }
        } else if kept.len() < wanted {
            kept.push(s);
        } else {
            let n = rng.gen_range(0..total);
            if n < kept.len() {
                kept[n] = s;
            }
        }
    }
    Ok(kept)
}

/// What training read and made.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpmTrainReport {
    /// Sentences used (after filtering and sampling).
    pub sentences: u64,
    /// Distinct words (or sentences, without `split_by_whitespace`) after normalization.
    pub distinct_words: usize,
    /// Chars in the alphabet.
    pub alphabet: usize,
}

/// Trains on the files of `spec.input`.
pub fn train_files(spec: &SpmTrainerSpec) -> Result<ModelProto> {
    if spec.input.is_empty() {
        return Err(Error::invalid("sentencepiece trainer: --input is empty (give the training files)"));
    }
    train(spec, read_lines(&spec.input)).map(|(p, _)| p)
}

/// Trains a model on `sentences` (one sentence each) with `spec`; returns the `ModelProto`
/// sentencepiece would write, and what was read.
pub fn train<I: Iterator<Item = Result<String>> + Send>(spec: &SpmTrainerSpec, sentences: I) -> Result<(ModelProto, SpmTrainReport)> {
    spec.verify()?;
    let meta = meta_pieces(spec)?;
    let threads = (spec.num_threads.max(1) as usize).min(std::thread::available_parallelism().map_or(1, |n| n.get()));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::invalid(format!("sentencepiece trainer: cannot start {threads} threads: {e}")))?;
    if spec.input_sentence_size == 0 {
        // Streamed: the sentences are counted as they are read, never all held.
        let keep = |s: &Result<String>| s.as_ref().map_or(true, |s| keep_sentence(spec, s));
        return pool.install(|| train_selected(spec, &meta, sentences.filter(keep)));
    }
    let selected = select_sentences(spec, sentences)?;
    pool.install(|| train_selected(spec, &meta, selected.into_iter().map(Ok)))
}

/// Replaces the chars of `text` outside `alphabet` (rare chars, boundaries) by `▅`, as
/// sentencepiece's trainer does; whether there were any.
fn rare_as_unk(text: &mut String, alphabet: &ahash::AHashSet<char>) -> bool {
    if text.chars().all(|c| alphabet.contains(&c)) {
        return false;
    }
    *text = text.chars().map(|c| if alphabet.contains(&c) { c } else { UNK_CHAR }).collect();
    true
}

thread_local! {
    /// A normalized sentence of the trainer's, on each thread.
    static NORMALIZED: std::cell::RefCell<Normalized> = std::cell::RefCell::new(Normalized::default());
}

/// Sentences normalized in parallel at a time (in order) when they are kept.
const SENTENCE_BATCH: usize = 16 * 1024;

fn train_selected<I: Iterator<Item = Result<String>>>(
    spec: &SpmTrainerSpec,
    meta: &std::collections::BTreeMap<i32, (String, PieceType)>,
    selected: I,
) -> Result<(ModelProto, SpmTrainReport)> {
    let charsmap = charsmaps::charsmap(&spec.normalization_rule_name)?;
    let precompiled = if charsmap.is_empty() { None } else { Some(Precompiled::from_bytes(charsmap.clone())?) };
    let user: Vec<&str> = spec.user_defined_symbols.iter().map(String::as_str).collect();
    let normalizer = SpNormalizer::new(precompiled, &user, spec.add_dummy_prefix, spec.remove_extra_whitespaces, true, false);
    let meta_matcher = AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostLongest)
        .build(meta.values().map(|(p, _)| p.as_str()))
        .map_err(|e| Error::invalid(format!("sentencepiece trainer: meta pieces: {e}")))?;
    // Units counted: words (split at `▁`) or whole sentences.
    let by_words = spec.split_by_whitespace || spec.model_type == ModelType::Word;
    let tabs = vec!["\t"; meta.len()];
    // The normalized sentence, in a buffer of this thread's (no string made for it unless it
    // holds meta pieces).
    let with_normalized = |s: &str, f: &mut dyn FnMut(&str)| {
        NORMALIZED.with(|cell| {
            let mut out = cell.borrow_mut();
            normalizer.normalize_text(s, &mut out);
            if meta_matcher.is_match(&out.text) {
                f(&meta_matcher.replace_all(&out.text, &tabs));
            } else {
                f(&out.text);
            }
        })
    };
    let normalize = |s: &str| -> String {
        let mut owned = String::new();
        with_normalized(s, &mut |t| owned = t.to_owned());
        owned
    };
    let split_words = |text: &str, f: &mut dyn FnMut(&str)| -> Result<()> {
        if by_words {
            split_into_words(text, f);
        } else if !text.is_empty() {
            f(text);
        }
        Ok(())
    };
    // The Unigram trainer takes its seeds from the whole sentences, so it keeps them (as
    // sentencepiece does for every model), in their input order whatever the thread count
    // (the seeds' counts depend on which sentence follows which).
    let mut sentences: Vec<String> = Vec::new();
    let (counts, n_sentences) = if spec.model_type == ModelType::Unigram {
        let mut batch: Vec<String> = Vec::new();
        let mut selected = selected.peekable();
        while selected.peek().is_some() {
            batch.clear();
            for s in selected.by_ref().take(SENTENCE_BATCH) {
                batch.push(s?);
            }
            sentences.par_extend(batch.par_iter().map(|s| normalize(s)));
        }
        let counted = count_words(sentences.iter().map(Ok), &split_words, &NoProgress)?;
        sentences.retain(|s| !s.is_empty());
        counted
    } else {
        let split = |s: &str, f: &mut dyn FnMut(&str)| {
            let mut done = Ok(());
            with_normalized(s, &mut |t| done = split_words(t, f));
            done
        };
        count_words(selected, &split, &NoProgress)?
    };
    if counts.is_empty() {
        return Err(Error::invalid("sentencepiece trainer: the input has no sentences (all empty, too long or skipped)"));
    }

    // The alphabet: chars by count until `character_coverage` of all chars is reached.
    // (Counted in parallel runs of words; integer sums, so in any order.)
    let mut words: Vec<(String, u64)> = counts.into_iter().collect();
    let char_counts: AHashMap<char, u64> = words
        .par_chunks(4096)
        .map(|chunk| {
            let mut m: AHashMap<char, u64> = AHashMap::new();
            for (w, n) in chunk {
                for c in w.chars().filter(|&c| c != '\0') {
                    *m.entry(c).or_insert(0) += n;
                }
            }
            m
        })
        .reduce(AHashMap::new, |mut a, mut b| {
            if a.len() < b.len() {
                std::mem::swap(&mut a, &mut b);
            }
            for (c, n) in b {
                *a.entry(c).or_insert(0) += n;
            }
            a
        });
    let all: u64 = char_counts.values().sum();
    let mut sorted: Vec<(char, u64)> = char_counts.into_iter().collect();
    sorted.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut required: Vec<(char, u64)> = Vec::new();
    let mut acc = 0u64;
    for &(c, n) in &sorted {
        let coverage = (acc as f64 / all as f64) as f32;
        if !spec.use_all_vocab && coverage >= spec.character_coverage {
            break;
        }
        acc += n;
        if c == BOUNDARY {
            continue;
        }
        required.push((c, n));
    }
    let alphabet: ahash::AHashSet<char> = required.iter().map(|&(c, _)| c).collect();
    if !matches!(spec.model_type, ModelType::Word | ModelType::Char) && required.len() + meta.len() > spec.vocab_size as usize {
        return Err(Error::invalid(format!(
            "sentencepiece trainer: Vocabulary size is smaller than required_chars. {} vs {}. \
             Increase vocab_size or decrease character_coverage with --character_coverage option.",
            spec.vocab_size,
            required.len() + meta.len()
        )));
    }
    // Rare chars (and boundaries) become `▅`; words made equal by it are added up.
    let replaced = std::sync::atomic::AtomicBool::new(false);
    words.par_iter_mut().for_each(|(w, _)| {
        if rare_as_unk(w, &alphabet) {
            replaced.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    });
    if replaced.into_inner() {
        words.par_sort_unstable_by(|a, b| a.0.cmp(&b.0));
        words.dedup_by(|next, kept| {
            let same = next.0 == kept.0;
            if same {
                kept.1 += next.1;
            }
            same
        });
    }
    let report = SpmTrainReport { sentences: n_sentences, distinct_words: words.len(), alphabet: required.len() };
    words.par_sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));

    let slots = (spec.vocab_size as usize).saturating_sub(meta.len());
    let pieces: Vec<(String, f32)> = match spec.model_type {
        ModelType::Bpe => {
            let n_merges = slots.saturating_sub(required.len());
            bpe::train(words, &required, n_merges, piece_rules(spec))?
        }
        ModelType::Char => {
            let sum: u64 = required.iter().map(|(_, n)| n).sum();
            let log_sum = (sum as f32).ln();
            let take = if spec.use_all_vocab { required.len() } else { slots.min(required.len()) };
            required[..take].iter().map(|&(c, n)| (c.to_string(), (n as f32).ln() - log_sum)).collect()
        }
        ModelType::Word => {
            let sum: u64 = words.iter().map(|(_, n)| n).sum();
            let log_sum = (sum as f32).ln();
            let mut out = Vec::new();
            for (w, n) in &words {
                if w.contains(UNK_CHAR) {
                    continue;
                }
                if !spec.use_all_vocab && out.len() == slots {
                    break;
                }
                out.push((w.clone(), (*n as f32).ln() - log_sum));
            }
            out
        }
        ModelType::Unigram => {
            // The sentences as sentencepiece trains on them: rare chars (and boundaries) as `▅`.
            sentences.par_iter_mut().for_each(|s| {
                rare_as_unk(s, &alphabet);
            });
            unigram(spec, &words, &required, &sentences, slots)?
        }
    };
    let proto = serialize(spec, meta, pieces, charsmap)?;
    Ok((proto, report))
}

/// Unigram: tokenkit's Unigram trainer as sentencepiece's (`train_spm`) on the sentences and
/// words, with the alphabet as its required chars.
fn unigram(
    spec: &SpmTrainerSpec,
    words: &[(String, u64)],
    required: &[(char, u64)],
    sentences: &[String],
    slots: usize,
) -> Result<Vec<(String, f32)>> {
    // The words keep their `▅`: an unknown char's lattice node counts for sentencepiece's
    // first piece (see `SpmInput`), so cutting the words there would change the counts.
    let counts: WordCounts = words.iter().cloned().collect();
    let trainer = crate::trainers::UnigramTrainer {
        show_progress: false,
        vocab_size: slots as u32,
        n_sub_iterations: spec.num_sub_iterations as u32,
        shrinking_factor: f64::from(spec.shrinking_factor),
        special_tokens: Vec::new(),
        initial_alphabet: required.iter().map(|&(c, _)| c).collect(),
        unk_token: None,
        max_piece_length: spec.max_sentencepiece_length as usize,
        // A negative size is no limit (the cast wraps to usize::MAX, as in sentencepiece).
        seed_size: spec.seed_sentencepiece_size as usize,
    };
    let alphabet: Vec<char> = required.iter().map(|&(c, _)| c).collect();
    let input = crate::models::unigram::trainer::SpmInput {
        rules: piece_rules(spec),
        sentences,
        alphabet: &alphabet,
        vocab_size: spec.vocab_size.max(0) as u32,
    };
    let model = trainer.train_spm(&counts, &input, &NoProgress)?;
    Ok(model.pieces().iter().map(|(p, s)| (p.clone(), *s as f32)).collect())
}

/// `TrainerInterface::Serialize`: meta pieces at their ids, the learnt pieces in the other
/// slots, and the specs.
fn serialize(
    spec: &SpmTrainerSpec,
    meta: &std::collections::BTreeMap<i32, (String, PieceType)>,
    pieces: Vec<(String, f32)>,
    charsmap: Vec<u8>,
) -> Result<ModelProto> {
    let mut out: Vec<Piece> = Vec::with_capacity(spec.vocab_size as usize);
    let mut seen = ahash::AHashSet::new();
    let mut learnt = pieces.into_iter();
    let mut left = learnt.len();
    for id in 0..spec.vocab_size {
        let (piece, score, kind) = if let Some((p, k)) = meta.get(&id) {
            if out.len() != id as usize {
                return Err(Error::invalid(format!(
                    "sentencepiece trainer: too few pieces were learnt to place {p:?} at id {id}; lower the ids or vocab_size"
                )));
            }
            (p.clone(), 0.0, Some(*k as i32))
        } else if let Some((p, s)) = learnt.next() {
            left -= 1;
            (p, s, None)
        } else {
            continue;
        };
        if !seen.insert(piece.clone()) {
            return Err(Error::invalid(format!("sentencepiece trainer: {piece} is already defined")));
        }
        out.push(Piece { piece: Some(piece), score: Some(score), r#type: kind });
    }
    debug_assert_eq!(left, 0);
    let mut trainer = TrainerSpec {
        input: spec.input.clone(),
        model_prefix: Some(spec.model_prefix.clone()),
        model_type: Some(spec.model_type as i32),
        vocab_size: Some(spec.vocab_size),
        self_test_sample_size: Some(0),
        input_format: Some(String::new()),
        character_coverage: Some(spec.character_coverage),
        input_sentence_size: Some(spec.input_sentence_size),
        shuffle_input_sentence: Some(spec.shuffle_input_sentence),
        seed_sentencepiece_size: Some(spec.seed_sentencepiece_size),
        shrinking_factor: Some(spec.shrinking_factor),
        max_sentence_length: Some(spec.max_sentence_length),
        num_threads: Some(spec.num_threads),
        num_sub_iterations: Some(spec.num_sub_iterations),
        max_sentencepiece_length: Some(spec.max_sentencepiece_length),
        split_by_unicode_script: Some(spec.split_by_unicode_script),
        split_by_number: Some(spec.split_by_number),
        split_by_whitespace: Some(spec.split_by_whitespace),
        treat_whitespace_as_suffix: Some(false),
        allow_whitespace_only_pieces: Some(false),
        split_digits: Some(spec.split_digits),
        control_symbols: spec.control_symbols.clone(),
        user_defined_symbols: spec.user_defined_symbols.clone(),
        byte_fallback: Some(spec.byte_fallback),
        vocabulary_output_piece_score: Some(spec.vocabulary_output_piece_score),
        hard_vocab_limit: Some(spec.hard_vocab_limit),
        use_all_vocab: Some(spec.use_all_vocab),
        unk_id: Some(spec.unk_id),
        bos_id: Some(spec.bos_id),
        eos_id: Some(spec.eos_id),
        pad_id: Some(spec.pad_id),
        unk_piece: Some(spec.unk_piece.clone()),
        bos_piece: Some(spec.bos_piece.clone()),
        eos_piece: Some(spec.eos_piece.clone()),
        pad_piece: Some(spec.pad_piece.clone()),
        unk_surface: Some(spec.unk_surface.clone()),
        train_extremely_large_corpus: Some(false),
    };
    let n = out.len() as i32;
    if !spec.hard_vocab_limit || spec.model_type == ModelType::Char {
        trainer.vocab_size = Some(n);
    } else if n != spec.vocab_size {
        return Err(Error::invalid(format!(
            "sentencepiece trainer: Vocabulary size too high ({}). Please set it to a value <= {n}.",
            spec.vocab_size
        )));
    }
    let normalizer = NormalizerSpec {
        name: Some(spec.normalization_rule_name.clone()),
        precompiled_charsmap: Some(charsmap),
        add_dummy_prefix: Some(spec.add_dummy_prefix),
        remove_extra_whitespaces: Some(spec.remove_extra_whitespaces),
        escape_whitespaces: Some(true),
        normalization_rule_tsv: None,
    };
    Ok(ModelProto { pieces: out, trainer_spec: Some(trainer), normalizer_spec: Some(normalizer), denormalizer_spec: None })
}

/// A float as C++'s `ostream << float` prints it (`%g`, 6 significant digits), as
/// sentencepiece writes scores into `.vocab` files.
fn format_score(v: f32) -> String {
    let v = f64::from(v);
    if v == 0.0 {
        return if v.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    let sci = format!("{v:.5e}");
    let (mantissa, exp) = sci.split_once('e').expect("{:e} has an exponent");
    let exp: i32 = exp.parse().expect("{:e} exponent is a number");
    let strip = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            s.to_owned()
        }
    };
    if !(-4..6).contains(&exp) {
        format!("{}e{}{:02}", strip(mantissa), if exp < 0 { '-' } else { '+' }, exp.abs())
    } else {
        strip(&format!("{v:.*}", (5 - exp).max(0) as usize))
    }
}

/// The `.vocab` text: `piece<TAB>score` per line (just the piece without
/// `vocabulary_output_piece_score`).
pub fn vocab_text(proto: &ModelProto) -> String {
    let with_score = proto.trainer_spec.as_ref().and_then(|t| t.vocabulary_output_piece_score).unwrap_or(true);
    let mut s = String::new();
    for p in &proto.pieces {
        s.push_str(p.piece.as_deref().unwrap_or(""));
        if with_score {
            s.push('\t');
            s.push_str(&format_score(p.score.unwrap_or(0.0)));
        }
        s.push('\n');
    }
    s
}

/// The bytes of the `.model` file of `proto`.
pub fn model_bytes(proto: &ModelProto) -> Vec<u8> {
    use prost::Message as _;
    proto.encode_to_vec()
}

/// Writes `PREFIX.model` and `PREFIX.vocab`, both or neither (atomically).
pub fn save(proto: &ModelProto, prefix: impl AsRef<Path>) -> Result<()> {
    let prefix = prefix.as_ref().as_os_str().to_owned();
    let with = |ext: &str| {
        let mut p = prefix.clone();
        p.push(ext);
        std::path::PathBuf::from(p)
    };
    let mut files = crate::utils::atomic_file::AtomicFiles::new();
    files.write(with(".model"), &model_bytes(proto))?;
    files.write(with(".vocab"), vocab_text(proto).as_bytes())?;
    files.commit()
}
