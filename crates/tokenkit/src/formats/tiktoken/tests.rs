use super::*;

/// `(rank, token)` pairs of a table, for comparisons.
fn pairs(ranks: &Ranks) -> Vec<(u32, Vec<u8>)> {
    ranks.iter().map(|(r, t)| (r, t.to_vec())).collect()
}

#[test]
fn parses_and_writes_rank_files() {
    let text = "YQ== 0\nYg== 1\n\nYWI= 2\n";
    let ranks = parse_rank_file(text.as_bytes(), "t").unwrap();
    assert_eq!(pairs(&ranks), [(0, b"a".to_vec()), (1, b"b".to_vec()), (2, b"ab".to_vec())]);
    assert_eq!(write_rank_file(&ranks), "YQ== 0\nYg== 1\nYWI= 2\n");
}

#[test]
fn bad_rank_files_are_clear_errors() {
    let err = |t: &str| parse_rank_file(t.as_bytes(), "f.tiktoken").unwrap_err().to_string();
    assert!(err("YQ== 0\nYQ= 1\n").contains("f.tiktoken:2: token \"YQ=\": incorrect base64 padding"));
    assert!(err("YQ== 0\nY 1\n").contains("f.tiktoken:2: token \"Y\": the number of base64 characters"));
    let shared = err("YQ== 0\nYg== 0\n");
    assert!(shared.contains("f.tiktoken:2: rank 0 is also the rank of line 1's token"), "{shared}");
    assert!(err("YQ== x\n").contains("f.tiktoken:1: rank \"x\" is not an integer"));
    assert!(err("YQ== -1\n").contains("rank \"-1\" is negative"));
    assert!(err("YQ== 4294967296\n").contains("is past the largest rank"));
    assert!(err("YQ== 1__0\n").contains("is not an integer"));
    assert!(err("YQ==\n").contains("expected `base64-token rank`"));
    assert!(err("YQ== 0 1\n").contains("expected `base64-token rank`"));
    // tiktoken skips empty lines only: a line of spaces is an error there too.
    assert!(err("YQ== 0\n \n").contains("f.tiktoken:2: expected `base64-token rank`"));
    assert!(err("\n").contains("no ranks"));
}

/// The file is read as tiktoken's `load_tiktoken_bpe` reads it: Python's `splitlines`,
/// `split`, `b64decode` and `int` (each expected value is what Python 3.11 gives).
#[test]
fn rank_files_read_as_python_reads_them() {
    let read = |t: &[u8]| pairs(&parse_rank_file(t, "t").unwrap());
    // `\r` alone ends a line; \x0b and \x0c separate fields; `int` takes signs and `_`.
    assert_eq!(read(b"YQ== +2\rYg==\x0b1_0\r\nYw==\x0c-0"), [(0, b"c".to_vec()), (2, b"a".to_vec()), (10, b"b".to_vec())]);
    // A token given again takes its last rank (tiktoken's dict); the first rank is a hole.
    assert_eq!(read(b"YQ== 0\nYg== 1\nYQ== 5\n"), [(1, b"b".to_vec()), (5, b"a".to_vec())]);
    // Far ranks and holes cost nothing.
    assert_eq!(read(b"YQ== 4294967295\nYg== 7\n"), [(7, b"b".to_vec()), (4294967295, b"a".to_vec())]);
    let b64 = |t: &str| {
        let mut out = Vec::new();
        py_b64decode(t.as_bytes(), &mut out).map(|()| out)
    };
    assert_eq!(b64("YQ=x=").unwrap(), b"a\x0c");
    assert_eq!(b64("====").unwrap(), b"");
    assert_eq!(b64("YQ==YQ==").unwrap(), b"a");
    assert_eq!(b64("Y\u{ff}Q==").unwrap(), b"a");
    assert_eq!(b64("YR==").unwrap(), b"a");
    assert_eq!(b64("YQ=====").unwrap(), b"a");
    assert_eq!(b64("=YQ==").unwrap(), b"a");
    assert_eq!(b64("!!!").unwrap(), b"");
    for bad in ["Y", "YQ", "YQ=", "Y=Q="] {
        assert!(b64(bad).is_err(), "{bad}");
    }
}

/// A 20 KB rank file with far ranks (each byte at a multiple of 2^24) builds in memory
/// proportional to the file, not to its largest rank, and gives tiktoken's ids.
#[test]
fn a_sparse_rank_file_builds_small_and_encodes_with_its_ranks() {
    let mut text = String::new();
    let engine = base64::engine::general_purpose::STANDARD;
    for b in 0..=255u8 {
        text.push_str(&format!("{} {}\n", engine.encode([b]), u32::from(b) << 24 | 5));
    }
    text.push_str(&format!("{} 4294967295\n", engine.encode(b"ab")));
    text.push_str(&format!("{} 123\n", engine.encode(b"cd")));
    let ranks = parse_rank_file(text.as_bytes(), "t").unwrap();
    let (tok, rank_of) = build_tokenizer(&ranks, r"\S+|\s+", &[]).unwrap();
    let rank_of = rank_of.expect("sparse ranks are mapped");
    let ids: Vec<u32> = tok.encode("ab cd abcd", false).unwrap().get_ids().iter().map(|&i| rank_of[i as usize]).collect();
    // "ab" is a whole piece (a token, even at 2^32 - 1); "abcd": cd (123) merges, ab never does.
    let byte = |b: u8| u32::from(b) << 24 | 5;
    assert_eq!(ids, [u32::MAX, byte(b' '), 123, byte(b' '), byte(b'a'), byte(b'b'), 123]);
}

