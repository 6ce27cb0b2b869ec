//! `tokenkit train`: train a tokenizer from text or JSONL files and save its tokenizer.json.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, ValueEnum};
use serde_json::json;
use tokenkit::models::{ModelWrapper, Unigram, WordLevel, WordPiece, BPE};
use tokenkit::pre_tokenizers::byte_level::ByteLevel;
use tokenkit::processors::template::{Piece, Template, TemplateProcessing};
use tokenkit::processors::{BertProcessing, PostProcessorWrapper, RobertaProcessing};
use tokenkit::trainers::{
    BpeTrainer, InputStats, MemoryLimit, Progress, TrainInput, TrainReport, TrainerWrapper, UnigramTrainer, WordLevelTrainer,
    WordPieceTrainer,
};
use tokenkit::utils::byte_size::ByteSize;
use tokenkit::{AddedToken, Tokenizer};

/// The model to train.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModelKind {
    /// Byte-pair encoding (byte-level BPE with a byte-level preset).
    Bpe,
    /// WordPiece (BPE training with the `##` prefix).
    Wordpiece,
    /// Whole words.
    Wordlevel,
    /// Unigram language model.
    Unigram,
    /// Single characters: tokenizer.json: a WordLevel vocabulary of the corpus's characters
    /// (--preset chars, Fuse decoder); with --format sentencepiece, sentencepiece's char model.
    Char,
    /// Words: tokenizer.json: a WordLevel vocabulary of the corpus's words and punctuation runs
    /// (--preset words: `\w+|[^\w\s]+`, HF's Whitespace); with --format sentencepiece,
    /// sentencepiece's word model (whitespace-delimited).
    Word,
    /// UTF-8 bytes: 256 ids (byte b is id b, as its byte-level character), then the special
    /// tokens; nothing is learned, so no input is needed. Bytes per token is exactly 1.
    Byte,
}

/// The kind of file `tokenkit train` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// HF tokenizer.json.
    Hf,
    /// SentencePiece `PREFIX.model` and `PREFIX.vocab`, trained as `spm_train` trains.
    Sentencepiece,
}

impl ModelKind {
    /// The model's name in tokenizer.json.
    fn name(self) -> &'static str {
        match self {
            ModelKind::Bpe => "BPE",
            ModelKind::Wordpiece => "WordPiece",
            ModelKind::Wordlevel => "WordLevel",
            ModelKind::Unigram => "Unigram",
            ModelKind::Char => "char",
            ModelKind::Word => "word",
            ModelKind::Byte => "byte",
        }
    }
}

/// The pre-tokenizer (and matching decoder) of the trained tokenizer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Preset {
    /// BERT's: split on whitespace and punctuation.
    Bert,
    /// GPT-2's regex then the byte-level mapping, no prefix space; the 256 byte chars are
    /// always in the alphabet.
    ByteLevel,
    /// `byte-level` with GPT-2's ByteLevel post-processor.
    Gpt2,
    /// tiktoken cl100k_base's regex, then the byte-level mapping.
    Cl100k,
    /// tiktoken o200k_base's regex, then the byte-level mapping.
    O200k,
    /// SentencePiece style: spaces become `▁`, prepended to the text, split before each `▁`.
    Metaspace,
    /// Split on whitespace only.
    Whitespace,
    /// Every character apart (`-m char`); decoded by joining them.
    Chars,
    /// Words and runs of punctuation, whitespace dropped (HF's Whitespace: `\w+|[^\w\s]+`;
    /// `-m word`).
    Words,
    /// No pre-tokenizer: each sequence is one word.
    None,
}

/// The post-processor of the trained tokenizer (the special tokens it adds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PostProcessorKind {
    /// BERT's (HF BertProcessing): `[CLS] A [SEP]` and `[CLS] A [SEP] B [SEP]` (type ids 0,
    /// then 1 for B); `[CLS]` and `[SEP]` must be special tokens.
    Bert,
    /// RoBERTa's (HF RobertaProcessing): `<s> A </s>` and `<s> A </s></s> B </s>`, offsets
    /// trimmed of spaces; `<s>` and `</s>` must be special tokens.
    Roberta,
    /// GPT-2's ByteLevel offset trimming (the gpt2 preset's default); adds no tokens.
    ByteLevel,
    /// None (drops the preset's).
    None,
}

/// tiktoken's o200k_base split pattern.
const O200K_PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
);

/// Ready-made training set-ups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Recipe {
    /// The Minimind chat model's tokenizer: byte-level BPE (ByteLevel without prefix space,
    /// ByteLevel decoder), vocabulary 6400, `<|endoftext|>`=0, `<|im_start|>`=1, `<|im_end|>`=2,
    /// JSONL field `text`; `--output` is a directory that receives tokenizer.json, vocab.json,
    /// merges.txt, tokenizer_config.json (ChatML chat template) and special_tokens_map.json.
    Minimind,
}

/// Normalizers the command line can set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum NormalizerKind {
    /// None.
    None,
    /// BERT's, lowercasing (bert-base-uncased).
    BertUncased,
    /// BERT's, keeping case (bert-base-cased).
    BertCased,
    /// Unicode NFKC.
    Nfkc,
    /// Unicode NFC.
    Nfc,
    /// Lowercase.
    Lowercase,
}

