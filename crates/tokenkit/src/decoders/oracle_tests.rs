//! Checks every decoder against HF tokenizers 0.23.3 on real token lists.
//!
//! `testdata/decoders_oracle.json` is written by `testdata/gen_oracle.py`: token lists from
//! encoding corpus lines (and random slices of them, cutting characters in the middle) with the
//! gpt2, bert_base_cased, llama2, mistral03 and xlnet_base_cased fixtures, each decoded by HF
//! 0.23.3 with the fixture's decoder and other applicable decoders. `null` marks a case on
//! which HF panics (Strip with more chars than the token has); there we only require no panic.

use serde_json::Value;

use super::DecoderWrapper;
use crate::base::Decoder;

const ORACLE: &str = include_str!("testdata/decoders_oracle.json");

#[test]
fn decoders_match_hf_on_fixture_tokens() {
    let oracle: Value = serde_json::from_str(ORACLE).unwrap();
    let decoders: Vec<DecoderWrapper> = oracle["decoders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let parsed: DecoderWrapper = serde_json::from_value(d.clone()).unwrap();
            assert_eq!(&serde_json::to_value(&parsed).unwrap(), d, "round trip");
            parsed
        })
        .collect();
    let lists: Vec<Vec<String>> = serde_json::from_value(oracle["token_lists"].clone()).unwrap();
    let cases = oracle["cases"].as_array().unwrap();
    let (mut checked, mut failures) = (0, Vec::new());
    for case in cases {
        let d = &decoders[case[0].as_u64().unwrap() as usize];
        let tokens = lists[case[1].as_u64().unwrap() as usize].clone();
        let got = d.decode(tokens.clone());
        let Some(expected) = case[2].as_str() else { continue };
        checked += 1;
        if got.as_deref().ok() != Some(expected) {
            failures.push(format!("decoder {} tokens {tokens:?}\n  expected {expected:?}\n  got      {got:?}", case[0]));
        }
    }
    assert!(checked > 2000);
    assert!(failures.is_empty(), "{}/{checked} cases differ from HF:\n{}", failures.len(), failures[..failures.len().min(5)].join("\n"));
}

#[test]
fn fixture_decoders_round_trip() {
    // HF 0.23.3 writes each fixture's decoder back as follows (tok.to_str()).
    let cases = [
        (
            r#"{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true}"#,
            r#"{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true}"#,
        ),
        (r###"{"type":"WordPiece","prefix":"##","cleanup":true}"###, r###"{"type":"WordPiece","prefix":"##","cleanup":true}"###),
        (
            r#"{"type":"Sequence","decoders":[{"type":"Replace","pattern":{"String":"▁"},"content":" "},{"type":"ByteFallback"},{"type":"Fuse"},{"type":"Strip","content":" ","start":1,"stop":0}]}"#,
            r#"{"type":"Sequence","decoders":[{"type":"Replace","pattern":{"String":"▁"},"content":" "},{"type":"ByteFallback"},{"type":"Fuse"},{"type":"Strip","content":" ","start":1,"stop":0}]}"#,
        ),
    ];
    for (input, output) in cases {
        let d: DecoderWrapper = serde_json::from_str(input).unwrap();
        assert_eq!(serde_json::to_string(&d).unwrap(), output);
    }
    let e = serde_json::from_str::<DecoderWrapper>(r#"{"type":"Nope"}"#).unwrap_err().to_string();
    assert!(e.contains("Nope"), "{e}");
}
