//! The `tokenkit` command-line tool: a thin layer over the library.

mod chat;
mod spm;

use std::fmt::Display;
use std::io::{BufRead, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Parser, Subcommand};
use serde::Serialize;
use serde_json::Value;
use tokenkit::formats::tiktoken::EncodingSpec;
use tokenkit::formats::Format;
use tokenkit::tiktoken::{Encoding as TiktokenEncoding, SpecialTokens};
use tokenkit::{EncodeInput, Encoding, InputSequence, Tokenizer};

mod corpus;
mod serve;
mod stats;
mod tokenize;
mod train;
mod viz;
mod vocab;

/// mimalloc: tokenization allocates many small strings (token values), and mimalloc takes
/// about a fifth fewer instructions than glibc's malloc there.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const ABOUT: &str = "Encode, decode, inspect, convert and train tokenizers (HF tokenizer.json, tiktoken, \
SentencePiece .model, BERT vocab.txt, GPT-2 vocab.json + merges.txt) with each format's reference ids";

const LONG_ABOUT: &str = "\
Encode, decode, inspect, convert and train tokenizers, with the ids, tokens and offsets of each
format's reference library.

Formats (-t PATH; detected from the content, a directory is searched for tokenizer.json,
vocab.json, encoder.json or vocab.txt):
  tokenizer.json           HF tokenizers, any pipeline: ids, tokens, char offsets as `tokenizers`
  vocab.txt                BERT WordPiece vocabulary, with bert-base-uncased's pipeline
  vocab.json + merges.txt  GPT-2 byte-level BPE (merges.txt or vocab.bpe beside vocab.json)
  *.model                  SentencePiece protobuf (Unigram, BPE; byte fallback, charsmap), as
                           `sentencepiece`; Llama-3's tiktoken-format tokenizer.model with -e llama3
  *.tiktoken, -e NAME      tiktoken rank files and the named encodings gpt2, r50k_base, p50k_base,
                           p50k_edit, cl100k_base, o200k_base, o200k_harmony, llama3, llama4, qwen2,
                           qwen3.5, whisper, whisper-gpt2 (rank files from $TOKENKIT_TIKTOKEN_DIR,
                           ~/.cache/tokenkit/tiktoken or .fixtures/): tiktoken mode, with tiktoken's
                           ids and special-token rules; any other rank file with --pattern and
                           --special TOKEN=ID
  tekken.json              Mistral Tekken, as mistral-common (ids offset by the special tokens,
                           <s> added; special-token text is text)
  *.gguf                   the tokenizer in a GGUF file's metadata (llama.cpp), with HF's ids

The HF-style options (--no-special, --full, --pretokenized, --split-special-tokens, --skip-special,
--stream) apply to every format but tiktoken's; the tiktoken options (--allowed-special,
--disallowed-special, --count, --errors) only in tiktoken mode; --nbest and --sample-alpha only to
SentencePiece Unigram .model files. A flag that does not apply to the loaded tokenizer is an
error, never silently ignored.

