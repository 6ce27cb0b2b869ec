//! The equivalence runner of the encode plans: every fixture tokenizer (and variants of its
//! Metaspace and BERT options) encodes fixed, random and corpus texts under the plan chosen
//! for it and under the forced general path, and every encoding must be identical: ids,
//! tokens, offsets (bytes and chars), word and type ids, masks, sequence ranges and the
//! overflowing parts of a truncated encoding, for single texts, pairs and pre-tokenized input.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

use crate::test_fixtures;
use crate::tokenizer::{EncodeInput, EncodePlan, Tokenizer, TruncationParams};

/// Texts that exercise each direct path's corners.
const TEXTS: &[&str] = &[
    "",
    " ",
    "Hello world",
    "  two  spaces ",
    "<s>Hi</s> there<s>",
    " <s> x",
    "▁literal▁ marks ▁",
    "日本語のテキスト、です。 emoji 😀🎉 and ążę",
    "\n\ttabs\n\nnewlines ",
    "code: fn main() { let x = 42; }",
    "[INST] hi [/INST]",
    "``quoted'' text ```x''' <cls> a<sep>b",
    "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。",
    "ｆｕｌｌ　ｗｉｄｔｈ（１２３）　がぎぐ ｶﾞｷﾞ",
    "e\u{301}te\u{301} cafe\u{301}\u{300} na\u{ef}ve ﬁ ½ ™",
    "\u{301}starts with a mark",
    "👨\u{200D}👩\u{200D}👧 🇯🇵 한국어 क्षि\r\n\u{a0}x\u{200b}y",
    "Hello, world! [CLS] a [SEP] <|endoftext|> <unk>",
    "12345678901234 3.14159 x=1e-10",
];

/// Pieces random texts are made of: cleaning, ideographs, accents, case, combining marks,
/// punctuation, spaces of every kind, and tokens that are often added or special.
const POOL: &[&str] = &[
    "a",
    "Z",
    "Hello",
    "world",
    "unaffable",
    "The",
    "ÉCOLE",
    "café",
    " ",
    "  ",
    "\t",
    "\n",
    "\r\n",
    "\x0b",
    "\x0c",
    "\0",
    "\x7f",
    "\u{85}",
    "\u{a0}",
    "\u{3000}",
    "\u{fffd}",
    "\u{200b}",
    "\u{ad}",
    "İ",
    "ß",
    "ǅ",
    "Σ",
    "日本語",
    "\u{f900}",
    "\u{2f800}",
    "한국",
    "カタカナ",
    "ひらがな",
    "\u{301}",
    "\u{316}",
    "\u{345}",
    "\u{1d165}",
    "ﬁ",
    "①",
    "、",
    "。",
    "!",
    "?!",
    ",",
    "$",
    "\u{e000}",
    "😀",
    "[CLS]",
    "[SEP]",
    "##",
    "ab\u{200b}cd",
    "x\u{301}\u{316}",
    "１２３",
    "Ａ",
    "𠀀",
    "▁",
    "▁▁",
    "<s>",
    "</s>",
    "<unk>",
    "<|endoftext|>",
    "'s",
    "'LL",
    "123",
    "4567",
    "```",
    "''",
    "``",
    "\u{0F73}",
    "가\u{11A8}",
];

/// The texts: [`TEXTS`], random ones from [`POOL`], and the first lines of each corpus.
fn texts() -> Vec<String> {
    let mut texts: Vec<String> = TEXTS.iter().map(|s| s.to_string()).collect();
    texts.push("long".repeat(30));
    texts.push("x".repeat(101));
    let mut rng = StdRng::seed_from_u64(18);
    for _ in 0..50 {
        let n = rng.gen_range(0..12);
        texts.push((0..n).map(|_| POOL[rng.gen_range(0..POOL.len())]).collect());
    }
    let mut files: Vec<_> = walk(&test_fixtures::corpora());
    files.sort();
    assert!(!files.is_empty(), "no corpus files");
    for f in files {
        let text = std::fs::read(&f).unwrap();
        let text = String::from_utf8_lossy(&text[..text.len().min(20_000)]).into_owned();
        texts.extend(text.lines().filter(|l| !l.trim().is_empty()).take(4).map(str::to_owned));
    }
    texts
}

