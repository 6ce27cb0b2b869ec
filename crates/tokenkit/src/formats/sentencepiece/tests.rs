use prost::Message as _;

use super::proto::{ModelProto, NormalizerSpec, Piece, TrainerSpec};
use super::*;
use crate::tokenizer::Model;

/// A small model: unk, two controls, normal pieces, a user-defined `<sep>` and an unused `ba`.
fn pieces() -> Vec<(&'static str, f32, i32)> {
    vec![
        ("<unk>", 0.0, 2),
        ("<s>", 0.0, 3),
        ("</s>", 0.0, 3),
        ("▁", -1.0, 1),
        ("a", -2.0, 1),
        ("b", -2.5, 1),
        ("▁ab", -3.0, 1),
        ("ab", -2.0, 1),
        ("<sep>", 0.0, 4),
        ("ba", -9.0, 5),
    ]
}

fn proto(pieces: &[(&str, f32, i32)], model_type: i32) -> ModelProto {
    ModelProto {
        pieces: pieces.iter().map(|&(p, s, t)| Piece { piece: Some(p.into()), score: Some(s), r#type: Some(t) }).collect(),
        trainer_spec: Some(TrainerSpec { model_type: Some(model_type), ..Default::default() }),
        normalizer_spec: None,
        denormalizer_spec: None,
    }
}

fn load(p: &ModelProto) -> Result<SentencePiece> {
    SentencePiece::from_bytes(p.encode_to_vec(), "test.model")
}

/// Ids and pieces of `text`, the pieces as `tokenize` gives them; `encode_pieces` and
/// `encode_ids` must give the same.
fn pieces_of(m: &SentencePiece, text: &str) -> (Vec<u32>, Vec<String>) {
    let toks = m.tokenize(text).unwrap();
    let pieces = m.encode_pieces(text).unwrap();
    assert_eq!(pieces, toks.iter().map(|t| t.value.as_str()).collect::<Vec<_>>(), "encode_pieces {text:?}");
    assert_eq!(m.encode_ids(text).unwrap(), toks.iter().map(|t| t.id).collect::<Vec<_>>(), "encode_ids {text:?}");
    (toks.iter().map(|t| t.id).collect(), toks.into_iter().map(|t| t.value).collect())
}

#[test]
fn unigram_and_bpe_match_sentencepiece() {
    // sentencepiece 0.2.3's output for the same model, Unigram (1) and BPE (2) alike.
    let cases: &[(&str, &[u32], &[&str], &str)] = &[
        ("ab ba", &[6, 3, 5, 4], &["▁ab", "▁", "b", "a"], "ab ba"),
        ("  a<sep>b  ", &[3, 4, 8, 5], &["▁", "a", "<sep>", "b"], "a<sep>b"),
        ("", &[], &[], ""),
        ("abc ab", &[6, 0, 6], &["▁ab", "c", "▁ab"], "ab ⁇  ab"),
        ("cc d", &[3, 0, 3, 0], &["▁", "cc", "▁", "d"], " ⁇   ⁇ "),
        ("ba<s>", &[3, 5, 4, 0], &["▁", "b", "a", "<s>"], "ba ⁇ "),
    ];
    for model_type in [1, 2] {
        let m = load(&proto(&pieces(), model_type)).unwrap();
        for &(text, ids, toks, decoded) in cases {
            let (got_ids, got_toks) = pieces_of(&m, text);
            assert_eq!(got_ids, ids, "type {model_type} {text:?}");
            assert_eq!(got_toks, toks, "type {model_type} {text:?}");
            assert_eq!(m.decode_ids(ids).unwrap(), decoded, "type {model_type} {text:?}");
        }
    }
}

#[test]
fn offsets_are_original_bytes() {
    let m = load(&proto(&pieces(), 1)).unwrap();
    let toks = m.tokenize("  ab  ccé").unwrap();
    let got: Vec<_> = toks.iter().map(|t| (t.value.as_str(), t.offsets)).collect();
    // The dummy prefix points at the first kept char; the merged unk run spans "ccé".
    assert_eq!(got, vec![("▁ab", (2, 4)), ("▁", (4, 6)), ("ccé", (6, 10))]);
}

#[test]
fn decoder_rules() {
    // sentencepiece 0.2.3 on llama2.model: ['▁','▁t'] → " t", ['<s>','▁t'] → "t",
    // ['<0x41>','▁t'] → "A t", ['<unk>','▁t'] → " ⁇  t", ['▁▁','▁t'] → "  t".
    let d = SentencePieceDecoder {
        unk_piece: "<unk>".into(),
        unk_surface: " \u{2047} ".into(),
        control: ["<s>".to_string(), "</s>".to_string()].into_iter().collect(),
        byte_fallback: true,
        strip_leading_space: true,
        strip_all_leading_spaces: false,
        denormalizer: None,
    };
    let cases: &[(&[&str], &str)] = &[
        (&["▁", "▁t"], " t"),
        (&["<s>", "▁t"], "t"),
        (&["<s>", "▁", "▁t"], " t"),
        (&["<0x41>", "▁t"], "A t"),
        (&["<unk>", "▁t"], " \u{2047}  t"),
        (&["▁▁", "▁t"], "  t"),
        (&["<0xE2>", "<0xE2>", "<0x41>"], "\u{FFFD}\u{FFFD}A"),
        (&["<0xE9>", "<0xA5>", "<0x85>"], "饅"),
        (&[], ""),
    ];
    for &(pieces, want) in cases {
        assert_eq!(d.decode_pieces(pieces), want, "{pieces:?}");
    }
    // A model that removes extra whitespace (sentencepiece 0.2.3 on botchan_en_unigram_1000):
    // every leading `▁` goes until text is decoded.
    let d = SentencePieceDecoder { strip_all_leading_spaces: true, ..d };
    for &(pieces, want) in &[(&["▁", "▁t", "▁u"][..], "t u"), (&["<s>", "▁", "▁", "t"], "t"), (&["<0x41>", "▁t"], "A t")] {
        assert_eq!(d.decode_pieces(pieces), want, "{pieces:?}");
    }
}

#[test]
fn byte_fallback_splits_unknown_chars() {
    let mut p = pieces();
    let bytes: Vec<String> = (0..=255u8).map(|b| format!("<0x{b:02X}>")).collect();
    p.extend(bytes.iter().map(|b| (b.as_str(), 0.0, 6)));
    let mut m = proto(&p, 1);
    m.trainer_spec.as_mut().unwrap().byte_fallback = Some(true);
    let m = load(&m).unwrap();
    let toks = m.tokenize("aé").unwrap();
    let got: Vec<_> = toks.iter().map(|t| (t.value.as_str(), t.offsets)).collect();
    assert_eq!(got, vec![("▁", (0, 0)), ("a", (0, 1)), ("<0xC3>", (1, 1)), ("<0xA9>", (1, 3))]);
    assert_eq!(m.encode_pieces("aé").unwrap(), ["▁", "a", "<0xC3>", "<0xA9>"]);
    let ids: Vec<u32> = toks.iter().map(|t| t.id).collect();
    assert_eq!(m.decode_ids(&ids).unwrap(), "aé");
}

#[test]
fn whitespace_options() {
    let mut m = proto(&pieces(), 1);
    m.normalizer_spec = Some(NormalizerSpec { add_dummy_prefix: Some(false), remove_extra_whitespaces: Some(false), ..Default::default() });
    let m = load(&m).unwrap();
    let (_, toks) = pieces_of(&m, " a  b ");
    assert_eq!(toks, vec!["▁", "a", "▁", "▁", "b", "▁"]);
}

#[test]
fn bad_models_are_errors() {
    let good = proto(&pieces(), 1).encode_to_vec();
    let err = SentencePiece::from_bytes(good[..good.len() / 2].to_vec(), "half.model").unwrap_err().to_string();
    assert!(err.contains("half.model") && err.contains("protobuf"), "{err}");

    let no_unk: Vec<_> = pieces().into_iter().filter(|p| p.2 != 2).collect();
    let err = load(&proto(&no_unk, 1)).unwrap_err().to_string();
    assert!(err.contains("no unknown piece"), "{err}");

    let mut bad_map = proto(&pieces(), 1);
    bad_map.normalizer_spec = Some(NormalizerSpec { precompiled_charsmap: Some(vec![0xff, 0xff, 0, 0, 1, 2]), ..Default::default() });
    let err = load(&bad_map).unwrap_err().to_string();
    assert!(err.contains("charsmap"), "{err}");

    let mut dup = pieces();
    dup.push(("a", -1.0, 1));
    assert!(load(&proto(&dup, 1)).unwrap_err().to_string().contains("twice"));

    let mut stray_byte = pieces();
    stray_byte.push(("<0x41>", 0.0, 6));
    assert!(load(&proto(&stray_byte, 1)).unwrap_err().to_string().contains("byte_fallback"));

    // A word model (type 3) loads; it has no tokenizer.json form.
    let word = load(&proto(&pieces(), 3)).unwrap();
    assert!(super::convert::to_tokenizer_json(&word).unwrap_err().to_string().contains("tokenizer.json"));
    assert!(SentencePiece::from_bytes(Vec::new(), "empty.model").is_err());
}

/// What sentencepiece refuses at load (fuzz finds): a NUL in a piece, a non-finite score in a
/// Unigram model (a BPE model loads it), a charsmap trie whose keys lead outside it.
#[test]
fn models_sentencepiece_refuses_are_errors() {
    let mut nul = pieces();
    nul.push(("a\0b", -1.0, 1));
    assert!(load(&proto(&nul, 1)).unwrap_err().to_string().contains("NUL"));
    for score in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let mut p = pieces();
        p[4].1 = score;
        let err = load(&proto(&p, 1)).unwrap_err().to_string();
        assert!(err.contains("piece 4 (\"a\")") && err.contains("not a finite number"), "{err}");
        assert!(load(&proto(&p, 2)).is_ok(), "BPE with score {score}");
    }
    let good = include_bytes!("testdata/denorm_ab_c.charsmap").to_vec();
    let with_map = |charsmap: Vec<u8>| {
        let mut m = proto(&pieces(), 1);
        m.normalizer_spec = Some(NormalizerSpec { precompiled_charsmap: Some(charsmap), ..Default::default() });
        load(&m)
    };
    assert!(with_map(good.clone()).is_ok());
    // The replacement strings cut short: keys now point past them.
    let trie_end = 4 + u32::from_le_bytes(good[..4].try_into().unwrap()) as usize;
    let err = with_map(good[..trie_end + 1].to_vec()).unwrap_err().to_string();
    assert!(err.contains("no valid replacement"), "{err}");
    // The root's children moved past the end of the array.
    let mut far = good.clone();
    far[4..8].copy_from_slice(&(0x1f_ffffu32 << 10).to_le_bytes());
    let err = with_map(far).unwrap_err().to_string();
    assert!(err.contains("past the"), "{err}");
}

#[test]
fn detects_model_proto() {
    assert!(looks_like_model_proto(&proto(&pieces(), 1).encode_to_vec()));
    assert!(!looks_like_model_proto(b"{\"model\": {}}"));
    assert!(!looks_like_model_proto(b"[PAD]\n[UNK]\n"));
    assert!(!looks_like_model_proto(b""));
}

#[test]
fn sampling_is_seedable_and_valid() {
    let m = load(&proto(&pieces(), 1)).unwrap();
    let text = "ab ba ab abab";
    let a = m.sample_encode_ids(text, 0.1, 7).unwrap();
    assert_eq!(a, m.sample_encode_ids(text, 0.1, 7).unwrap());
    let mut seen = std::collections::HashSet::new();
    for seed in 0..200 {
        let ids = m.sample_encode_ids(text, 0.1, seed).unwrap();
        let joined: String = ids.iter().map(|&i| m.id_to_token(i).unwrap()).collect();
        assert_eq!(joined, "▁ab▁ba▁ab▁abab");
        seen.insert(ids);
    }
    assert!(seen.len() > 1, "a small alpha gives several segmentations");
    // A large alpha concentrates on the best path (made unique: `▁ab` ties with `▁ ab` above).
    let unique: Vec<_> = pieces().into_iter().map(|p| if p.0 == "▁ab" { ("▁ab", -2.5, 1) } else { p }).collect();
    let m = load(&proto(&unique, 1)).unwrap();
    assert_eq!(m.sample_encode_ids(text, 1000.0, 1).unwrap(), m.encode_ids(text).unwrap());
    assert!(load(&proto(&pieces(), 2)).unwrap().sample_encode_ids(text, 0.1, 1).is_err());
}

#[test]
fn tokenizer_json_round_trip() {
    // A tokenizer loaded from a .model saves as tokenkit's `SentencePiece` model/decoder JSON
    // and loads back with the same behaviour (pickling and `to_str` in Python rely on it).
    for model_type in [1, 2] {
        let m = load(&proto(&pieces(), model_type)).unwrap();
        let decoder = SentencePieceDecoder::from_model(&m);
        let mut tok = Tokenizer::new(m);
        tok.with_decoder(Some(decoder.into()));
        let json = tok.to_json(false).unwrap();
        let again = Tokenizer::from_json(&json).unwrap();
        assert_eq!(again.to_json(false).unwrap(), json);
        for text in ["ab ba", "  a<sep>b  ", "abc ab", ""] {
            let (a, b) = (tok.encode(text, true).unwrap(), again.encode(text, true).unwrap());
            assert_eq!((a.get_ids(), a.get_tokens(), a.get_offsets()), (b.get_ids(), b.get_tokens(), b.get_offsets()));
            assert_eq!(tok.decode(a.get_ids(), true).unwrap(), again.decode(b.get_ids(), true).unwrap());
        }
    }
    let bad = r#"{"version":"1.0","truncation":null,"padding":null,"added_tokens":[],"normalizer":null,"pre_tokenizer":null,
        "post_processor":null,"decoder":null,"model":{"type":"SentencePiece","model_proto":"not base64!"}}"#;
    let err = Tokenizer::from_json(bad).unwrap_err().to_string();
    assert!(err.contains("model_proto"), "{err}");
}

