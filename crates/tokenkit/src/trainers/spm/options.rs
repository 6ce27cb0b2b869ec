//! The options of sentencepiece's trainer (`spm_train` flags, `SentencePieceTrainer.train`
//! keywords), with sentencepiece's names, defaults and range checks.

use crate::formats::sentencepiece::proto::ModelType;
use crate::{Error, Result};

/// Options of [`train`](super::train), named and defaulted as sentencepiece's `TrainerSpec`
/// and `NormalizerSpec`.
#[derive(Debug, Clone, PartialEq)]
pub struct SpmTrainerSpec {
    /// Input text files, one sentence per line (empty when sentences come from an iterator).
    pub input: Vec<String>,
    /// Output prefix: `PREFIX.model` and `PREFIX.vocab`.
    pub model_prefix: String,
    /// Unigram (default), BPE, word or char.
    pub model_type: ModelType,
    /// Vocabulary size, meta pieces included (default 8000).
    pub vocab_size: i32,
    /// Share of the chars (by count) kept in the alphabet; the rest become unk (default 0.9995).
    pub character_coverage: f32,
    /// `nmt_nfkc` (default), `nfkc`, `nmt_nfkc_cf`, `nfkc_cf` or `identity`.
    pub normalization_rule_name: String,
    /// Digits are pieces of their own.
    pub split_digits: bool,
    /// Pieces do not cross whitespace (default true).
    pub split_by_whitespace: bool,
    /// Pieces do not cross Unicode scripts (default true).
    pub split_by_unicode_script: bool,
    /// Pieces do not cross a digit and a non-digit (default true).
    pub split_by_number: bool,
    /// Adds the 256 byte pieces `<0x00>`...`<0xFF>`.
    pub byte_fallback: bool,
    /// Pieces always kept whole, never split and never normalized.
    pub user_defined_symbols: Vec<String>,
    /// Pieces never produced from text (added to the vocabulary only).
    pub control_symbols: Vec<String>,
    /// Longest piece, in chars (default 16).
    pub max_sentencepiece_length: i32,
    /// Sentences used for training (0: all).
    pub input_sentence_size: u64,
    /// With `input_sentence_size`: sample the sentences at random (default true) rather than
    /// take the first ones.
    pub shuffle_input_sentence: bool,
    /// Longer sentences, in bytes, are skipped (default 4192).
    pub max_sentence_length: i32,
    /// Prepend `▁` to the text (default true).
    pub add_dummy_prefix: bool,
    /// Drop leading, trailing and repeated whitespace (default true).
    pub remove_extra_whitespaces: bool,
    /// Ids of the unk, bos, eos and pad pieces (-1: none; defaults 0, 1, 2, -1).
    pub unk_id: i32,
    /// See `unk_id`.
    pub bos_id: i32,
    /// See `unk_id`.
    pub eos_id: i32,
    /// See `unk_id`.
    pub pad_id: i32,
    /// The unk, bos, eos and pad pieces (`<unk>`, `<s>`, `</s>`, `<pad>`).
    pub unk_piece: String,
    /// See `unk_piece`.
    pub bos_piece: String,
    /// See `unk_piece`.
    pub eos_piece: String,
    /// See `unk_piece`.
    pub pad_piece: String,
    /// Text the unk piece decodes to (default `" ⁇ "`).
    pub unk_surface: String,
    /// Worker threads (default 16; tokenkit uses at most the machine's cores). The result does
    /// not depend on it.
    pub num_threads: i32,
    /// Unigram: seed pieces (default 1,000,000).
    pub seed_sentencepiece_size: i32,
    /// Unigram: share of pieces kept by each pruning (default 0.75).
    pub shrinking_factor: f32,
    /// Unigram: EM iterations between prunings (default 2).
    pub num_sub_iterations: i32,
    /// The vocabulary must reach `vocab_size` exactly (default true); otherwise it may be
    /// smaller.
    pub hard_vocab_limit: bool,
    /// Word and char models: keep every word or char.
    pub use_all_vocab: bool,
    /// The `.vocab` file has a score column (default true).
    pub vocabulary_output_piece_score: bool,
}