With --jsonl, every input line gives one output line; a line that cannot be read or encoded is
reported on stderr with its number and the reason, gives {\"error\": \"line N: ...\"} in its place,
and the command exits with status 1 once every line is done.";

const EXAMPLES: &str = "\
Examples:
  tokenkit encode -t tokenizer.json \"Hello, world!\"
  printf '\"a text\"\\n[\"first\", \"second\"]\\n' | tokenkit encode -t tokenizer.json --jsonl --full
  tokenkit encode -e cl100k_base --allowed-special all \"hi <|endoftext|>\"
  tokenkit encode -t spiece.model --nbest 3 \"text\"
  tokenkit decode -t tokenizer.json --skip-special 101 8667 102
  tokenkit inspect spiece.model
  tokenkit save -t vocab.txt -o tokenizer.json
  tokenkit train -m wordpiece -p bert --post-processor bert --special-tokens '[PAD],[UNK],[CLS],[SEP],[MASK]' -o bert.json corpus.txt
  tokenkit chat -t tokenizer_dir/ --messages chat.json --add-generation-prompt

`tokenkit <command> --help` describes each command's options.";

#[derive(Parser)]
#[command(name = "tokenkit", version, about = ABOUT, long_about = LONG_ABOUT, after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The tokenizer a command loads: a file (any format) or a named tiktoken encoding.
#[derive(clap::Args)]
#[group(id = "source", required = true, multiple = true)]
struct Source {
    /// The tokenizer: a tokenizer.json, SentencePiece .model, BERT vocab.txt, GPT-2 vocab.json
    /// (merges.txt beside it), tiktoken .tiktoken rank file, or a directory holding one.
    #[arg(short, long)]
    tokenizer: Option<PathBuf>,
    /// A named tiktoken encoding (gpt2, r50k_base, p50k_base, p50k_edit, cl100k_base,
    /// o200k_base, o200k_harmony, llama3, llama4, qwen2, qwen3.5, whisper, whisper-gpt2). With
    /// -t FILE, the encoding of that rank file (for a file whose name does not tell it, such as
    /// Llama's tokenizer.model).
    #[arg(short, long)]
    encoding: Option<String>,
    /// With a tiktoken rank file (-t): its split pattern, in tiktoken's regex syntax (replaces
    /// the pattern of -e NAME or of the file name's encoding).
    #[arg(long, requires = "tokenizer")]
    pattern: Option<String>,
    /// With a tiktoken rank file (-t): a special token and its id, TOKEN=ID (repeat it for
    /// each); the special tokens given replace those of -e NAME or of the file name's encoding.
    #[arg(long = "special", value_name = "TOKEN=ID", requires = "tokenizer")]
    special: Vec<String>,
}

#[derive(Subcommand)]
enum Command {
    /// Encode text: one JSON object per input, {"ids": [...], "tokens": [...], "offsets":
    /// [[start, end], ...]} (char offsets), or {"ids": [...]} in tiktoken mode. Texts come from
    /// the arguments, or from standard input (the whole input is one text; with --jsonl, each
    /// line is a JSON string or a [first, second] pair).
    #[command(after_help = "Examples:
  tokenkit encode -t tokenizer.json \"Hello, world!\"
  echo '[\"A question?\", \"An answer.\"]' | tokenkit encode -t bert/vocab.txt --jsonl --full
  echo '[\"Hello\", \"world\"]' | tokenkit encode -t gpt2.json --jsonl --pretokenized --no-special
  tokenkit encode -t tokenizer.json --split-special-tokens \"<s> is text here\"
  tokenkit encode -e o200k_base --count \"hello world\"
  tokenkit encode -e cl100k_base --allowed-special '<|endoftext|>' \"a<|endoftext|>\"
  tokenkit encode -t spiece.model --sample-alpha 0.1 --seed 7 \"text\"")]
    Encode {
        #[command(flatten)]
        source: Source,
        /// Read JSON lines from standard input and write one JSON object per line.
        #[arg(long)]
        jsonl: bool,
        /// Do not add the post-processor's special tokens (HF's add_special_tokens=False).
        #[arg(long)]
        no_special: bool,
        /// Output every Encoding field (type_ids, masks, word_ids, sequence_ids, overflowing).
        #[arg(long)]
        full: bool,
        /// Inputs are pre-tokenized: each line is a JSON array of words (or two such arrays).
        #[arg(long, requires = "jsonl", conflicts_with = "texts")]
        pretokenized: bool,
        /// Treat the text of special tokens as plain text (HF's encode_special_tokens /
        /// transformers' split_special_tokens). tiktoken mode: --disallowed-special none.
        #[arg(long)]
        split_special_tokens: bool,
        /// Lines per batch (padding to the longest applies within a batch).
        #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
        batch_size: u32,
        #[command(flatten)]
        tiktoken: TiktokenEncodeArgs,
        #[command(flatten)]
        sp: spm::SpArgs,
        /// Texts to encode (when not reading standard input).
        #[arg(conflicts_with = "jsonl")]
        texts: Vec<String>,
    },
    /// Decode ids. Ids come from the arguments, or from standard input with --jsonl (one JSON
    /// array of ids per line, one JSON string out per line).
    #[command(after_help = "Examples:
  tokenkit decode -t tokenizer.json --skip-special 101 8667 102
  echo '[101, 8667, 102]' | tokenkit decode -t tokenizer.json --jsonl --stream
  tokenkit decode -e o200k_base --errors strict 13225 2375")]
    Decode {
        #[command(flatten)]
        source: Source,
        /// Read JSON arrays of ids from standard input, one per line.
        #[arg(long)]
        jsonl: bool,
        /// Leave out special tokens (HF's skip_special_tokens).
        #[arg(long)]
        skip_special: bool,
        /// Decode id by id with the streaming decoder; writes per line the array of chunks
        /// (null where a step produced no text).
        #[arg(long)]
        stream: bool,
        /// tiktoken mode: invalid UTF-8 in the decoded bytes becomes U+FFFD ("replace", the
        /// default) or is an error ("strict").
        #[arg(long, value_parser = ["replace", "strict"])]
        errors: Option<String>,
        /// Ids to decode (when not reading standard input).
        #[arg(conflicts_with = "jsonl")]
        ids: Vec<u32>,
    },
    /// Summarise a tokenizer: its format, model type and vocabulary size, normalizer,
    /// pre-tokenizer, post-processor, decoder and special tokens; for a SentencePiece .model its
    /// trainer and normalizer specs; for tiktoken the encoding's pattern and special tokens.
    #[command(after_help = "Examples:
  tokenkit inspect tokenizer.json
  tokenkit inspect spiece.model
  tokenkit inspect -e cl100k_base")]
    Inspect {
        /// The tokenizer (any format, as for encode -t).
        #[arg(required_unless_present = "encoding")]
        path: Option<PathBuf>,
        /// A named tiktoken encoding (or the encoding of PATH, as for encode -e).
        #[arg(short, long)]
        encoding: Option<String>,
    },
    /// Convert a tokenizer; the output format follows the output's extension: .json
    /// (tokenizer.json; a SentencePiece .model is converted as transformers does), .tiktoken (a
    /// rank file, from a byte-level BPE whose ids are its ranks), .model (a SentencePiece
    /// .model, from a SentencePiece source). Anything else is an error.
    #[command(after_help = "Examples:
  tokenkit save -t vocab.txt -o tokenizer.json
  tokenkit save -t spiece.model -o tokenizer.json --pretty
  tokenkit save -e cl100k_base -o cl100k.json
  tokenkit save -t cl100k.json -o cl100k_base.tiktoken")]
    Save {
        #[command(flatten)]
        source: Source,
        /// Where to write: FILE.json, FILE.tiktoken or FILE.model.
        #[arg(short, long)]
        output: PathBuf,
        /// Indent the JSON (.json output only).
        #[arg(long)]
        pretty: bool,
    },
    /// Render a conversation with the tokenizer's chat template (as transformers' apply_chat_template).
    Chat(chat::ChatArgs),
    /// Train a tokenizer (BPE, byte-level BPE, WordPiece, WordLevel, Unigram) on text or JSONL
    /// files and save it as tokenizer.json, with the decoder (and, on request, the
    /// post-processor) that HF users set for that model and pre-tokenizer.
    #[command(
        long_about = "Train a tokenizer (BPE, byte-level BPE, WordPiece, WordLevel, Unigram) on text or JSONL files and \
save it as tokenizer.json.

