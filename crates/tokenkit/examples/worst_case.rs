//! Encodes the worst-case inputs of the tiktoken benchmark (1 MB of one letter, of random
//! printable ASCII, of CJK without spaces) and 1 MB of prose with a tiktoken encoding, and
//! prints MB/s of each: a quick way to profile the long-word encoder (`perf record` this).
//!
//! CASE may also name a text of [`tokenkit::utils::lexers::adversarial_texts`] (the `linear`
//! benchmark's worst cases, e.g. `space-digit`), encoded at 1 MB.
//!
//! Run: `cargo run --release -p tokenkit --example worst_case -- RANK_FILE [CORPUS] [REPEAT] [CASE]`

use std::time::Instant;

use tokenkit::tiktoken::Encoding;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rank_file = args.first().ok_or("usage: worst_case RANK_FILE [CORPUS] [REPEAT] [CASE]")?;
    let enc = Encoding::from_file(rank_file.as_ref(), None)?;
    let prose = args.get(1).map(std::fs::read_to_string).transpose()?.unwrap_or_else(|| "The quick brown fox. ".into());
    let repeat: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(3);
    let only = args.get(3).cloned().unwrap_or_default();
    let n = 1 << 20;
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let printable: String = (0..n).map(|_| char::from(b'!' + (next() % 94) as u8)).collect();
    let mut cjk = String::with_capacity(n + 3);
    while cjk.len() < n {
        cjk.push(char::from_u32(0x4E00 + (next() % 0x5000) as u32).unwrap_or('中'));
    }
    let mut cases = vec![
        ("prose", prose.chars().cycle().take(n).collect::<String>()),
        ("one-letter", "a".repeat(n)),
        ("random-printable", printable),
        ("cjk-no-spaces", cjk),
    ];
    if !only.is_empty() && !cases.iter().any(|(name, _)| *name == only) {
        cases = tokenkit::utils::lexers::adversarial_texts(n);
    }
    for (name, text) in &cases {
        if !only.is_empty() && only != *name {
            continue;
        }
        enc.encode_ordinary(text)?;
        let start = Instant::now();
        let mut tokens = 0;
        for _ in 0..repeat {
            tokens = enc.encode_ordinary(text)?.len();
        }
        let secs = start.elapsed().as_secs_f64();
        println!("{name}: {tokens} tokens, {:.1} MB/s", (text.len() * repeat) as f64 / 1e6 / secs);
    }
    Ok(())
}
