//! Normalizer tests. Expected values come from HF tokenizers 0.23.3 (the Python package):
//! `tests/data/normalizers_oracle.json` is written by `tests/data/gen_normalizers_oracle.py`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::*;
use crate::base::NormalizedString;

fn from_json(json: &str) -> NormalizerWrapper {
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{json}: {e}"))
}

fn normalize(n: &impl Normalizer, s: &str) -> NormalizedString {
    let mut ns = NormalizedString::from(s);
    n.normalize(&mut ns).unwrap();
    ns
}

/// The original byte offsets of every normalized char, flattened, as HF reports them.
fn char_offsets(ns: &NormalizedString) -> Vec<usize> {
    let a = ns.alignments();
    let mut out = Vec::with_capacity(2 * ns.len());
    for (b, c) in ns.get().char_indices() {
        out.push(a[b].0);
        out.push(a[b + c.len_utf8() - 1].1);
    }
    out
}

fn identity_offsets(s: &str) -> Vec<usize> {
    s.char_indices().flat_map(|(b, c)| [b, b + c.len_utf8()]).collect()
}

/// Where the HF fixtures are: `$TOKENKIT_FIXTURES` (a directory with xlnet_base_cased.json), else
/// the repo's `.fixtures/hub` when the fixture step provided them (see `crate::test_fixtures`).
fn fixtures_dir() -> Option<PathBuf> {
    std::env::var_os("TOKENKIT_FIXTURES")
        .map(PathBuf::from)
        .filter(|d| d.join("xlnet_base_cased.json").exists())
        .or_else(|| crate::test_fixtures::get("hub/xlnet_base_cased.json").map(|p| p.parent().unwrap().to_owned()))
}

fn fixture_normalizer(dir: &Path, file: &str) -> Value {
    let text = std::fs::read_to_string(dir.join(file)).unwrap();
    let json: Value = serde_json::from_str(&text).unwrap();
    json["normalizer"].clone()
}

/// XLNet's charsmap (the same bytes as ALBERT's, which the registry always provides).
fn xlnet_precompiled() -> Option<NormalizerWrapper> {
    Some(NormalizerWrapper::from_value(crate::test_fixtures::nmt_nfkc_precompiled()).unwrap())
}

