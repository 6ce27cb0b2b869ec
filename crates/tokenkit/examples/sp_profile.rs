//! Encodes a text file with a SentencePiece `.model` (the model's own `tokenize`, as the
//! sentencepiece bench times it), document by document: a target for callgrind / perf.
//!
//! Run: `cargo run --release -p tokenkit --example sp_profile -- MODEL FILE [MAX_BYTES] [REPEAT]`
//! (`SP_PROFILE_IDS=1`: time `encode_ids` instead, ids only).

use std::time::Instant;

use tokenkit::Model as _;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, model, file, rest @ ..] = args.as_slice() else {
        return Err("usage: sp_profile MODEL FILE [MAX_BYTES] [REPEAT]".into());
    };
    let max: usize = rest.first().and_then(|s| s.parse().ok()).unwrap_or(131072);
    let repeat: usize = rest.get(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let model = tokenkit::formats::sentencepiece::read_model(model.as_ref())?;
    let text = std::fs::read_to_string(file)?;
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut docs = Vec::new();
    let mut cur = String::new();
    for line in text[..end].split_inclusive('\n') {
        cur.push_str(line);
        if cur.len() >= 4096 {
            docs.push(std::mem::take(&mut cur));
        }
    }
    docs.push(cur);
    let bytes: usize = docs.iter().map(String::len).sum();
    let ids_only = std::env::var_os("SP_PROFILE_IDS").is_some();
    let start = Instant::now();
    let mut n = 0;
    for _ in 0..repeat {
        for d in &docs {
            n += if ids_only { model.encode_ids(d)?.len() } else { model.tokenize(d)?.len() };
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!("{} tokens, {:.1} MB/s", n / repeat, (bytes * repeat) as f64 / 1e6 / secs);
    Ok(())
}
