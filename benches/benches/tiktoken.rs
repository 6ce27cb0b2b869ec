//! tiktoken encodings: tokenkit's [`tokenkit::tiktoken::Encoding`] vs the crates `tiktoken-rs`
//! and `bpe-openai`, and HF `tokenizers` loading tokenkit's tokenizer.json conversion, on
//! cl100k_base and o200k_base: single-thread `encode_ordinary` of each document of each
//! shared corpus, a 2-thread batch (tokenkit's `encode_ordinary_batch`; bpe-openai, which has
//! no batch call, through rayon over the documents), and the three worst-case inputs (1 MB of
//! one letter, 1 MB of random non-space printable ASCII, 1 MB of CJK without spaces; tokenkit
//! only, against 1 MB of prose: the peers are quadratic there). Ids are checked identical before timing; the
//! table prints MB/s (median) and tokenkit's ratio to each peer.
//!
//! Run: `cargo bench -p tokenkit-bench --bench tiktoken` (`TOKENKIT_BENCH_BYTES`: corpus
//! sample size, default 512 KiB; `TOKENKIT_BENCH_FILTER=cl100k` for a subset).

use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{black_box, Criterion, Throughput};
use rayon::prelude::*;
use tokenkit::formats::tiktoken::EncodingSpec;
use tokenkit::tiktoken::Encoding;
use tokenkit_bench::{corpora_dir, documents, fixtures_dir, worst_cases};

const CORPORA: &[(&str, &str)] = &[
    ("en", "en/pride_and_prejudice.txt"),
    ("zh", "zh/manpages-zh_CN.txt"),
    ("ja", "ja/wagahai.txt"),
    ("code", "code/cpython-3.11-stdlib.py.txt"),
    ("mixed", "mixed/mixed_input.txt"),
];

fn median_mbs(group: &str, function: &str, bytes: usize) -> Option<f64> {
    let mut roots = Vec::new();
    if let Some(t) = std::env::var_os("CARGO_TARGET_DIR") {
        roots.push(PathBuf::from(t));
    }
    roots.push(PathBuf::from("../target"));
    roots.push(PathBuf::from("target"));
    for r in roots {
        let p = r.join("criterion").join(group).join(function).join("new/estimates.json");
        if let Ok(s) = std::fs::read_to_string(&p) {
            let v: serde_json::Value = serde_json::from_str(&s).ok()?;
            let ns = v["median"]["point_estimate"].as_f64()?;
            return Some(bytes as f64 / 1e6 / (ns / 1e9));
        }
    }
    None
}

struct Peers {
    tiktoken_rs: tiktoken_rs::CoreBPE,
    bpe: &'static bpe_openai::Tokenizer,
    hf: tokenizers::Tokenizer,
}

fn peers(name: &str, ours: &Encoding, tmp: &Path) -> Peers {
    let json = tmp.join(format!("{name}.tokenizer.json"));
    ours.tokenizer().save(&json, false).expect("tokenkit writes the conversion");
    let (tiktoken_rs, bpe) = match name {
        "cl100k_base" => (tiktoken_rs::cl100k_base().unwrap(), bpe_openai::cl100k_base()),
        _ => (tiktoken_rs::o200k_base().unwrap(), bpe_openai::o200k_base()),
    };
    Peers { tiktoken_rs, bpe, hf: tokenizers::Tokenizer::from_file(&json).expect("HF loads the conversion") }
}