The decoder follows the preset: ByteLevel (byte-level, gpt2, cl100k, o200k), Metaspace (metaspace),
Fuse (none), each after Replace decoders that strip --continuing-subword-prefix and
--end-of-word-suffix; for bert and whitespace, which drop spaces: BPEDecoder with
--end-of-word-suffix, the WordPiece decoder with a continuing prefix (WordPiece's ##), else none
(tokens joined with spaces: whole words for WordLevel; BPE and Unigram tokens there do not mark
word ends, and train says so). The post-processor: --post-processor bert|roberta|byte-level|none
or --template/--pair-template (TemplateProcessing); the tokens it adds must be special tokens.
An option the chosen model has no use for is an error.",
        after_help = "Examples:
  tokenkit train -p byte-level -v 32000 --special-tokens '<|endoftext|>' -o tok.json corpus.txt
  tokenkit train -m wordpiece -p bert --normalizer bert-uncased --post-processor bert \\
      --special-tokens '[PAD],[UNK],[CLS],[SEP],[MASK]' -o bert.json corpus.txt
  tokenkit train -m bpe -p bert --end-of-word-suffix '</w>' -o char_bpe.json corpus.txt
  tokenkit train -m unigram -p metaspace -v 8000 --unk-token '<unk>' --special-tokens '<unk>,<s>,</s>' \\
      --template '<s> $A </s>' --pair-template '<s> $A </s> $B:1 </s>:1' -o uni.json corpus.txt
  tokenkit train -p cl100k --jsonl-field text --strict -o tok.json data.jsonl
  tokenkit train --recipe minimind -o minimind_tokenizer/ pretrain.jsonl"
    )]
    Train(Box<train::TrainArgs>),
    /// Count the words of a corpus as `tokenkit train` would (normalizer, pre-tokenizer) into a
    /// count file, in bounded memory (--memory-limit); train on one or many with
    /// `tokenkit train --from-counts`. Shards counted anywhere merge by adding their counts.
    #[command(after_help = "Examples:
  tokenkit count -p byte-level -o shard1.counts part1.txt
  tokenkit count -p byte-level --jsonl-field text --memory-limit 2G -o shard2.counts part2.jsonl
  tokenkit train --from-counts shard1.counts shard2.counts -v 32000 -o tokenizer.json")]
    Count(Box<train::CountArgs>),
    /// Tokenize whole datasets (text, JSONL, Parquet; plain, .gz, .zst; files, directories,
    /// globs) into training shards: a flat token file (numpy.memmap), Megatron-LM's indexed
    /// dataset, or Parquet. Streams with bounded memory on all cores; output in input order,
    /// the same bytes for any thread count; a killed run continues when the same command runs
    /// again.
    #[command(
        long_about = "Tokenize whole datasets into training shards.

Each document is encoded (tiktoken: encode_ordinary; other tokenizers: encode with the
post-processor's special tokens, as tokenizer(text) in HF, unless --no-special) and followed by
the separator: <|endoftext|> for tiktoken encodings; for other tokenizers nothing when the
post-processor already ends every encoding with a special token (BERT's [SEP]), else the first of
</s>, <|endoftext|>, <|end_of_text|>, <eos>, <｜end▁of▁sentence｜> in the vocabulary (--separator
TOKEN or --no-eos to choose).

Inputs: .jsonl/.ndjson/.json (the --field of each line), .parquet (the --field column), any other
file is text (--text-docs line|file); .gz and .zst are decompressed; directories are read
recursively (sorted, hidden files left out); globs are expanded (sorted).

Outputs are written under temporary names beside PREFIX and renamed when complete. A journal
(PREFIX.journal) records after each chunk how far the job got: run the same command again after a
crash or kill and it continues from there, with output identical to an uninterrupted run. Bad
records (invalid JSON, missing field, invalid UTF-8) are counted and reported, or an error with
--strict.",
        after_help = "Examples:
  tokenkit tokenize -e cl100k_base --field text --format bin -o data/train corpus.jsonl.zst
  tokenkit tokenize -t tokenizer.json --format megatron -o data/corpus_text_document shards/
  tokenkit tokenize -t tokenizer.json --format parquet --keep-columns id,url -o out 'data/*.parquet'
  tokenkit tokenize -e gpt2 --text-docs file --val-fraction 0.01 -o tiny books/"
    )]
    Tokenize(Box<tokenize::TokenizeArgs>),
    /// Measure tokenizers on corpora: bytes and characters per token (compression), tokens per
    /// word (fertility), unknown-token and byte-fallback rates, token lengths, the share of the
    /// vocabulary used; per corpus and per language label. A table, JSON lines, an SVG chart.
    #[command(
        long_about = "Measure tokenizers on corpora.

Each document is encoded as `tokenkit tokenize` would (tiktoken encodings: encode_ordinary; other
tokenizers: encode without the post-processor's special tokens unless --special). Words are runs of
non-whitespace characters (Python's str.split()); bytes are UTF-8 bytes of the text. Each CORPUS
argument is one corpus (a file, directory or glob), read once for all the tokenizers.

JSON (--json): one object per tokenizer with documents, bytes, chars, words, tokens,
unknown_tokens, byte_fallback_tokens, bytes_per_token, chars_per_token, tokens_per_word,
unknown_rate, byte_fallback_rate, vocab_size, vocab_used, vocab_used_share,
token_bytes_histogram, skipped_records, corpora (the same per corpus) and languages (per label,
with --lang-field).",
        after_help = "Examples:
  tokenkit stats -e cl100k_base -e o200k_base -t llama3/tokenizer.json en.txt ja.txt
  tokenkit stats -e cl100k_base --json corpus.jsonl
  tokenkit stats -t tokenizer.json --lang-field lang --chart stats.svg docs.jsonl"
    )]
    Stats(Box<stats::StatsArgs>),
    /// Write a self-contained HTML page showing how a tokenizer cuts a text: tokens coloured,
    /// ids and character offsets on hover, special tokens and byte-fallback pieces marked,
    /// characters cut between tokens underlined.
    #[command(after_help = "Examples:
  tokenkit viz -e o200k_base -o cut.html \"Tokenizers cut text: 東京 🦀\"
  tokenkit viz -t tokenizer.json -o cut.html < doc.txt")]
    Viz(viz::VizArgs),
    /// Serve a local web playground at http://127.0.0.1:PORT/: type or paste text and see how
    /// each tokenizer cuts it, side by side (coloured tokens, ids, counts, bytes and characters
    /// per token), and a chat view that renders messages through each tokenizer's chat template.
    /// The page is built in (no network needed); requests are bounded to 1 MiB; nothing is
    /// written to disk.
    #[command(after_help = "Examples:
  tokenkit serve -e cl100k_base -e o200k_base -t Qwen3/ --port 8000
  tokenkit serve -t tokenizer.json --chat-template chatml.jinja --port 0")]
    Serve(serve::ServeArgs),
    /// Analyse a vocabulary: tokens their own text does not give (unreachable, shadowed),
    /// glitch-token candidates on corpora, number splits, whitespace runs, look-alike tokens,
    /// added tokens their text does not match.
    #[command(after_help = "Examples:
  tokenkit vocab -t gpt2/vocab.json --corpus en.txt
  tokenkit vocab -e cl100k_base --numbers 5 --json")]
    Vocab(Box<vocab::VocabArgs>),
    /// Prepare a corpus: replace personal data (pii), remove exact or near duplicates (dedup).
    /// Reads text, JSONL, Parquet (plain, .gz, .zst; files, directories, globs), writes JSON
    /// lines in input order, streaming on all cores.
    #[command(subcommand)]
    Corpus(corpus::CorpusCommand),
}