/// Arguments of `tokenkit train`.
#[derive(Debug, Args)]
pub struct TrainArgs {
    /// Input files: text (one sequence per line) or, with --jsonl-field, JSON lines.
    #[arg(conflicts_with = "from_counts")]
    files: Vec<PathBuf>,
    /// Train on the word counts of these count files (`tokenkit count`; merged by adding the
    /// counts), counted with the same --preset and --normalizer, instead of reading text.
    #[arg(long, num_args = 1.., value_name = "COUNTS")]
    from_counts: Vec<PathBuf>,
    /// Where to write tokenizer.json (with --recipe: the output directory).
    #[arg(short, long)]
    output: PathBuf,
    /// A ready-made set-up; it fixes the model, pre-tokenizer and special tokens, and sets the
    /// vocabulary size and JSONL field unless given.
    #[arg(long, value_enum, conflicts_with_all = ["model", "preset", "normalizer", "special_tokens", "pretty"])]
    recipe: Option<Recipe>,
    /// With --recipe: a Jinja chat template file for the written tokenizer_config.json instead
    /// of the recipe's own.
    #[arg(long, value_name = "FILE", requires = "recipe", value_parser = crate::chat::chat_template_file)]
    chat_template: Option<String>,
    /// The model.
    #[arg(short, long, value_enum, default_value_t = ModelKind::Bpe)]
    model: ModelKind,
    /// What to write: HF tokenizer.json, or a SentencePiece model (`-o PREFIX` writes
    /// PREFIX.model and PREFIX.vocab; sentencepiece's trainer options go with --spm).
    #[arg(long, value_enum, default_value_t = OutputFormat::Hf)]
    format: OutputFormat,
    /// With --format sentencepiece: a sentencepiece trainer option as NAME=VALUE, with
    /// spm_train's names (character_coverage=1.0, normalization_rule_name=identity,
    /// byte_fallback=true, user_defined_symbols=a,b, ...); repeat the option for more.
    #[arg(long, value_name = "NAME=VALUE")]
    spm: Vec<String>,
    /// Vocabulary size, special tokens included (default: HF's, 30000; Unigram 8000).
    #[arg(short, long)]
    vocab_size: Option<usize>,
    /// Minimum count of a merged pair (BPE, WordPiece) or of a word (WordLevel) (default 0).
    #[arg(long)]
    min_frequency: Option<u64>,
    /// Special tokens, ids 0, 1, ... in this order (comma-separated, or repeat the option).
    #[arg(short, long, value_delimiter = ',')]
    special_tokens: Vec<String>,
    /// The pre-tokenizer, with the decoder that undoes it (see `tokenkit train --help`).
    #[arg(short, long, value_enum, default_value_t = Preset::ByteLevel)]
    preset: Preset,
    /// The normalizer.
    #[arg(long, value_enum, default_value_t = NormalizerKind::None)]
    normalizer: NormalizerKind,
    /// The post-processor (default: the preset's, ByteLevel for gpt2, else none).
    #[arg(long, value_enum, conflicts_with = "template")]
    post_processor: Option<PostProcessorKind>,
    /// A TemplateProcessing post-processor (HF's): the single-sequence template, pieces
    /// separated by spaces, e.g. '[CLS] $A [SEP]'; each special token it names must be in
    /// --special-tokens.
    #[arg(long, value_name = "SINGLE")]
    template: Option<String>,
    /// With --template: the pair template, e.g. '[CLS] $A [SEP] $B:1 [SEP]:1' (default:
    /// '$A $B:1', HF's).
    #[arg(long, value_name = "PAIR", requires = "template")]
    pair_template: Option<String>,
    /// The input files are JSON lines; each line's FIELD (a string) is one sequence.
    #[arg(long, value_name = "FIELD")]
    jsonl_field: Option<String>,
    /// With --jsonl-field (or a recipe): a bad line is an error (default: skipped and counted).
    #[arg(long)]
    strict: bool,
    /// Keep at most this many chars in the initial alphabet (BPE, WordPiece).
    #[arg(long)]
    limit_alphabet: Option<usize>,
    /// Prefix of non-initial subwords (BPE; WordPiece default `##`).
    #[arg(long)]
    continuing_subword_prefix: Option<String>,
    /// Suffix of word-final subwords (BPE, WordPiece); the decoder turns it back into a space.
    #[arg(long)]
    end_of_word_suffix: Option<String>,
    /// Longest merged token, in chars (BPE, WordPiece).
    #[arg(long)]
    max_token_length: Option<usize>,
    /// The unk token of the model (default: none for BPE, `[UNK]` for WordPiece, `<unk>` for
    /// WordLevel; for Unigram the trainer's unk token).
    #[arg(long)]
    unk_token: Option<String>,
    /// Unigram: fraction of pieces kept by each pruning.
    #[arg(long)]
    shrinking_factor: Option<f64>,
    /// Unigram: EM iterations between prunings.
    #[arg(long)]
    n_sub_iterations: Option<u32>,
    /// Unigram: longest piece in chars.
    #[arg(long)]
    max_piece_length: Option<usize>,
    /// Print the trainer's JSON (HF's form) and exit without training.
    #[arg(long)]
    print_trainer: bool,
    /// Indent the JSON.
    #[arg(long)]
    pretty: bool,
    /// Memory for the word counts and training (default: half of the machine's memory). Counts
    /// that do not fit are spilled in sorted runs to a temporary directory beside the output and
    /// merged, with the same result; distinct words whose training would not fit are an error
    /// (or, with --prune-words, the rarest are dropped).
    #[arg(long, value_name = "SIZE")]
    memory_limit: Option<ByteSize>,
    /// When the distinct words do not fit in --memory-limit, drop the rarest (every word seen
    /// fewer than N times, N the smallest power of two that fits) instead of stopping: an
    /// approximation, reported when it happens.
    #[arg(long)]
    prune_words: bool,
    /// No progress bars.
    #[arg(short, long)]
    quiet: bool,
}