#[test]
fn nbest_matches_sentencepiece() {
    // sentencepiece 0.2.3's nbest_encode (nbest_size=6) on the same model, ids and scores,
    // in its order (the four ties of "abc ab" included).
    let m = load(&proto(&pieces(), 1)).unwrap();
    type Case<'a> = (&'a str, &'a [(&'a [u32], f32)]);
    let cases: &[Case] = &[
        ("ab ba", &[(&[6, 3, 5, 4], -8.5), (&[3, 7, 3, 5, 4], -8.5), (&[3, 4, 5, 3, 5, 4], -11.0)]),
        ("a<sep>ab", &[(&[3, 4, 8, 7], -4.6), (&[3, 4, 8, 4, 5], -7.1), (&[3, 4, 0, 7], -70.0), (&[3, 4, 0, 4, 5], -72.5)]),
        (
            "abc ab",
            &[
                (&[6, 0, 6], -19.0),
                (&[3, 7, 0, 6], -19.0),
                (&[3, 7, 0, 3, 7], -19.0),
                (&[6, 0, 3, 7], -19.0),
                (&[3, 4, 5, 0, 3, 7], -21.5),
                (&[3, 4, 5, 0, 6], -21.5),
            ],
        ),
    ];
    for &(text, want) in cases {
        let got = m.nbest_encode_ids(text, 6).unwrap();
        let want: Vec<(Vec<u32>, f32)> = want.iter().map(|(ids, s)| (ids.to_vec(), *s)).collect();
        assert_eq!(got, want, "{text:?}");
    }
    // n = 1 is the ordinary encoding with score 0; an empty text gives one empty result.
    assert_eq!(m.nbest_encode_ids("ab ba", 1).unwrap(), vec![(vec![6, 3, 5, 4], 0.0)]);
    assert_eq!(m.nbest_encode_ids("", 5).unwrap(), vec![(vec![], 0.0)]);
    assert!(load(&proto(&pieces(), 2)).unwrap().nbest_encode_ids("ab", 2).is_err());
}

