//! What the profiling examples share: reading their arguments and cutting the file into
//! documents of about 4 KB at line ends (`TOKENKIT_DOC_BYTES=N` for about N bytes; 1 makes
//! each line a document, as a batch of lines from Python is).

/// The tokenizer, the file's documents and the repeat count from `NAME TOKENIZER FILE [REPEAT]`.
pub fn load_args(name: &str) -> Result<(tokenkit::Tokenizer, Vec<String>, usize), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: {name} TOKENIZER FILE [REPEAT]");
        std::process::exit(2);
    }
    let tok = tokenkit::load(&args[1])?;
    let text = std::fs::read_to_string(&args[2])?;
    let repeat: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(3);
    let doc_bytes: usize = std::env::var("TOKENKIT_DOC_BYTES").ok().and_then(|s| s.parse().ok()).unwrap_or(4096);
    let mut docs = Vec::new();
    let mut cur = String::new();
    for line in text.split_inclusive('\n') {
        cur.push_str(line);
        if cur.len() >= doc_bytes {
            docs.push(std::mem::take(&mut cur));
        }
    }
    docs.push(cur);
    Ok((tok, docs, repeat))
}