/// tiktoken's special-token options of `encode`.
#[derive(clap::Args)]
struct TiktokenEncodeArgs {
    /// tiktoken mode: special tokens encoded as such, "all", "none" or a comma-separated list
    /// (default: none).
    #[arg(long, value_name = "all|none|LIST")]
    allowed_special: Option<String>,
    /// tiktoken mode: special tokens whose text is an error, "all" (those not allowed), "none"
    /// or a comma-separated list (default: all).
    #[arg(long, value_name = "all|none|LIST")]
    disallowed_special: Option<String>,
    /// tiktoken mode: write {"count": n} instead of the ids.
    #[arg(long)]
    count: bool,
}

fn main() -> ExitCode {
    // Last resort: a bug still ends with one line and exit status 101, never a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let _ = writeln!(std::io::stderr(), "tokenkit: internal error (a bug; please report it): {info}");
    }));
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "tokenkit: error: {}", report(&e));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes, each said once: a cause whose text its parent's message already
/// ends with (the library's errors include their source, e.g. `path: No such file...`) is not
/// repeated.
fn report(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.ends_with(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// A loaded tokenizer: tiktoken mode (tiktoken's API and rules) or the HF-style pipeline.
enum Loaded {
    Tiktoken(Box<TiktokenEncoding>),
    Tokenizer(Box<Tokenizer>),
}

impl Source {
    /// tiktoken mode for a named encoding or a rank file, else the tokenizer of the file.
    fn load(&self) -> Result<Loaded> {
        if let (Some(p), true) = (&self.tokenizer, self.pattern.is_some() || !self.special.is_empty()) {
            return Ok(Loaded::Tiktoken(Box::new(TiktokenEncoding::from_spec(self.custom_spec(p)?, p)?)));
        }
        Ok(match (&self.tokenizer, &self.encoding) {
            // A named encoding with a file: that file holds its ranks, whatever its name
            // (Llama-3's `tokenizer.model`).
            (Some(p), Some(name)) => Loaded::Tiktoken(Box::new(TiktokenEncoding::from_file(p, Some(name))?)),
            (None, Some(name)) => Loaded::Tiktoken(Box::new(TiktokenEncoding::get(name)?)),
            (Some(p), None) => match tokenkit::formats::detect(p)? {
                Format::Tiktoken(p) => Loaded::Tiktoken(Box::new(TiktokenEncoding::from_file(&p, None)?)),
                _ => Loaded::Tokenizer(Box::new(tokenkit::load(p)?)),
            },
            (None, None) => unreachable!("clap requires -t or -e"),
        })
    }
}

impl Source {
    /// A tokenizer file, its format detected as for -t.
    fn file(path: PathBuf) -> Self {
        Source { tokenizer: Some(path), encoding: None, pattern: None, special: Vec::new() }
    }

    /// A named tiktoken encoding, as -e NAME.
    fn named(name: String) -> Self {
        Source { tokenizer: None, encoding: Some(name), pattern: None, special: Vec::new() }
    }

    /// The tokenizer's name in reports: its file, else its encoding's name.
    fn display_name(&self) -> String {
        match (&self.tokenizer, &self.encoding) {
            (Some(p), _) => p.display().to_string(),
            (None, Some(e)) => e.clone(),
            (None, None) => String::new(),
        }
    }

    /// The encoding of rank file `path` with --pattern and --special over the named encoding
    /// (-e NAME, else the one the file name stands for, else none).
    fn custom_spec(&self, path: &Path) -> Result<EncodingSpec> {
        use tokenkit::formats::tiktoken as format;
        let base = match &self.encoding {
            Some(name) => Some(EncodingSpec::named(name)?),
            None => EncodingSpec::for_file_name(path),
        };
        let mut spec = match (base, &self.pattern) {
            (Some(spec), _) => spec,
            (None, Some(_)) => EncodingSpec {
                name: path.file_stem().map_or("custom".into(), |s| s.to_string_lossy().into_owned()),
                file: String::new(),
                pat_str: String::new(),
                special_tokens: Vec::new(),
                explicit_n_vocab: None,
                nfc: false,
            },
            (None, None) => bail!(
                "{}: --special needs --pattern (or -e NAME): the file name does not tell the encoding (known: {})",
                path.display(),
                format::ENCODING_NAMES.join(", ")
            ),
        };
        if let Some(p) = &self.pattern {
            spec.pat_str = p.clone();
        }
        if !self.special.is_empty() {
            spec.special_tokens = self.special.iter().map(|s| parse_special(s)).collect::<Result<_>>()?;
        }
        // The vocabulary size a named encoding checks no longer applies to other tokens, and
        // its NFC (Qwen's) only when it was named.
        spec.explicit_n_vocab = None;
        spec.nfc &= self.encoding.is_some();
        Ok(spec)
    }
}

/// `TOKEN=ID` (the last `=` separates them, so a token may hold one).
fn parse_special(s: &str) -> Result<(String, u32)> {
    let (token, id) = s.rsplit_once('=').filter(|(t, _)| !t.is_empty()).ok_or_else(|| anyhow!("--special {s:?}: expected TOKEN=ID"))?;
    let id = id.parse().map_err(|_| anyhow!("--special {s:?}: the id {id:?} is not a non-negative integer"))?;
    Ok((token.to_owned(), id))
}

/// Fails when any of the `given` flags (name, whether given) was given: they do not apply
/// `why` (e.g. "in tiktoken mode").
fn reject(given: &[(&str, bool)], why: &str, hint: &str) -> Result<()> {
    let names: Vec<&str> = given.iter().filter(|(_, g)| *g).map(|(n, _)| *n).collect();
    match names.as_slice() {
        [] => Ok(()),
        [one] => bail!("{one} does not apply {why}{hint}"),
        many => bail!("{} do not apply {why}{hint}", many.join(", ")),
    }
}

fn special_set(spec: Option<&str>, default: &str) -> SpecialTokens {
    match spec.unwrap_or(default) {
        "all" => SpecialTokens::All,
        "none" | "" => SpecialTokens::none(),
        list => SpecialTokens::of(list.split(',').map(str::trim).filter(|s| !s.is_empty())),
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Encode { source, jsonl, no_special, full, pretokenized, split_special_tokens, batch_size, tiktoken, sp, texts } => {
            let batch_size = batch_size as usize;
            match source.load()? {
                Loaded::Tiktoken(enc) => {
                    reject(
                        &[
                            ("--no-special", no_special),
                            ("--full", full),
                            ("--pretokenized", pretokenized),
                            ("--split-special-tokens", split_special_tokens),
                        ],
                        "in tiktoken mode (-e NAME or a .tiktoken rank file)",
                        if split_special_tokens { "; --disallowed-special none encodes special-token text as plain text" } else { "" },
                    )?;
                    reject(&sp.given(), "in tiktoken mode (they need a SentencePiece Unigram .model)", "")?;
                    let inputs = read_inputs(jsonl, texts, |l| serde_json::from_str::<String>(l).context("expected a JSON string"))?;
                    tiktoken_encode(&enc, &tiktoken, inputs, batch_size, Output::new(jsonl))
                }
                Loaded::Tokenizer(mut tok) => {
                    reject(
                        &[
                            ("--allowed-special", tiktoken.allowed_special.is_some()),
                            ("--disallowed-special", tiktoken.disallowed_special.is_some()),
                            ("--count", tiktoken.count),
                        ],
                        "to this tokenizer: it is a tiktoken option (-e NAME or a .tiktoken rank file)",
                        if tiktoken.allowed_special.is_some() || tiktoken.disallowed_special.is_some() {
                            "; special-token text is encoded as special tokens, or as plain text with --split-special-tokens"
                        } else {
                            ""
                        },
                    )?;
                    // A tokenizer may already encode special-token text as text (Tekken does).
                    if split_special_tokens {
                        tok.set_encode_special_tokens(true);
                    }
                    if sp.active() {
                        let inputs = read_inputs(jsonl, texts, |l| serde_json::from_str::<String>(l).context("expected a JSON string"))?;
                        return spm::encode(&tok, &sp, inputs, Output::new(jsonl));
                    }
                    let inputs = read_inputs(jsonl, texts, move |l| parse_input(l, pretokenized))?;
                    encode(&tok, inputs, !no_special, full, batch_size, Output::new(jsonl))
                }
            }
        }
        Command::Decode { source, jsonl, skip_special, stream, errors, ids } => {
            let sequences = if jsonl {
                read_jsonl(|l| serde_json::from_str::<Vec<u32>>(l).context("expected a JSON array of token ids"))
            } else {
                Inputs::of(vec![(Origin::Arguments, Ok(ids))])
            };
            let out = Output::new(jsonl);
            match source.load()? {
                Loaded::Tiktoken(enc) => {
                    reject(
                        &[("--skip-special", skip_special), ("--stream", stream)],
                        "in tiktoken mode (-e NAME or a .tiktoken rank file)",
                        "",
                    )?;
                    tiktoken_decode(&enc, errors.as_deref() == Some("strict"), sequences, out)
                }
                Loaded::Tokenizer(tok) => {
                    reject(&[("--errors", errors.is_some())], "to this tokenizer: it is a tiktoken option", "")?;
                    decode(&tok, skip_special, stream, sequences, out)
                }
            }
        }
        Command::Inspect { path, encoding } => {
            let text = match (&path, &encoding) {
                (Some(p), None) => tokenkit::inspect_file(p)?,
                (Some(p), Some(name)) => TiktokenEncoding::from_file(p, Some(name))?.inspect(),
                (None, Some(name)) => TiktokenEncoding::get(name)?.inspect(),
                (None, None) => unreachable!("clap requires a path or -e"),
            };
            print!("{text}");
            Ok(())
        }
        Command::Chat(args) => chat::run(args),
        Command::Save { source, output, pretty } => save(&source, &output, pretty),
        Command::Train(args) => train::run(*args),
        Command::Count(args) => train::run_count(*args),
        Command::Tokenize(args) => tokenize::run(*args),
        Command::Stats(args) => stats::run(*args),
        Command::Viz(args) => viz::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Vocab(args) => vocab::run(*args),
        Command::Corpus(c) => corpus::run(c),
    }
}

/// The file formats `save` writes, by the output's extension.
const SAVE_FORMATS: &str = ".json (tokenizer.json), .tiktoken (tiktoken rank file), .model (SentencePiece, from a SentencePiece .model)";

fn save(source: &Source, output: &Path, pretty: bool) -> Result<()> {
    let ext = output.extension().and_then(|e| e.to_str()).unwrap_or("");
    if !matches!(ext, "json" | "tiktoken" | "model") {
        bail!("{}: cannot tell the output format from the extension; save writes {SAVE_FORMATS}", output.display());
    }
    reject(&[("--pretty", pretty && ext != "json")], "to a .tiktoken or .model output", "")?;
    let tok = match source.load()? {
        Loaded::Tiktoken(enc) => enc.tokenizer_with_rank_ids()?.clone(),
        // tokenizer.json output: a SentencePiece .model in HF's layout, as transformers converts it.
        Loaded::Tokenizer(_) if ext == "json" => tokenkit::load_for_save(source.tokenizer.as_deref().unwrap_or(Path::new("")))?,
        Loaded::Tokenizer(tok) => *tok,
    };
    let bytes = match ext {
        "tiktoken" => {
            let ranks = tokenkit::formats::tiktoken::ranks_from_tokenizer(&tok)?;
            tokenkit::formats::tiktoken::write_rank_file(&ranks).into_bytes()
        }
        "model" => {
            let tokenkit::models::ModelWrapper::SentencePiece(model) = tok.get_model() else {
                bail!(
                    "{}: a SentencePiece .model can only be written from a SentencePiece model (a .model file, or a \
                     tokenizer.json tokenkit saved from one); this tokenizer's model is {}. save writes {SAVE_FORMATS}",
                    output.display(),
                    tok.get_model().type_name()
                );
            };
            model.to_bytes().to_vec()
        }
        _ => return Ok(tok.save(output, pretty)?),
    };
    Ok(tokenkit::utils::atomic_file::write_atomic(output, &bytes)?)
}

/// Where an input came from, for messages.
#[derive(Clone, Copy)]
enum Origin {
    /// A line of standard input (1-based).
    Line(usize),
    /// A text given as an argument (1-based).
    Argument(usize),
    /// The ids given as arguments.
    Arguments,
    /// All of standard input.
    Stdin,
}

impl Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Line(n) => write!(f, "line {n}"),
            Origin::Argument(n) => write!(f, "argument {n}"),
            Origin::Arguments => write!(f, "the ids given as arguments"),
            Origin::Stdin => write!(f, "standard input"),
        }
    }
}

