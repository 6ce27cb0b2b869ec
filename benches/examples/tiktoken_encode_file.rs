//! One tiktoken encoder (tokenkit, `tiktoken-rs` or `bpe-openai`) encoding a corpus file
//! document by document as the `tiktoken` bench cuts it, or one of its worst-case inputs
//! (`worst:one-letter`, `worst:random-printable`, `worst:cjk-no-spaces`, 1 MB each): the
//! side of load-independent comparisons. Run it under `valgrind --tool=callgrind
//! --toggle-collect='*passes*'`: the count is that of REPEAT passes after a warm-up one.
//!
//! Run: `cargo run --release -p tokenkit-bench --example tiktoken_encode_file -- LIB ENCODING INPUT [REPEAT [MAX_BYTES]]`

use tokenkit::formats::tiktoken::EncodingSpec;
use tokenkit::tiktoken::Encoding;

fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(lib), Some(name), Some(input)) = (args.get(1), args.get(2), args.get(3)) else {
        eprintln!("usage: tiktoken_encode_file tokenkit|tiktoken-rs|bpe-openai ENCODING FILE|worst:KIND [REPEAT [MAX_BYTES]]");
        std::process::exit(2);
    };
    let repeat: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(3);
    let max_bytes: usize = args.get(5).and_then(|s| s.parse().ok()).unwrap_or(usize::MAX);
    let docs = match input.strip_prefix("worst:") {
        Some(kind) => tokenkit_bench::worst_cases(1 << 20).into_iter().filter(|(k, _)| *k == kind).map(|(_, t)| t).collect(),
        None => tokenkit_bench::documents(std::path::Path::new(input), max_bytes, 4096)?,
    };
    let encode: Box<dyn Fn(&str) -> usize> = match lib.as_str() {
        "tokenkit" => {
            let spec = EncodingSpec::named(name)?;
            let file = tokenkit_bench::fixtures_dir().join("tiktoken").join(&spec.file);
            let enc = Encoding::from_spec(spec, &file)?;
            Box::new(move |d| enc.encode_ordinary(d).map_or(0, |ids| ids.len()))
        }
        "tiktoken-rs" => {
            let bpe = if name == "cl100k_base" { tiktoken_rs::cl100k_base()? } else { tiktoken_rs::o200k_base()? };
            Box::new(move |d| bpe.encode_ordinary(d).len())
        }
        "bpe-openai" => {
            let bpe = if name == "cl100k_base" { bpe_openai::cl100k_base() } else { bpe_openai::o200k_base() };
            Box::new(move |d| bpe.encode(d).len())
        }
        other => return Err(format!("unknown library {other}").into()),
    };
    // A warm-up pass builds what encoders build on first use; `passes` is then the part to
    // measure (`valgrind --tool=callgrind --toggle-collect='*passes*'`).
    encode_all(&docs, &encode);
    let start = std::time::Instant::now();
    let tokens = passes(&docs, &encode, repeat) / repeat.max(1);
    let bytes: usize = docs.iter().map(String::len).sum::<usize>() * repeat;
    println!("{tokens} tokens per pass, {:.1} MB/s", bytes as f64 / 1e6 / start.elapsed().as_secs_f64());
    Ok(())
}

#[inline(never)]
fn passes(docs: &[String], encode: &dyn Fn(&str) -> usize, repeat: usize) -> usize {
    (0..repeat).map(|_| encode_all(docs, encode)).sum()
}

fn encode_all(docs: &[String], encode: &dyn Fn(&str) -> usize) -> usize {
    docs.iter().map(|d| encode(d)).sum()
}