#[test]
fn sampling_among_the_nbest() {
    let m = load(&proto(&pieces(), 1)).unwrap();
    let best: Vec<Vec<u32>> = m.nbest_encode_ids("ab ba", 2).unwrap().into_iter().map(|(ids, _)| ids).collect();
    let mut seen = std::collections::HashSet::new();
    for seed in 0..200 {
        let toks = m.sample_encode("ab ba", 2, 0.5, seed).unwrap();
        let ids: Vec<u32> = toks.iter().map(|t| t.id).collect();
        assert!(best.contains(&ids), "{ids:?} is not one of the 2 best");
        seen.insert(ids);
    }
    // Both (equal-scored) segmentations come up.
    assert_eq!(seen.len(), 2);
    assert_eq!(m.sample_encode("ab ba", 1, 0.5, 3).unwrap().iter().map(|t| t.id).collect::<Vec<_>>(), m.encode_ids("ab ba").unwrap());
}

#[test]
fn denormalizer_applies_to_decoded_text() {
    // The denormalizer charsmap of a model sentencepiece 0.2.3 trained with
    // --denormalization_rule_tsv of "ab" -> "AB", "c" -> "CC", "  " -> " "; sentencepiece
    // decodes its "abc cab" to "ABCC CCAB".
    let mut p = proto(&[("<unk>", 0.0, 2), ("▁", -1.0, 1), ("a", -2.0, 1), ("b", -2.0, 1), ("c", -2.0, 1)], 1);
    let rules = include_bytes!("testdata/denorm_ab_c.charsmap").to_vec();
    p.denormalizer_spec = Some(NormalizerSpec {
        name: Some("user_defined".into()),
        precompiled_charsmap: Some(rules),
        add_dummy_prefix: Some(false),
        remove_extra_whitespaces: Some(false),
        escape_whitespaces: Some(false),
        normalization_rule_tsv: None,
    });
    let m = load(&p).unwrap();
    let ids = m.encode_ids("abc cab").unwrap();
    assert_eq!(m.decode_ids(&ids).unwrap(), "ABCC CCAB");
    let d = SentencePieceDecoder::from_model(&m);
    let json = serde_json::to_string(&d).unwrap();
    assert!(json.contains("\"denormalizer\":{\"precompiled_charsmap\":"), "{json}");
    let back: SentencePieceDecoder = serde_json::from_str(&json).unwrap();
    assert_eq!(back, d);
    assert_eq!(back.decode_pieces(&["▁a", "b", "c"]), "ABCC");
}