impl Origin {
    /// Where id number `pos` (0-based) of this input's ids is.
    fn id_at(self, pos: usize) -> String {
        match self {
            Origin::Arguments => format!("argument {}", pos + 1),
            other => format!("{other}, id {}", pos + 1),
        }
    }
}

/// Inputs with their origin, read as they are taken (JSON lines of standard input are never all
/// in memory at once): an input that could not be read or parsed holds the reason; an `Err`
/// item (standard input itself failed) ends the command.
struct Inputs<T>(Box<dyn Iterator<Item = Result<(Origin, Result<T>)>>>);

impl<T: 'static> Inputs<T> {
    /// Inputs already at hand.
    fn of(items: Vec<(Origin, Result<T>)>) -> Self {
        Self(Box::new(items.into_iter().map(Ok)))
    }

    /// The inputs `n` at a time (the last chunk shorter), each chunk read when it is taken.
    fn chunks(mut self, n: usize) -> impl Iterator<Item = Result<Vec<(Origin, Result<T>)>>> {
        std::iter::from_fn(move || {
            let mut chunk = Vec::new();
            while chunk.len() < n.max(1) {
                match self.0.next() {
                    Some(Ok(item)) => chunk.push(item),
                    Some(Err(e)) => return Some(Err(e)),
                    None => break,
                }
            }
            (!chunk.is_empty()).then_some(Ok(chunk))
        })
    }
}

