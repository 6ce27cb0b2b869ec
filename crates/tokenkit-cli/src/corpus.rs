//! `tokenkit corpus`: corpus preparation steps (the library's `tokenkit::corpus`).

use std::path::PathBuf;

use anyhow::{anyhow, bail, Result};
use clap::{Args, Subcommand, ValueEnum};
use tokenkit::corpus::clean::{CleanOptions, Filters, Form, Quality, Repetition};
use tokenkit::corpus::dedup::Unit;
use tokenkit::corpus::lang::LangOptions;
use tokenkit::corpus::pii::PiiOptions;
use tokenkit::corpus::pipeline::{DedupConfig, Pipeline, SplitConfig, StatsConfig, StepConfig};
use tokenkit::corpus::split::parse_pairs;
use tokenkit::corpus::{CorpusOptions, Report};
use tokenkit::data;
use tokenkit::utils::byte_size::ByteSize;

/// What every step reads and writes.
#[derive(Args)]
pub struct CommonArgs {
    /// The JSON lines file written: the input's lines (other fields untouched, in input order),
    /// or {"FIELD": text} for text lines and Parquet rows; a Parquet file of the same records
    /// (columns inferred) when the name ends in .parquet.
    #[arg(short, long, value_name = "OUT.jsonl")]
    output: PathBuf,
    #[command(flatten)]
    read: ReadArgs,
}