#[test]
fn bpe_merges_chars_that_are_not_pieces() {
    // "xa" is a piece but "x" is not: the merge is still found (sentencepiece 0.2.3's output).
    let p = proto(&[("<unk>", 0.0, 2), ("▁", -1.0, 1), ("a", -2.0, 1), ("b", -2.5, 1), ("xa", -3.0, 1), ("▁b", -1.5, 1)], 2);
    let m = load(&p).unwrap();
    let cases: &[(&str, &[u32])] = &[("xa b", &[1, 4, 5]), ("bxa", &[5, 4]), ("xxa", &[1, 0, 4]), ("ax", &[1, 2, 0])];
    for &(text, ids) in cases {
        assert_eq!(m.encode_ids(text).unwrap(), ids, "{text:?}");
    }
}

/// The segments of `text` (normalized) by [`bpe::encode`] and by the plain merge loop, on the
/// tables and on piece lookups (as a model encodes before it builds its tables), which must
/// all be the same (a failure names the way that differs).
fn bpe_all_ways_agree(m: &SentencePiece, text: &str, what: &dyn std::fmt::Debug) {
    let mut norm = normalizer::Normalized::default();
    m.normalizer().normalize_text(text, &mut norm);
    let mut fast = Vec::new();
    bpe::encode(m, &norm.text, &mut fast);
    let slow = bpe::merge_loop(m, &norm.text, true);
    assert_eq!(fast, slow, "encode and the merge loop on the tables differ: {what:?} {text:?}");
    let lookups = bpe::merge_loop(m, &norm.text, false);
    assert_eq!(lookups, slow, "the merge loop on piece lookups and on the tables differ: {what:?} {text:?}");
}

