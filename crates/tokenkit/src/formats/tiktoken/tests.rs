use super::*;

#[test]
fn parses_and_writes_rank_files() {
    let text = "YQ== 0\nYg== 1\n\nYWI= 2\n";
    let ranks = parse_rank_file(text.as_bytes(), "t").unwrap();
    assert_eq!(ranks, vec![Some(b"a".to_vec()), Some(b"b".to_vec()), Some(b"ab".to_vec())]);
    assert_eq!(write_rank_file(&ranks), "YQ== 0\nYg== 1\nYWI= 2\n");
}

#[test]
fn bad_rank_files_are_clear_errors() {
    let err = |t: &str| parse_rank_file(t.as_bytes(), "f.tiktoken").unwrap_err().to_string();
    assert!(err("YQ== 0\n!!! 1\n").contains("f.tiktoken:2: malformed base64"));
    assert!(err("YQ== 0\nYg== 0\n").contains("f.tiktoken:2: duplicate rank 0"));
    assert!(err("YQ== 0\nYQ== 1\n").contains("appears twice"));
    // A hole is an error unless a special token has that id.
    let holed = parse_rank_file(b"YQ== 0\nYg== 2\n", "f").unwrap();
    assert!(check_ranks(&holed, &[]).unwrap_err().to_string().contains("rank 1 is missing"));
    assert!(check_ranks(&holed, &[("<|s|>".to_owned(), 1)]).is_ok());
    assert!(err("YQ== x\n").contains("rank \"x\" is not a non-negative integer"));
    assert!(err("YQ==\n").contains("expected `base64-token rank`"));
    assert!(err("\n").contains("no ranks"));
}

#[test]
fn a_repeated_line_is_read_once_and_a_far_rank_is_refused_before_allocating() {
    // tiktoken reads the file into a dict: the same line twice is one entry.
    let ranks = parse_rank_file(b"YQ== 0\nYg== 1\nYQ== 0\n", "t").unwrap();
    assert_eq!(ranks.len(), 2);
    // A rank far past the file's size (fuzz: 36,031,131 in r50k's rank file made an 860 MB table).
    let msg = parse_rank_file(b"YQ== 0\nYg== 36031131\n", "f.tiktoken").unwrap_err().to_string();
    assert!(msg.contains("f.tiktoken:2: rank 36031131 is far past the 2 ranks"), "{msg}");
    assert!(parse_rank_file(b"YQ== 0\nYg== 4294967295\n", "f").is_err());
}

#[test]
fn rank_bpe_merges_lowest_rank_concatenation() {
    // Ranks: a b c ab bc abc. tiktoken on "abc": pairs ab (3) and bc (4) → ab, then abc (5).
    let ranks: Ranks = ["a", "b", "c", "bc", "ab", "abc", "cc"].iter().map(|s| Some(s.as_bytes().to_vec())).collect();
    let tok = build_tokenizer(&ranks, r"\S+|\s+", &[("<|x|>".to_owned(), 10)]).unwrap();
    let enc = tok.encode("abcc bca <|x|>", false).unwrap();
    // "abcc": bc(3) first → a bc c → abc(5)? pairs (a,bc)=abc rank 5, (bc,c) none → abc c.
    assert_eq!(enc.get_ids(), &[5, 2, 3, 0, 10]);
}

#[test]
fn specials_must_not_clash() {
    let ranks: Ranks = vec![Some(b"a".to_vec())];
    assert!(build_tokenizer(&ranks, r"\S+", &[("<|x|>".to_owned(), 0)]).is_err());
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
    let ranks: Ranks = ["a", "b", "c", "bc", "ab", "abc"].iter().map(|s| Some(s.as_bytes().to_vec())).collect();
    let tok = build_tokenizer(&ranks, r"\S+", &[]).unwrap();
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
