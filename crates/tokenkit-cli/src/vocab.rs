//! `tokenkit vocab`: the vocabulary analysis of the library's `tokenkit::tools::vocab`, as
//! readable sections or one JSON object.

use std::fmt::Write as _;
use std::sync::Arc;

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use tokenkit::data::{DocEncoder, TextDocs};
use tokenkit::tools::vocab::{self, DigitLength, DuplicateKind, Report, TokenRef, VocabOptions};

use crate::tokenize::TextDocsArg;
use crate::{Loaded, Source};

#[derive(Args)]
pub struct VocabArgs {
    #[command(flatten)]
    source: Source,
    /// A reference corpus for the glitch-token candidates (a file, directory or glob; text, JSON
    /// lines, Parquet; .gz and .zst); repeat it for several.
    #[arg(long = "corpus", value_name = "FILE")]
    corpora: Vec<String>,
    /// A token seen at most this many times on the corpora is a glitch-token candidate.
    #[arg(long, default_value_t = 0)]
    min_count: u64,
    /// Encode the numbers 0..10^K (alone and after a space) for the number section (K <= 6).
    #[arg(long, value_name = "K", default_value_t = 4)]
    numbers: u32,
    /// Examples shown per list.
    #[arg(long, value_name = "N", default_value_t = 20)]
    examples: usize,
    /// Whitespace runs of 1..=N spaces, tabs, newlines, and "\n" + N spaces are looked at.
    #[arg(long, value_name = "N", default_value_t = 64)]
    max_run: usize,
    /// The JSON field (.jsonl, .ndjson, .json) or Parquet column (.parquet) of the corpora's text.
    #[arg(long, default_value = "text")]
    field: String,
    /// Documents of plain-text corpora: one per line or one per file.
    #[arg(long, value_enum, default_value_t = TextDocsArg::Line)]
    text_docs: TextDocsArg,
    /// One JSON object instead of the sections.
    #[arg(long)]
    json: bool,
    /// Threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
}

pub fn run(args: VocabArgs) -> Result<()> {
    if args.corpora.is_empty() && args.min_count > 0 {
        bail!("--min-count applies to the glitch-token candidates, which need a corpus: give --corpus FILE");
    }
    let name = args.source.display_name();
    let encoder = match args.source.load().with_context(|| format!("loading {name}"))? {
        Loaded::Tiktoken(enc) => DocEncoder::Tiktoken(Arc::new(*enc)),
        Loaded::Tokenizer(tok) => DocEncoder::tokenizer(&tok, false)?,
    };
    let mut options = VocabOptions {
        corpora: args.corpora,
        min_count: args.min_count,
        numbers: args.numbers,
        examples: args.examples,
        max_run: args.max_run,
        ..VocabOptions::default()
    };
    options.read.field = args.field;
    options.read.text_docs = match args.text_docs {
        TextDocsArg::Line => TextDocs::Line,
        TextDocsArg::File => TextDocs::File,
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads.unwrap_or(0))
        .build()
        .map_err(|e| anyhow!("cannot start the worker threads: {e}"))?;
    let report = pool.install(|| vocab::analyze(&name, &encoder, &options))?;
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", text(&report));
    }
    Ok(())
}

/// Characters of a token shown in the sections (the JSON has them all).
const SHOWN_CHARS: usize = 40;