impl Default for SpmTrainerSpec {
    fn default() -> Self {
        Self {
            input: Vec::new(),
            model_prefix: String::new(),
            model_type: ModelType::Unigram,
            vocab_size: 8000,
            character_coverage: 0.9995,
            normalization_rule_name: "nmt_nfkc".into(),
            split_digits: false,
            split_by_whitespace: true,
            split_by_unicode_script: true,
            split_by_number: true,
            byte_fallback: false,
            user_defined_symbols: Vec::new(),
            control_symbols: Vec::new(),
            max_sentencepiece_length: 16,
            input_sentence_size: 0,
            shuffle_input_sentence: true,
            max_sentence_length: 4192,
            add_dummy_prefix: true,
            remove_extra_whitespaces: true,
            unk_id: 0,
            bos_id: 1,
            eos_id: 2,
            pad_id: -1,
            unk_piece: "<unk>".into(),
            bos_piece: "<s>".into(),
            eos_piece: "</s>".into(),
            pad_piece: "<pad>".into(),
            unk_surface: " \u{2047} ".into(),
            num_threads: 16,
            seed_sentencepiece_size: 1_000_000,
            shrinking_factor: 0.75,
            num_sub_iterations: 2,
            hard_vocab_limit: true,
            use_all_vocab: false,
            vocabulary_output_piece_score: true,
        }
    }
}

/// sentencepiece options that are accepted and have no effect here (logging, self test).
const IGNORED: &[&str] = &["minloglevel", "logstream", "train_extremely_large_corpus", "random_seed"];

/// sentencepiece options tokenkit does not implement: given, they are an error that names them.
const UNSUPPORTED: &[&str] = &[
    "input_format",
    "accept_language",
    "self_test_sample_size",
    "enable_differential_privacy",
    "differential_privacy_noise_level",
    "differential_privacy_clipping_threshold",
    "treat_whitespace_as_suffix",
    "allow_whitespace_only_pieces",
    "pretokenization_delimiter",
    "required_chars",
    "seed_sentencepieces_file",
    "normalization_rule_tsv",
    "denormalization_rule_tsv",
    "escape_whitespaces",
    "mining_sentence_size",
    "training_sentence_size",
];

fn parse_bool(key: &str, v: &str) -> Result<bool> {
    match v.to_ascii_lowercase().as_str() {
        "" | "true" | "1" | "t" | "yes" | "y" => Ok(true),
        "false" | "0" | "f" | "no" | "n" => Ok(false),
        _ => Err(Error::invalid(format!("sentencepiece option --{key}: expected true or false, got {v:?}"))),
    }
}

fn parse_num<T: std::str::FromStr>(key: &str, v: &str) -> Result<T> {
    v.trim().parse().map_err(|_| Error::invalid(format!("sentencepiece option --{key}: expected a number, got {v:?}")))
}

fn parse_list(v: &str) -> Vec<String> {
    v.split(',').filter(|s| !s.is_empty()).map(str::to_owned).collect()
}