#[test]
fn bpe_parts_same_as_merge_loop_on_random_models() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let alphabet = ["a", "b", "c", "d", "é", "▁"];
    for round in 0..300 {
        // Chars (sometimes without `d`, which then is unknown), then pieces made of two
        // pieces each, scores from a few values so that ties are common; sometimes a
        // user-defined piece.
        let mut pieces: Vec<(String, f32, i32)> = vec![("<unk>".into(), 0.0, 2)];
        let skip_d = round % 3 == 0;
        for c in alphabet.iter().filter(|&&c| !(skip_d && c == "d")) {
            pieces.push(((*c).into(), -(rng.gen_range(0..4) as f32), 1));
        }
        for _ in 0..rng.gen_range(1..25) {
            let (a, b) = (rng.gen_range(1..pieces.len()), rng.gen_range(1..pieces.len()));
            let joined = format!("{}{}", pieces[a].0, pieces[b].0);
            if pieces.iter().all(|p| p.0 != joined) {
                pieces.push((joined, -(rng.gen_range(0..6) as f32), 1));
            }
        }
        if round % 4 == 0 && pieces.iter().all(|p| p.0 != "ca") {
            pieces.push(("ca".into(), 0.0, 4));
        }
        let refs: Vec<(&str, f32, i32)> = pieces.iter().map(|(p, s, t)| (p.as_str(), *s, *t)).collect();
        let m = load(&proto(&refs, 2)).unwrap();
        assert!(bpe::cuts(&m));
        for _ in 0..20 {
            let text: String = (0..rng.gen_range(0..60)).map(|_| ["a", "b", "c", "d", "é", " ", "x"][rng.gen_range(0..7)]).collect();
            bpe_all_ways_agree(&m, &text, &pieces);
        }
    }
}