/// `--memory-limit` (or its default), spilling beside `output`.
fn memory_limit(given: Option<ByteSize>, output: &std::path::Path, prune: bool) -> MemoryLimit {
    MemoryLimit {
        bytes: given.map_or_else(default_memory_limit, |l| l.0),
        spill_dir: tokenkit::utils::atomic_file::parent_dir(output).to_owned(),
        prune,
    }
}

/// Arguments of `tokenkit count`.
#[derive(Debug, Args)]
pub struct CountArgs {
    /// Input files: text (one sequence per line) or, with --jsonl-field, JSON lines.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The count file to write. With several inputs, each file's counts go to OUTPUT.parts/
    /// when complete and are merged at the end: a run that was stopped resumes from them.
    #[arg(short, long)]
    output: PathBuf,
    /// The pre-tokenizer (as `tokenkit train`'s; train with the same).
    #[arg(short, long, value_enum, default_value_t = Preset::ByteLevel)]
    preset: Preset,
    /// The normalizer (as `tokenkit train`'s; train with the same).
    #[arg(long, value_enum, default_value_t = NormalizerKind::None)]
    normalizer: NormalizerKind,
    /// The input files are JSON lines; each line's FIELD (a string) is one sequence.
    #[arg(long, value_name = "FIELD")]
    jsonl_field: Option<String>,
    /// With --jsonl-field: a bad line is an error (default: skipped and counted).
    #[arg(long)]
    strict: bool,
    /// Memory for the counts (default: half of the machine's memory); past it they are spilled
    /// in sorted runs to a temporary directory beside the output and merged.
    #[arg(long, value_name = "SIZE")]
    memory_limit: Option<ByteSize>,
    /// No progress bars.
    #[arg(short, long)]
    quiet: bool,
}

/// Runs `tokenkit count`: the words of the inputs, as `tokenkit train` would count them, into a
/// count file for `tokenkit train --from-counts`.
pub fn run_count(args: CountArgs) -> Result<()> {
    let t0 = Instant::now();
    if args.strict && args.jsonl_field.is_none() {
        bail!("--strict applies to JSON lines input only (with --jsonl-field)");
    }
    let tok = pipeline(args.normalizer, args.preset, serde_json::Value::Null, &BPE::default().into())?;
    tokenkit::utils::atomic_file::check_writable(&args.output).map_err(|e| anyhow!(e))?;
    let input = train_input(&args.files, args.jsonl_field.as_deref(), args.strict);
    let bars = tokenkit::trainers::ProgressBars::new();
    let progress: &dyn Progress = if args.quiet { &tokenkit::trainers::NoProgress } else { &bars };
    let limit = memory_limit(args.memory_limit, &args.output, false);
    let (info, stats, resumed) = tok.write_word_counts(&input, &limit, &args.output, progress).map_err(|e| anyhow!(e))?;
    report_skipped(&stats, args.jsonl_field.as_deref());
    if resumed > 0 {
        eprintln!(
            "tokenkit: resumed an interrupted count: {resumed} complete part(s) taken from {}",
            tokenkit::trainers::parts_dir(&args.output).display()
        );
    }
    eprintln!(
        "tokenkit: counted {} words ({} distinct) in {} sequences ({:.1} MiB) -> {} in {:.2} s, peak memory {}",
        info.occurrences,
        info.words,
        info.sequences,
        stats.bytes as f64 / (1 << 20) as f64,
        args.output.display(),
        t0.elapsed().as_secs_f64(),
        peak_memory_text()
    );
    Ok(())
}

/// Half of the machine's memory (Linux `MemTotal`), or 4 GiB where it cannot be read.
fn default_memory_limit() -> u64 {
    let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        let line = m.lines().find(|l| l.starts_with("MemTotal:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib << 10)
    });
    total.map_or(4 << 30, |t| t / 2)
}

/// The pre-tokenizer of `preset` as a tokenizer.json object.
fn pre_tokenizer_json(preset: Preset) -> serde_json::Value {
    let split = |pattern: &str| {
        json!({"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": false},
            {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}
        ]})
    };
    match preset {
        Preset::Bert => json!({"type": "BertPreTokenizer"}),
        Preset::ByteLevel | Preset::Gpt2 => {
            json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true})
        }
        Preset::Cl100k => split(tokenkit::utils::regex::CL100K_PATTERN),
        Preset::O200k => split(O200K_PATTERN),
        Preset::Metaspace => metaspace_json(),
        Preset::Whitespace => json!({"type": "WhitespaceSplit"}),
        Preset::Chars => json!({"type": "Split", "pattern": {"Regex": CHAR_PATTERN}, "behavior": "Isolated", "invert": false}),
        Preset::Words => json!({"type": "Whitespace"}),
        Preset::None => serde_json::Value::Null,
    }
}

/// One character, whatever it is (newlines included).
const CHAR_PATTERN: &str = r"[\s\S]";