impl<T> Iterator for Inputs<T> {
    type Item = Result<(Origin, Result<T>)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next()
    }
}

/// Inputs: JSON lines of standard input parsed by `parse` with `jsonl`, else the arguments
/// (as JSON-less texts), else all of standard input as one text.
fn read_inputs<T: From<String> + 'static>(
    jsonl: bool,
    texts: Vec<String>,
    parse: impl Fn(&str) -> Result<T> + 'static,
) -> Result<Inputs<T>> {
    if jsonl {
        return Ok(read_jsonl(parse));
    }
    if texts.is_empty() {
        let mut bytes = Vec::new();
        std::io::stdin().read_to_end(&mut bytes).context("reading standard input")?;
        let s = String::from_utf8(bytes)
            .map_err(|e| anyhow!("standard input is not valid UTF-8 (invalid byte at offset {})", e.utf8_error().valid_up_to()))?;
        return Ok(Inputs::of(vec![(Origin::Stdin, Ok(T::from(s)))]));
    }
    Ok(Inputs::of(texts.into_iter().enumerate().map(|(i, t)| (Origin::Argument(i + 1), Ok(T::from(t)))).collect()))
}

/// The non-blank lines of standard input, each parsed by `parse` (or why it could not be), read
/// as they are taken.
fn read_jsonl<T: 'static>(parse: impl Fn(&str) -> Result<T> + 'static) -> Inputs<T> {
    let lines = std::io::stdin().lock().split(b'\n').enumerate();
    Inputs(Box::new(lines.filter_map(move |(i, line)| {
        let mut bytes = match line.context("reading standard input") {
            Ok(bytes) => bytes,
            Err(e) => return Some(Err(e)),
        };
        if bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        let item = match String::from_utf8(bytes) {
            Ok(s) if s.trim().is_empty() => return None,
            Ok(s) => parse(&s),
            Err(e) => Err(anyhow!("not valid UTF-8 (invalid byte at offset {})", e.utf8_error().valid_up_to())),
        };
        Some(Ok((Origin::Line(i + 1), item)))
    })))
}

/// Standard output, one result per input. With --jsonl a failed input is reported on stderr
/// and gets `{"error": "line N: ..."}` in its place (output lines stay aligned with the
/// inputs), and [`finish`](Output::finish) fails once all are written; otherwise the first
/// failure is the command's error.
struct Output {
    w: BufWriter<std::io::StdoutLock<'static>>,
    jsonl: bool,
    failed: usize,
    total: usize,
}

