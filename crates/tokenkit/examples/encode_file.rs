//! Encodes a text file with a tokenizer, document by document, and prints the throughput:
//! a quick way to profile the pipeline (`perf record` this binary).
//!
//! Run: `cargo run --release -p tokenkit --example encode_file -- TOKENIZER FILE [REPEAT]`

use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: encode_file TOKENIZER FILE [REPEAT]");
        std::process::exit(2);
    }
    let tok = tokenkit::formats::load(&args[1])?;
    let text = std::fs::read_to_string(&args[2])?;
    let repeat: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(3);
    let mut docs = Vec::new();
    let mut cur = String::new();
    for line in text.split_inclusive('\n') {
        cur.push_str(line);
        if cur.len() >= 4096 {
            docs.push(std::mem::take(&mut cur));
        }
    }
    docs.push(cur);
    let start = Instant::now();
    let mut n = 0;
    for _ in 0..repeat {
        for d in &docs {
            n += tok.encode(d.as_str(), false)?.len();
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!("{} tokens, {:.1} MB/s", n / repeat, (text.len() * repeat) as f64 / 1e6 / secs);
    Ok(())
}