/// Replays an oracle file; returns (cases checked, configs skipped for a missing fixture).
fn check_oracle(text: &str) -> (usize, usize) {
    let data: Value = serde_json::from_str(text).unwrap();
    let inputs: Vec<&str> = data["inputs"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    let fixtures = fixtures_dir();
    let (mut checked, mut skipped) = (0, 0);
    let mut failures = Vec::new();
    for config in data["configs"].as_array().unwrap() {
        let name = config["name"].as_str().unwrap();
        let json = match (&config["normalizer"], &config["fixture"]) {
            (Value::Null, Value::String(file)) => {
                let Some(dir) = &fixtures else {
                    eprintln!("skipping {name}: fixture {file} not found (set TOKENKIT_FIXTURES)");
                    skipped += 1;
                    continue;
                };
                let n = fixture_normalizer(dir, file);
                match config["index"].as_u64() {
                    Some(i) => n["normalizers"][i as usize].clone(),
                    None => n,
                }
            }
            (js, _) => js.clone(),
        };
        let normalizer = NormalizerWrapper::from_value(json.clone()).unwrap();
        // Every config also round-trips through JSON unchanged.
        assert_eq!(serde_json::to_value(&normalizer).unwrap(), json, "{name}");
        for (input, expected) in inputs.iter().zip(data["expected"][name].as_array().unwrap()) {
            let ns = normalize(&normalizer, input);
            let got = (ns.get(), char_offsets(&ns));
            let want = match expected {
                Value::Null => (*input, identity_offsets(input)),
                e => (e[0].as_str().unwrap(), e[1].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect()),
            };
            if got != want {
                failures.push(format!("{name} on {input:?}:\n  got  {got:?}\n  want {want:?}"));
            }
            checked += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} cases differ from HF:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n")
    );
    (checked, skipped)
}

#[test]
fn oracle_file() {
    let (checked, skipped) = check_oracle(include_str!("../../tests/data/normalizers_oracle.json"));
    eprintln!("{checked} cases identical to HF ({skipped} fixture configs skipped)");
}

/// A bigger oracle file made with `gen_normalizers_oracle.py --out FILE --all-lines ...`:
/// `TOKENKIT_NORMALIZER_ORACLE=FILE cargo test -p tokenkit --lib oracle_env -- --ignored`.
#[test]
#[ignore]
fn oracle_env() {
    let path = std::env::var("TOKENKIT_NORMALIZER_ORACLE").expect("TOKENKIT_NORMALIZER_ORACLE");
    let (checked, skipped) = check_oracle(&std::fs::read_to_string(path).unwrap());
    eprintln!("{checked} cases identical to HF ({skipped} fixture configs skipped)");
}

#[test]
fn serialization_matches_hf() {
    // Strings written by HF 0.23.3 (`X.__getstate__()`), each must round-trip byte for byte.
    for json in [
        r#"{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":null,"lowercase":true}"#,
        r#"{"type":"BertNormalizer","clean_text":false,"handle_chinese_chars":true,"strip_accents":false,"lowercase":false}"#,
        r#"{"type":"NFC"}"#,
        r#"{"type":"NFD"}"#,
        r#"{"type":"NFKC"}"#,
        r#"{"type":"NFKD"}"#,
        r#"{"type":"Lowercase"}"#,
        r#"{"type":"Nmt"}"#,
        r#"{"type":"StripAccents"}"#,
        r#"{"type":"ByteLevel"}"#,
        r#"{"type":"Strip","strip_left":true,"strip_right":false}"#,
        r#"{"type":"Replace","pattern":{"String":"a"},"content":"b"}"#,
        r#"{"type":"Replace","pattern":{"Regex":"\\s+"},"content":" "}"#,
        r#"{"type":"Prepend","prepend":"▁"}"#,
        r#"{"type":"Sequence","normalizers":[{"type":"NFC"},{"type":"Lowercase"}]}"#,
        r#"{"type":"Sequence","normalizers":[]}"#,
    ] {
        let n = from_json(json);
        assert_eq!(serde_json::to_string(&n).unwrap(), json);
    }
}

#[test]
fn precompiled_round_trips_the_fixture() {
    let Some(dir) = fixtures_dir() else { return };
    let json = fixture_normalizer(&dir, "xlnet_base_cased.json");
    let n = NormalizerWrapper::from_value(json.clone()).unwrap();
    assert_eq!(serde_json::to_value(&n).unwrap(), json);
}

#[test]
fn precompiled_quirks_match_hf() {
    let Some(n) = xlnet_precompiled() else { return };
    // HF 0.23.3: a grapheme under 6 bytes takes the replacement of its shortest matching
    // prefix, even when that drops the rest of the grapheme.
    for (input, want) in [
        ("A\u{302}\u{300}", "Â"),
        ("A\u{302}\u{300}x", "Âx"),
        ("Ａ", "A"),
        ("ﬁ", "fi"),
        ("Ａ\u{301}", "A"),
        ("a\u{302}\u{300}\u{300}", "a\u{302}\u{300}\u{300}"),
        ("①", "1"),
        ("㍻", "平成"),
        ("ｶﾞ", "\u{30ab}\u{3099}"),
    ] {
        assert_eq!(normalize(&n, input).get(), want, "{input:?}");
    }
}

#[test]
fn legacy_forms_without_type() {
    // HF 0.23.3 reads these objects without "type" as the normalizer their fields name.
    assert!(matches!(from_json(r#"{"normalizers":[]}"#), NormalizerWrapper::Sequence(_)));
    assert!(matches!(from_json(r#"{"strip_left":false,"strip_right":true}"#), NormalizerWrapper::Strip(_)));
    assert!(matches!(from_json(r#"{"prepend":"_"}"#), NormalizerWrapper::Prepend(_)));
    assert!(matches!(from_json(r#"{"pattern":{"String":"a"},"content":"b"}"#), NormalizerWrapper::Replace(_)));
    assert!(matches!(
        from_json(r#"{"clean_text":true,"handle_chinese_chars":true,"strip_accents":null,"lowercase":true}"#),
        NormalizerWrapper::BertNormalizer(_)
    ));
    assert_eq!(
        serde_json::to_string(&from_json(r#"{"type":"Bert","clean_text":true,"handle_chinese_chars":false,"lowercase":true}"#)).unwrap(),
        r#"{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":false,"strip_accents":null,"lowercase":true}"#
    );
    // Extra fields are ignored, as HF does.
    assert_eq!(serde_json::to_string(&from_json(r#"{"type":"NFC","x":1}"#)).unwrap(), r#"{"type":"NFC"}"#);
}

#[test]
fn invalid_json_is_a_clear_error() {
    let err = |json: &str| serde_json::from_str::<NormalizerWrapper>(json).unwrap_err().to_string();
    assert!(err("{}").contains("matches no known normalizer"), "{}", err("{}"));
    assert!(err(r#"{"type":"Nope"}"#).contains("unknown normalizer type \"Nope\""));
    assert!(err(r#"{"type":"Strip","strip_left":true}"#).contains("missing field `strip_right`"));
    assert!(err(r#"{"type":"BertNormalizer"}"#).contains("missing field `clean_text`"));
    assert!(err(r#"{"type":"Sequence"}"#).contains("missing field `normalizers`"));
    assert!(err(r#"{"type":"Prepend"}"#).contains("missing field `prepend`"));
    assert!(err(r#"{"type":"Replace","pattern":{"Regex":"("},"content":""}"#).contains("invalid regex"));
    assert!(err(r#"{"type":"Replace","pattern":"a","content":""}"#).contains("Replace"));
    assert!(err(r#"{"type":"Sequence","normalizers":[{"type":"NFC"},{}]}"#).contains("matches no known normalizer"));
    assert!(err("[1]").contains("must be a JSON object"));
}

#[test]
fn corrupt_charsmap_is_an_error_at_load() {
    let err = |charsmap: &str| {
        let json = format!(r#"{{"type":"Precompiled","precompiled_charsmap":{charsmap}}}"#);
        serde_json::from_str::<NormalizerWrapper>(&json).unwrap_err().to_string()
    };
    assert!(err("null").contains("invalid type: null"));
    assert!(err(r#""!!""#).contains("not valid base64"));
    assert!(err(r#""""#).contains("too short"));
    assert!(err(r#""AAAA""#).contains("too short"));
    // Size 8, nothing after.
    assert!(err(r#""CAAAAA==""#).contains("announced as 8 bytes but only 0"));
    // Size 0.
    assert!(err(r#""AAAAAA==""#).contains("trie is empty"));
    // One unit, then an invalid UTF-8 byte.
    assert!(err(r#""BAAAAAAAAAD/""#).contains("not valid UTF-8"));
    assert!(serde_json::from_str::<NormalizerWrapper>(r#"{"type":"Precompiled"}"#)
        .unwrap_err()
        .to_string()
        .contains("missing field `precompiled_charsmap`"));
}

#[test]
fn malformed_trie_never_panics() {
    // A one-unit trie pointing anywhere, and random units: lookups just find nothing.
    let mut blob = vec![];
    for units in [vec![0xFFFF_FFFFu32], vec![0x0000_0400, 0x1FF, 7, 0xFFFF_FFFF], (0..64u32).map(|i| i.wrapping_mul(0x9E37_79B9)).collect()]
    {
        blob.clear();
        blob.extend(((units.len() * 4) as u32).to_le_bytes());
        for u in &units {
            blob.extend(u.to_le_bytes());
        }
        blob.extend(b"ab\0c");
        let p = Precompiled::from_bytes(blob.clone()).unwrap();
        for s in ["", "abc", "é", "日本語", "\0x", "👍🏽"] {
            normalize(&p, s);
        }
    }
}

#[test]
fn from_impls_build_the_variants() {
    let seq = Sequence::new(vec![
        NFC.into(),
        NFD.into(),
        NFKC.into(),
        NFKD.into(),
        Lowercase.into(),
        Nmt.into(),
        StripAccents.into(),
        ByteLevel.into(),
        Strip::new(true, true).into(),
        Prepend::new("▁").into(),
        Replace::new("a", "b").unwrap().into(),
        BertNormalizer::default().into(),
    ]);
    let json = serde_json::to_string(&NormalizerWrapper::from(seq.clone())).unwrap();
    assert_eq!(from_json(&json), NormalizerWrapper::Sequence(seq));
}

#[test]
fn small_cases_from_hf() {
    // HF 0.23.3 outputs (normalize_str).
    let bert = BertNormalizer::default();
    assert_eq!(normalize(&bert, "Héllo\tWORLD 我们\u{0}").get(), "hello world  我  们 ");
    assert_eq!(normalize(&Replace::new("", "x").unwrap(), "abc").get(), "xaxbxcx");
    assert_eq!(normalize(&Replace::new(ReplacePattern::Regex("a*".into()), "x").unwrap(), "abc").get(), "xbxcx");
    assert_eq!(normalize(&Replace::new(".", "!").unwrap(), "a.a").get(), "a!a");
    assert_eq!(normalize(&ByteLevel, "abc  Déjà").get(), "abcĠĠDÃ©jÃł");
    assert_eq!(normalize(&Prepend::new("▁"), "").get(), "");
    let ns = normalize(&Prepend::new("▁"), "Hello");
    assert_eq!(ns.get(), "▁Hello");
    assert_eq!(ns.alignments()[..4], [(0, 1); 4]);
}

#[test]
fn fixtures_load_and_save_their_normalizer() {
    // The Hub files where present (../shared) and the registry's, which are always there.
    let mut checked = 0;
    for file in [
        "hub/bert_base_cased.json",
        "hub/llama2.json",
        "hub/xlnet_base_cased.json",
        "hub/gpt2.json",
        "hub/mistral03.json",
        "registry/bert_uncased/tokenizer.json",
        "registry/mistral01/tokenizer.json",
        "registry/llama3/tokenizer.json",
        "registry/qwen3/tokenizer.json",
    ] {
        let Some(path) = crate::test_fixtures::get(file) else { continue };
        let (dir, file) = (path.parent().unwrap(), path.file_name().unwrap().to_str().unwrap());
        checked += 1;
        let tokenizer = match crate::Tokenizer::from_file(dir.join(file)) {
            Ok(t) => t,
            // Models belong to other components; only the normalizer is checked here.
            Err(e) => {
                eprintln!("{file}: tokenizer not loadable yet ({e}), checking the normalizer alone");
                let json = fixture_normalizer(dir, file);
                if !json.is_null() {
                    let n = NormalizerWrapper::from_value(json.clone()).unwrap();
                    assert_eq!(serde_json::to_value(&n).unwrap(), json, "{file}");
                }
                continue;
            }
        };
        let json = fixture_normalizer(dir, file);
        let saved = tokenizer.get_normalizer().map(|n| serde_json::to_value(n).unwrap()).unwrap_or(Value::Null);
        assert_eq!(saved, json, "{file}");
    }
    assert!(checked >= 4, "{checked}");
}
