//! `tokenkit stats`: measure tokenizers on corpora (the library's `tokenkit::data::stats`), as
//! a table, JSON lines, and an SVG chart.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use plotters::prelude::*;
use tokenkit::data::stats::{self, Report, StatsOptions};
use tokenkit::data::{DocEncoder, TextDocs};

use crate::tokenize::TextDocsArg;
use crate::{Loaded, Source};

#[derive(Args)]
pub struct StatsArgs {
    /// A tokenizer file (any format -t takes elsewhere); repeat it to compare several.
    #[arg(short, long = "tokenizer", value_name = "FILE")]
    tokenizers: Vec<PathBuf>,
    /// A named tiktoken encoding; repeat it to compare several.
    #[arg(short, long = "encoding", value_name = "NAME")]
    encodings: Vec<String>,
    /// One JSON object per tokenizer (one per line) instead of the table.
    #[arg(long)]
    json: bool,
    /// Also draw bytes per token and tokens per word, per corpus and tokenizer, to this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    chart: Option<PathBuf>,
    /// Count the post-processor's special tokens too (HF's add_special_tokens=True; not for
    /// tiktoken encodings, which encode with encode_ordinary).
    #[arg(long)]
    special: bool,
    /// The JSON field (.jsonl, .ndjson, .json) or Parquet column (.parquet) that holds the text.
    #[arg(long, default_value = "text")]
    field: String,
    /// The JSON field or Parquet column with each document's language label: counts per label.
    #[arg(long, value_name = "FIELD")]
    lang_field: Option<String>,
    /// Documents of plain text files: one per line or one per file.
    #[arg(long, value_enum, default_value_t = TextDocsArg::Line)]
    text_docs: TextDocsArg,
    /// Threads that encode (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// No progress bar (it is drawn on standard error when that is a terminal).
    #[arg(short, long)]
    quiet: bool,
    /// Corpora: each argument is one corpus (a file, a directory or a glob; text, JSON lines,
    /// Parquet; .gz and .zst).
    #[arg(required = true, value_name = "CORPUS")]
    corpora: Vec<String>,
}

pub fn run(args: StatsArgs) -> Result<()> {
    if args.tokenizers.is_empty() && args.encodings.is_empty() {
        bail!("give at least one tokenizer: -t FILE or -e NAME (repeat them to compare several)");
    }
    let mut encoders: Vec<(String, DocEncoder)> = Vec::new();
    let sources = args.tokenizers.iter().map(|p| Source::file(p.clone())).chain(args.encodings.iter().map(|e| Source::named(e.clone())));
    for source in sources {
        let name = source.display_name();
        let encoder = match source.load().with_context(|| format!("loading {name}"))? {
            Loaded::Tiktoken(enc) => DocEncoder::Tiktoken(Arc::new(*enc)),
            Loaded::Tokenizer(tok) => DocEncoder::tokenizer(&tok, args.special)?,
        };
        encoders.push((name, encoder));
    }
    let mut options = StatsOptions::new(&args.field);
    options.read.text_docs = match args.text_docs {
        TextDocsArg::Line => TextDocs::Line,
        TextDocsArg::File => TextDocs::File,
    };
    options.lang_field = args.lang_field;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads.unwrap_or(0))
        .build()
        .map_err(|e| anyhow!("cannot start the worker threads: {e}"))?;
    let mut bar = (!args.quiet).then(tokenkit::data::progress_bar::DataProgressBar::new);
    let reports = pool.install(|| {
        stats::measure(&encoders, &args.corpora, &options, |p| {
            if let Some(b) = bar.as_mut() {
                b.update(p)
            }
        })
    });
    if let Some(b) = &bar {
        b.finish();
    }
    let reports = reports?;
    if let Some(path) = &args.chart {
        let svg = chart(&reports, &args.corpora)?;
        tokenkit::utils::atomic_file::write_atomic(path, svg.as_bytes())?;
    }
    if args.json {
        for r in &reports {
            println!("{}", serde_json::to_string(r)?);
        }
    } else {
        print!("{}", table(&reports, args.corpora.len() > 1));
    }
    if let Some(r) = reports.first().filter(|r| r.skipped_records > 0) {
        eprintln!("tokenkit: {} bad records skipped (invalid JSON, a missing field, invalid UTF-8)", r.skipped_records);
    }
    Ok(())
}

/// A ratio for the table: `-` where there is none.
fn ratio(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |v| format!("{v:.digits$}"))
}

