//! What the profiling examples share: reading their arguments and cutting the file into
//! documents of about 4 KB at line ends.

/// The tokenizer, the file's documents and the repeat count from `NAME TOKENIZER FILE [REPEAT]`.
pub fn load_args(name: &str) -> Result<(tokenkit::Tokenizer, Vec<String>, usize), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: {name} TOKENIZER FILE [REPEAT]");
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
    Ok((tok, docs, repeat))
}
