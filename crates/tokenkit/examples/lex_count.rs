//! Instruction counts of the cl100k / o200k lexers alone and of tiktoken's `encode_ordinary`
//! on a file: `valgrind --tool=callgrind --toggle-collect='*passes*'` counts REPEAT passes
//! after a warm-up one.
//!
//! Run: `cargo run --release -p tokenkit --example lex_count -- lex|encode cl100k_base|o200k_base FILE [REPEAT [MAX_BYTES]]`
//!
//! `lex_count check - FILE...` compares the fast lexers of the cl100k readings and of o200k
//! with Oniguruma on each whole file and prints the matches compared.

use tokenkit::formats::tiktoken::{EncodingSpec, CL100K_PATTERN, O200K_PATTERN};
use tokenkit::tiktoken::Encoding;
use tokenkit::utils::regex::{SysRegex, CL100K_ONIG_PATTERN, LLAMA3_PATTERN, QWEN2_PATTERN};

fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(mode), Some(name), Some(input)) = (args.get(1), args.get(2), args.get(3)) else {
        eprintln!("usage: lex_count lex|encode cl100k_base|o200k_base FILE [REPEAT [MAX_BYTES]]");
        std::process::exit(2);
    };
    if mode == "check" {
        return check(&args[3..]);
    }
    let repeat: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(3);
    let max_bytes: usize = args.get(5).and_then(|s| s.parse().ok()).unwrap_or(usize::MAX);
    let mut text = std::fs::read_to_string(input)?;
    let mut end = text.len().min(max_bytes);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    let run: Box<dyn Fn(&str) -> usize> = match mode.as_str() {
        "lex" => {
            let re = SysRegex::new(if name == "cl100k_base" { CL100K_PATTERN } else { O200K_PATTERN })?;
            Box::new(move |t| re.find_iter(t).count())
        }
        _ => {
            let spec = EncodingSpec::named(name)?;
            let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.fixtures/tiktoken").join(&spec.file);
            let enc = Encoding::from_spec(spec, &file)?;
            Box::new(move |t| enc.encode_ordinary(t).map_or(0, |ids| ids.len()))
        }
    };
    let warm = run(&text);
    let start = std::time::Instant::now();
    let n = passes(&text, &run, repeat);
    println!(
        "{warm} per pass ({n} total), {} bytes, {:.1} MB/s",
        text.len(),
        (text.len() * repeat) as f64 / 1e6 / start.elapsed().as_secs_f64()
    );
    Ok(())
}

#[inline(never)]
fn passes(text: &str, run: &dyn Fn(&str) -> usize, repeat: usize) -> usize {
    (0..repeat).map(|_| run(text)).sum()
}

/// The fast lexers against Oniguruma on whole files.
fn check(files: &[String]) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let patterns =
        [LLAMA3_PATTERN, tokenkit::utils::regex::CL100K_PATTERN, CL100K_ONIG_PATTERN, CL100K_PATTERN, QWEN2_PATTERN, O200K_PATTERN];
    let regexes: Vec<(SysRegex, SysRegex)> =
        patterns.iter().map(|p| Ok((SysRegex::new(p)?, SysRegex::onig_only(p)?))).collect::<tokenkit::Result<_>>()?;
    let mut total = 0;
    for f in files {
        let text = std::fs::read_to_string(f)?;
        for (fast, onig) in &regexes {
            assert!(fast.is_fast());
            let got: Vec<_> = fast.find_iter(&text).collect();
            let want: Vec<_> = onig.find_iter(&text).collect();
            if got != want {
                let i = got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
                return Err(format!("{f}: {} differs at match {i}: {:?} vs {:?}", fast.as_str(), got.get(i), want.get(i)).into());
            }
            total += got.len();
        }
        println!("{f}: {} bytes, identical", text.len());
    }
    println!("{total} matches identical over {} files x {} patterns", files.len(), patterns.len());
    Ok(())
}