/// The table: a row per tokenizer (and per tokenizer and corpus when there are several).
fn table(reports: &[Report], per_corpus: bool) -> String {
    let header = ["tokenizer", "corpus", "tokens", "bytes/token", "chars/token", "tokens/word", "unk %", "byte-fb %", "vocab used"];
    let mut rows: Vec<Vec<String>> = Vec::new();
    for r in reports {
        let mut add = |corpus: &str, s: &stats::Summary, used: String| {
            rows.push(vec![
                short_name(&r.tokenizer),
                short_name(corpus),
                s.counts.tokens.to_string(),
                ratio(s.bytes_per_token, 3),
                ratio(s.chars_per_token, 3),
                ratio(s.tokens_per_word, 3),
                ratio(s.unknown_rate.map(|v| v * 100.0), 3),
                ratio(s.byte_fallback_rate.map(|v| v * 100.0), 3),
                used,
            ])
        };
        if per_corpus {
            for c in &r.corpora {
                add(&c.corpus, &c.summary, String::new());
            }
        }
        let used = format!("{} / {} ({:.1}%)", r.vocab_used, r.vocab_size, r.vocab_used_share * 100.0);
        add(if per_corpus { "(all)" } else { r.corpora.first().map_or("", |c| c.corpus.as_str()) }, &r.total, used);
        for (lang, s) in &r.languages {
            add(&format!("lang={lang}"), s, String::new());
        }
    }
    let widths: Vec<usize> =
        (0..header.len()).map(|i| rows.iter().map(|r| r[i].chars().count()).chain([header[i].len()]).max().unwrap_or(0)).collect();
    let mut out = String::new();
    let mut line = |cells: Vec<&str>| {
        let parts: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| if i < 2 { format!("{c:<w$}", w = widths[i]) } else { format!("{c:>w$}", w = widths[i]) })
            .collect();
        out.push_str(parts.join("  ").trim_end());
        out.push('\n');
    };
    line(header.to_vec());
    for r in &rows {
        line(r.iter().map(String::as_str).collect());
    }
    out
}

/// A figure the chart draws from a summary.
type Metric = fn(&stats::Summary) -> Option<f64>;

/// Grouped bars, one group per corpus and one bar per tokenizer: bytes per token above,
/// characters per token below (tokens per word is in the table: without spaces between words,
/// Chinese and Japanese have no meaningful word count); the legend in a column on the right.
fn chart(reports: &[Report], corpora: &[String]) -> Result<String> {
    const LEGEND: u32 = 260;
    let mut svg = String::new();
    let groups = corpora.len().max(1);
    let width = (LEGEND as usize + 120 + groups * (40 + 28 * reports.len())).clamp(720, 2600) as u32;
    {
        let root = SVGBackend::with_string(&mut svg, (width, 720)).into_drawing_area();
        let draw = || -> std::result::Result<(), Box<dyn std::error::Error + '_>> {
            root.fill(&WHITE)?;
            let (plots, legend) = root.split_horizontally(width - LEGEND);
            let color = |k: usize| Palette99::pick(k).to_rgba();
            for (k, r) in reports.iter().enumerate() {
                let y = 60 + 24 * k as i32;
                legend.draw(&Rectangle::new([(8, y), (22, y + 14)], color(k).filled()))?;
                legend.draw(&Text::new(short_name(&r.tokenizer), (30, y), ("sans-serif", 14)))?;
            }
            let metrics: [(&str, Metric); 2] =
                [("bytes per token (higher: more compression)", |s| s.bytes_per_token), ("characters per token", |s| s.chars_per_token)];
            let names: Vec<String> = corpora.iter().map(|c| short_name(c)).collect();
            for (panel, (title, metric)) in plots.split_evenly((2, 1)).iter().zip(metrics) {
                let top = reports.iter().flat_map(|r| r.corpora.iter().filter_map(|c| metric(&c.summary))).fold(0.0f64, f64::max);
                let mut chart = ChartBuilder::on(panel)
                    .caption(title, ("sans-serif", 18))
                    .margin(12)
                    .x_label_area_size(36)
                    .y_label_area_size(48)
                    .build_cartesian_2d(0.0..groups as f64, 0.0..(top * 1.1).max(1.0))?;
                chart
                    .configure_mesh()
                    .disable_x_mesh()
                    .light_line_style(WHITE)
                    .x_labels(groups * 2 + 1)
                    .x_label_formatter(&|x| {
                        let i = x.floor() as usize;
                        if (x - i as f64 - 0.5).abs() < 1e-6 {
                            names.get(i).cloned().unwrap_or_default()
                        } else {
                            String::new()
                        }
                    })
                    .draw()?;
                let n = reports.len() as f64;
                for (k, r) in reports.iter().enumerate() {
                    let bars = r.corpora.iter().enumerate().filter_map(|(g, c)| {
                        let v = metric(&c.summary)?;
                        let x0 = g as f64 + 0.1 + 0.8 * k as f64 / n;
                        Some(Rectangle::new([(x0, 0.0), (x0 + 0.8 / n * 0.9, v)], color(k).filled()))
                    });
                    chart.draw_series(bars)?;
                }
            }
            root.present()?;
            Ok(())
        };
        draw().map_err(|e| anyhow!("drawing the chart: {e}"))?;
    }
    Ok(svg)
}

/// A file's name without its directories (a corpus or tokenizer label).
fn short_name(path: &str) -> String {
    let p = std::path::Path::new(path);
    match (p.file_name(), p.parent().and_then(|d| d.file_name())) {
        // A tokenizer.json says little: its directory names the model.
        (Some(f), Some(d)) if f == "tokenizer.json" || f == "vocab.txt" || f == "tokenizer.model" => {
            format!("{}/{}", d.to_string_lossy(), f.to_string_lossy())
        }
        (Some(f), _) => f.to_string_lossy().into_owned(),
        _ => path.to_owned(),
    }
}
