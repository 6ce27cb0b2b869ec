//! `tokenkit tokenize`: tokenize whole datasets into training shards (the library's
//! `tokenkit::data`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, ValueEnum};
use tokenkit::data::{self, DocEncoder, OutputFormat, SeparatorChoice, TextDocs, TokenizeOptions};

use crate::{reject, Loaded, Source};

/// The output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// PREFIX.bin (uint16 ids when the vocabulary has at most 65536 ids, else uint32; numpy.memmap
    /// reads it) and PREFIX.json (dtype, documents, tokens, sha256, ...).
    Bin,
    /// Megatron-LM's indexed dataset: PREFIX.bin + PREFIX.idx (MMIDIDX layout), and PREFIX.json.
    Megatron,
    /// PREFIX.parquet: the kept columns and `input_ids` (list<uint32>), and PREFIX.json.
    Parquet,
}

/// How plain text files are cut into documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TextDocsArg {
    /// One document per line (line ending removed; blank lines are skipped).
    Line,
    /// One document per file.
    File,
}

#[derive(Args)]
pub struct TokenizeArgs {
    #[command(flatten)]
    source: Source,
    /// Output prefix: PREFIX.bin, PREFIX.idx, PREFIX.parquet, PREFIX.json (PREFIX.val.* for the
    /// validation split).
    #[arg(short, long, value_name = "PREFIX")]
    output: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Bin)]
    format: FormatArg,
    /// The JSON field (.jsonl, .ndjson, .json files) or Parquet column (.parquet files) that
    /// holds the text.
    #[arg(long, default_value = "text")]
    field: String,
    /// Documents of plain text files (any other extension): one per line or one per file.
    #[arg(long, value_enum, default_value_t = TextDocsArg::Line)]
    text_docs: TextDocsArg,
    /// Fields / columns to keep beside the ids, comma-separated (Parquet output; kept as strings).
    #[arg(long, value_delimiter = ',')]
    keep_columns: Vec<String>,
    /// The token appended to each document instead of the tokenizer's end-of-document token.
    #[arg(long, value_name = "TOKEN", conflicts_with = "no_eos")]
    separator: Option<String>,
    /// Append no token to the documents.
    #[arg(long)]
    no_eos: bool,
    /// Do not add the post-processor's special tokens (HF's add_special_tokens=False); not in
    /// tiktoken mode, which always encodes with encode_ordinary.
    #[arg(long)]
    no_special: bool,
    /// Write this share of the documents (chosen by a hash of their text, so always the same
    /// ones) to PREFIX.val.*.
    #[arg(long, default_value_t = 0.0)]
    val_fraction: f64,
    /// A bad record (invalid JSON, a missing field, invalid UTF-8) is an error instead of being
    /// counted, reported and skipped.
    #[arg(long)]
    strict: bool,
    /// Threads that encode (default: all cores). With two or more, reading and writing run on
    /// two more threads beside them; with 1, one thread reads, encodes and writes in turn.
    #[arg(long)]
    threads: Option<usize>,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
    /// Text bytes per chunk (the unit of work and of resuming).
    #[arg(long, default_value_t = data::CHUNK_BYTES, hide = true)]
    chunk_bytes: usize,
    /// Input files, directories and globs: .txt (or any other extension) text, .jsonl/.ndjson/
    /// .json JSON lines, .parquet; .gz and .zst compressed.
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<String>,
}

/// A file's sha256 (tokenizer files are small).
fn file_sha256(path: &Path) -> Result<String> {
    Ok(tokenkit::data::output::sha256_file(path)?)
}