/// The byte tokenizer (`-m byte`): byte `b` is token `b`, the byte-level character of `b`
/// (the pre-tokenizer maps the text's bytes to those characters and splits them apart; the
/// ByteLevel decoder maps them back), then `specials` as special tokens.
fn byte_tokenizer(specials: &[String], normalizer: NormalizerKind) -> Result<Tokenizer> {
    let vocab: serde_json::Map<String, serde_json::Value> =
        (0u8..=255).map(|b| (tokenkit::formats::tiktoken::byte_level_string(&[b]), json!(b))).collect();
    let added: Vec<serde_json::Value> = specials
        .iter()
        .enumerate()
        .map(|(i, t)| json!({"id": 256 + i, "content": t, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}))
        .collect();
    let tokenizer_json = json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": added,
        "normalizer": normalizer_json(normalizer),
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false},
            {"type": "Split", "pattern": {"Regex": CHAR_PATTERN}, "behavior": "Isolated", "invert": false}
        ]},
        "post_processor": null,
        "decoder": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false},
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"},
    });
    Tokenizer::from_json(&tokenizer_json.to_string()).map_err(|e| anyhow!(e))
}

fn metaspace_json() -> serde_json::Value {
    json!({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true})
}

/// `s` as a regex that matches it literally.
fn regex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The subword markers the trained model's tokens carry: (continuing prefix, end-of-word
/// suffix).
fn markers(args: &TrainArgs) -> (Option<&str>, Option<&str>) {
    let prefix = match args.model {
        ModelKind::Wordpiece => Some(args.continuing_subword_prefix.as_deref().unwrap_or("##")),
        _ => args.continuing_subword_prefix.as_deref(),
    };
    (prefix.filter(|p| !p.is_empty()), args.end_of_word_suffix.as_deref().filter(|s| !s.is_empty()))
}