#[test]
fn rank_bpe_merges_lowest_rank_concatenation() {
    use crate::tiktoken::{Encoding, SpecialTokens};
    // Ranks: a b c bc ab abc cc (no other byte: a text made of these only encodes).
    let ranks: Ranks = ["a", "b", "c", "bc", "ab", "abc", "cc"].iter().map(|s| Some(s.as_bytes().to_vec())).collect();
    let enc = Encoding::new("t", r"\S+|\s+", ranks, &[("<|x|>".to_owned(), 10)], None).unwrap();
    // "abcc": bc (3) first → a bc c; then (a, bc) = abc (5), (bc, c) is no token → abc c.
    assert_eq!(enc.encode_ordinary("abcc").unwrap(), [5, 2]);
    assert_eq!(enc.encode_ordinary("bca").unwrap(), [3, 0]);
    assert_eq!(enc.encode("<|x|>", &SpecialTokens::All, &SpecialTokens::none()).unwrap(), [10]);
    // A byte the table lacks, left unmerged: tiktoken fails there too.
    let err = enc.encode_ordinary("ab d").unwrap_err().to_string();
    assert!(err.contains("a byte ([20])") || err.contains("no token for"), "{err}");
}

#[test]
fn specials_must_not_clash() {
    let ranks: Ranks = vec![Some(b"a".to_vec())].into();
    assert!(build_tokenizer(&ranks, r"\S+", &[("<|x|>".to_owned(), 3), ("<|y|>".to_owned(), 3)]).is_err());
    assert!(EncodingSpec::named("nope").is_err());
}

#[test]
fn onig_pattern_reads_possessive_digits_as_tiktoken() {
    assert_eq!(onig_pattern(CL100K_PATTERN), CL100K_ONIG_PATTERN);
    assert_eq!(onig_pattern(O200K_PATTERN), O200K_PATTERN);
}

#[test]
fn llama3_specials() {
    let s = llama3_special_tokens(128_000);
    assert_eq!(s.len(), 256);
    assert_eq!(s[0], ("<|begin_of_text|>".to_owned(), 128_000));
    assert_eq!(s[9], ("<|eot_id|>".to_owned(), 128_009));
    assert_eq!(s[255], ("<|reserved_special_token_245|>".to_owned(), 128_255));
}

#[test]
fn tokenizer_json_to_ranks_and_back() {
    let extra = ["bc", "ab", "abc"].iter().map(|s| Some(s.as_bytes().to_vec()));
    let ranks: Ranks = (0..=255u8).map(|b| Some(vec![b])).chain(extra).collect();
    let (tok, rank_of) = build_tokenizer(&ranks, r"\S+", &[]).unwrap();
    assert!(rank_of.is_none(), "dense ranks are the model's ids");
    let back = Tokenizer::from_json(&tok.to_json(false).unwrap()).unwrap();
    assert_eq!(ranks_from_tokenizer(&back).unwrap(), ranks);
    // Merges out of the order of the tokens they make have no rank form.
    let json = r#"{"model":{"type":"BPE","vocab":{"a":0,"b":1,"c":2,"ab":3,"bc":4},"merges":["b c","a b"]}}"#;
    let err = ranks_from_tokenizer(&Tokenizer::from_json(json).unwrap()).unwrap_err().to_string();
    assert!(err.contains("out of rank order"), "{err}");
    // Tokens that are not byte-level neither.
    let json = r#"{"model":{"type":"BPE","vocab":{"a":0,"b":1,"▁":2},"merges":[]}}"#;
    assert!(ranks_from_tokenizer(&Tokenizer::from_json(json).unwrap()).unwrap_err().to_string().contains("byte-level"));
}

#[test]
fn package_encodings_have_their_packages_special_tokens() {
    let w = whisper_special_tokens(50_257);
    assert_eq!(w.len(), 1608);
    assert_eq!(w[1], ("<|startoftranscript|>".to_owned(), 50_258));
    assert_eq!(w[101], ("<|translate|>".to_owned(), 50_358));
    assert_eq!(w[107], ("<|0.00|>".to_owned(), 50_364));
    assert_eq!(w.last().unwrap(), &("<|30.00|>".to_owned(), 51_864));
    let l4 = llama4_special_tokens(200_000);
    assert_eq!(l4.len(), 2048);
    let id = |v: &[(String, u32)], s: &str| v.iter().find(|(t, _)| t == s).map(|(_, i)| *i);
    // The ids Meta's tokenizer.py comments give.
    assert_eq!(id(&l4, "<|header_start|>"), Some(200_005));
    assert_eq!(id(&l4, "<|image_start|>"), Some(200_080));
    assert_eq!(id(&l4, "<|reasoning_reserved_special_token_0|>"), Some(201_134));
    assert_eq!(id(&l4, "<|reserved_special_token_903|>"), Some(202_047));
    assert_eq!(qwen2_special_tokens(151_643).last().unwrap(), &("<|extra_204|>".to_owned(), 151_850));
    assert_eq!(id(&qwen3_5_special_tokens(248_044), "<think>"), Some(248_068));
    let by_file = |f: &str| EncodingSpec::for_file_name(Path::new(f)).map(|s| s.name);
    assert_eq!(by_file("qwen.tiktoken").as_deref(), Some("qwen2"));
    assert_eq!(by_file("multilingual.tiktoken").as_deref(), Some("whisper"));
    assert_eq!(by_file("gpt2.tiktoken").as_deref(), Some("gpt2"));
    for name in ENCODING_NAMES {
        assert!(EncodingSpec::named(name).is_ok(), "{name}");
    }
}