impl Output {
    fn new(jsonl: bool) -> Self {
        Output { w: BufWriter::new(std::io::stdout().lock()), jsonl, failed: 0, total: 0 }
    }

    /// Writes `value` as one JSON line.
    fn json(&mut self, value: &impl Serialize) -> Result<()> {
        self.total += 1;
        serde_json::to_writer(&mut self.w, value)?;
        Ok(self.w.write_all(b"\n")?)
    }

    /// Writes a plain text line (decode without --jsonl).
    fn text(&mut self, text: &str) -> Result<()> {
        self.total += 1;
        Ok(writeln!(self.w, "{text}")?)
    }

    /// Reports the failure of the input at `at` (e.g. "line 3").
    fn failed(&mut self, at: impl Display, e: impl Display) -> Result<()> {
        let msg = format!("{at}: {e}");
        if !self.jsonl {
            self.w.flush()?;
            bail!(msg);
        }
        eprintln!("tokenkit: {msg}");
        self.failed += 1;
        self.json(&serde_json::json!({ "error": msg }))
    }

    /// Writes the result of the input from `origin`.
    fn result(&mut self, origin: Origin, r: Result<impl Serialize>) -> Result<()> {
        match r {
            Ok(v) => self.json(&v),
            Err(e) => self.failed(origin, report(&e)),
        }
    }

    fn finish(mut self) -> Result<()> {
        self.w.flush()?;
        if self.failed > 0 {
            bail!(
                "{} of {} input lines failed (each is reported above and has {{\"error\": ...}} in its place in the output)",
                self.failed,
                self.total
            );
        }
        Ok(())
    }
}

/// A library error as the CLI reports it: tiktoken's disallowed-special message names the
/// command-line options instead of Python's arguments.
fn cli_error(e: tokenkit::Error) -> anyhow::Error {
    match e {
        tokenkit::Error::DisallowedSpecialToken { token, .. } => anyhow!(
            "the text holds {token:?}, a special token that is not allowed: pass --allowed-special '{token}' (or \
             all) to encode it as a special token, or --disallowed-special none to encode it as plain text"
        ),
        e => e.into(),
    }
}

/// One tiktoken-mode output line, `{"ids": [...]}` or `{"count": n}`, serialized straight from
/// the ids (a `serde_json::Value` of a large text's ids cost more than encoding it).
enum TiktokenOut {
    Ids(Vec<u32>),
    Count(usize),
}

impl Serialize for TiktokenOut {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(1))?;
        match self {
            TiktokenOut::Ids(ids) => m.serialize_entry("ids", ids)?,
            TiktokenOut::Count(n) => m.serialize_entry("count", n)?,
        }
        m.end()
    }
}

fn tiktoken_encode(
    enc: &TiktokenEncoding,
    args: &TiktokenEncodeArgs,
    inputs: Inputs<String>,
    batch_size: usize,
    mut out: Output,
) -> Result<()> {
    let allowed = special_set(args.allowed_special.as_deref(), "none");
    let disallowed = special_set(args.disallowed_special.as_deref(), "all");
    for chunk in inputs.chunks(batch_size) {
        let chunk = chunk?;
        let results: Vec<Result<TiktokenOut>> = {
            use rayon::prelude::*;
            chunk
                .par_iter()
                .map(|(_, text)| {
                    let text = text.as_ref().map_err(|e| anyhow!(report(e)))?;
                    Ok(if args.count {
                        TiktokenOut::Count(enc.count(text, &allowed, &disallowed).map_err(cli_error)?)
                    } else {
                        TiktokenOut::Ids(enc.encode(text, &allowed, &disallowed).map_err(cli_error)?)
                    })
                })
                .collect()
        };
        for ((origin, _), r) in chunk.iter().zip(results) {
            out.result(*origin, r)?;
        }
    }
    out.finish()
}

/// What decoding one sequence of ids gives.
enum Decoded {
    Text(String),
    /// The streaming decoder's chunk per id.
    Chunks(Vec<Option<String>>),
}

/// Decodes each sequence with `decode` and writes the results; an error about an id names
/// where that id is.
fn decode_each(sequences: Inputs<Vec<u32>>, mut out: Output, decode: impl Fn(&[u32]) -> tokenkit::Result<Decoded>) -> Result<()> {
    for item in sequences {
        let (origin, ids) = item?;
        let ids = match ids {
            Ok(ids) => ids,
            Err(e) => {
                out.failed(origin, report(&e))?;
                continue;
            }
        };
        match decode(&ids) {
            Ok(Decoded::Text(text)) if out.jsonl => out.json(&text)?,
            Ok(Decoded::Text(text)) => out.text(&text)?,
            Ok(Decoded::Chunks(chunks)) => out.json(&chunks)?,
            Err(e @ tokenkit::Error::IdOutOfRange { id, .. }) => {
                let pos = ids.iter().position(|&i| i == id).unwrap_or_default();
                out.failed(origin.id_at(pos), e)?
            }
            Err(e) => out.failed(origin, e)?,
        }
    }
    out.finish()
}

fn tiktoken_decode(enc: &TiktokenEncoding, strict: bool, sequences: Inputs<Vec<u32>>, out: Output) -> Result<()> {
    decode_each(sequences, out, |ids| Ok(Decoded::Text(if strict { enc.decode_strict(ids)? } else { enc.decode(ids)? })))
}

/// An Encoding as the CLI prints it (offsets in chars).
#[derive(Serialize)]
struct EncodingOut<'a> {
    ids: &'a [u32],
    tokens: &'a [String],
    offsets: &'a [(usize, usize)],
    #[serde(skip_serializing_if = "Option::is_none")]
    type_ids: Option<&'a [u32]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    attention_mask: Option<&'a [u32]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    special_tokens_mask: Option<&'a [u32]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    word_ids: Option<&'a [Option<u32>]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sequence_ids: Option<Vec<Option<usize>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    overflowing: Option<Vec<EncodingOut<'a>>>,
}

