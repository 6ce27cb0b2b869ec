//! Bad input gives a clear error naming the problem, never a panic.

use tokenkit::{Error, Tokenizer};

fn wordlevel_json() -> String {
    r#"{"version":"1.0","truncation":null,"padding":null,"added_tokens":[],
        "normalizer":null,"pre_tokenizer":{"type":"WhitespaceSplit"},"post_processor":null,"decoder":null,
        "model":{"type":"WordLevel","vocab":{"<unk>":0,"hello":1,"world":2},"unk_token":"<unk>"}}"#
        .to_owned()
}

fn err_of(json: &str) -> String {
    match Tokenizer::from_json(json) {
        Ok(_) => panic!("expected an error for {json:.80}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_valid_file_loads() {
    let tok = Tokenizer::from_json(&wordlevel_json()).unwrap();
    let enc = tok.encode("hello there world", false).unwrap();
    assert_eq!(enc.get_ids(), [1, 0, 2]);
}

#[test]
fn truncated_json_is_an_error_with_position() {
    let json = wordlevel_json();
    for cut in [0, 1, 10, json.len() / 2, json.len() - 1] {
        let msg = err_of(&json[..cut]);
        assert!(msg.contains("EOF") || msg.contains("line"), "{msg}");
    }
}

#[test]
fn invalid_json_is_an_error() {
    let msg = err_of("{\"model\": [1, 2,, 3]}");
    assert!(msg.contains("line 1"), "{msg}");
}

#[test]
fn unknown_component_type_is_named() {
    let json = wordlevel_json().replace("WhitespaceSplit", "FancySplitter");
    let msg = err_of(&json);
    assert!(msg.contains("FancySplitter"), "{msg}");
}

#[test]
fn unknown_model_type_is_named() {
    let json = wordlevel_json().replace("\"type\":\"WordLevel\"", "\"type\":\"WordSoup\"");
    let msg = err_of(&json);
    assert!(msg.contains("WordSoup"), "{msg}");
}

#[test]
fn merge_with_a_token_missing_from_the_vocab_is_named() {
    let json = r#"{"version":"1.0","added_tokens":[],"normalizer":null,"pre_tokenizer":null,
        "post_processor":null,"decoder":null,
        "model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":["a b","a zz"]}}"#;
    let msg = err_of(json);
    assert!(msg.contains("zz"), "{msg}");
}

#[test]
fn decode_id_out_of_range_is_an_error() {
    let tok = Tokenizer::from_json(&wordlevel_json()).unwrap();
    let err = tok.decode(&[1, 99], false).unwrap_err();
    assert!(matches!(err, Error::IdOutOfRange { id: 99, .. }), "{err}");
    assert!(err.to_string().contains("99"));
}

#[test]
fn missing_file_names_the_path() {
    let msg = Tokenizer::from_file("/nonexistent/tokenizer.json").unwrap_err().to_string();
    assert!(msg.contains("/nonexistent/tokenizer.json"), "{msg}");
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("tokenkit-bad-input-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn empty_vocab_txt_is_an_error() {
    let d = temp_dir("empty-vocab");
    let p = d.join("vocab.txt");
    std::fs::write(&p, "").unwrap();
    let msg = tokenkit::load(&p).unwrap_err().to_string();
    assert!(msg.contains("vocab.txt"), "{msg}");
}

#[test]
fn vocab_txt_without_cls_sep_is_named() {
    let d = temp_dir("no-cls");
    let p = d.join("vocab.txt");
    std::fs::write(&p, "[UNK]\nhello\n").unwrap();
    let msg = tokenkit::load(&p).unwrap_err().to_string();
    assert!(msg.contains("[CLS]"), "{msg}");
}

#[test]
fn malformed_merges_line_is_named() {
    let d = temp_dir("bad-merges");
    std::fs::write(d.join("vocab.json"), r#"{"a": 0, "b": 1, "ab": 2}"#).unwrap();
    std::fs::write(d.join("merges.txt"), "#version: 0.2\na b\nthree parts here\n").unwrap();
    let msg = tokenkit::load(d.join("vocab.json")).unwrap_err().to_string();
    assert!(msg.contains("merges.txt:3"), "{msg}");
}

#[test]
fn vocab_json_without_merges_is_an_error() {
    let d = temp_dir("no-merges");
    std::fs::write(d.join("vocab.json"), r#"{"a": 0}"#).unwrap();
    let msg = tokenkit::load(d.join("vocab.json")).unwrap_err().to_string();
    assert!(msg.contains("merges.txt"), "{msg}");
}

#[test]
fn truncated_vocab_json_is_an_error() {
    let d = temp_dir("trunc-vocab");
    std::fs::write(d.join("vocab.json"), r#"{"a": 0, "b"#).unwrap();
    std::fs::write(d.join("merges.txt"), "a b\n").unwrap();
    let msg = tokenkit::load(d.join("vocab.json")).unwrap_err().to_string();
    assert!(msg.contains("vocab.json"), "{msg}");
}

#[test]
fn merges_txt_with_a_blank_line_is_an_error_as_in_hf() {
    let d = temp_dir("blank-merge");
    std::fs::write(d.join("vocab.json"), r#"{"a": 0, "b": 1, "ab": 2}"#).unwrap();
    std::fs::write(d.join("merges.txt"), "#version: 0.2\na b\n\n").unwrap();
    let msg = tokenkit::load(d.join("vocab.json")).unwrap_err().to_string();
    assert!(msg.contains("merges.txt:3") && msg.contains("\"\""), "{msg}");
}

#[test]
fn vocab_json_is_read_as_hf_reads_it() {
    let d = temp_dir("vocab-json-values");
    // A value that is not a number is skipped (as HF does); <|endoftext|> is added when missing.
    std::fs::write(d.join("vocab.json"), r#"{"a": 0, "b": 1, "ab": 2, "note": "x"}"#).unwrap();
    std::fs::write(d.join("merges.txt"), "a b\n").unwrap();
    let tok = tokenkit::load(d.join("vocab.json")).unwrap();
    assert_eq!(tok.token_to_id("note"), None);
    assert_eq!(tok.token_to_id("<|endoftext|>"), Some(3));
    assert_eq!(tok.encode("ab<|endoftext|>", false).unwrap().get_ids(), [2, 3]);
    // An id past u32 is an error (HF wraps it onto another id: a known deviation).
    std::fs::write(d.join("vocab.json"), r#"{"a": 0, "b": 4294967296}"#).unwrap();
    let msg = tokenkit::load(d.join("vocab.json")).unwrap_err().to_string();
    assert!(msg.contains("\"b\"") && msg.contains("4294967296"), "{msg}");
}

#[test]
fn tokenizer_json_top_level_is_checked_as_in_hf() {
    let msg = err_of(&wordlevel_json().replacen('{', r#"{"pad_id": 3, "#, 1));
    assert!(msg.contains("unknown field `pad_id`"), "{msg}");
    let msg = err_of(&wordlevel_json().replace(r#""version":"1.0""#, r#""version":"2.0""#));
    assert!(msg.contains("unknown tokenizer version \"2.0\""), "{msg}");
    // No version at all is fine (HF reads such files too).
    assert!(Tokenizer::from_json(&wordlevel_json().replace(r#""version":"1.0","#, "")).is_ok());
}
