//! Encodes a text file with a tokenizer, document by document, and prints the throughput:
//! a quick way to profile the pipeline (`perf record` this binary).
//!
//! Run: `cargo run --release -p tokenkit --example encode_file -- TOKENIZER FILE [REPEAT]`
//! (`TOKENKIT_ADD_SPECIAL=1`: with the post-processor's special tokens, as Python's
//! `encode_batch` adds them; with `TOKENKIT_DOC_BYTES=1`, one line per call, as a batch of lines)

use std::time::Instant;

mod common;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (tok, docs, repeat) = common::load_args("encode_file")?;
    let bytes: usize = docs.iter().map(String::len).sum();
    let add_special = std::env::var("TOKENKIT_ADD_SPECIAL").is_ok_and(|v| v == "1");
    let start = Instant::now();
    let mut n = 0;
    for _ in 0..repeat {
        for d in &docs {
            n += tok.encode(d.as_str(), add_special)?.len();
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!("{} tokens, {:.1} MB/s", n / repeat, (bytes * repeat) as f64 / 1e6 / secs);
    Ok(())
}
