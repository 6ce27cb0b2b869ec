//! `tokenkit corpus`: corpus preparation steps (the library's `tokenkit::corpus`).

use std::path::PathBuf;

use anyhow::{anyhow, bail, Result};
use clap::{Args, Subcommand, ValueEnum};
use tokenkit::corpus::dedup::MinHashOptions;
use tokenkit::corpus::{self, CorpusOptions, Report};
use tokenkit::data;

/// What every step reads and writes.
#[derive(Args)]
pub struct CommonArgs {
    /// The JSON lines file written: the input's lines (other fields untouched, in input order),
    /// or {"FIELD": text} for text lines and Parquet rows.
    #[arg(short, long, value_name = "OUT.jsonl")]
    output: PathBuf,
    /// The JSON field (.jsonl, .ndjson, .json files) or Parquet column that holds the text.
    #[arg(long, default_value = "text")]
    field: String,
    /// A bad record (invalid JSON, a missing field, invalid UTF-8) is an error instead of being
    /// counted, reported and left out of the output.
    #[arg(long)]
    strict: bool,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
    /// Print the report as JSON on standard output.
    #[arg(long)]
    json: bool,
    /// Text bytes per chunk.
    #[arg(long, default_value_t = data::CHUNK_BYTES, hide = true)]
    chunk_bytes: usize,
    /// Input files, directories and globs: .jsonl/.ndjson/.json JSON lines, .parquet, any other
    /// file text (one document per line); .gz and .zst compressed.
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ShingleArg {
    Word,
    Char,
}

#[derive(Subcommand)]
pub enum CorpusCommand {
    /// Replace personal data by typed placeholders: [EMAIL], [PHONE] (E.164, mainland-China
    /// mobile and landline, North American, national with a trunk 0), [ID] (mainland-China
    /// resident ID, check digit and date verified), [CARD] (network prefix and Luhn verified),
    /// [IP] (IPv4, IPv6), [IBAN] (country length and mod-97 verified), [URL] (URLs with
    /// credentials).
    #[command(after_help = "Example:\n  tokenkit corpus pii --field text -o clean.jsonl raw.jsonl")]
    Pii(CommonArgs),
    /// Remove duplicate documents, keeping the first of each cluster in input order, lines
    /// unchanged: exact (the same text), or near with --near (MinHash over shingles, LSH bands;
    /// documents sharing a band are one cluster).
    #[command(
        after_help = "Examples:\n  tokenkit corpus dedup -o unique.jsonl raw.jsonl\n  tokenkit corpus dedup --near --threshold 0.8 -o unique.jsonl raw.jsonl"
    )]
    Dedup {
        #[command(flatten)]
        common: CommonArgs,
        /// Near duplicates (MinHash + LSH) instead of exact ones.
        #[arg(long)]
        near: bool,
        /// The Jaccard similarity around which documents become duplicates: chooses bands × rows
        /// (at most --num-perm permutations) to minimise false positives and negatives. Without
        /// it (and without --bands/--rows): 14 bands × 8 rows (datatrove's default, about 0.72).
        #[arg(long, requires = "near", conflicts_with_all = ["bands", "rows"])]
        threshold: Option<f64>,
        /// Permutations available to --threshold.
        #[arg(long, default_value_t = 128, requires = "threshold")]
        num_perm: usize,
        /// LSH bands.
        #[arg(long, requires = "near")]
        bands: Option<usize>,
        /// Rows (permutations) per band.
        #[arg(long, requires = "near")]
        rows: Option<usize>,
        /// Shingles of words or of characters (for text without spaces, such as Chinese).
        #[arg(long, value_enum, default_value_t = ShingleArg::Word, requires = "near")]
        shingle: ShingleArg,
        /// Words or characters per shingle.
        #[arg(long, default_value_t = 5, requires = "near")]
        ngram: usize,
        /// The seed of the permutations.
        #[arg(long, default_value_t = 1, requires = "near")]
        seed: u64,
    },
}

pub fn run(command: CorpusCommand) -> Result<()> {
    let (common, near) = match command {
        CorpusCommand::Pii(common) => (common, None),
        CorpusCommand::Dedup { common, near, threshold, num_perm, bands, rows, shingle, ngram, seed } => {
            let shingle = match shingle {
                ShingleArg::Word => "word",
                ShingleArg::Char => "char",
            };
            let near = match near {
                true => Some(Some(MinHashOptions::from_params(threshold, num_perm, bands, rows, shingle, ngram, seed)?)),
                false => Some(None),
            };
            (common, near)
        }
    };
    let mut opts = CorpusOptions::new(common.inputs, &common.output);
    opts.field = common.field;
    opts.strict = common.strict;
    opts.chunk_bytes = common.chunk_bytes;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(common.threads.unwrap_or(0))
        .build()
        .map_err(|e| anyhow!("cannot start the worker threads: {e}"))?;
    let mut bar = (!common.quiet).then(data::progress_bar::DataProgressBar::new);
    let mut progress = |p: &data::Progress| {
        if let Some(b) = bar.as_mut() {
            b.update(p)
        }
    };
    let report = pool.install(|| match &near {
        None => corpus::pii_files(&opts, &mut progress),
        Some(mh) => corpus::dedup_files(&opts, mh.as_ref(), &mut progress),
    });
    if let Some(b) = &bar {
        b.finish();
    }
    let report = report?;
    print_report(&report, common.json)?;
    Ok(())
}

fn print_report(r: &Report, json: bool) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(r)?);
    }
    eprintln!("tokenkit: wrote {} ({} bytes)", r.output.display(), r.output_bytes);
    eprintln!(
        "tokenkit: {}: {} documents in ({} bytes), {} out ({} bytes), {} changed, {} removed",
        r.step, r.documents_in, r.bytes_in, r.documents_out, r.bytes_out, r.changed, r.removed
    );
    if !r.counts.is_empty() {
        let counts: Vec<String> = r.counts.iter().map(|(k, v)| format!("{k} {v}")).collect();
        eprintln!("tokenkit: {}: {}", r.step, counts.join(", "));
    }
    if r.empty > 0 {
        eprintln!("tokenkit: {} blank lines or empty texts (JSON lines with an empty text are written unchanged)", r.empty);
    }
    if r.skipped > 0 {
        eprintln!("tokenkit: {} bad records left out (--strict makes them an error), e.g.:", r.skipped);
        for e in &r.skip_examples {
            eprintln!("  {e}");
        }
    }
    let peak = crate::train::peak_memory_text();
    if r.seconds <= 0.0 {
        bail!("no time measured");
    }
    eprintln!("tokenkit: time {:.2} s, {:.0} documents/s, peak memory {peak}", r.seconds, r.documents_in as f64 / r.seconds);
    Ok(())
}