/// On the SentencePiece BPE fixtures, the segments of every corpus line and of random text
/// are the same by every way ([`bpe_all_ways_agree`]). An absent fixture is reported.
#[test]
fn bpe_fixtures_same_as_merge_loop() {
    use rand::{Rng, SeedableRng};
    let models = [
        "hub/llama2.model",
        "hub/mistral03.model",
        "registry/mistral01/tokenizer.model",
        "registry/sentencepiece/botchan_en_bpe_1000.model",
    ];
    let corpora = [
        "ja/wagahai.txt",
        "zh/manpages-zh_CN.txt",
        "mixed/mixed_input.txt",
        "code/cpython-3.11-stdlib.py.txt",
        "en/pride_and_prejudice.txt",
    ];
    let corpus_dir = crate::test_fixtures::corpora();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for file in models.iter().filter_map(|f| crate::test_fixtures::get(f)) {
        let m = read_model(&file).unwrap();
        assert!(bpe::cuts(&m), "{file:?}");
        for corpus in corpora {
            let Ok(text) = std::fs::read_to_string(corpus_dir.join(corpus)) else {
                eprintln!("corpus {corpus}: absent, skipped");
                continue;
            };
            let lines: Vec<&str> = text.lines().take(300).collect();
            for line in &lines {
                bpe_all_ways_agree(&m, line, &file);
            }
            // Long inputs too (words too long for the cache).
            bpe_all_ways_agree(&m, &lines.join("\n"), &file);
            // Random text of the corpus's chars, spaces and chars that are no piece.
            let mut chars: Vec<char> = text.chars().take(20_000).collect();
            chars.extend([' ', ' ', '\u{10FFFF}', '\u{E000}', '\u{1F600}']);
            for _ in 0..50 {
                let random: String = (0..rng.gen_range(0..200)).map(|_| chars[rng.gen_range(0..chars.len())]).collect();
                bpe_all_ways_agree(&m, &random, &file);
            }
        }
    }
}

/// A model encodes on piece lookups until it has encoded [`model::LAZY_BPE_BYTES`], then builds
/// its tables: the ids are those of a model whose tables were built first, on each side of that
/// point, through the public API.
#[test]
fn bpe_ids_same_before_and_after_the_tables_are_built() {
    // Botchan is the English text every machine has (the set-up fetches it from a registry where
    // ../shared is absent); it is shorter than the test needs, so its lines are taken again.
    let corpus = crate::test_fixtures::corpora().join("en/botchan.txt");
    let text = std::fs::read_to_string(&corpus).unwrap_or_else(|e| panic!("{}: {e}", corpus.display()));
    for file in ["hub/llama2.model", "hub/mistral03.model"].iter().filter_map(|f| crate::test_fixtures::get(f)) {
        let built = |m: &SentencePiece| {
            let _ = bpe::cuts(m);
        };
        same_ids_before_and_after_the_build(&file, &text, model::LAZY_BPE_BYTES, built, SentencePiece::bpe_tables_built);
    }
}

/// A Unigram model looks its pieces up until it has encoded
/// [`model::LAZY_UNIGRAM_BYTES_PER_PIECE`] bytes per piece, then builds its trie: the ids are the same before and after, and the same as a model whose trie
/// was built at once (which the sentencepiece comparisons check).
#[test]
fn unigram_ids_same_before_and_after_the_trie_is_built() {
    let corpora = crate::test_fixtures::corpora();
    let read = |rel: &str| std::fs::read_to_string(corpora.join(rel)).ok();
    let botchan = read("en/botchan.txt").unwrap_or_else(|| panic!("{}: no en/botchan.txt", corpora.display()));
    // Japanese text for the Japanese model where the corpora have it.
    let japanese = read("ja/wagahai.txt");
    let models = [
        ("registry/sentencepiece/botchan_en_unigram_1000.model", &botchan),
        ("registry/sentencepiece/kyoto_ja_unigram_8000.model", japanese.as_ref().unwrap_or(&botchan)),
        ("registry/albert/spiece.model", &botchan),
        ("hub/xlnet_base_cased.model", &botchan),
    ];
    let mut tested = 0;
    for (file, text) in models.iter().filter_map(|&(f, text)| Some((crate::test_fixtures::get(f)?, text))) {
        // The lattice needs the trie: n-best builds it.
        let built = |m: &SentencePiece| {
            let _ = m.nbest_encode_ids("a", 2).unwrap();
        };
        let threshold = model::LAZY_UNIGRAM_BYTES_PER_PIECE
            * SentencePiece::from_bytes(std::fs::read(&file).unwrap(), "model").unwrap().get_vocab_size();
        same_ids_before_and_after_the_build(&file, text, threshold, built, SentencePiece::unigram_trie_built);
        tested += 1;
    }
    assert!(tested >= 2, "the registry models are always there");
}

