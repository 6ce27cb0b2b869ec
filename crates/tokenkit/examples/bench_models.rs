//! Times a tokenizer's model alone: the file is normalized and pre-tokenized once (document by
//! document, like `encode_file`), then the model runs on every piece `REPEAT` times. Prints
//! the model's throughput in MB of input text per second and a checksum of the ids.
//!
//! Run: `cargo run --release -p tokenkit --example bench_models -- TOKENIZER FILE [REPEAT]`

use std::time::Instant;

use tokenkit::tokenizer::{Model, Normalizer, PreTokenizedString, PreTokenizer};
use tokenkit::NormalizedString;

/// Nanoseconds this process has spent on a CPU (Linux `/proc/self/schedstat`), so the
/// figure holds on a loaded machine.
fn cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/self/schedstat").ok()?.split_whitespace().next()?.parse().ok()
}

/// Runs the model on every piece `repeat` times: the token count and a checksum of the
/// tokens. Not inlined, so `valgrind --tool=callgrind --toggle-collect=bench_models::run_model`
/// can count the model's instructions alone.
#[inline(never)]
fn run_model(model: &impl Model, pieces: &[String], repeat: usize) -> tokenkit::Result<(usize, u64)> {
    let (mut n, mut sum) = (0usize, 0u64);
    for _ in 0..repeat {
        for p in pieces {
            for t in model.tokenize(p)? {
                n += 1;
                sum = sum.wrapping_mul(31).wrapping_add(u64::from(t.id) ^ ((t.offsets.0 as u64) << 20) ^ t.value.len() as u64);
            }
        }
    }
    Ok((n, sum))
}

mod common;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (tok, docs, repeat) = common::load_args("bench_models")?;
    let mut pieces: Vec<String> = Vec::new();
    for d in &docs {
        let mut n = NormalizedString::from(d.as_str());
        if let Some(norm) = tok.get_normalizer() {
            norm.normalize(&mut n)?;
        }
        let mut pre = PreTokenizedString::from(n);
        if let Some(p) = tok.get_pre_tokenizer() {
            p.pre_tokenize(&mut pre)?;
        }
        pieces.extend(pre.splits().iter().map(|s| s.normalized.get().to_owned()));
    }
    let model = tok.get_model();
    let start = Instant::now();
    let cpu_start = cpu_ns();
    let (n, sum) = run_model(model, &pieces, repeat)?;
    let secs = start.elapsed().as_secs_f64();
    let mb = (docs.iter().map(String::len).sum::<usize>() * repeat) as f64 / 1e6;
    let cpu = cpu_ns().zip(cpu_start).map(|(b, a)| format!(" ({:.1} MB/s of CPU time)", mb / ((b - a) as f64 / 1e9)));
    println!("{} pieces, {} tokens, checksum {sum:016x}, model {:.1} MB/s{}", pieces.len(), n / repeat, mb / secs, cpu.unwrap_or_default());
    Ok(())
}
