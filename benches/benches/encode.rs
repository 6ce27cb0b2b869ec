//! tokenkit vs HF `tokenizers` (the Rust crate, same version as the Python oracle) on the
//! fixture tokenizers and the shared corpora: single-threaded `encode` of each document and
//! parallel `encode_batch` of all of them. Checks that both give identical ids first, then
//! times them with criterion and prints a table of MB/s (median) and the ratio.
//!
//! Run: `cargo bench -p tokenkit-bench --bench encode` (set `TOKENKIT_BENCH_BYTES` to change
//! the corpus sample size, default 512 KiB; `TOKENKIT_BENCH_FILTER=gpt2` to run a subset).

use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{black_box, Criterion, Throughput};
use tokenkit_bench::{corpora_dir, documents, fixtures_dir};

const CORPORA: &[(&str, &str)] = &[
    ("en", "en/pride_and_prejudice.txt"),
    ("zh", "zh/manpages-zh_CN.txt"),
    ("ja", "ja/wagahai.txt"),
    ("code", "code/cpython-3.11-stdlib.py.txt"),
    ("mixed", "mixed/mixed_input.txt"),
];

fn tokenizer_files() -> Vec<(String, PathBuf)> {
    let dir = fixtures_dir();
    let mut out = Vec::new();
    for name in ["gpt2", "bert_base_cased", "llama2", "mistral03", "xlnet_base_cased"] {
        out.push((name.to_owned(), dir.join(format!("hub/{name}.json"))));
    }
    for name in ["bert_uncased", "llama3", "mistral01", "qwen3", "deepseek_v3"] {
        out.push((name.to_owned(), dir.join(format!("registry/{name}/tokenizer.json"))));
    }
    out.retain(|(_, p)| p.is_file());
    out
}

struct Case {
    group: String,
    bytes: usize,
}

fn estimate_median_ns(group: &str, function: &str) -> Option<f64> {
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
            return v["median"]["point_estimate"].as_f64();
        }
    }
    None
}

fn check_identical(ours: &tokenkit::Tokenizer, theirs: &tokenizers::Tokenizer, docs: &[String]) -> (usize, usize) {
    let mut same = 0;
    for d in docs {
        let a = ours.encode(d.as_str(), false).expect("tokenkit encodes");
        let b = theirs.encode(d.as_str(), false).expect("tokenizers encodes");
        if a.get_ids() == b.get_ids() {
            same += 1;
        }
    }
    (same, docs.len())
}

fn main() {
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    let max_bytes: usize = std::env::var("TOKENKIT_BENCH_BYTES").ok().and_then(|s| s.parse().ok()).unwrap_or(512 * 1024);
    let filter = std::env::var("TOKENKIT_BENCH_FILTER").unwrap_or_default();
    let corpora = corpora_dir();
    let mut cases = Vec::new();
    let mut identical = Vec::new();
    for (tname, tpath) in tokenizer_files() {
        if !tname.contains(&filter) {
            continue;
        }
        let ours = tokenkit::Tokenizer::from_file(&tpath).expect("tokenkit loads the fixture");
        let theirs = tokenizers::Tokenizer::from_file(&tpath).expect("tokenizers loads the fixture");
        for (cname, cpath) in CORPORA {
            let path: &Path = &corpora.join(cpath);
            let Ok(docs) = documents(path, max_bytes, 4096) else { continue };
            let bytes: usize = docs.iter().map(String::len).sum();
            let (same, total) = check_identical(&ours, &theirs, &docs);
            identical.push(format!("{tname}/{cname}: {same}/{total} documents identical"));
            let group_name = format!("{tname}-{cname}");
            let mut g = c.benchmark_group(&group_name);
            g.throughput(Throughput::Bytes(bytes as u64));
            g.bench_function("tokenkit-1t", |b| {
                b.iter(|| {
                    for d in &docs {
                        black_box(ours.encode(d.as_str(), false).unwrap());
                    }
                })
            });
            g.bench_function("hf-1t", |b| {
                b.iter(|| {
                    for d in &docs {
                        black_box(theirs.encode(d.as_str(), false).unwrap());
                    }
                })
            });
            let batch: Vec<&str> = docs.iter().map(String::as_str).collect();
            g.bench_function("tokenkit-batch", |b| b.iter(|| black_box(ours.encode_batch(batch.clone(), false).unwrap())));
            g.bench_function("hf-batch", |b| b.iter(|| black_box(theirs.encode_batch(batch.clone(), false).unwrap())));
            g.finish();
            cases.push(Case { group: group_name, bytes });
        }
    }
    c.final_summary();

    println!("\nidentical ids (checked before timing):");
    for l in &identical {
        println!("  {l}");
    }
    println!("\n| tokenizer-corpus | MB | tokenkit 1t MB/s | HF 1t MB/s | ratio 1t | tokenkit batch MB/s | HF batch MB/s | ratio batch |");
    println!("|---|---|---|---|---|---|---|---|");
    for case in &cases {
        let mbs = |f: &str| estimate_median_ns(&case.group, f).map(|ns| case.bytes as f64 / 1e6 / (ns / 1e9));
        let (a, b, cb, db) = (mbs("tokenkit-1t"), mbs("hf-1t"), mbs("tokenkit-batch"), mbs("hf-batch"));
        let fmt = |x: Option<f64>| x.map_or("?".into(), |v| format!("{v:.1}"));
        let ratio = |x: Option<f64>, y: Option<f64>| match (x, y) {
            (Some(x), Some(y)) => format!("{:.2}x", x / y),
            _ => "?".into(),
        };
        println!(
            "| {} | {:.2} | {} | {} | {} | {} | {} | {} |",
            case.group,
            case.bytes as f64 / 1e6,
            fmt(a),
            fmt(b),
            ratio(a, b),
            fmt(cb),
            fmt(db),
            ratio(cb, db)
        );
    }
}
