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
            // Text corpora (../shared's, a registry's Botchan, the UDHR and its per-script
            // texts), not tokenizers.
            r if r == "corpora" || r.starts_with("corpora/") || r.starts_with("registry/corpora/") || r.starts_with("registry/udhr/") => {
                continue
            }
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
            r if r.ends_with(".model") => &[|p| crate::load(p), |p| crate::load_for_save(p)],
            _ => &[|p| crate::load(p)],
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

/// Random pipelines: tokenizers built at random from every kind of component around the
/// models of the registry's fixtures, half of them in (random variants of) the shapes the
/// direct paths take, so that each direct plan is chosen for many of them.
mod random_pipelines {
    use super::*;
    use crate::base::Model;
    use crate::decoders::DecoderWrapper;
    use crate::normalizers::NormalizerWrapper;
    use crate::pre_tokenizers::PreTokenizerWrapper;
    use crate::processors::PostProcessorWrapper;
    use crate::tokenizer::AddedToken;

    /// A random element of `items`.
    fn pick<'a, T>(rng: &mut StdRng, items: &'a [T]) -> &'a T {
        &items[rng.gen_range(0..items.len())]
    }

    /// ASCII literals, regexes and replacements for `Replace` and `Split`.
    const LITERALS: &[&str] = &[" ", "a", "``", "''", "\t", "ab", "1", "\n", "."];
    const REGEXES: &[&str] = &[" {2,}", " +", "\\s+", "\\p{N}", "[aeiou]+", "\\p{L}+|\\p{N}+", "(?i)the", "\\s*\\n\\s*"];
    const CONTENTS: &[&str] = &["", " ", "▁", "X", "\"", "yy"];

    /// One normalizer whose every rule the SentencePiece chain runs itself.
    fn chain_step(rng: &mut StdRng) -> Value {
        match rng.gen_range(0..5) {
            0 => json!({"type": "Replace", "pattern": {"String": pick(rng, &LITERALS[1..])}, "content": pick(rng, CONTENTS)}),
            1 => json!({"type": "NFD"}),
            2 => json!({"type": "NFKD"}),
            3 => json!({"type": "StripAccents"}),
            _ => json!({"type": "Lowercase"}),
        }
    }

    /// Any normalizer (a sequence of a few at most one level deep).
    fn normalizer(rng: &mut StdRng, depth: u32) -> Value {
        match rng.gen_range(0..if depth == 0 { 15 } else { 14 }) {
            0 => json!({"type": "NFC"}),
            1 => json!({"type": "NFD"}),
            2 => json!({"type": "NFKC"}),
            3 => json!({"type": "NFKD"}),
            4 => json!({"type": "Lowercase"}),
            5 => json!({"type": "StripAccents"}),
            6 => json!({"type": "Strip", "strip_left": rng.gen_bool(0.5), "strip_right": rng.gen_bool(0.5)}),
            7 => json!({"type": "Replace", "pattern": {"String": pick(rng, LITERALS)}, "content": pick(rng, CONTENTS)}),
            8 => json!({"type": "Replace", "pattern": {"Regex": pick(rng, REGEXES)}, "content": pick(rng, CONTENTS)}),
            9 => json!({"type": "Prepend", "prepend": pick(rng, &["▁", "_", " "])}),
            10 => json!({"type": "BertNormalizer", "clean_text": rng.gen_bool(0.5), "handle_chinese_chars": rng.gen_bool(0.5),
                "strip_accents": pick(rng, &[Value::Null, json!(true), json!(false)]), "lowercase": rng.gen_bool(0.5)}),
            11 => json!({"type": "Nmt"}),
            12 => json!({"type": "ByteLevel"}),
            13 => chain_step(rng),
            _ => {
                let n = rng.gen_range(0..4);
                json!({"type": "Sequence", "normalizers": (0..n).map(|_| normalizer(rng, depth + 1)).collect::<Vec<_>>()})
            }
        }
    }

    fn metaspace(rng: &mut StdRng) -> Value {
        json!({"type": "Metaspace", "replacement": pick(rng, &["▁", "▁", "_"]),
            "prepend_scheme": pick(rng, &["always", "first", "never"]), "split": rng.gen_bool(0.5)})
    }

    const BEHAVIORS: &[&str] = &["Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"];

    fn behavior(rng: &mut StdRng) -> &'static str {
        BEHAVIORS[rng.gen_range(0..BEHAVIORS.len())]
    }

    fn split(rng: &mut StdRng) -> Value {
        let pattern = if rng.gen_bool(0.5) { json!({"String": pick(rng, LITERALS)}) } else { json!({"Regex": pick(rng, REGEXES)}) };
        json!({"type": "Split", "pattern": pattern, "behavior": behavior(rng), "invert": rng.gen_bool(0.2)})
    }

    fn byte_level(rng: &mut StdRng) -> Value {
        json!({"type": "ByteLevel", "add_prefix_space": rng.gen_bool(0.5), "trim_offsets": rng.gen_bool(0.5), "use_regex": rng.gen_bool(0.5)})
    }

    /// Any pre-tokenizer (a sequence of a few at most one level deep).
    fn pre_tokenizer(rng: &mut StdRng, depth: u32) -> Value {
        match rng.gen_range(0..if depth == 0 { 12 } else { 11 }) {
            0 => byte_level(rng),
            1 => metaspace(rng),
            2 => json!({"type": "Whitespace"}),
            3 => json!({"type": "WhitespaceSplit"}),
            4 => json!({"type": "BertPreTokenizer"}),
            5 => json!({"type": "Punctuation", "behavior": behavior(rng)}),
            6 => json!({"type": "Digits", "individual_digits": rng.gen_bool(0.5)}),
            7 => split(rng),
            8 => json!({"type": "CharDelimiterSplit", "delimiter": pick(rng, &[" ", "a", "、"])}),
            9 => json!({"type": "UnicodeScripts"}),
            10 => json!({"type": "FixedLength", "length": rng.gen_range(1..6)}),
            _ => {
                let n = rng.gen_range(1..4);
                json!({"type": "Sequence", "pretokenizers": (0..n).map(|_| pre_tokenizer(rng, depth + 1)).collect::<Vec<_>>()})
            }
        }
    }

    fn post_processor(rng: &mut StdRng) -> Value {
        match rng.gen_range(0..6) {
            0 => Value::Null,
            1 => json!({"type": "ByteLevel", "add_prefix_space": rng.gen_bool(0.5), "trim_offsets": rng.gen_bool(0.5), "use_regex": true}),
            2 => json!({"type": "BertProcessing", "sep": ["[SEP]", 2], "cls": ["[CLS]", 1]}),
            3 => json!({"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 1], "trim_offsets": rng.gen_bool(0.5),
                "add_prefix_space": rng.gen_bool(0.5)}),
            4 => json!({"type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "<s>", "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
                "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}}),
            _ => json!({"type": "Sequence", "processors": [
                {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
                {"type": "BertProcessing", "sep": ["[SEP]", 2], "cls": ["[CLS]", 1]}]}),
        }
    }

    fn decoder(rng: &mut StdRng) -> Value {
        match rng.gen_range(0..8) {
            0 => Value::Null,
            1 => json!({"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true}),
            2 => json!({"type": "WordPiece", "prefix": "##", "cleanup": rng.gen_bool(0.5)}),
            3 => metaspace(rng),
            4 => json!({"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
                {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}),
            5 => json!({"type": "BPEDecoder", "suffix": "</w>"}),
            6 => json!({"type": "CTC", "pad_token": "<pad>", "word_delimiter_token": "|", "cleanup": true}),
            _ => json!({"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "}),
        }
    }

    /// Added tokens with random options.
    fn added_tokens(rng: &mut StdRng) -> Vec<AddedToken> {
        let contents = ["<s>", "[CLS]", "ab", "日本", " x", "<|endoftext|>", "▁", "the", "1"];
        (0..rng.gen_range(0..4))
            .map(|_| {
                AddedToken::from(*pick(rng, &contents), rng.gen_bool(0.5))
                    .single_word(rng.gen_bool(0.3))
                    .lstrip(rng.gen_bool(0.3))
                    .rstrip(rng.gen_bool(0.3))
                    .normalized(rng.gen_bool(0.5))
            })
            .collect()
    }

    /// The kinds of model the pipelines are built around.
    #[derive(Clone, Copy, PartialEq)]
    enum Kind {
        ByteLevelBpe,
        SentencePieceBpe,
        Unigram,
        WordPiece,
        WordLevel,
    }

    /// A normalizer and a pre-tokenizer in (a random variant of) the shape of the direct path
    /// for `kind`.
    fn direct_shape(rng: &mut StdRng, kind: Kind) -> (Value, Value) {
        match kind {
            Kind::ByteLevelBpe => {
                let n = if rng.gen_bool(0.3) { json!({"type": "NFC"}) } else { Value::Null };
                let pattern = pick(rng, &[crate::utils::regex::GPT2_PATTERN, "\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+|\\s+", " ?\\w+|\\s+"]);
                let p = if rng.gen_bool(0.3) {
                    json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": rng.gen_bool(0.5), "use_regex": true})
                } else {
                    json!({"type": "Sequence", "pretokenizers": [
                        {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": false},
                        {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]})
                };
                (n, p)
            }
            Kind::SentencePieceBpe | Kind::Unigram => match rng.gen_range(0..3) {
                0 => (
                    json!({"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"},
                        {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]}),
                    Value::Null,
                ),
                1 => (Value::Null, metaspace(rng)),
                _ => {
                    let steps: Vec<Value> = (0..rng.gen_range(0..4)).map(|_| chain_step(rng)).collect();
                    let p = if rng.gen_bool(0.5) {
                        metaspace(rng)
                    } else {
                        json!({"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, metaspace(rng)]})
                    };
                    (json!({"type": "Sequence", "normalizers": steps}), p)
                }
            },
            Kind::WordPiece | Kind::WordLevel => {
                let n = if rng.gen_bool(0.3) {
                    Value::Null
                } else {
                    json!({"type": "BertNormalizer", "clean_text": rng.gen_bool(0.5), "handle_chinese_chars": rng.gen_bool(0.5),
                        "strip_accents": pick(rng, &[Value::Null, json!(true), json!(false)]), "lowercase": rng.gen_bool(0.5)})
                };
                (n, json!({"type": "BertPreTokenizer"}))
            }
        }
    }

    /// The models: GPT-2's byte-level BPE, Mistral's SentencePiece BPE with byte fallback, a
    /// Unigram and a small BPE (sentencepiece's Botchan models converted), BERT's WordPiece
    /// and a WordLevel over BERT's vocabulary.
    fn models() -> Vec<(Kind, &'static str, Tokenizer)> {
        let get = |rel: &str| test_fixtures::get(rel).unwrap_or_else(|| panic!("registry fixture {rel} (on every machine)"));
        let bert = crate::load(get("registry/bert_uncased/tokenizer.json")).unwrap();
        let mut word_level = bert.clone();
        let vocab = bert.get_model().get_vocab();
        let wl: crate::models::ModelWrapper =
            serde_json::from_value(json!({"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"})).unwrap();
        word_level.with_model(wl);
        vec![
            (Kind::ByteLevelBpe, "gpt2", crate::load(get("registry/gpt2/vocab.json")).unwrap()),
            (Kind::SentencePieceBpe, "mistral01", crate::load(get("registry/mistral01/tokenizer.json")).unwrap()),
            (Kind::SentencePieceBpe, "botchan-bpe", crate::load_for_save(get("registry/sentencepiece/botchan_en_bpe_1000.model")).unwrap()),
            (Kind::Unigram, "botchan-unigram", crate::load_for_save(get("registry/sentencepiece/botchan_en_unigram_1000.model")).unwrap()),
            (Kind::WordPiece, "bert", bert),
            (Kind::WordLevel, "wordlevel", word_level),
        ]
    }

    /// Random texts from [`POOL`]: several scripts, marks, digits, whitespace runs and the
    /// contents of the added tokens.
    fn random_texts(rng: &mut StdRng, n: usize) -> Vec<String> {
        (0..n).map(|_| (0..rng.gen_range(0..14)).map(|_| *pick(rng, POOL)).collect()).collect()
    }

    /// The next random pipeline: the name of its model, its normalizer, pre-tokenizer,
    /// post-processor and decoder (`null` for none), and the tokenizer (with random added
    /// tokens).
    fn random_pipeline(rng: &mut StdRng, models: &[(Kind, &'static str, Tokenizer)]) -> (&'static str, [Value; 4], Tokenizer) {
        let (kind, model_name, base) = pick(rng, models);
        let (n, p) = if rng.gen_bool(0.5) {
            direct_shape(rng, *kind)
        } else {
            (if rng.gen_bool(0.2) { Value::Null } else { normalizer(rng, 0) }, pre_tokenizer(rng, 0))
        };
        let (pp, d) = (post_processor(rng), decoder(rng));
        let mut tok = base.clone();
        fn parse<T: serde::de::DeserializeOwned>(v: &Value) -> Option<T> {
            (!v.is_null()).then(|| serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{v}: {e}")))
        }
        tok.with_normalizer(parse::<NormalizerWrapper>(&n)).unwrap();
        tok.with_pre_tokenizer(parse::<PreTokenizerWrapper>(&p));
        tok.with_post_processor(parse::<PostProcessorWrapper>(&pp));
        tok.with_decoder(parse::<DecoderWrapper>(&d));
        let added = added_tokens(rng);
        let (special, plain): (Vec<_>, Vec<_>) = added.into_iter().partition(|t| t.special);
        tok.add_special_tokens(&special).unwrap();
        tok.add_tokens(&plain).unwrap();
        (model_name, [n, p, pp, d], tok)
    }

    /// Prints the random pipelines of the runner below that take the general path, one JSON
    /// object a line (`model`, `normalizer`, `pre_tokenizer`): where the shapes of
    /// `benches/python/bench_python.py --shapes` come from.
    /// `cargo test -p tokenkit --lib dump_general_pipelines -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn dump_general_pipelines() {
        let mut rng = StdRng::seed_from_u64(0x18_18);
        let models = models();
        for i in 0..360 {
            let (model_name, [n, p, _, _], tok) = random_pipeline(&mut rng, &models);
            random_texts(&mut rng, 12);
            if tok.plan_name() == "general" {
                println!("{}", json!({"index": i, "model": model_name, "normalizer": n, "pre_tokenizer": p}));
            }
        }
    }

    #[test]
    fn random_pipelines_give_what_the_general_path_gives() {
        const PIPELINES: usize = 360;
        let mut rng = StdRng::seed_from_u64(0x18_18);
        let models = models();
        let (mut compared, mut by_plan) = (0, std::collections::BTreeMap::<&str, usize>::new());
        for i in 0..PIPELINES {
            let (model_name, [n, p, pp, d], tok) = random_pipeline(&mut rng, &models);
            let parts = format!("normalizer {n}, pre_tokenizer {p}, post_processor {pp}, decoder {d}");
            *by_plan.entry(tok.plan_name()).or_default() += 1;
            let texts = random_texts(&mut rng, 12);
            compared += compare(&format!("random pipeline {i} over {model_name}: {parts}"), &tok, &texts);
        }
        let tally = crate::tokenizer::pipeline::tally::get();
        eprintln!(
            "random pipelines: {compared}/{compared} encodings identical over {PIPELINES} pipelines; plans chosen {by_plan:?}; \
             texts (taken, declined) by each direct path {tally:?}"
        );
        // Every direct plan is chosen for a fair share of the pipelines, and encodes most of
        // their texts itself (the comparison is not of the general path with itself).
        for plan in [EncodePlan::ByteLevel, EncodePlan::SentencePiece, EncodePlan::Bert, EncodePlan::General] {
            let n = by_plan.get(plan.name()).copied().unwrap_or(0);
            assert!(n >= PIPELINES / 20, "only {n} of {PIPELINES} random pipelines took the {} plan", plan.name());
        }
        for plan in [EncodePlan::ByteLevel, EncodePlan::SentencePiece, EncodePlan::Bert] {
            let (taken, declined) = tally.get(plan.name()).copied().unwrap_or_default();
            assert!(taken > 2 * declined, "the {} path took {taken} texts and declined {declined}", plan.name());
        }
    }
}
