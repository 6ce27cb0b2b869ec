//! Loads a tokenizer file and encodes one short text, `N` times: what a process pays from the
//! file read to its first ids, as a target for callgrind (`valgrind --tool=callgrind`).
//!
//! Run: `cargo run --release -p tokenkit --example load_profile -- KIND PATH [N]`, KIND one of
//! `any` (`tokenkit::load`, the format detected), `spm` (a `.model` as
//! `tokenkit.sentencepiece` reads it), `spm-nbest` (the same with a 2-best encode, which builds
//! a Unigram model's trie: what a load cost before the trie was built lazily) or
//! `tiktoken:NAME` (a rank file as encoding NAME).
//! Set `TOKENKIT_CACHE=0` for a load that builds every table.

const TEXT: &str = "Hello world, this is the first encode: 12345 héllo 你好.";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, kind, path, rest @ ..] = args.as_slice() else {
        return Err("usage: load_profile any|spm|spm-nbest|tiktoken:NAME PATH [N]".into());
    };
    let n: usize = rest.first().and_then(|s| s.parse().ok()).unwrap_or(1);
    let path = std::path::Path::new(path);
    for _ in 0..n {
        let ids = match kind.as_str() {
            "any" => tokenkit::load(path)?.encode(TEXT, true)?.get_ids().to_vec(),
            "spm" => tokenkit::formats::sentencepiece::read_model(path)?.encode_ids(TEXT)?,
            "spm-nbest" => tokenkit::formats::sentencepiece::read_model(path)?.nbest_encode_ids(TEXT, 2)?.swap_remove(0).0,
            k => match k.strip_prefix("tiktoken:") {
                Some(name) => tokenkit::tiktoken::Encoding::from_file(path, Some(name))?.encode_ordinary(TEXT)?,
                None => return Err(format!("unknown kind {k}").into()),
            },
        };
        let _ = ids.len();
    }
    Ok(())
}
