//! The linear-time long-word encoder ([`Backtracker`]) gives exactly the merge loop's ids,
//! and a byte-level model's raw-byte encoder exactly the model's,
//! on the cl100k, o200k, GPT-2, Llama-3, Llama-2 and Mistral vocabularies, over chunks of
//! every shared corpus taken as one word (so merges could cross spaces and newlines) and
//! over random and adversarial strings. Skipped (with a message) when a fixture is missing.
//! `TOKENKIT_BACKTRACK_BYTES` sets how much of each corpus file is used (default 24 KiB).

use std::path::PathBuf;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokenkit::models::bpe::backtrack::BacktrackScratch;
use tokenkit::models::bpe::BPE;
use tokenkit::models::ModelWrapper;
use tokenkit::tiktoken::Encoding;
use tokenkit::utils::byte_level::BYTES_CHAR;
use tokenkit::Tokenizer;

mod common;

fn corpus_files() -> Vec<PathBuf> {
    common::files_under(&common::fixture("corpora").expect("the fixture step always provides corpora"))
}

/// Byte-level model string of `text`.
fn byte_level(text: &str) -> String {
    text.bytes().map(|b| BYTES_CHAR[b as usize]).collect()
}

/// Texts to encode as single words: corpus chunks of varied sizes, then random strings.
fn texts() -> Vec<String> {
    let per_file: usize = std::env::var("TOKENKIT_BACKTRACK_BYTES").ok().and_then(|s| s.parse().ok()).unwrap_or(24 * 1024);
    let mut rng = StdRng::seed_from_u64(42);
    let mut out = Vec::new();
    for f in corpus_files() {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        let text = &text[..text.floor_char_boundary(per_file.min(text.len()))];
        let mut start = 0;
        while start < text.len() {
            let end = text.floor_char_boundary((start + rng.gen_range(1..3000)).min(text.len()));
            let end = if end <= start { text.ceil_char_boundary(start + 1) } else { end };
            out.push(text[start..end].to_owned());
            start = end;
        }
    }
    let alphabets: &[&[&str]] = &[
        &["a"],
        &["a", "b"],
        &["a", " "],
        &["a", "aa", "ab", "b", " "],
        &[" ", "\n", "\t"],
        &["0", "1", "9"],
        &["e", "r", "t", "h", "n", "i", "s", " ", "'"],
        &["中", "文", "的", "一", "国"],
        &["日", "本", "語", "の", "は", "ー", "ト"],
        &["😀", "👍", "\u{200d}", "a"],
        &["é", "e", "\u{301}", "ß", "ö"],
        &["=", "-", "*", "#", "/", "(", ")", " "],
    ];
    for alphabet in alphabets {
        for _ in 0..40 {
            let n = rng.gen_range(1..400);
            out.push((0..n).map(|_| alphabet[rng.gen_range(0..alphabet.len())]).collect());
        }
    }
    for _ in 0..200 {
        let n = rng.gen_range(1..300);
        out.push((0..n).map(|_| char::from(rng.gen_range(b'!'..=b'~'))).collect());
        out.push((0..n).filter_map(|_| char::from_u32(rng.gen_range(0x4E00..0x9FFF))).collect());
        out.push((0..n).filter_map(|_| char::from_u32(rng.gen_range(0..0x3000))).collect());
    }
    // Long random digits, also with other scripts' digits (one ` ?\p{N}+` piece): the
    // longest token at a position is often not the valid one, and the search tries the next
    // shorter one first there (its first-try order); long enough for its repeats path.
    let digits: Vec<&str> = vec!["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"];
    let unicode: Vec<&str> = digits.iter().copied().chain(["\u{663}", "\u{b2}", "\u{96a}"]).collect();
    for alphabet in [&digits, &unicode] {
        for _ in 0..12 {
            let n = rng.gen_range(1..4000);
            out.push((0..n).map(|_| alphabet[rng.gen_range(0..alphabet.len())]).collect());
        }
    }
    out.push("a".repeat(5000));
    out.push(" ".repeat(3000));
    out.push("ab".repeat(2000));
    out
}