/// The files under `dir`, recursively.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Applies `f` to every object of `v` whose `"type"` is `ty`.
fn edit_components(v: &mut Value, ty: &str, f: &mut dyn FnMut(&mut serde_json::Map<String, Value>)) {
    match v {
        Value::Object(o) => {
            if o.get("type").and_then(Value::as_str) == Some(ty) {
                f(o);
            }
            for x in o.values_mut() {
                edit_components(x, ty, f);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| edit_components(x, ty, f)),
        _ => {}
    }
}

/// The tokenizer and variants of its options the plans handle on their own: every prepend
/// scheme and split of a Metaspace, every BertNormalizer option (and none) with WordPiece
/// word limits, and a truncation that makes overflowing parts.
fn variants(name: &str, tok: Tokenizer) -> Vec<(String, Tokenizer)> {
    let json: Value = serde_json::from_str(&tok.to_json(false).unwrap()).unwrap();
    let mut out = Vec::new();
    let text = json.to_string();
    if text.contains("\"Metaspace\"") {
        for scheme in ["always", "first", "never"] {
            for split in [true, false] {
                let mut v = json.clone();
                edit_components(&mut v, "Metaspace", &mut |o| {
                    o.insert("prepend_scheme".into(), json!(scheme));
                    o.insert("split".into(), json!(split));
                });
                out.push((format!("{name} Metaspace({scheme}, split {split})"), v));
            }
        }
    }
    if json["pre_tokenizer"]["type"] == "BertPreTokenizer" && json["model"]["type"] == "WordPiece" {
        let mut normalizers = vec![Value::Null];
        for clean in [false, true] {
            for chinese in [false, true] {
                for strip in [Value::Null, json!(false), json!(true)] {
                    for lower in [false, true] {
                        normalizers.push(json!({"type": "BertNormalizer", "clean_text": clean, "handle_chinese_chars": chinese,
                            "strip_accents": strip, "lowercase": lower}));
                    }
                }
            }
        }
        for (i, n) in normalizers.into_iter().enumerate() {
            let mut v = json.clone();
            v["normalizer"] = n.clone();
            let max = [100, 0, 3][i % 3];
            v["model"]["max_input_chars_per_word"] = json!(max);
            out.push((format!("{name} normalizer {n} max chars {max}"), v));
        }
    }
    let mut variants = vec![(name.to_owned(), tok.clone())];
    for (n, v) in out {
        variants.push((n, serde_json::from_value(v).unwrap()));
    }
    let mut truncated = tok;
    truncated.with_truncation(Some(TruncationParams { max_length: 24, stride: 3, ..Default::default() })).unwrap();
    variants.push((format!("{name} truncated"), truncated));
    variants
}

/// Compares the chosen plan with the general path on every input made of `texts`; returns
/// how many encodings were compared.
fn compare(name: &str, tok: &Tokenizer, texts: &[String]) -> usize {
    let mut general = tok.clone();
    general.force_general_path(true);
    assert_eq!(general.encode_plan(), EncodePlan::General);
    let mut n = 0;
    let mut check = |input: EncodeInput, add_special: bool| {
        for char_offsets in [false, true] {
            let (a, b) = if char_offsets {
                (tok.encode_char_offsets(input.clone(), add_special), general.encode_char_offsets(input.clone(), add_special))
            } else {
                (tok.encode(input.clone(), add_special), general.encode(input.clone(), add_special))
            };
            match (a, b) {
                (Ok(a), Ok(b)) => assert!(a == b, "{name} ({}): {input:?}\nplan:    {a:?}\ngeneral: {b:?}", tok.plan_name()),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{name}: {input:?}"),
                (a, b) => panic!("{name} ({}): {input:?}\nplan:    {a:?}\ngeneral: {b:?}", tok.plan_name()),
            }
            n += 1;
        }
    };
    for (i, t) in texts.iter().enumerate() {
        check(t.as_str().into(), true);
        check(t.as_str().into(), false);
        let next = &texts[(i + 1) % texts.len()];
        check((t.as_str(), next.as_str()).into(), true);
        let words: Vec<&str> = t.split(' ').collect();
        check(words.into(), true);
    }
    n
}

#[test]
fn every_plan_gives_what_the_general_path_gives() {
    let texts = texts();
    let some_texts: Vec<String> = texts.iter().step_by(8).cloned().collect();
    let (mut compared, mut skipped, mut tokenizers) = (0, Vec::new(), 0);
    let mut plans_seen = std::collections::BTreeSet::new();
    type Load = fn(&std::path::Path) -> crate::Result<Tokenizer>;
    for rel in test_fixtures::names() {
        let loaders: &[Load] = match rel {
            r if r.ends_with("tokenizer_config.json") || r.ends_with("merges.txt") => continue,
            // Text corpora (../shared's, or a registry's Botchan), not tokenizers.
            r if r == "corpora" || r.starts_with("corpora/") || r.starts_with("registry/corpora/") => continue,
            // llama.cpp's test vectors and Whisper's tokenizer source are data, not tokenizers;
            // nomic-bert-moe's GGUF is a T5 model, which tokenkit refuses by name.
            r if r.ends_with(".inp") || r.ends_with(".out") || r.ends_with(".py") || r.ends_with("nomic-bert-moe.gguf") => continue,
            // Llama-3's and Llama 4's tiktoken-format models need their encoding's name; the
            // `.tiktoken` files are named by their file names.
            r if r.ends_with("llama3/tokenizer.model") => {
                &[|p| Ok(crate::tiktoken::Encoding::from_file(p, Some("llama3"))?.tokenizer().clone())]
            }
            r if r.ends_with("llama4/tokenizer.model") => {
                &[|p| Ok(crate::tiktoken::Encoding::from_file(p, Some("llama4"))?.tokenizer().clone())]
            }
            r if r.ends_with(".tiktoken") => &[|p| Ok(crate::tiktoken::Encoding::from_file(p, None)?.tokenizer().clone())],
            // A .model as sentencepiece runs it, and converted to tokenizer.json as transformers does.
            r if r.ends_with(".model") => &[|p| crate::formats::load(p), |p| crate::formats::load_for_save(p)],
            _ => &[|p| crate::formats::load(p)],
        };
        let Some(path) = test_fixtures::get(rel) else {
            skipped.push(rel);
            continue;
        };
        for (k, load) in loaders.iter().enumerate() {
            let tok = load(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
            for (i, (name, tok)) in variants(&format!("{rel}#{k}"), tok).into_iter().enumerate() {
                plans_seen.insert(tok.plan_name());
                // The variants of a fixture on every eighth text.
                compared += compare(&name, &tok, if i == 0 { &texts } else { &some_texts });
                tokenizers += 1;
            }
        }
    }
    let tally = crate::tokenizer::pipeline::tally::get();
    eprintln!(
        "plan equivalence: {compared}/{compared} encodings identical over {tokenizers} tokenizers and {} texts; plans {plans_seen:?}; \
         texts (taken, declined) by each direct path {tally:?}; skipped (absent from .fixtures/MANIFEST.json): {skipped:?}",
        texts.len()
    );
    // The registry's fixtures are on every machine: each plan runs, and each direct path
    // encodes most texts itself rather than declining them.
    for plan in [EncodePlan::ByteLevel, EncodePlan::SentencePiece, EncodePlan::Bert, EncodePlan::General] {
        assert!(plans_seen.contains(plan.name()), "no fixture took the {} plan", plan.name());
    }
    for plan in [EncodePlan::ByteLevel, EncodePlan::SentencePiece, EncodePlan::Bert] {
        let (taken, declined) = tally.get(plan.name()).copied().unwrap_or_default();
        assert!(taken > 10 * declined, "the {} path took {taken} texts and declined {declined}", plan.name());
    }
    assert!(compared > 0 && tokenizers > 0);
}

#[test]
fn plan_follows_every_change_of_the_pipeline() {
    let json = test_fixtures::read("registry/bert_uncased/tokenizer.json").expect("a registry fixture");
    let mut tok = Tokenizer::from_json(&json).unwrap();
    assert_eq!(tok.plan_name(), "bert");
    tok.with_pre_tokenizer(Some(crate::pre_tokenizers::Whitespace.into()));
    assert_eq!(tok.plan_name(), "general");
    tok.with_pre_tokenizer(Some(crate::pre_tokenizers::BertPreTokenizer.into()));
    assert_eq!(tok.plan_name(), "bert");
    // A normalized added token the BERT path does not cut out on raw text.
    tok.add_tokens(&[crate::tokenizer::AddedToken::from("hello", false).normalized(true)]).unwrap();
    assert_eq!(tok.plan_name(), "general");
    tok.with_normalizer(None).unwrap();
    assert_eq!(tok.plan_name(), "bert");
    tok.force_general_path(true);
    assert_eq!(tok.plan_name(), "general");
    tok.force_general_path(false);
    assert_eq!(tok.plan_name(), "bert");
    let gpt2 = Tokenizer::from_json(&test_fixtures::read("registry/llama3/tokenizer.json").expect("a registry fixture")).unwrap();
    tok.with_model(gpt2.get_model().clone());
    assert_eq!(tok.plan_name(), "general");
}