fn main() {
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    let max_bytes: usize = std::env::var("TOKENKIT_BENCH_BYTES").ok().and_then(|s| s.parse().ok()).unwrap_or(512 * 1024);
    let filter = std::env::var("TOKENKIT_BENCH_FILTER").unwrap_or_default();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let tmp = std::env::temp_dir();
    let mut rows: Vec<(String, usize)> = Vec::new();
    let mut notes = Vec::new();
    for name in ["cl100k_base", "o200k_base"] {
        if !name.contains(&filter) {
            continue;
        }
        let spec = EncodingSpec::named(name).unwrap();
        let ours =
            Encoding::from_spec(spec.clone(), &fixtures_dir().join("tiktoken").join(&spec.file)).expect("tokenkit loads the rank file");
        let p = peers(name, &ours, &tmp);
        for (cname, cpath) in CORPORA {
            let Ok(docs) = documents(&corpora_dir().join(cpath), max_bytes, 4096) else { continue };
            let bytes: usize = docs.iter().map(String::len).sum();
            let same = docs
                .iter()
                .filter(|d| {
                    let a = ours.encode_ordinary(d).unwrap();
                    a == p.tiktoken_rs.encode_ordinary(d) && a == p.bpe.encode(d) && a == p.hf.encode(d.as_str(), false).unwrap().get_ids()
                })
                .count();
            notes.push(format!("{name}/{cname}: {same}/{} documents identical in all four", docs.len()));
            let group = format!("{name}-{cname}");
            let mut g = c.benchmark_group(&group);
            g.throughput(Throughput::Bytes(bytes as u64));
            g.bench_function("tokenkit", |b| b.iter(|| docs.iter().for_each(|d| drop(black_box(ours.encode_ordinary(d))))));
            g.bench_function("tiktoken-rs", |b| b.iter(|| docs.iter().for_each(|d| drop(black_box(p.tiktoken_rs.encode_ordinary(d))))));
            g.bench_function("bpe-openai", |b| b.iter(|| docs.iter().for_each(|d| drop(black_box(p.bpe.encode(d))))));
            g.bench_function("tokenizers", |b| {
                b.iter(|| docs.iter().for_each(|d| drop(black_box(p.hf.encode(d.as_str(), false).unwrap()))))
            });
            g.bench_function("tokenkit-count", |b| b.iter(|| docs.iter().for_each(|d| drop(black_box(ours.count_ordinary(d))))));
            // tokenkit's own batch call (what users call), on the 2-thread pool.
            let texts: Vec<&str> = docs.iter().map(String::as_str).collect();
            g.bench_function("tokenkit-batch2", |b| b.iter(|| pool.install(|| drop(black_box(ours.encode_ordinary_batch(&texts))))));
            g.bench_function("bpe-openai-batch2", |b| {
                b.iter(|| pool.install(|| docs.par_iter().for_each(|d| drop(black_box(p.bpe.encode(d))))))
            });
            g.finish();
            rows.push((group, bytes));
        }
        // Worst cases: tokenkit alone, per byte against the same size of English prose.
        let prose: String = {
            let text = std::fs::read_to_string(corpora_dir().join("en/pride_and_prejudice.txt")).unwrap_or_default();
            text.chars().cycle().take(1 << 20).collect()
        };
        let mut inputs = vec![("prose", prose)];
        inputs.extend(worst_cases(1 << 20));
        let group = format!("{name}-worst");
        let mut g = c.benchmark_group(&group);
        g.sample_size(10);
        for (label, text) in &inputs {
            g.throughput(Throughput::Bytes(text.len() as u64));
            g.bench_function(*label, |b| b.iter(|| black_box(ours.encode_ordinary(text).unwrap())));
        }
        g.finish();
        for (label, text) in &inputs {
            rows.push((format!("{group}/{label}"), text.len()));
        }
    }
    c.final_summary();

    println!("\nidentical ids (checked before timing):");
    for n in &notes {
        println!("  {n}");
    }
    println!("\n| encoding-corpus | MB | tokenkit | tiktoken-rs | bpe-openai | tokenizers | vs tiktoken-rs | vs bpe-openai | vs tokenizers | tokenkit count | tokenkit 2t | 2t/1t | bpe-openai 2t |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let fmt = |x: Option<f64>| x.map_or("-".into(), |v| format!("{v:.1}"));
    let ratio = |x: Option<f64>, y: Option<f64>| match (x, y) {
        (Some(x), Some(y)) => format!("{:.2}x", x / y),
        _ => "-".into(),
    };
    for (group, bytes) in &rows {
        if let Some((g, f)) = group.split_once('/') {
            let v = median_mbs(g, f, *bytes);
            let prose = median_mbs(g, "prose", 1 << 20);
            println!("| {group} | {:.2} | {} | | | | | | | | | per byte vs prose: {} | |", *bytes as f64 / 1e6, fmt(v), ratio(v, prose));
            continue;
        }
        let m = |f: &str| median_mbs(group, f, *bytes);
        let (t, tr, bo, hf) = (m("tokenkit"), m("tiktoken-rs"), m("bpe-openai"), m("tokenizers"));
        let (cnt, t2, b2) = (m("tokenkit-count"), m("tokenkit-batch2"), m("bpe-openai-batch2"));
        println!(
            "| {group} | {:.2} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            *bytes as f64 / 1e6,
            fmt(t),
            fmt(tr),
            fmt(bo),
            fmt(hf),
            ratio(t, tr),
            ratio(t, bo),
            ratio(t, hf),
            fmt(cnt),
            fmt(t2),
            ratio(t2, t),
            fmt(b2)
        );
    }
}
