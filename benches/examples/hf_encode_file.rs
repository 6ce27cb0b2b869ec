//! The HF `tokenizers` crate encoding a corpus file document by document, as the `encode`
//! bench cuts it: the peer side of load-independent comparisons. Run both this and tokenkit's
//! `encode_file` example under `valgrind --tool=callgrind` with REPEAT 1 and 2; the difference
//! of the instruction counts is the cost of one pass.
//!
//! Run: `cargo run --release -p tokenkit-bench --example hf_encode_file -- TOKENIZER FILE [REPEAT [MAX_BYTES]]`

fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(tokenizer), Some(file)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: hf_encode_file TOKENIZER FILE [REPEAT [MAX_BYTES]]");
        std::process::exit(2);
    };
    let tok = tokenizers::Tokenizer::from_file(tokenizer)?;
    let repeat: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(3);
    let max_bytes: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(usize::MAX);
    let docs = tokenkit_bench::documents(std::path::Path::new(file), max_bytes, 4096)?;
    let mut n = 0;
    for _ in 0..repeat {
        for d in &docs {
            n += tok.encode(d.as_str(), false)?.len();
        }
    }
    println!("{} tokens per pass", n / repeat.max(1));
    Ok(())
}
