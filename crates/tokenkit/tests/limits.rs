//! Sizes that come from settings or input: padding lengths past what can be allocated and
//! truncation lengths too small for the special tokens are errors, never an abort, a panic or
//! a silently emptied encoding.

use tokenkit::tokenizer::utils::MAX_PADDING_LENGTH;
use tokenkit::{PaddingDirection, PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// WordLevel with BERT's post-processor: `[CLS] A [SEP]` (2 added), `[CLS] A [SEP] B [SEP]` (3).
fn bert_like(truncation: &str, padding: &str) -> String {
    format!(
        r#"{{"version":"1.0","truncation":{truncation},"padding":{padding},"added_tokens":[],
        "normalizer":null,"pre_tokenizer":{{"type":"WhitespaceSplit"}},
        "post_processor":{{"type":"BertProcessing","sep":["[SEP]",2],"cls":["[CLS]",1]}},"decoder":null,
        "model":{{"type":"WordLevel","vocab":{{"<unk>":0,"[CLS]":1,"[SEP]":2,"[PAD]":3,"a":4,"b":5,"c":6}},"unk_token":"<unk>"}}}}"#
    )
}

fn truncation(max_length: usize) -> String {
    format!(r#"{{"direction":"Right","max_length":{max_length},"strategy":"LongestFirst","stride":0}}"#)
}

#[test]
fn truncation_shorter_than_the_special_tokens_is_an_error() {
    // HF computes max_length - 2 in usize: it wraps and the whole text comes out (0 and 1 here);
    // tokenkit refuses instead of silently giving `[CLS] [SEP]` or the untruncated text.
    for max_length in [0, 1] {
        let tok = Tokenizer::from_json(&bert_like(&truncation(max_length), "null")).unwrap();
        let e = tok.encode("a b c", true).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "truncation max_length {max_length} is smaller than the 2 special tokens the post-processor adds: \
                 it must be at least 2 (or encode without special tokens)"
            )
        );
        let e = tok.encode(("a b", "c"), true).unwrap_err().to_string();
        assert!(e.contains("the 3 special tokens the post-processor adds to a pair"), "{e}");
        assert!(tok.encode_batch(vec!["a", "b"], true).is_err());
        // Without special tokens the length applies to the text alone (as in HF).
        assert_eq!(tok.encode("a b c", false).unwrap().get_ids(), &[4, 5, 6][..max_length]);
    }
    // Room for exactly the special tokens: the text goes to `overflowing`, as in HF.
    let tok = Tokenizer::from_json(&bert_like(&truncation(2), "null")).unwrap();
    let enc = tok.encode("a b c", true).unwrap();
    assert_eq!(enc.get_ids(), [1, 2]);
    assert!(tok.encode(("a", "b"), true).is_err(), "a pair needs 3");
    let tok = Tokenizer::from_json(&bert_like(&truncation(3), "null")).unwrap();
    assert_eq!(tok.encode("a b c", true).unwrap().get_ids(), [1, 4, 2]);
    assert_eq!(tok.encode(("a b", "c"), true).unwrap().get_ids(), [1, 2, 2]);
}

#[test]
fn padding_lengths_past_the_limit_are_rejected_where_set() {
    let too_long = MAX_PADDING_LENGTH + 1;
    let mut tok = Tokenizer::from_json(&bert_like("null", "null")).unwrap();
    for (params, field) in [
        (PaddingParams { strategy: PaddingStrategy::Fixed(too_long), ..Default::default() }, "strategy.Fixed"),
        (PaddingParams { pad_to_multiple_of: Some(1 << 63), ..Default::default() }, "pad_to_multiple_of"),
    ] {
        let e = tok.with_padding(Some(params)).unwrap_err().to_string();
        assert!(e.starts_with(&format!("padding `{field}` is ")) && e.contains("at most 4294967295"), "{e}");
        assert!(tok.get_padding().is_none(), "a rejected setting is not kept");
    }
    // The same values in a tokenizer.json (the fuzzer's `2**63` and `1e12`).
    for padding in [
        r#"{"strategy":"BatchLongest","direction":"Right","pad_to_multiple_of":9223372036854775808,"pad_id":3,"pad_type_id":0,"pad_token":"[PAD]"}"#,
        r#"{"strategy":{"Fixed":1000000000000},"direction":"Right","pad_to_multiple_of":null,"pad_id":3,"pad_type_id":0,"pad_token":"[PAD]"}"#,
    ] {
        let e = Tokenizer::from_json(&bert_like("null", padding)).unwrap_err().to_string();
        assert!(e.contains("at most 4294967295 are allowed"), "{e}");
    }
    let ok = PaddingParams { strategy: PaddingStrategy::Fixed(6), pad_to_multiple_of: Some(4), pad_id: 3, ..Default::default() };
    tok.with_padding(Some(ok)).unwrap();
    assert_eq!(tok.encode("a b c", true).unwrap().get_ids(), [1, 4, 5, 6, 2, 3, 3, 3]);
}

#[test]
fn padding_that_cannot_be_allocated_is_an_error() {
    let tok = Tokenizer::from_json(&bert_like("null", "null")).unwrap();
    let mut enc = tok.encode("a b", true).unwrap();
    let before = enc.clone();
    for direction in [PaddingDirection::Right, PaddingDirection::Left] {
        // More tokens than an address space holds: the reservation fails before anything changes.
        let e = enc.pad(usize::MAX / 2, 3, 0, "[PAD]", direction).unwrap_err().to_string();
        assert!(e.starts_with(&format!("padding to {} tokens: cannot allocate memory", usize::MAX / 2)), "{e}");
        assert_eq!(enc, before);
    }
    // The overflowing parts are padded too, and fail alike.
    let mut tok = tok;
    tok.with_truncation(Some(TruncationParams { max_length: 3, ..Default::default() })).unwrap();
    let mut enc = tok.encode("a b c", true).unwrap();
    assert_eq!(enc.get_overflowing().len(), 2);
    assert!(enc.pad(usize::MAX / 2, 3, 0, "[PAD]", PaddingDirection::Right).is_err());
    enc.pad(5, 3, 0, "[PAD]", PaddingDirection::Right).unwrap();
    assert!(enc.get_overflowing().iter().all(|o| o.len() == 5));
}