/// What every step reads.
#[derive(Args)]
pub struct ReadArgs {
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
    #[arg(long, default_value_t = tokenkit::corpus::CHUNK_BYTES, hide = true)]
    chunk_bytes: usize,
    /// Input files, directories and globs: .jsonl/.ndjson/.json JSON lines, .parquet, any other
    /// file text (one document per line); .gz and .zst compressed.
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormArg {
    Nfc,
    Nfkc,
    None,
}

/// The cleaning steps and filters.
#[derive(Args)]
pub struct CleanArgs {
    /// Unicode normalisation.
    #[arg(long, value_enum, default_value_t = FormArg::Nfc)]
    normalize: FormArg,
    /// Keep control and invisible characters.
    #[arg(long)]
    keep_controls: bool,
    /// Keep whitespace as it is.
    #[arg(long)]
    keep_whitespace: bool,
    /// Strip HTML tags, comments, scripts and styles, and decode character references.
    #[arg(long)]
    html: bool,
    /// Remove documents shorter than this many characters (after cleaning).
    #[arg(long, value_name = "N")]
    min_chars: Option<usize>,
    /// Remove documents longer than this many characters.
    #[arg(long, value_name = "N")]
    max_chars: Option<usize>,
    /// Apply the Gopher quality rules (word count 50..100000, mean word length 3..10, symbol
    /// and bullet and ellipsis ratios, 80% of words with a letter, 2 English stop words).
    #[arg(long)]
    quality: bool,
    /// With --quality: the fewest stop words (the, be, to, of, and, that, have, with); 0 for
    /// languages other than English.
    #[arg(long, value_name = "N", requires = "quality")]
    min_stop_words: Option<usize>,
    /// With --quality: the fewest words.
    #[arg(long, value_name = "N", requires = "quality")]
    min_words: Option<usize>,
    /// Apply the Gopher repetition rules (duplicate lines and paragraphs, top 2-4-grams,
    /// duplicate 5-10-grams).
    #[arg(long)]
    repetition: bool,
}

impl CleanArgs {
    fn options(&self) -> CleanOptions {
        let mut quality = self.quality.then(Quality::default);
        if let Some(q) = quality.as_mut() {
            q.min_stop_words = self.min_stop_words.unwrap_or(q.min_stop_words);
            q.min_words = self.min_words.unwrap_or(q.min_words);
        }
        CleanOptions {
            html: self.html,
            controls: !self.keep_controls,
            form: match self.normalize {
                FormArg::Nfc => Form::Nfc,
                FormArg::Nfkc => Form::Nfkc,
                FormArg::None => Form::None,
            },
            whitespace: !self.keep_whitespace,
            filters: Filters {
                min_chars: self.min_chars,
                max_chars: self.max_chars,
                quality,
                repetition: self.repetition.then(Repetition::default),
            },
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ShingleArg {
    Word,
    Char,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum UnitArg {
    Document,
    Line,
    Paragraph,
}

#[derive(Subcommand)]
pub enum CorpusCommand {
    /// Replace personal data by typed placeholders: [EMAIL], [PHONE] (E.164, mainland-China
    /// mobile and landline, North American, national with a trunk 0), [ID] (mainland-China
    /// resident ID, check digit and date verified), [CARD] (network prefix and Luhn verified),
    /// [IP] (IPv4, IPv6), [IBAN] (country length and mod-97 verified), [URL] (URLs with
    /// credentials); then user-supplied dictionaries and regular expressions, each replaced by
    /// its [LABEL].
    #[command(
        after_help = "Examples:\n  tokenkit corpus pii --field text -o clean.jsonl raw.jsonl\n  tokenkit corpus pii --dict NAME=names.txt --dict PLACE=places.txt --pattern STAFF_ID='E[0-9]{6}' -o clean.jsonl raw.jsonl"
    )]
    Pii {
        #[command(flatten)]
        common: CommonArgs,
        /// A dictionary: a UTF-8 file of terms (names, places, ...), one per line, each replaced
        /// by [LABEL] where it stands as a whole word (longest first). Repeatable.
        #[arg(long = "dict", value_name = "LABEL=FILE", value_parser = label_value)]
        dictionaries: Vec<(String, String)>,
        /// A regular expression (Rust `regex` syntax) whose matches are replaced by [LABEL].
        /// Repeatable.
        #[arg(long = "pattern", value_name = "LABEL=REGEX", value_parser = label_value)]
        patterns: Vec<(String, String)>,
        /// Dictionary terms match whatever their ASCII case.
        #[arg(long)]
        ignore_case: bool,
    },
    /// Clean documents: control and invisible characters removed, Unicode normalised (NFC),
    /// whitespace normalised; optionally HTML stripped; optionally filtered by length and by
    /// the Gopher quality and repetition rules. Removed documents are counted per rule.
    #[command(
        after_help = "Examples:\n  tokenkit corpus clean -o clean.jsonl raw.jsonl\n  tokenkit corpus clean --html --quality --repetition --min-chars 200 -o clean.jsonl crawl.jsonl"
    )]
    Clean {
        #[command(flatten)]
        common: CommonArgs,
        #[command(flatten)]
        clean: CleanArgs,
    },
    /// Identify each document's language (whatlang; ISO 639-3 codes such as eng, cmn, jpn, deu,
    /// or und), and filter by language and confidence, label documents, or sample to target
    /// proportions per language.
    #[command(
        after_help = "Examples:\n  tokenkit corpus lang --keep eng,deu --min-confidence 0.5 -o en_de.jsonl raw.jsonl\n  tokenkit corpus lang --label lang -o labelled.jsonl raw.jsonl\n  tokenkit corpus lang --proportions eng=0.5,cmn=0.3,jpn=0.2 -o balanced.jsonl raw.jsonl"
    )]
    Lang {
        #[command(flatten)]
        common: CommonArgs,
        /// Keep only these languages (comma-separated codes).
        #[arg(long, value_delimiter = ',', value_name = "CODES")]
        keep: Vec<String>,
        /// Keep only documents detected with at least this confidence (0 to 1).
        #[arg(long, default_value_t = 0.0)]
        min_confidence: f64,
        /// Add the language as this JSON member, and its confidence as FIELD_score.
        #[arg(long, value_name = "FIELD")]
        label: Option<String>,
        /// Sample to these proportions (CODE=SHARE,...), keeping as many documents as they allow;
        /// other languages are removed. Reads the input twice.
        #[arg(long, value_name = "CODE=SHARE,...")]
        proportions: Option<String>,
        /// The seed of the sampling.
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
    /// Split the corpus by a hash of each document's text into DIR/NAME.jsonl files: the same
    /// text always goes to the same split, and adding documents moves no other.
    #[command(after_help = "Example:\n  tokenkit corpus split --fractions train=0.98,validation=0.01,test=0.01 -o splits/ clean.jsonl")]
    Split {
        /// The directory written (NAME.jsonl per split, or NAME.parquet with --parquet).
        #[arg(short, long, value_name = "DIR")]
        output: PathBuf,
        #[command(flatten)]
        read: ReadArgs,
        /// The splits and their fractions (summing to 1), in order.
        #[arg(long, default_value = "train=0.98,validation=0.01,test=0.01")]
        fractions: String,
        /// The seed of the hash.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Write NAME.parquet per split instead of NAME.jsonl.
        #[arg(long)]
        parquet: bool,
    },
    /// Run the steps of a pipeline file one after the other, each on the previous one's output:
    /// {"steps": [{"step": "clean", ...}, {"step": "pii"}, {"step": "dedup", "near": true},
    /// {"step": "split", "fractions": "train=0.98,validation=0.01,test=0.01"}]}. Each step takes
    /// its subcommand's options (as JSON members: "html", "quality", "keep", "threshold", ...).
    /// Steps before the last write OUT.N-STEP.jsonl beside OUT; split must be last (OUT is then
    /// a directory).
    #[command(after_help = "Example:\n  tokenkit corpus run pipeline.json -o prepared raw.jsonl")]
    Run {
        /// The pipeline file (JSON).
        #[arg(value_name = "PIPELINE.json")]
        pipeline: PathBuf,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Corpus statistics: documents, bytes, characters, words, lines, document lengths
    /// (percentiles), and with --lang the documents per language. Nothing is written.
    #[command(after_help = "Example:\n  tokenkit corpus stats --lang clean.jsonl")]
    Stats {
        #[command(flatten)]
        read: ReadArgs,
        /// Count the documents per language (whatlang).
        #[arg(long)]
        lang: bool,
    },
    /// Remove duplicate documents, keeping the first of each cluster in input order, lines
    /// unchanged: exact (the same text), or near with --near (MinHash over shingles, LSH bands;
    /// documents sharing a band are one cluster).
    #[command(
        after_help = "Examples:\n  tokenkit corpus dedup -o unique.jsonl raw.jsonl\n  tokenkit corpus dedup --near --threshold 0.8 -o unique.jsonl raw.jsonl\n  tokenkit corpus dedup --unit paragraph -o unique.jsonl raw.jsonl"
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
        /// Exact deduplication of whole documents, or of lines or paragraphs (runs of non-blank
        /// lines): a line or paragraph seen earlier in the corpus is removed from the document
        /// (with its line ending, or the blank lines after it), and a document left blank is
        /// removed.
        #[arg(long, value_enum, default_value_t = UnitArg::Document, conflicts_with = "near")]
        unit: UnitArg,
        /// With --unit line or paragraph: lines or paragraphs shorter than this many characters
        /// (spaces around them trimmed) are always kept.
        #[arg(long, default_value_t = 20, value_name = "N")]
        unit_min_chars: usize,
        /// Hashes (exact: about 20 bytes per distinct document, line or paragraph) or band
        /// keys (--near: 12 bytes per band and document) held in memory. Beyond it the input
        /// is read twice and they are written in sorted runs to a temporary directory beside
        /// the output and merged, with the same result.
        #[arg(long, default_value = "1G", value_name = "SIZE")]
        memory_limit: ByteSize,
    },
}

