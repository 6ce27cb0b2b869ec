//! Conformance against HF tokenizers 0.23.3 on corpus lines. The dump is made by
//! `tests/data/pre_tokenizers/gen_oracle.py`; run with
//! `TOKENKIT_PRETOK_ORACLE=/tmp/tokenkit_pretok_oracle.jsonl cargo test -p tokenkit --lib oracle -- --ignored --nocapture`.

use std::io::BufRead;

use serde_json::Value;

use super::test_utils::pre_tokenize_str;
use super::PreTokenizerWrapper;

type Pieces = Vec<(String, (usize, usize))>;

fn parse_results(v: &Value) -> Vec<Pieces> {
    v.as_array()
        .expect("results")
        .iter()
        .map(|text| {
            text.as_array()
                .expect("pieces")
                .iter()
                .map(|p| {
                    let s = p[0].as_str().expect("piece").to_owned();
                    let a = p[1].as_u64().expect("start") as usize;
                    let b = p[2].as_u64().expect("end") as usize;
                    (s, (a, b))
                })
                .collect()
        })
        .collect()
}

#[test]
#[ignore = "needs the oracle dump from tests/data/pre_tokenizers/gen_oracle.py"]
fn pre_tokenizers_match_hf_on_corpora() {
    let path = std::env::var("TOKENKIT_PRETOK_ORACLE").unwrap_or_else(|_| "/tmp/tokenkit_pretok_oracle.jsonl".into());
    let file =
        std::fs::File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}; generate it with tests/data/pre_tokenizers/gen_oracle.py"));
    let mut lines = std::io::BufReader::new(file).lines();
    let header: Value = serde_json::from_str(&lines.next().expect("header").expect("read")).expect("header json");
    let texts: Vec<String> = header["texts"].as_array().expect("texts").iter().map(|t| t.as_str().expect("text").to_owned()).collect();
    let mut failures = 0;
    for line in lines {
        let record: Value = serde_json::from_str(&line.expect("read")).expect("record json");
        let written = record["pt"].as_str().expect("pt");
        let source = serde_json::to_string(&record["source"]).expect("source");
        let pt: PreTokenizerWrapper = serde_json::from_str(&source).unwrap_or_else(|e| panic!("cannot load {source}: {e}"));
        let serialized = serde_json::to_string(&pt).expect("serialize");
        if serialized != written {
            failures += 1;
            println!("SERDE MISMATCH {source}\n  ours: {serialized}\n  hf:   {written}");
        }
        let own_texts: Option<Vec<String>> =
            record.get("texts").and_then(Value::as_array).map(|a| a.iter().map(|t| t.as_str().expect("text").to_owned()).collect());
        let texts = own_texts.as_ref().unwrap_or(&texts);
        let expected = parse_results(&record["results"]);
        let mut agree = 0;
        let mut shown = 0;
        for (text, want) in texts.iter().zip(&expected) {
            let got = pre_tokenize_str(&pt, text);
            if &got == want {
                agree += 1;
            } else if shown < 3 {
                shown += 1;
                let first = got.iter().zip(want).position(|(g, w)| g != w).unwrap_or(got.len().min(want.len()));
                let text: String = text.chars().take(200).collect();
                println!(
                    "  MISMATCH on {text:?}\n    ours[{first}..]: {:?}\n    hf[{first}..]:   {:?}",
                    &got[first..(first + 3).min(got.len())],
                    &want[first..(first + 3).min(want.len())]
                );
            }
        }
        println!("{agree}/{} texts identical: {written}", texts.len());
        if agree != texts.len() {
            failures += 1;
        }
    }
    assert_eq!(failures, 0, "some pre-tokenizers differ from HF");
}
