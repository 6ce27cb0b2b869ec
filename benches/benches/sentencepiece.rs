//! SentencePiece `.model` files: tokenkit vs the `sentencepiece` library (its Python package,
//! batch API with `num_threads=1`; the `sentencepiece` crate needs cmake and a C++ build) vs HF
//! `tokenizers` (the Rust crate, on the tokenizer.json tokenkit converts the model to), all
//! single-threaded, on the same documents, timed the same way (best of N passes over all
//! documents, wall clock). Ids are checked identical to sentencepiece's first. Each output is
//! compared with the call that gives the same output:
//! - ids: tokenkit `encode_ids` vs sentencepiece `encode` (ids);
//! - pieces: tokenkit `encode_pieces` vs sentencepiece `encode(out_type=str)` (Python strings:
//!   sentencepiece's own pieces call, as its users make it);
//! - tokens: tokenkit `Model::tokenize` (ids, piece strings, byte offsets) vs HF `encode`.
//!
//! Run: `cargo bench -p tokenkit-bench --bench sentencepiece` (`TOKENKIT_BENCH_BYTES`, default
//! 512 KiB per corpus; `TOKENKIT_BENCH_FILTER=llama2` for a subset; `TOKENKIT_BENCH_PYTHON`
//! for the interpreter that has `sentencepiece`, default `.venv/bin/python`).

use std::io::Write as _;
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use tokenkit::Model as _;
use tokenkit_bench::{corpora_dir, documents, fixtures_dir, repo_root};

/// mimalloc, the allocator tokenkit's CLI and Python bindings ship with: `tokenize` makes a
/// string per token, and glibc's malloc would otherwise take about half of its time
/// (callgrind, kyoto_ja on en: 36.8M against 18.7M instructions per 64 KiB). HF `tokenizers`,
/// timed in the same process, gets it too.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const CORPORA: &[(&str, &str)] = &[
    ("en", "en/pride_and_prejudice.txt"),
    ("zh", "zh/manpages-zh_CN.txt"),
    ("ja", "ja/wagahai.txt"),
    ("code", "code/cpython-3.11-stdlib.py.txt"),
    ("mixed", "mixed/mixed_input.txt"),
];

const MODELS: &[(&str, &str)] = &[
    ("llama2", "hub/llama2.model"),
    ("mistral01", "registry/mistral01/tokenizer.model"),
    ("xlnet", "hub/xlnet_base_cased.model"),
    ("albert", "registry/albert/spiece.model"),
    ("kyoto_ja", "registry/sentencepiece/kyoto_ja_unigram_8000.model"),
    ("botchan_bpe", "registry/sentencepiece/botchan_en_bpe_1000.model"),
];

const PASSES: usize = 5;

/// Best wall-clock seconds of `PASSES` runs of `f` (after one warm-up run).
fn best_of(mut f: impl FnMut()) -> f64 {
    f();
    (0..PASSES)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// sentencepiece's timings in Python on `docs`.
struct SpRun {
    ids_secs: f64,
    pieces_secs: f64,
    ids: Vec<Vec<u32>>,
    pieces: Vec<Vec<String>>,
}

/// Times sentencepiece in Python on `docs`, ids and pieces.
fn sentencepiece_python(model: &PathBuf, docs: &[String]) -> Option<SpRun> {
    let python = std::env::var("TOKENKIT_BENCH_PYTHON").map(PathBuf::from).unwrap_or_else(|_| repo_root().join(".venv/bin/python"));
    let mut input = tempfile_path("docs.json");
    std::fs::File::create(&input).ok()?.write_all(serde_json::to_string(docs).ok()?.as_bytes()).ok()?;
    let script = format!(
        r#"
import json, sys, time, sentencepiece as spm
docs = json.load(open(sys.argv[2], encoding="utf-8"))
sp = spm.SentencePieceProcessor(model_file=sys.argv[1])
def best(**kw):
    sp.encode(docs, num_threads=1, **kw)
    b = float("inf")
    for _ in range({PASSES}):
        t = time.perf_counter(); sp.encode(docs, num_threads=1, **kw); b = min(b, time.perf_counter() - t)
    return b
print(json.dumps({{"ids_secs": best(), "pieces_secs": best(out_type=str),
                  "ids": sp.encode(docs, num_threads=1), "pieces": sp.encode(docs, out_type=str, num_threads=1)}}))
"#
    );
    let out = Command::new(python).arg("-c").arg(script).arg(model).arg(&input).output().ok()?;
    let _ = std::fs::remove_file(&mut input);
    if !out.status.success() {
        eprintln!("sentencepiece (python) failed: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    Some(SpRun {
        ids_secs: v["ids_secs"].as_f64()?,
        pieces_secs: v["pieces_secs"].as_f64()?,
        ids: serde_json::from_value(v["ids"].clone()).ok()?,
        pieces: serde_json::from_value(v["pieces"].clone()).ok()?,
    })
}

fn tempfile_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("tokenkit-sp-bench-{}-{name}", std::process::id()))
}