/// `LABEL=VALUE` (the value may hold `=`).
fn label_value(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((label, value)) if !label.is_empty() && !value.is_empty() => Ok((label.to_owned(), value.to_owned())),
        _ => Err(format!("expected LABEL=VALUE, got {s:?}")),
    }
}

pub fn run(command: CorpusCommand) -> Result<()> {
    let (output, read, steps) = match command {
        CorpusCommand::Pii { common, dictionaries, patterns, ignore_case } => {
            for (what, pairs, join) in
                [("--dict", &dictionaries, "put the terms in one file"), ("--pattern", &patterns, "join the expressions with |")]
            {
                if let Some((label, _)) = pairs.iter().enumerate().find_map(|(k, p)| pairs[..k].iter().find(|q| q.0 == p.0)) {
                    bail!("{what} {label} is given twice: {join}");
                }
            }
            let opts = PiiOptions {
                dictionaries: dictionaries.into_iter().map(|(l, f)| (l, PathBuf::from(f))).collect(),
                patterns: patterns.into_iter().collect(),
                ignore_case,
            };
            (Some(common.output), common.read, vec![StepConfig::Pii(opts)])
        }
        CorpusCommand::Dedup {
            common,
            near,
            threshold,
            num_perm,
            bands,
            rows,
            shingle,
            ngram,
            seed,
            unit,
            unit_min_chars,
            memory_limit,
        } => {
            let shingle = match shingle {
                ShingleArg::Word => "word",
                ShingleArg::Char => "char",
            };
            let unit = match unit {
                UnitArg::Document => Unit::Document,
                UnitArg::Line => Unit::Line,
                UnitArg::Paragraph => Unit::Paragraph,
            };
            let d = DedupConfig {
                near,
                threshold,
                num_perm,
                bands,
                rows,
                shingle: shingle.into(),
                ngram,
                seed,
                unit,
                unit_min_chars,
                memory_limit,
            };
            (Some(common.output), common.read, vec![StepConfig::Dedup(d)])
        }
        CorpusCommand::Clean { common, clean } => (Some(common.output), common.read, vec![StepConfig::Clean(clean.options())]),
        CorpusCommand::Lang { common, keep, min_confidence, label, proportions, seed } => {
            let proportions = proportions.as_deref().map(parse_pairs).transpose()?.unwrap_or_default().into_iter().collect();
            let opts = LangOptions { keep, min_confidence, proportions, seed, label };
            (Some(common.output), common.read, vec![StepConfig::Lang(opts)])
        }
        CorpusCommand::Split { output, read, fractions, seed, parquet } => {
            (Some(output), read, vec![StepConfig::Split(SplitConfig { fractions, seed, parquet })])
        }
        CorpusCommand::Stats { read, lang } => (None, read, vec![StepConfig::Stats(StatsConfig { lang })]),
        CorpusCommand::Run { pipeline, common } => (Some(common.output), common.read, Pipeline::from_file(&pipeline)?.steps),
    };
    let pipeline = Pipeline::new(steps)?;
    let mut opts = CorpusOptions::new(read.inputs, output.unwrap_or_default());
    opts.field = read.field;
    opts.strict = read.strict;
    opts.chunk_bytes = read.chunk_bytes;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(read.threads.unwrap_or(0))
        .build()
        .map_err(|e| anyhow!("cannot start the worker threads: {e}"))?;
    let mut bar = (!read.quiet).then(data::progress_bar::DataProgressBar::new);
    let mut progress = |p: &data::Progress| {
        if let Some(b) = bar.as_mut() {
            b.update(p)
        }
    };
    let reports = pool.install(|| pipeline.run(&opts, &mut progress));
    if let Some(b) = &bar {
        b.finish();
    }
    let reports = reports?;
    if read.json {
        let json = if reports.len() == 1 { serde_json::to_string_pretty(&reports[0])? } else { serde_json::to_string_pretty(&reports)? };
        println!("{json}");
    }
    for r in &reports {
        print_report(r)?;
    }
    Ok(())
}

fn print_report(r: &Report) -> Result<()> {
    if !r.output.as_os_str().is_empty() {
        eprintln!("tokenkit: wrote {} ({} bytes)", r.output.display(), r.output_bytes);
    }
    if r.step == "stats" {
        eprintln!("tokenkit: stats: {} documents ({} bytes of text)", r.documents_in, r.bytes_in);
    } else {
        eprintln!(
            "tokenkit: {}: {} documents in ({} bytes), {} out ({} bytes), {} changed, {} removed",
            r.step, r.documents_in, r.bytes_in, r.documents_out, r.bytes_out, r.changed, r.removed
        );
    }
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