fn encoding_out(e: &Encoding, full: bool, nested: bool) -> EncodingOut<'_> {
    EncodingOut {
        ids: e.get_ids(),
        tokens: e.get_tokens(),
        offsets: e.get_offsets(),
        type_ids: full.then(|| e.get_type_ids()),
        attention_mask: full.then(|| e.get_attention_mask()),
        special_tokens_mask: full.then(|| e.get_special_tokens_mask()),
        word_ids: full.then(|| e.get_word_ids()),
        sequence_ids: full.then(|| e.get_sequence_ids()),
        overflowing: (full && !nested).then(|| e.get_overflowing().iter().map(|o| encoding_out(o, full, true)).collect()),
    }
}

fn parse_sequence(v: Value, pretokenized: bool) -> Result<InputSequence<'static>> {
    if pretokenized {
        let Value::Array(words) = v else { bail!("expected a JSON array of words (--pretokenized)") };
        let words = words
            .into_iter()
            .map(|w| match w {
                Value::String(s) => Ok(s),
                _ => Err(anyhow!("every word must be a JSON string")),
            })
            .collect::<Result<Vec<String>>>()?;
        Ok(InputSequence::from(words))
    } else {
        match v {
            Value::String(s) => Ok(InputSequence::from(s)),
            _ => bail!("expected a JSON string or a [first, second] pair of strings"),
        }
    }
}

fn parse_input(line: &str, pretokenized: bool) -> Result<EncodeInput<'static>> {
    let v: Value = serde_json::from_str(line).context("not valid JSON")?;
    let is_pair = match &v {
        Value::Array(items) if items.len() == 2 => {
            if pretokenized {
                items.iter().all(Value::is_array)
            } else {
                items.iter().all(Value::is_string)
            }
        }
        _ => false,
    };
    if is_pair {
        let Value::Array(mut items) = v else { unreachable!() };
        let second = items.pop().unwrap_or_default();
        let first = items.pop().unwrap_or_default();
        Ok(EncodeInput::Dual(parse_sequence(first, pretokenized)?, parse_sequence(second, pretokenized)?))
    } else {
        Ok(EncodeInput::Single(parse_sequence(v, pretokenized)?))
    }
}

/// `input` borrowed, to encode it again without a copy.
fn borrowed<'a>(input: &'a EncodeInput<'_>) -> EncodeInput<'a> {
    use std::borrow::Cow;
    let seq = |s: &'a InputSequence<'_>| match s {
        InputSequence::Raw(t) => InputSequence::Raw(Cow::Borrowed(t.as_ref())),
        InputSequence::PreTokenized(w) => InputSequence::PreTokenized(w.iter().map(|w| Cow::Borrowed(w.as_ref())).collect()),
    };
    match input {
        EncodeInput::Single(a) => EncodeInput::Single(seq(a)),
        EncodeInput::Dual(a, b) => EncodeInput::Dual(seq(a), seq(b)),
    }
}

fn encode(
    tok: &Tokenizer,
    inputs: Inputs<EncodeInput<'static>>,
    add_special: bool,
    full: bool,
    batch_size: usize,
    mut out: Output,
) -> Result<()> {
    for chunk in inputs.chunks(batch_size) {
        let chunk = chunk?;
        let good = || chunk.iter().filter_map(|(_, i)| i.as_ref().ok()).map(borrowed).collect::<Vec<_>>();
        // A batch fails as a whole: encode its inputs one by one to find which, then the
        // others together again (padding to the longest applies to them).
        let (encodings, bad) = match tok.encode_batch_char_offsets(good(), add_special) {
            Ok(e) => (e, Vec::new()),
            Err(_) => {
                let bad: Vec<Option<tokenkit::Error>> = chunk
                    .iter()
                    .map(|(_, i)| i.as_ref().ok().and_then(|i| tok.encode_char_offsets(borrowed(i), add_special).err()))
                    .collect();
                let rest = chunk.iter().zip(&bad).filter(|(_, b)| b.is_none()).filter_map(|((_, i), _)| i.as_ref().ok());
                (tok.encode_batch_char_offsets(rest.map(borrowed).collect(), add_special)?, bad)
            }
        };
        let mut encodings = encodings.iter();
        for (k, (origin, input)) in chunk.iter().enumerate() {
            match (input, bad.get(k).and_then(Option::as_ref)) {
                (Err(e), _) => out.failed(origin, report(e))?,
                (Ok(_), Some(e)) => out.failed(origin, e)?,
                (Ok(_), None) => {
                    let e = encodings.next().context("one encoding per input")?;
                    out.json(&encoding_out(e, full, false))?;
                }
            }
        }
    }
    out.finish()
}

fn decode(tok: &Tokenizer, skip_special: bool, stream: bool, sequences: Inputs<Vec<u32>>, out: Output) -> Result<()> {
    decode_each(sequences, out, |ids| {
        Ok(if stream {
            let mut s = tok.decode_stream(skip_special);
            Decoded::Chunks(ids.iter().map(|&id| s.step(id)).collect::<tokenkit::Result<_>>()?)
        } else {
            Decoded::Text(tok.decode(ids, skip_special)?)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_says_each_cause_once() {
        // The library's Io error shows its source, and also returns it from `source()`.
        let io = tokenkit::Error::Io { path: "x.json".into(), source: std::io::Error::from(std::io::ErrorKind::NotFound) };
        let e = anyhow::Error::from(io).context("loading the tokenizer");
        let text = report(&e);
        assert_eq!(text.matches("not found").count(), 1, "{text}");
        assert!(text.starts_with("loading the tokenizer: x.json: "), "{text}");
        // A cause the message does not already end with is still shown.
        let e = anyhow!(std::io::Error::other("disk full")).context("writing out.json");
        assert_eq!(report(&e), "writing out.json: disk full");
    }
}
