//! The fast lexers give exactly Oniguruma's matches on every corpus (whole files): the fixture
//! step's corpora (../shared/corpora, or the built-in sample without it), or `$TOKENKIT_CORPORA`.

mod common;

use std::path::PathBuf;

use tokenkit::utils::lexers::{Cl100kLexer, DigitRun, Gpt2Lexer};
use tokenkit::utils::regex::SysRegex;

const GPT2: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";
const LLAMA3: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const CL100K_ONIG: &str =
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

fn corpora() -> Vec<PathBuf> {
    let dir = std::env::var_os("TOKENKIT_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| common::fixture("corpora").expect("the fixture step always provides corpora"));
    common::files_under(&dir)
}

fn compare(name: &str, pattern: &str, lex: impl Fn(&str) -> Vec<(usize, usize)>) {
    let re = SysRegex::onig_only(pattern).unwrap();
    let files = corpora();
    assert!(!files.is_empty(), "{name}: no corpus files");
    let mut total = 0usize;
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let ours = lex(&text);
        let theirs: Vec<_> = re.find_iter(&text).collect();
        if ours != theirs {
            let i = ours.iter().zip(&theirs).position(|(a, b)| a != b).unwrap_or(ours.len().min(theirs.len()));
            let at = theirs.get(i).or(ours.get(i)).map_or(0, |m| m.0);
            let lo = text.floor_char_boundary(at.saturating_sub(20));
            let hi = text.floor_char_boundary((at + 40).min(text.len()));
            panic!(
                "{name}: {} differs at match {i}: ours {:?} onig {:?} near {:?}",
                f.display(),
                ours.get(i),
                theirs.get(i),
                &text[lo..hi]
            );
        }
        total += ours.len();
    }
    eprintln!("{name}: {total} matches identical to Oniguruma over the corpora");
}

#[test]
fn gpt2_lexer_equals_oniguruma_on_corpora() {
    compare("gpt2", GPT2, |t| Gpt2Lexer::new(t).collect());
}

#[test]
fn llama3_lexer_equals_oniguruma_on_corpora() {
    compare("llama3", LLAMA3, |t| Cl100kLexer::new(t, DigitRun::UpToThree).collect());
}

#[test]
fn cl100k_onig_reading_equals_oniguruma_on_corpora() {
    compare("cl100k (onig reading)", CL100K_ONIG, |t| Cl100kLexer::new(t, DigitRun::Unbounded).collect());
}

#[test]
fn known_patterns_use_a_fast_lexer() {
    for p in [GPT2, LLAMA3, CL100K_ONIG] {
        assert!(SysRegex::new(p).unwrap().is_fast(), "{p}");
        assert!(!SysRegex::onig_only(p).unwrap().is_fast(), "{p}");
    }
}

fn registry_json(name: &str) -> Option<serde_json::Value> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../.fixtures/registry/{name}/tokenizer.json"));
    let Ok(s) = std::fs::read_to_string(&p) else {
        eprintln!("{}: not present, skipped (run scripts/fetch_fixtures.py)", p.display());
        return None;
    };
    Some(serde_json::from_str(&s).unwrap())
}

const MIXED: &str = "Hi 12345 日本語のテキストabc\u{200D}, x  \n\tdon'T €5 😀";

#[test]
fn qwen3_and_deepseek_v3_encode_like_hf() {
    // HF 0.23.3: Tokenizer.from_file(...).encode(MIXED, add_special_tokens=False).ids
    let cases: [(&str, &[u32]); 2] = [
        (
            "deepseek_v3",
            &[
                23166, 223, 6895, 1883, 223, 88768, 1576, 17383, 20367, 24552, 32372, 46088, 14, 1527, 2143, 200, 20385, 67322, 21820, 23,
                53769, 225,
            ],
        ),
        (
            "qwen3",
            &[
                13048, 220, 16, 17, 18, 19, 20, 75402, 21894, 102819, 15767, 56833, 61803, 70534, 13683, 378, 235, 11, 856, 2303, 2698,
                263, 17323, 12984, 20, 90316,
            ],
        ),
    ];
    for (name, want) in cases {
        let Some(json) = registry_json(name) else { continue };
        let tok = tokenkit::Tokenizer::from_json(&json.to_string()).unwrap();
        assert_eq!(tok.encode(MIXED, false).unwrap().get_ids(), want, "{name}");
    }
}

#[test]
fn a_split_that_leaves_gaps_keeps_them_on_the_byte_level_path() {
    // DeepSeek-V3's vocabulary with only its digit split before ByteLevel: the text between
    // the digit groups is pieces too. HF 0.23.3 on "abc 12345 def": ids [32372, 223, 6895,
    // 1883, 1351], offsets (0,3) (3,4) (4,7) (7,9) (9,13).
    let Some(mut json) = registry_json("deepseek_v3") else { return };
    let digits = json["pre_tokenizer"]["pretokenizers"][0].clone();
    json["normalizer"] = serde_json::Value::Null;
    json["pre_tokenizer"] = serde_json::json!({"type": "Sequence", "pretokenizers": [
        digits, {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}
    ]});
    let tok = tokenkit::Tokenizer::from_json(&json.to_string()).unwrap();
    let enc = tok.encode("abc 12345 def", false).unwrap();
    assert_eq!(enc.get_ids(), [32372, 223, 6895, 1883, 1351]);
    assert_eq!(enc.get_offsets(), [(0, 3), (3, 4), (4, 7), (7, 9), (9, 13)]);
}