pub fn run(args: TokenizeArgs) -> Result<()> {
    let (encoder, name) = match args.source.load()? {
        Loaded::Tiktoken(enc) => {
            reject(&[("--no-special", args.no_special)], "in tiktoken mode: it encodes with encode_ordinary", "")?;
            let name = match &args.source.tokenizer {
                Some(p) => p.display().to_string(),
                None => enc.name().to_owned(),
            };
            (DocEncoder::Tiktoken(Arc::new(*enc)), name)
        }
        Loaded::Tokenizer(tok) => {
            let path = args.source.tokenizer.as_ref().context("a tokenizer file")?;
            (DocEncoder::tokenizer(&tok, !args.no_special)?, path.display().to_string())
        }
    };
    let mut tokenizer_id = name.clone();
    if let Some(p) = &args.source.tokenizer {
        if p.is_file() {
            tokenizer_id = format!("{name} sha256:{}", file_sha256(p)?);
        }
    }
    tokenizer_id
        .push_str(&format!(" pattern:{:?} special:{:?} encoding:{:?}", args.source.pattern, args.source.special, args.source.encoding));
    let mut opts = TokenizeOptions::new(args.inputs, &args.output, name);
    opts.tokenizer_id = tokenizer_id;
    opts.format = match args.format {
        FormatArg::Bin => OutputFormat::Bin,
        FormatArg::Megatron => OutputFormat::Megatron,
        FormatArg::Parquet => OutputFormat::Parquet,
    };
    opts.read.field = args.field;
    opts.read.text_docs = match args.text_docs {
        TextDocsArg::Line => TextDocs::Line,
        TextDocsArg::File => TextDocs::File,
    };
    opts.read.keep = args.keep_columns;
    opts.separator = match (args.no_eos, args.separator) {
        (true, _) => SeparatorChoice::None,
        (false, Some(t)) => SeparatorChoice::Token(t),
        (false, None) => SeparatorChoice::Default,
    };
    if !(0.0..1.0).contains(&args.val_fraction) {
        bail!("--val-fraction must be at least 0 and below 1, not {}", args.val_fraction);
    }
    opts.val_fraction = args.val_fraction;
    opts.strict = args.strict;
    opts.chunk_bytes = args.chunk_bytes;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads.unwrap_or(0))
        .build()
        .map_err(|e| anyhow!("cannot start the worker threads: {e}"))?;
    let mut bar = (!args.quiet).then(data::progress_bar::DataProgressBar::new);
    let summary = pool.install(|| {
        data::tokenize_files(&encoder, &opts, &mut |p| {
            if let Some(b) = bar.as_mut() {
                b.update(p)
            }
        })
    });
    if let Some(b) = &bar {
        b.finish();
    }
    let s = summary?;
    let tokens = s.train.tokens + s.val.as_ref().map_or(0, |v| v.tokens);
    let documents = s.train.documents + s.val.as_ref().map_or(0, |v| v.documents);
    let mut files: Vec<String> = s.train.files.iter().map(|f| f.display().to_string()).collect();
    if let Some(v) = &s.val {
        files.extend(v.files.iter().map(|f| f.display().to_string()));
    }
    files.push(s.metadata.display().to_string());
    eprintln!("tokenkit: wrote {}", files.join(", "));
    let resumed =
        if s.resumed_documents > 0 { format!(" ({} of them by an earlier run, resumed)", s.resumed_documents) } else { String::new() };
    eprintln!(
        "tokenkit: {documents} documents{resumed}, {tokens} tokens ({}), {:.2} bytes/token",
        s.dtype,
        s.text_bytes as f64 / tokens.max(1) as f64
    );
    if let Some(v) = &s.val {
        eprintln!("tokenkit: validation split: {} documents, {} tokens", v.documents, v.tokens);
    }
    if s.empty > 0 {
        eprintln!("tokenkit: {} blank lines or empty texts (no document)", s.empty);
    }
    if s.skipped > 0 {
        eprintln!("tokenkit: {} bad records skipped (--strict makes them an error), e.g.:", s.skipped);
        for e in &s.skip_examples {
            eprintln!("  {e}");
        }
    }
    let peak = crate::train::peak_memory_text();
    eprintln!("tokenkit: time {:.2} s, {:.2} M tokens/s, peak memory {peak}", s.seconds, tokens as f64 / s.seconds.max(1e-9) / 1e6);
    Ok(())
}