/// `s` cut to [`SHOWN_CHARS`] characters, with `…` when cut.
fn cut(s: &str) -> String {
    match s.char_indices().nth(SHOWN_CHARS) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

/// A token as `id "text"` (the vocabulary string too when it differs), long ones cut.
fn show(t: &TokenRef) -> String {
    if t.token == t.text || t.token.is_empty() {
        format!("{} {:?}", t.id, cut(&t.text))
    } else {
        format!("{} {:?} ({:?})", t.id, cut(&t.text), cut(&t.token))
    }
}

fn shows(ts: &[TokenRef]) -> String {
    ts.iter().map(show).collect::<Vec<_>>().join(", ")
}

/// Lengths as ranges: `1-24, 31`.
fn ranges(lengths: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lengths.len() {
        let mut j = i;
        while j + 1 < lengths.len() && lengths[j + 1] == lengths[j] + 1 {
            j += 1;
        }
        out.push(if i == j { lengths[i].to_string() } else { format!("{}-{}", lengths[i], lengths[j]) });
        i = j + 1;
    }
    if out.is_empty() {
        "none".into()
    } else {
        out.join(", ")
    }
}

fn digit_lines(out: &mut String, lengths: &[DigitLength]) {
    for d in lengths {
        let patterns: Vec<String> = d.patterns.iter().map(|(p, n)| format!("{p}: {n}")).collect();
        let _ = writeln!(
            out,
            "  {} digits: {} numbers, {} patterns ({}); {} split unlike both neighbours",
            d.digits,
            d.numbers,
            d.patterns.len(),
            patterns.join(", "),
            d.odd_ones
        );
        for e in &d.examples {
            let _ = writeln!(out, "    {} -> {} (neighbours {})", e.number, e.pattern, e.neighbours.join(", "));
        }
    }
}

fn duplicate_lines(out: &mut String, what: &str, d: &DuplicateKind) {
    let _ = writeln!(out, "  {what}: {} groups, {} tokens", d.groups, d.tokens);
    for g in &d.examples {
        let _ = writeln!(out, "    {}", shows(g));
    }
}

/// The report as readable sections.
fn text(r: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} ({}, {} ids)", r.tokenizer, r.model, r.vocab_size);
    let counts: Vec<String> = r
        .reachability
        .counts
        .iter()
        .map(|(k, n)| format!("{}: {n}", serde_json::to_value(k).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()))
        .collect();
    let _ = writeln!(out, "\nTokens by reachability from their own text\n  {}", counts.join(", "));
    for (what, list) in [("unreachable", &r.reachability.unreachable), ("shadowed", &r.reachability.shadowed)] {
        if !list.is_empty() {
            let _ = writeln!(out, "  {what} (first {}):", list.len());
            for u in list {
                let _ = writeln!(out, "    {} -> {}", show(&u.token), shows(&u.encodes_to));
            }
        }
    }
    if let Some(g) = &r.glitch_candidates {
        let _ = writeln!(
            out,
            "\nGlitch-token candidates (seen <= {} times in {} documents, {} tokens)\n  {} candidates, {} ordinary tokens never seen",
            g.min_count, g.documents, g.tokens, g.count, g.unseen
        );
        for c in &g.examples {
            let _ = writeln!(out, "    {} seen {} (score {:.3})", show(&c.token), c.count, c.score);
        }
    }
    let _ = writeln!(out, "\nNumbers 0..10^{} alone", r.numbers.k);
    digit_lines(&mut out, &r.numbers.alone);
    match &r.numbers.after_space {
        Some(spaced) => {
            let _ = writeln!(out, "Numbers after a space");
            digit_lines(&mut out, spaced);
        }
        None => {
            let _ = writeln!(out, "  (after a space: the same splits)");
        }
    }
    let _ = writeln!(out, "\nWhitespace runs that are single tokens (lengths 1-{})", r.whitespace.first().map_or(0, |w| w.max));
    for w in &r.whitespace {
        let _ = writeln!(
            out,
            "  {}: encode to one token: {} (longest {}); a token's text: {} (longest {})",
            w.kind,
            ranges(&w.single_token),
            w.longest_single_token,
            ranges(&w.in_vocab),
            w.longest_in_vocab
        );
    }
    let _ = writeln!(out, "\nDuplicate-looking tokens");
    duplicate_lines(&mut out, "case", &r.duplicates.case);
    duplicate_lines(&mut out, "NFKC (width, compatibility)", &r.duplicates.nfkc);
    duplicate_lines(&mut out, "leading space / word-internal marker", &r.duplicates.space_marker);
    if let Some(a) = &r.added_tokens {
        let _ = writeln!(
            out,
            "\nAdded tokens: {} ({} normalized); {} changed by the normalizer; {} not given by their own text",
            a.checked, a.normalized, a.changed_by_normalizer_count, a.unmatchable_count
        );
        for t in &a.changed_by_normalizer {
            let _ = writeln!(out, "  changed: {} {:?} -> {:?}", t.id, t.content, t.normalized_content);
        }
        for t in &a.unmatchable {
            let _ = writeln!(out, "  unmatchable: {} {:?} -> {}", t.id, t.content, shows(&t.encodes_to));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_compress_runs() {
        assert_eq!(ranges(&[1, 2, 3, 5, 7, 8]), "1-3, 5, 7-8");
        assert_eq!(ranges(&[]), "none");
    }

    #[test]
    fn long_tokens_are_cut_for_display() {
        let long = "é".repeat(SHOWN_CHARS + 1);
        assert_eq!(cut(&long), format!("{}…", "é".repeat(SHOWN_CHARS)));
        assert_eq!(cut("short"), "short");
    }
}