/// Compares the backtracker with the merge loop on every text (mapped by `to_model`).
fn compare(name: &str, bpe: &BPE, to_model: impl Fn(&str) -> String) {
    let bt = bpe.backtracker().unwrap_or_else(|| panic!("{name}: the backtracker applies"));
    let mut scratch = BacktrackScratch::default();
    let (mut words, mut tokens) = (0, 0);
    for text in texts() {
        let word = to_model(&text);
        if word.is_empty() {
            continue;
        }
        let mut ours = Vec::new();
        assert!(bt.encode(word.as_bytes(), &mut ours, &mut scratch), "{name}: every char is a token in {text:?}");
        let reference = bpe.merge_loop_ids(&word).unwrap();
        assert_eq!(ours, reference, "{name}: differs on {text:?}");
        // A byte-level model's raw-byte encoder gives the model's own tokens (with
        // `ignore_merges` too) on the text's bytes, lengths in raw bytes.
        if let Some(raw) = bpe.byte_level() {
            let mut model = Vec::new();
            bpe.tokenize_ids(&word, &mut model).unwrap();
            let mut ids = Vec::new();
            let mut len = 0;
            raw.for_each_token(text.as_bytes(), |id, n| {
                ids.push(id);
                len += n as usize;
            });
            assert_eq!((ids, len), (model, text.len()), "{name}: raw bytes differ on {text:?}");
        }
        words += 1;
        tokens += ours.len();
    }
    let raw = if bpe.byte_level().is_some() { " (and the raw-byte encoder's)" } else { "" };
    eprintln!("{name}: {words} words, {tokens} tokens identical to the merge loop{raw}");
}

fn bpe_of(tok: &Tokenizer) -> &BPE {
    match tok.get_model() {
        ModelWrapper::BPE(b) => b,
        _ => panic!("a BPE model"),
    }
}

fn tiktoken(name: &str) {
    let Some(file) = common::fixture(&format!("tiktoken/{name}.tiktoken")) else { return };
    let enc = Encoding::from_file(&file, Some(name)).unwrap();
    compare(name, bpe_of(enc.tokenizer()), byte_level);
}

/// `rel`: a fixture tokenizer file (skipped only where the manifest says it is absent).
fn tokenizer_json(name: &str, rel: &str, to_model: impl Fn(&BPE, &str) -> String) {
    let Some(path) = common::fixture(rel) else { return };
    let tok = tokenkit::load(&path).unwrap();
    let bpe = bpe_of(&tok);
    compare(name, bpe, |t| to_model(bpe, t));
}

/// The SentencePiece-style model string of `text`: spaces as `▁`, chars missing from the
/// vocabulary dropped (they would go to byte fallback, which the backtracker leaves alone).
fn metaspace(bpe: &BPE, text: &str) -> String {
    let mut buf = [0u8; 4];
    text.replace(' ', "▁").chars().filter(|c| bpe.vocab().contains(c.encode_utf8(&mut buf))).collect()
}

#[test]
fn cl100k_backtracker_equals_merge_loop() {
    tiktoken("cl100k_base");
}

#[test]
fn o200k_backtracker_equals_merge_loop() {
    tiktoken("o200k_base");
}

#[test]
fn r50k_backtracker_equals_merge_loop() {
    tiktoken("r50k_base");
}

#[test]
fn gpt2_backtracker_equals_merge_loop() {
    tokenizer_json("gpt2", "hub/gpt2.json", |_, t| byte_level(t));
}

/// GPT-2's original vocab.json + merges.txt (the registry's; the same vocabulary as hub/gpt2.json).
#[test]
fn gpt2_vocab_merges_backtracker_equals_merge_loop() {
    tokenizer_json("gpt2 vocab.json", "registry/gpt2/vocab.json", |_, t| byte_level(t));
}

#[test]
fn llama3_backtracker_equals_merge_loop() {
    tokenizer_json("llama3", "registry/llama3/tokenizer.json", |_, t| byte_level(t));
}

#[test]
fn llama2_backtracker_equals_merge_loop() {
    tokenizer_json("llama2", "hub/llama2.json", metaspace);
}

#[test]
fn mistral_backtracker_equals_merge_loop() {
    tokenizer_json("mistral03", "hub/mistral03.json", metaspace);
}