fn main() {
    let max_bytes: usize = std::env::var("TOKENKIT_BENCH_BYTES").ok().and_then(|s| s.parse().ok()).unwrap_or(512 * 1024);
    let filter = std::env::var("TOKENKIT_BENCH_FILTER").unwrap_or_default();
    let corpora = corpora_dir();
    let mut rows = Vec::new();
    for (mname, mrel) in MODELS {
        if !mname.contains(filter.as_str()) {
            continue;
        }
        let mpath = fixtures_dir().join(mrel);
        let Ok(model) = tokenkit::formats::sentencepiece::read_model(&mpath) else {
            eprintln!("skipping {mname}: {} not found", mpath.display());
            continue;
        };
        let json = tokenkit::formats::sentencepiece::convert::to_tokenizer_json(&model).expect("a Unigram or BPE model converts");
        let hf: tokenizers::Tokenizer = serde_json::from_value(json).expect("HF tokenizers loads the converted tokenizer.json");
        for (cname, crel) in CORPORA {
            let Ok(docs) = documents(&corpora.join(crel), max_bytes, 4096) else { continue };
            let bytes: usize = docs.iter().map(String::len).sum();
            let mb = bytes as f64 / 1e6;
            let Some(sp) = sentencepiece_python(&mpath, &docs) else { continue };
            let ours: Vec<Vec<u32>> = docs.iter().map(|d| model.encode_ids(d).expect("tokenkit encodes")).collect();
            let same = ours.iter().zip(&sp.ids).filter(|(a, b)| a == b).count();
            let same_pieces = docs.iter().zip(&sp.pieces).filter(|(d, b)| model.encode_pieces(d).expect("tokenkit encodes") == **b).count();
            let hf_same = docs
                .iter()
                .zip(&sp.ids)
                .filter(|(d, b)| hf.encode(d.as_str(), false).map(|e| e.get_ids() == b.as_slice()).unwrap_or(false))
                .count();
            let ids_secs = best_of(|| {
                for d in &docs {
                    std::hint::black_box(model.encode_ids(d).expect("tokenkit encodes"));
                }
            });
            let pieces_secs = best_of(|| {
                for d in &docs {
                    std::hint::black_box(model.encode_pieces(d).expect("tokenkit encodes"));
                }
            });
            let tk_secs = best_of(|| {
                for d in &docs {
                    std::hint::black_box(model.tokenize(d).expect("tokenkit encodes"));
                }
            });
            let hf_secs = best_of(|| {
                for d in &docs {
                    std::hint::black_box(hf.encode(d.as_str(), false).expect("tokenizers encodes"));
                }
            });
            let mbs = |secs: f64| mb / secs;
            rows.push(format!(
                "| {mname} | {cname} | {same}/{n} | {same_pieces}/{n} | {hf_same}/{n} | {:.1} | {:.1} | {:.2}x | {:.1} | {:.1} | {:.2}x | {:.1} | {:.1} | {:.2}x |",
                mbs(ids_secs),
                mbs(sp.ids_secs),
                sp.ids_secs / ids_secs,
                mbs(pieces_secs),
                mbs(sp.pieces_secs),
                sp.pieces_secs / pieces_secs,
                mbs(tk_secs),
                mbs(hf_secs),
                hf_secs / tk_secs,
                n = docs.len()
            ));
            eprintln!("{}", rows.last().map(String::as_str).unwrap_or_default());
        }
    }
    println!("\nsingle thread, MB/s of UTF-8 input (best of {PASSES}), documents of ~4 KiB, {max_bytes} bytes per corpus");
    println!("ids: tokenkit encode_ids vs sentencepiece encode; pieces: tokenkit encode_pieces vs sentencepiece");
    println!("encode(out_type=str); tokens: tokenkit tokenize (ids, pieces, offsets) vs HF tokenizers encode");
    println!("| model | corpus | ids = sp | pieces = sp | HF ids = sp | ids tokenkit | ids sp | ids vs sp | pieces tokenkit | pieces sp | pieces vs sp | tokens tokenkit | HF | vs HF |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for r in rows {
        println!("{r}");
    }
}