/// Encodes the lines of `text` (again and again, to twice `threshold` bytes) with a fresh load
/// of `file`, which builds its tables (`is_built`) after `threshold` bytes, and with a load whose
/// tables `build` built first: the same ids on each side of that point, through the public API.
fn same_ids_before_and_after_the_build(
    file: &std::path::Path,
    text: &str,
    threshold: usize,
    build: impl Fn(&SentencePiece),
    is_built: impl Fn(&SentencePiece) -> bool,
) {
    let raw = std::fs::read(file).unwrap();
    // The file with an unknown field of its own (field 111, skipped as sentencepiece skips
    // it), so that no table cache entry of an earlier run holds its tables.
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    let mut unique = raw.clone();
    unique.extend_from_slice(&[0xF8, 0x06]);
    prost::encoding::encode_varint(nanos, &mut unique);
    let lazy = SentencePiece::from_bytes(unique, "unique.model").unwrap();
    let built = SentencePiece::from_bytes(raw, "model").unwrap();
    build(&built);
    assert!(is_built(&built), "{file:?}: the tables are built when asked");
    assert!(!is_built(&lazy), "{file:?}: a fresh model has no tables yet");
    let mut encoded = 0;
    for line in text.lines().filter(|l| !l.is_empty()).cycle() {
        assert_eq!(lazy.encode_ids(line).unwrap(), built.encode_ids(line).unwrap(), "{file:?} {line:?}");
        encoded += line.len();
        if encoded > 2 * threshold {
            break;
        }
    }
    assert!(encoded > 2 * threshold, "{file:?}: the text is too short for the test");
    assert!(is_built(&lazy), "{file:?}: the tables are built after {encoded} bytes");
}

#[test]
fn normalized_offsets_follow_rules_and_copies() {
    // Rules "ab" -> "AB", "c" -> "CC", "  " -> " " (the denormalizer test's charsmap).
    let rules = include_bytes!("testdata/denorm_ab_c.charsmap");
    let charsmap = crate::normalizers::Precompiled::from_bytes(rules).unwrap();
    let n = normalizer::SpNormalizer::new(Some(charsmap), &[], true, false, true, false);
    let mut out = normalizer::Normalized::default();
    n.normalize("xab c😀d", &mut out);
    assert_eq!(out.text, "▁xAB▁CC😀d");
    // Each char's start, then the end: the dummy prefix and "x" at 0, "AB" made from "ab" at
    // 1, the space at 3, "CC" from "c" at 4, "😀d" copied from 5.
    let want = [(0, 0), (3, 0), (4, 1), (5, 1), (6, 3), (9, 4), (10, 4), (11, 5), (15, 9), (16, 10)];
    let mut aligner = out.aligner();
    for (k, o) in want {
        assert_eq!((out.orig(k), aligner.orig(k)), (Some(o), o), "{k}");
    }
    // Inside a copied char: its start.
    assert_eq!(out.orig(13), Some(5));
    n.normalize_text("xab", &mut out);
    assert_eq!((out.text.as_str(), out.orig(0)), ("▁xAB", None));
}

/// sentencepiece 0.2.3 refuses a Unigram model with only control, unknown and byte pieces ("no
/// pieces are loaded", found by the differential fuzz) and loads a BPE one; so does tokenkit.
#[test]
fn a_unigram_model_without_normal_pieces_is_refused() {
    let only_special = [("<unk>", 0.0, 2), ("<s>", 0.0, 3)];
    let Err(e) = load(&proto(&only_special, 1)) else { panic!("a Unigram model of special pieces loaded") };
    let msg = e.to_string();
    assert!(msg.contains("no normal, user-defined or unused piece"), "{msg}");
    assert_eq!(load(&proto(&only_special, 2)).unwrap().encode_ids("ab").unwrap(), [0]);
    assert!(load(&proto(&[("<unk>", 0.0, 2), ("ba", -9.0, 5)], 1)).is_ok());
}