impl SpmTrainerSpec {
    /// Sets option `key` (sentencepiece's name) from its text form, as `spm_train --key=value`
    /// reads it: lists comma-separated, booleans `true`/`false`. Unknown and unsupported
    /// options are errors that name them.
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        let v = value;
        match key {
            "input" => self.input = parse_list(v),
            "model_prefix" => self.model_prefix = v.to_owned(),
            "model_type" => {
                self.model_type = match v.to_ascii_lowercase().as_str() {
                    "unigram" => ModelType::Unigram,
                    "bpe" => ModelType::Bpe,
                    "word" => ModelType::Word,
                    "char" => ModelType::Char,
                    _ => {
                        return Err(Error::invalid(format!(
                            "sentencepiece option --model_type: expected unigram, bpe, word or char, got {v:?}"
                        )))
                    }
                }
            }
            "vocab_size" => self.vocab_size = parse_num(key, v)?,
            "character_coverage" => self.character_coverage = parse_num(key, v)?,
            "normalization_rule_name" => self.normalization_rule_name = v.to_owned(),
            "split_digits" => self.split_digits = parse_bool(key, v)?,
            "split_by_whitespace" => self.split_by_whitespace = parse_bool(key, v)?,
            "split_by_unicode_script" => self.split_by_unicode_script = parse_bool(key, v)?,
            "split_by_number" => self.split_by_number = parse_bool(key, v)?,
            "byte_fallback" => self.byte_fallback = parse_bool(key, v)?,
            "user_defined_symbols" => self.user_defined_symbols = parse_list(v),
            "control_symbols" => self.control_symbols = parse_list(v),
            "max_sentencepiece_length" => self.max_sentencepiece_length = parse_num(key, v)?,
            "input_sentence_size" => self.input_sentence_size = parse_num(key, v)?,
            "shuffle_input_sentence" => self.shuffle_input_sentence = parse_bool(key, v)?,
            "max_sentence_length" => self.max_sentence_length = parse_num(key, v)?,
            "add_dummy_prefix" => self.add_dummy_prefix = parse_bool(key, v)?,
            "remove_extra_whitespaces" => self.remove_extra_whitespaces = parse_bool(key, v)?,
            "unk_id" => self.unk_id = parse_num(key, v)?,
            "bos_id" => self.bos_id = parse_num(key, v)?,
            "eos_id" => self.eos_id = parse_num(key, v)?,
            "pad_id" => self.pad_id = parse_num(key, v)?,
            "unk_piece" => self.unk_piece = v.to_owned(),
            "bos_piece" => self.bos_piece = v.to_owned(),
            "eos_piece" => self.eos_piece = v.to_owned(),
            "pad_piece" => self.pad_piece = v.to_owned(),
            "unk_surface" => self.unk_surface = v.to_owned(),
            "num_threads" => self.num_threads = parse_num(key, v)?,
            "seed_sentencepiece_size" => self.seed_sentencepiece_size = parse_num(key, v)?,
            "shrinking_factor" => self.shrinking_factor = parse_num(key, v)?,
            "num_sub_iterations" => self.num_sub_iterations = parse_num(key, v)?,
            "hard_vocab_limit" => self.hard_vocab_limit = parse_bool(key, v)?,
            "use_all_vocab" => self.use_all_vocab = parse_bool(key, v)?,
            "vocabulary_output_piece_score" => self.vocabulary_output_piece_score = parse_bool(key, v)?,
            k if IGNORED.contains(&k) => {}
            k if UNSUPPORTED.contains(&k) => {
                return Err(Error::invalid(format!("sentencepiece option --{k} is not supported by tokenkit's trainer")))
            }
            k => return Err(Error::invalid(format!("unknown sentencepiece trainer option --{k}"))),
        }
        Ok(())
    }

    /// Reads `spm_train`'s command-line form, `"--input=a.txt --model_prefix=m --vocab_size=8000"`
    /// (`--flag` alone is `true`; values with spaces cannot be given in this form, as in
    /// sentencepiece).
    pub fn parse_args(args: &str) -> Result<Self> {
        let mut spec = Self::default();
        for arg in args.split_whitespace() {
            let Some(flag) = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')) else {
                return Err(Error::invalid(format!("sentencepiece trainer arguments: expected --name=value, got {arg:?}")));
            };
            let (k, v) = flag.split_once('=').unwrap_or((flag, ""));
            spec.set(k, v)?;
        }
        Ok(spec)
    }

    /// sentencepiece's range checks (`VerifySpec`), with its messages' content.
    pub fn verify(&self) -> Result<()> {
        let bad = |what: String| Err(Error::invalid(format!("sentencepiece trainer: {what}")));
        if self.vocab_size <= 0 {
            return bad(format!("vocab_size must be positive, got {}", self.vocab_size));
        }
        if self.use_all_vocab && matches!(self.model_type, ModelType::Unigram | ModelType::Bpe) {
            return bad("--use_all_vocab=true is valid for WORD/CHAR model.".into());
        }
        let ranges: [(&str, f64, f64, f64); 6] = [
            ("character_coverage", f64::from(self.character_coverage), 0.98, 1.0),
            ("max_sentencepiece_length", f64::from(self.max_sentencepiece_length), 1.0, 512.0),
            ("num_sub_iterations", f64::from(self.num_sub_iterations), 1.0, 10.0),
            ("num_threads", f64::from(self.num_threads), 1.0, 1024.0),
            ("shrinking_factor", f64::from(self.shrinking_factor), 0.5, 0.95),
            ("max_sentence_length", f64::from(self.max_sentence_length), 10.0, 1073741824.0),
        ];
        for (name, v, lo, hi) in ranges {
            // The bounds are compared as sentencepiece does (its float fields against doubles).
            if !(v >= lo && v <= hi) {
                return bad(format!("{name} must be in [{lo}, {hi}], got {v}"));
            }
        }
        if self.input_sentence_size > 0 && self.input_sentence_size <= 100 {
            return bad(format!("input_sentence_size must be 0 or more than 100, got {}", self.input_sentence_size));
        }
        // seed_sentencepiece_size: any value, as in sentencepiece 0.2.3 (0 scales it with the
        // vocabulary, a negative one is no limit).
        for (name, p) in [("unk", &self.unk_piece), ("bos", &self.bos_piece), ("eos", &self.eos_piece), ("pad", &self.pad_piece)] {
            if p.is_empty() {
                return bad(format!("{name}_piece must not be empty"));
            }
        }
        use crate::formats::sentencepiece::charsmaps;
        if !charsmaps::rule_names().any(|n| n == self.normalization_rule_name) {
            charsmaps::charsmap(&self.normalization_rule_name)?;
        }
        Ok(())
    }
}