/// The decoder that turns the trained model's tokens back into text, as HF users set it:
///
/// - byte-level presets: ByteLevel; metaspace: Metaspace; none: Fuse (the whole sequence is
///   one word) -- each after Replace decoders that strip the subword markers (a continuing
///   prefix at a token's start, an end-of-word suffix at its end), since these presets keep
///   the spaces in the tokens themselves;
/// - bert and whitespace, which drop the spaces: with an end-of-word suffix, BPEDecoder (the
///   suffix becomes a space: HF's CharBPETokenizer); else with a continuing prefix (WordPiece),
///   the WordPiece decoder (a space before each token without the prefix; BERT's clean-up of
///   spaces before punctuation with the bert preset); else none, so that HF joins the tokens
///   with spaces: whole words for WordLevel. BPE and Unigram tokens there carry no word
///   boundary, so [`run`] says to train with a suffix or prefix for a tokenizer that decodes.
fn decoder_json(args: &TrainArgs) -> serde_json::Value {
    let (prefix, suffix) = markers(args);
    let strip = |pattern: String| json!({"type": "Replace", "pattern": {"Regex": pattern}, "content": ""});
    let mut strips: Vec<serde_json::Value> = Vec::new();
    let keeps_spaces = match args.preset {
        Preset::ByteLevel | Preset::Gpt2 | Preset::Cl100k | Preset::O200k => {
            Some(json!({"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true}))
        }
        Preset::Metaspace => Some(metaspace_json()),
        Preset::None | Preset::Chars => Some(json!({"type": "Fuse"})),
        Preset::Bert | Preset::Whitespace | Preset::Words => None,
    };
    if let Some(p) = prefix {
        strips.push(strip(format!("^{}", regex_escape(p))));
    }
    let sequence = |mut decoders: Vec<serde_json::Value>, last: serde_json::Value| {
        if decoders.is_empty() {
            return last;
        }
        decoders.push(last);
        json!({"type": "Sequence", "decoders": decoders})
    };
    match (keeps_spaces, prefix, suffix) {
        (Some(last), _, _) => {
            if let Some(s) = suffix {
                strips.push(strip(format!("{}$", regex_escape(s))));
            }
            sequence(strips, last)
        }
        (None, _, Some(s)) => sequence(strips, json!({"type": "BPEDecoder", "suffix": s})),
        (None, Some(p), None) => json!({"type": "WordPiece", "prefix": p, "cleanup": args.preset == Preset::Bert}),
        (None, None, None) => serde_json::Value::Null,
    }
}

/// Whether the trained tokenizer decodes subwords back into words (see [`decoder_json`]).
fn decodes_words(args: &TrainArgs) -> bool {
    let (prefix, suffix) = markers(args);
    !matches!(args.preset, Preset::Bert | Preset::Whitespace | Preset::Words)
        || args.model == ModelKind::Wordlevel
        || prefix.is_some()
        || suffix.is_some()
}

/// The post-processor for the trained tokenizer `tok` (its special tokens' ids are known
/// once trained); `None` for none.
fn post_processor(args: &TrainArgs, tok: &Tokenizer) -> Result<Option<PostProcessorWrapper>> {
    let id = |token: &str| {
        tok.token_to_id(token)
            .map(|id| (token.to_owned(), id))
            .ok_or_else(|| anyhow!("the post-processor needs the special token {token:?}: add it to --special-tokens"))
    };
    if let Some(single) = &args.template {
        let names = template_tokens(args)?;
        let tokens = names.iter().map(|t| id(t)).collect::<Result<Vec<_>>>()?;
        let mut b = TemplateProcessing::builder().try_single(single.as_str())?.special_tokens(tokens);
        if let Some(pair) = &args.pair_template {
            b = b.try_pair(pair.as_str())?;
        }
        return Ok(Some(b.build()?.into()));
    }
    let kind =
        args.post_processor.unwrap_or(if args.preset == Preset::Gpt2 { PostProcessorKind::ByteLevel } else { PostProcessorKind::None });
    Ok(match kind {
        PostProcessorKind::Bert => Some(BertProcessing::new(id("[SEP]")?, id("[CLS]")?).into()),
        PostProcessorKind::Roberta => {
            Some(RobertaProcessing { sep: id("</s>")?, cls: id("<s>")?, trim_offsets: true, add_prefix_space: false }.into())
        }
        PostProcessorKind::ByteLevel => {
            let bl = json!({"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true});
            Some(serde_json::from_value(bl)?)
        }
        PostProcessorKind::None => None,
    })
}

/// The special tokens --template and --pair-template name, in order of first use.
fn template_tokens(args: &TrainArgs) -> Result<Vec<String>> {
    let mut names: Vec<String> = Vec::new();
    for t in [&args.template, &args.pair_template].into_iter().flatten() {
        for piece in Template::try_from(t.as_str())?.0 {
            if let Piece::SpecialToken { id, .. } = piece {
                if !names.contains(&id) {
                    names.push(id);
                }
            }
        }
    }
    Ok(names)
}

/// Fails on options that do not apply to the chosen model, recipe or post-processor, before
/// anything is read.
fn check_options(args: &TrainArgs) -> Result<()> {
    let model = format!("to a {} model", args.model.name());
    let bpe_like = matches!(args.model, ModelKind::Bpe | ModelKind::Wordpiece);
    if !bpe_like {
        crate::reject(
            &[
                ("--limit-alphabet", args.limit_alphabet.is_some()),
                ("--continuing-subword-prefix", args.continuing_subword_prefix.is_some()),
                ("--end-of-word-suffix", args.end_of_word_suffix.is_some()),
                ("--max-token-length", args.max_token_length.is_some()),
            ],
            &model,
            " (only to BPE and WordPiece)",
        )?;
    }
    if args.model != ModelKind::Unigram {
        crate::reject(
            &[
                ("--shrinking-factor", args.shrinking_factor.is_some()),
                ("--n-sub-iterations", args.n_sub_iterations.is_some()),
                ("--max-piece-length", args.max_piece_length.is_some()),
            ],
            &model,
            " (only to Unigram)",
        )?;
    } else {
        crate::reject(&[("--min-frequency", args.min_frequency.is_some())], &model, " (HF's Unigram trainer has none)")?;
    }
    if args.strict && args.jsonl_field.is_none() {
        bail!("--strict applies to JSON lines input only (--jsonl-field FIELD)");
    }
    let specials = |names: &[String]| {
        let missing: Vec<&str> = names.iter().filter(|n| !args.special_tokens.contains(n)).map(String::as_str).collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(anyhow!("the post-processor adds {}: give them with --special-tokens", missing.join(", ")))
        }
    };
    match args.post_processor {
        _ if args.template.is_some() => specials(&template_tokens(args)?),
        Some(PostProcessorKind::Bert) => specials(&["[CLS]".into(), "[SEP]".into()]),
        Some(PostProcessorKind::Roberta) => specials(&["<s>".into(), "</s>".into()]),
        _ => Ok(()),
    }
}

fn normalizer_json(kind: NormalizerKind) -> serde_json::Value {
    let bert = |lowercase: bool| json!({"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": null, "lowercase": lowercase});
    match kind {
        NormalizerKind::None => serde_json::Value::Null,
        NormalizerKind::BertUncased => bert(true),
        NormalizerKind::BertCased => bert(false),
        NormalizerKind::Nfkc => json!({"type": "NFKC"}),
        NormalizerKind::Nfc => json!({"type": "NFC"}),
        NormalizerKind::Lowercase => json!({"type": "Lowercase"}),
    }
}

fn is_byte_level(p: Preset) -> bool {
    matches!(p, Preset::ByteLevel | Preset::Gpt2 | Preset::Cl100k | Preset::O200k)
}

/// The empty tokenizer (pipeline + untrained model) and the trainer for `args`.
pub fn build(args: &TrainArgs) -> Result<(Tokenizer, TrainerWrapper)> {
    let specials: Vec<AddedToken> = args.special_tokens.iter().map(|s| AddedToken::from(s.clone(), true)).collect();
    let mut bpe = BpeTrainer {
        min_frequency: args.min_frequency.unwrap_or_default(),
        special_tokens: specials.clone(),
        limit_alphabet: args.limit_alphabet,
        continuing_subword_prefix: args.continuing_subword_prefix.clone(),
        end_of_word_suffix: args.end_of_word_suffix.clone(),
        max_token_length: args.max_token_length,
        ..Default::default()
    };
    if let Some(v) = args.vocab_size {
        bpe.vocab_size = v;
    }
    if is_byte_level(args.preset) {
        bpe.initial_alphabet = ByteLevel::alphabet();
    }
    let (model, trainer): (ModelWrapper, TrainerWrapper) = match args.model {
        ModelKind::Char | ModelKind::Word | ModelKind::Byte => {
            bail!("-m {} is trained as WordLevel (tokenizer.json) or by sentencepiece", args.model.name())
        }
        ModelKind::Bpe => {
            let model = BPE::builder().unk_token(args.unk_token.clone()).build().map_err(|e| anyhow!(e))?;
            (model.into(), bpe.into())
        }
        ModelKind::Wordpiece => {
            if bpe.continuing_subword_prefix.is_none() {
                bpe.continuing_subword_prefix = Some("##".into());
            }
            let d = WordPiece::default();
            let unk = args.unk_token.clone().unwrap_or_else(|| d.unk_token().to_owned());
            let model = WordPiece::new(Vec::new(), unk, d.continuing_subword_prefix().to_owned(), d.max_input_chars_per_word());
            (model.into(), WordPieceTrainer { bpe }.into())
        }
        ModelKind::Wordlevel => {
            let unk = args.unk_token.clone().unwrap_or_else(|| WordLevel::default().unk_token().to_owned());
            let t = WordLevelTrainer {
                min_frequency: args.min_frequency.unwrap_or_default(),
                vocab_size: bpe.vocab_size,
                special_tokens: specials,
                ..Default::default()
            };
            (WordLevel::new(Vec::new(), unk).into(), t.into())
        }
        ModelKind::Unigram => {
            let d = UnigramTrainer::default();
            let t = UnigramTrainer {
                vocab_size: match args.vocab_size {
                    Some(v) => u32::try_from(v).context("--vocab-size is too large")?,
                    None => d.vocab_size,
                },
                special_tokens: specials,
                unk_token: args.unk_token.clone(),
                shrinking_factor: args.shrinking_factor.unwrap_or(d.shrinking_factor),
                n_sub_iterations: args.n_sub_iterations.unwrap_or(d.n_sub_iterations),
                max_piece_length: args.max_piece_length.unwrap_or(d.max_piece_length),
                initial_alphabet: if is_byte_level(args.preset) { ByteLevel::alphabet() } else { d.initial_alphabet.clone() },
                ..d
            };
            (Unigram::default().into(), t.into())
        }
    };
    Ok((pipeline(args.normalizer, args.preset, decoder_json(args), &model)?, trainer))
}

/// `-m byte`: writes the byte tokenizer (nothing to learn; input files are not read).
fn write_byte_tokenizer(args: &TrainArgs) -> Result<()> {
    crate::reject(
        &[
            ("input files", !args.files.is_empty()),
            ("--from-counts", !args.from_counts.is_empty()),
            ("--vocab-size", args.vocab_size.is_some()),
            ("--min-frequency", args.min_frequency.is_some()),
        ],
        "to -m byte",
        " (its vocabulary is the 256 bytes and the special tokens)",
    )?;
    check_output(args)?;
    let mut tok = byte_tokenizer(&args.special_tokens, args.normalizer)?;
    let post = post_processor(args, &tok)?;
    tok.with_post_processor(post);
    let saved = save_outputs(args, &tok)?;
    eprintln!("tokenkit: wrote the byte tokenizer ({} ids) -> {}", 256 + args.special_tokens.len(), saved.display());
    Ok(())
}

/// A tokenizer of `model` with the normalizer and pre-tokenizer of the options (what training
/// and `tokenkit count` cut words with) and `decoder`.
fn pipeline(normalizer: NormalizerKind, preset: Preset, decoder: serde_json::Value, model: &ModelWrapper) -> Result<Tokenizer> {
    let tokenizer_json = json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": [],
        "normalizer": normalizer_json(normalizer),
        "pre_tokenizer": pre_tokenizer_json(preset),
        "post_processor": null,
        "decoder": decoder,
        "model": serde_json::to_value(model)?,
    });
    Tokenizer::from_json(&tokenizer_json.to_string()).map_err(|e| anyhow!(e))
}

/// The training input: `files` as text, or as JSON lines with `jsonl_field`.
fn train_input(files: &[PathBuf], jsonl_field: Option<&str>, strict: bool) -> TrainInput {
    match jsonl_field {
        Some(field) => TrainInput::Jsonl { files: files.to_vec(), field: field.to_owned(), strict },
        None => TrainInput::Files(files.to_vec()),
    }
}

/// Says how many JSONL lines were skipped, with the first few reasons.
fn report_skipped(stats: &InputStats, jsonl_field: Option<&str>) {
    if stats.skipped > 0 {
        eprintln!("tokenkit: skipped {} JSONL line(s) without a string field `{}`:", stats.skipped, jsonl_field.unwrap_or(""));
        for e in &stats.skip_examples {
            eprintln!("  {e}");
        }
    }
}

/// Peak resident memory of this process in bytes (Linux `VmHWM`), when known.
pub(crate) fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// [`peak_memory`] as the summaries print it (`12.3 MiB`, or `unknown`).
pub(crate) fn peak_memory_text() -> String {
    peak_memory().map_or_else(|| "unknown".to_owned(), |b| format!("{:.1} MiB", b as f64 / (1 << 20) as f64))
}

/// Applies `--recipe` to the arguments.
fn apply_recipe(args: &mut TrainArgs) {
    match args.recipe {
        Some(Recipe::Minimind) => {
            args.model = ModelKind::Bpe;
            args.preset = Preset::ByteLevel;
            args.normalizer = NormalizerKind::None;
            args.special_tokens = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"].map(String::from).to_vec();
            args.vocab_size.get_or_insert(6400);
            args.jsonl_field.get_or_insert_with(|| "text".to_owned());
        }
        None => {}
    }
}

/// Checks that the output can be written before training, so that a bad path fails at once
/// rather than after the work.
fn check_output(args: &TrainArgs) -> Result<()> {
    let file = match args.recipe {
        Some(Recipe::Minimind) => {
            let dir = &args.output;
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create the output directory {}", dir.display()))?;
            dir.join(tokenkit::formats::pretrained::TOKENIZER_FILE)
        }
        None => args.output.clone(),
    };
    tokenkit::utils::atomic_file::check_writable(file).map_err(|e| anyhow!(e))
}

/// Writes the tokenizer (with a recipe, its whole directory); returns the tokenizer.json path.
fn save_outputs(args: &TrainArgs, tok: &Tokenizer) -> Result<PathBuf> {
    match args.recipe {
        Some(Recipe::Minimind) => {
            tokenkit::formats::pretrained::write_minimind_dir(&args.output, tok, args.chat_template.as_deref()).map_err(|e| anyhow!(e))
        }
        None => {
            tok.save(&args.output, args.pretty).map_err(|e| anyhow!(e))?;
            Ok(args.output.clone())
        }
    }
}

/// Runs `tokenkit train`.
/// mimalloc's `mi_option_purge_delay` (its index in `mi_option_t` of the mimalloc v3 that
/// libmimalloc-sys 0.1.49 builds, pinned in Cargo.toml).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

pub fn run(mut args: TrainArgs) -> Result<()> {
    // Training builds and drops large tables (word counts, pair indices): give freed memory
    // back to the OS at once instead of after mimalloc's default second, so the peak resident
    // memory is that of the live data (about a third less on a 4 MB corpus).
    // SAFETY: sets a plain integer option; any value is valid for mimalloc.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0) };
    let t0 = Instant::now();
    if args.format == OutputFormat::Sentencepiece {
        return run_sentencepiece(&args, t0);
    }
    crate::reject(&[("--spm", !args.spm.is_empty())], "to tokenizer.json training", " (only with --format sentencepiece)")?;
    if args.model == ModelKind::Byte {
        return write_byte_tokenizer(&args);
    }
    if args.files.is_empty() && args.from_counts.is_empty() {
        bail!("give the input files (or --from-counts COUNTS)");
    }
    // A char or word tokenizer is a WordLevel vocabulary of single characters or of words.
    if let Some(preset) = match args.model {
        ModelKind::Char => Some(Preset::Chars),
        ModelKind::Word => Some(Preset::Words),
        _ => None,
    } {
        args.model = ModelKind::Wordlevel;
        args.preset = preset;
    }
    if !args.from_counts.is_empty() {
        crate::reject(
            &[("--jsonl-field", args.jsonl_field.is_some()), ("--strict", args.strict)],
            "with --from-counts",
            " (give it to tokenkit count)",
        )?;
    }
    apply_recipe(&mut args);
    check_options(&args)?;
    let (mut tok, trainer) = build(&args)?;
    if args.print_trainer {
        println!("{}", serde_json::to_string(&trainer)?);
        return Ok(());
    }
    check_output(&args)?;
    let n_special = trainer.special_tokens().len();
    if trainer.vocab_size() < n_special {
        bail!("--vocab-size {} is smaller than the {} special tokens", trainer.vocab_size(), n_special);
    }
    let input = train_input(&args.files, args.jsonl_field.as_deref(), args.strict);
    let bars = tokenkit::trainers::ProgressBars::new();
    let progress: &dyn Progress = if args.quiet { &tokenkit::trainers::NoProgress } else { &bars };
    let counted = Instant::now();
    let limit = memory_limit(args.memory_limit, &args.output, args.prune_words);
    let (counts, stats, pruned) = if args.from_counts.is_empty() {
        tok.count_words_within(&input, &limit, progress).map_err(|e| anyhow!(e))?
    } else {
        let (info, counted) = tokenkit::trainers::counts::merge_count_files(&args.from_counts).map_err(|e| anyhow!(e))?;
        tok.check_word_cutting(&info).map_err(|e| anyhow!(e))?;
        let (counts, pruned) = counted.into_word_counts(&limit).map_err(|e| anyhow!(e))?;
        let stats = InputStats { sequences: info.sequences, bytes: info.inputs.iter().map(|i| i.bytes).sum(), ..Default::default() };
        (counts, stats, pruned)
    };
    let mut report = TrainReport { input: stats, count_seconds: counted.elapsed().as_secs_f64(), ..Default::default() };
    // The counting workers' heaps hold freed pages (their per-batch maps): hand them back
    // before training allocates its own tables (about 2 MiB off the peak on a 4 MB corpus).
    // SAFETY: mi_collect only releases memory mimalloc owns and no longer uses.
    rayon::broadcast(|_| unsafe { libmimalloc_sys::mi_collect(true) });
    tok.train_from_word_counts(&trainer, counts, progress, &mut report).map_err(|e| anyhow!(e))?;
    let post = post_processor(&args, &tok)?;
    tok.with_post_processor(post);
    let saved = save_outputs(&args, &tok)?;
    let stats = &report.input;
    report_skipped(stats, args.jsonl_field.as_deref());
    if pruned.words > 0 {
        eprintln!(
            "tokenkit: note: --prune-words dropped {} distinct words seen fewer than {} times ({} occurrences) to fit \
             --memory-limit {}: the result may differ from a run with more memory",
            pruned.words,
            pruned.below,
            pruned.occurrences,
            ByteSize(limit.bytes)
        );
    }
    let peak = peak_memory_text();
    eprintln!(
        "tokenkit: trained {} on {} sequences ({:.1} MiB, {} distinct words): vocabulary {} -> {}",
        args.model.name(),
        stats.sequences,
        stats.bytes as f64 / (1 << 20) as f64,
        report.distinct_words,
        report.vocab_size,
        saved.display()
    );
    eprintln!(
        "tokenkit: time {:.2} s (counting {:.2} s, training {:.2} s), peak memory {peak}",
        t0.elapsed().as_secs_f64(),
        report.count_seconds,
        report.train_seconds
    );
    if report.vocab_size > trainer.vocab_size() {
        eprintln!(
            "tokenkit: note: the vocabulary ({}) is larger than --vocab-size {}: the special tokens and the alphabet alone \
             take that many (HF does the same); --limit-alphabet caps the alphabet",
            report.vocab_size,
            trainer.vocab_size()
        );
    } else if report.vocab_size < trainer.vocab_size() {
        eprintln!(
            "tokenkit: note: the vocabulary is smaller than --vocab-size {} (the corpus has no more pairs to merge{})",
            trainer.vocab_size(),
            if args.min_frequency.unwrap_or_default() > 0 { " at this --min-frequency" } else { "" }
        );
    }
    if !decodes_words(&args) {
        eprintln!(
            "tokenkit: note: the {} preset drops spaces and {} tokens do not mark where words end, so decoding \
             joins every token with a space; train with --end-of-word-suffix '</w>' (BPE) or -m wordpiece for a \
             tokenizer that decodes back to words",
            args.preset.to_possible_value().map_or_else(String::new, |v| v.get_name().to_owned()),
            args.model.name()
        );
    }
    Ok(())
}

/// `tokenkit train --format sentencepiece`: sentencepiece's trainer on the input files, writing
/// `PREFIX.model` and `PREFIX.vocab`.
fn run_sentencepiece(args: &TrainArgs, t0: Instant) -> Result<()> {
    use tokenkit::trainers::spm::{self, SpmTrainerSpec};
    crate::reject(
        &[
            ("--recipe", args.recipe.is_some()),
            ("--chat-template", args.chat_template.is_some()),
            ("--min-frequency", args.min_frequency.is_some()),
            ("--special-tokens", !args.special_tokens.is_empty()),
            ("--normalizer", args.normalizer != NormalizerKind::None),
            ("--post-processor", args.post_processor.is_some()),
            ("--template", args.template.is_some()),
            ("--jsonl-field", args.jsonl_field.is_some()),
            ("--strict", args.strict),
            ("--memory-limit", args.memory_limit.is_some()),
            ("--prune-words", args.prune_words),
            ("--from-counts", !args.from_counts.is_empty()),
            ("--limit-alphabet", args.limit_alphabet.is_some()),
            ("--continuing-subword-prefix", args.continuing_subword_prefix.is_some()),
            ("--end-of-word-suffix", args.end_of_word_suffix.is_some()),
            ("--max-token-length", args.max_token_length.is_some()),
            ("--unk-token", args.unk_token.is_some()),
            ("--print-trainer", args.print_trainer),
            ("--pretty", args.pretty),
        ],
        "to SentencePiece training",
        " (use --spm NAME=VALUE with sentencepiece's trainer options: normalization_rule_name, unk_piece, \
         control_symbols, user_defined_symbols, ...)",
    )?;
    let mut spec = SpmTrainerSpec::default();
    let model_type = match args.model {
        ModelKind::Bpe => "bpe",
        ModelKind::Unigram => "unigram",
        ModelKind::Char => "char",
        ModelKind::Word => "word",
        ModelKind::Wordpiece | ModelKind::Wordlevel | ModelKind::Byte => {
            bail!("--format sentencepiece trains -m unigram, bpe, char or word models, not {}", args.model.name())
        }
    };
    if args.files.is_empty() {
        bail!("give the input files");
    }
    let mut options: Vec<(String, String)> = vec![("model_type".into(), model_type.into())];
    let files: Vec<String> = args.files.iter().map(|f| f.to_string_lossy().into_owned()).collect();
    options.push(("input".into(), files.join(",")));
    options.push(("model_prefix".into(), args.output.to_string_lossy().into_owned()));
    let optional = [
        ("vocab_size", args.vocab_size.map(|v| v.to_string())),
        ("shrinking_factor", args.shrinking_factor.map(|v| v.to_string())),
        ("num_sub_iterations", args.n_sub_iterations.map(|v| v.to_string())),
        ("max_sentencepiece_length", args.max_piece_length.map(|v| v.to_string())),
    ];
    options.extend(optional.into_iter().filter_map(|(k, v)| v.map(|v| (k.to_owned(), v))));
    for o in &args.spm {
        let (k, v) = o.split_once('=').ok_or_else(|| anyhow!("--spm {o:?}: expected NAME=VALUE"))?;
        if k == "input" || k == "model_prefix" {
            bail!("--spm {k}: give the input files as arguments and the prefix with -o");
        }
        options.push((k.trim_start_matches('-').to_owned(), v.to_owned()));
    }
    for (k, v) in &options {
        spec.set(k, v).map_err(|e| anyhow!(e))?;
    }
    // Files are only a comma-separated list in sentencepiece's text form: keep the real paths.
    spec.input = files;
    if spec.input.iter().any(|f| f.contains(',')) {
        bail!("input file names must not contain ',' (sentencepiece's list separator)");
    }
    let model_path = std::path::PathBuf::from(format!("{}.model", args.output.display()));
    tokenkit::utils::atomic_file::check_writable(&model_path).map_err(|e| anyhow!(e))?;
    let (proto, report) = spm::train(&spec, spm::read_lines(&spec.input)).map_err(|e| anyhow!(e))?;
    spm::save(&proto, &args.output).map_err(|e| anyhow!(e))?;
    let peak = peak_memory_text();
    if !args.quiet {
        eprintln!(
            "tokenkit: trained a SentencePiece {model_type} model on {} sentences ({} distinct words, alphabet {}): \
             {} pieces -> {}.model, {}.vocab",
            report.sentences,
            report.distinct_words,
            report.alphabet,
            proto.pieces.len(),
            args.output.display(),
            args.output.display()
        );
        eprintln!("tokenkit: time {:.2} s, peak memory {peak}", t0.elapsed().as_secs_f64());
    }
    Ok(())
}