/// The specs read by walking the field headers are prost's decode of the whole file: on real
/// models, on a file whose specs repeat (protobuf merges them: the second file's values win),
/// and every cut of a file is an error for both or for neither.
#[test]
fn specs_walk_matches_prost() {
    let mut files: Vec<Vec<u8>> = Vec::new();
    for rel in ["hub/llama2.model", "registry/albert/spiece.model", "registry/sentencepiece/botchan_en_bpe_1000.model"] {
        if let Some(path) = crate::test_fixtures::get(rel) {
            files.push(std::fs::read(path).unwrap());
        }
    }
    let mut small = proto(&pieces(), 2);
    small.normalizer_spec = Some(NormalizerSpec { name: Some("first".into()), add_dummy_prefix: Some(false), ..Default::default() });
    let mut other = proto(&pieces(), 1);
    other.normalizer_spec = Some(NormalizerSpec { name: Some("second".into()), ..Default::default() });
    files.push([small.encode_to_vec(), other.encode_to_vec()].concat());
    files.push(small.encode_to_vec());
    for raw in &files {
        let walked = ModelProto::decode_specs(raw).unwrap();
        let decoded = ModelProto::decode(raw.as_slice()).unwrap();
        let pieces: Vec<proto::PieceRef<'_>> = decoded.pieces.iter().map(proto::PieceRef::from).collect();
        assert_eq!(proto::piece_refs(raw).as_deref(), Some(pieces.as_slice()), "the pieces walk takes every real file as prost does");
        assert_eq!(walked, ModelProto { pieces: Vec::new(), ..decoded });
    }
    // A piece with unknown fields, fields repeated (the last one counts), a type past the enum,
    // a varint key of two bytes; then pieces the walk leaves to prost (a group, a bad wire type,
    // bad UTF-8, a cut): where the walk answers, it answers as prost.
    let piece = |body: &[u8]| [&[0x0A, body.len() as u8][..], body].concat();
    // The first is the common layout (text, score, one-byte type) read without the walk; so is
    // the last, whose text is a `▁` and bad UTF-8.
    let odd = [
        piece(b"\x0A\x04\xE2\x96\x81a\x15\x00\x00\x80\x3F\x18\x04"),
        piece(b"\x0A\x01a\x15\x00\x00\x80\x3F\x0A\x02bc\x18\x05\x20\x07\x2A\x01z\x18\x09"),
        piece(b"\x0A\x01d\x80\x01\x05"),
        piece(b"\x0A\x01e\x1B\x1C"),
        piece(b"\x0A\x01f\x10\x01"),
        piece(b"\x0A\x02\xC3\x28"),
        piece(b"\x0A\x05ab"),
        piece(b"\x00\x01"),
        piece(b"\x0A\x04\xE2\x96\x81\xFF\x15\x00\x00\x80\x3F"),
    ];
    for (i, p) in odd.iter().enumerate() {
        let raw = [p.as_slice(), &small.encode_to_vec()].concat();
        let prost = ModelProto::decode(raw.as_slice());
        match proto::piece_refs(&raw) {
            Some(walked) => {
                let decoded = prost.unwrap_or_else(|e| panic!("piece {i}: the walk took what prost rejects: {e}"));
                let want: Vec<proto::PieceRef<'_>> = decoded.pieces.iter().map(proto::PieceRef::from).collect();
                assert_eq!(walked, want, "piece {i}");
            }
            None => assert!(i >= 3, "piece {i}: the walk should take it"),
        }
    }
    for cut in 0..files[0].len().min(4000) {
        let raw = &files[0][..cut];
        if let Some(walked) = proto::piece_refs(raw) {
            let decoded = ModelProto::decode(raw).unwrap_or_else(|e| panic!("cut at {cut}: the walk took what prost rejects: {e}"));
            assert_eq!(walked.len(), decoded.pieces.len(), "cut at {cut}");
        }
    }
    let merged = ModelProto::decode_specs(files.iter().rev().nth(1).unwrap()).unwrap();
    let norm = merged.normalizer_spec.unwrap();
    assert_eq!((norm.name.as_deref(), norm.add_dummy_prefix), (Some("second"), Some(false)));
    let raw = small.encode_to_vec();
    for cut in 0..raw.len() {
        assert_eq!(ModelProto::decode_specs(&raw[..cut]).is_ok(), ModelProto::decode(&raw[..cut]).is_ok(), "cut at {cut}");
    }
}
