//! Expected values are tiktoken 0.14.0's output (the Python package, rank files from
//! `.fixtures/tiktoken`).

use super::*;
use std::path::PathBuf;

fn fixture(name: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.fixtures/tiktoken").join(format!("{name}.tiktoken"));
    p.is_file().then_some(p)
}

fn load(name: &str, file: &str) -> Option<Encoding> {
    let path = fixture(file)?;
    Some(Encoding::from_spec(EncodingSpec::named(name).unwrap(), &path).unwrap())
}

const TEXTS: &[&str] = &["Hello world!", "  a\n  ", "12345 abc'S ſ", "日本語のテキスト😀", "x<|endoftext|>y"];

fn check(name: &str, file: &str, expected: &[&[u32]]) {
    let Some(enc) = load(name, file) else { return };
    for (text, want) in TEXTS.iter().zip(expected) {
        assert_eq!(enc.encode_ordinary(text).unwrap(), *want, "{name} on {text:?}");
        assert_eq!(enc.count_ordinary(text).unwrap(), want.len());
        assert_eq!(enc.decode(want).unwrap(), *text);
    }
}

#[test]
fn r50k_like_tiktoken() {
    check(
        "r50k_base",
        "r50k_base",
        &[
            &[15496, 995, 0],
            &[220, 257, 198, 220, 220],
            &[10163, 2231, 450, 66, 6, 50, 25370, 123],
            &[33768, 98, 17312, 105, 45739, 252, 5641, 24336, 25084, 43302, 47249, 222],
            &[87, 27, 91, 437, 1659, 5239, 91, 29, 88],
        ],
    );
}

#[test]
fn p50k_like_tiktoken() {
    check(
        "p50k_base",
        "p50k_base",
        &[
            &[15496, 995, 0],
            &[220, 257, 198, 50257],
            &[10163, 2231, 450, 66, 6, 50, 25370, 123],
            &[33768, 98, 17312, 105, 45739, 252, 5641, 24336, 25084, 43302, 47249, 222],
            &[87, 27, 91, 437, 1659, 5239, 91, 29, 88],
        ],
    );
}

#[test]
fn cl100k_like_tiktoken() {
    check(
        "cl100k_base",
        "cl100k_base",
        &[
            &[9906, 1917, 0],
            &[220, 264, 198, 256],
            &[4513, 1774, 40122, 13575, 27006, 123],
            &[9080, 22656, 45918, 252, 16144, 57933, 62903, 71634, 76460, 222],
            &[87, 27, 91, 8862, 728, 428, 91, 29, 88],
        ],
    );
}

#[test]
fn o200k_like_tiktoken() {
    check(
        "o200k_base",
        "o200k_base",
        &[
            &[13225, 2375, 0],
            &[220, 261, 198, 256],
            &[7633, 2548, 75094, 31233, 20757, 123],
            &[9048, 40909, 3385, 16056, 18368, 38236, 84083],
            &[87, 27, 91, 419, 1440, 919, 91, 29, 88],
        ],
    );
}

#[test]
fn special_token_policies() {
    let Some(enc) = load("cl100k_base", "cl100k_base") else { return };
    let text = "x<|endoftext|>y";
    let err = enc.encode(text, &SpecialTokens::none(), &SpecialTokens::All).unwrap_err().to_string();
    // tiktoken's message, verbatim.
    assert_eq!(err, "Encountered text corresponding to disallowed special token '<|endoftext|>'.\nIf you want this text to be encoded as a special token, pass it to `allowed_special`, e.g. `allowed_special={'<|endoftext|>', ...}`.\nIf you want this text to be encoded as normal text, disable the check for this token by passing `disallowed_special=(enc.special_tokens_set - {'<|endoftext|>'})`.\nTo disable this check for all special tokens, pass `disallowed_special=()`.\n");
    assert_eq!(enc.encode(text, &SpecialTokens::All, &SpecialTokens::All).unwrap(), vec![87, 100257, 88]);
    assert_eq!(enc.encode(text, &SpecialTokens::of(["<|endoftext|>"]), &SpecialTokens::All).unwrap(), vec![87, 100257, 88]);
    assert_eq!(enc.encode(text, &SpecialTokens::none(), &SpecialTokens::none()).unwrap(), vec![87, 27, 91, 8862, 728, 428, 91, 29, 88]);
    // Allowed one, another one disallowed by default.
    assert!(enc.encode("<|fim_prefix|><|endoftext|>", &SpecialTokens::of(["<|endoftext|>"]), &SpecialTokens::All).is_err());
    assert_eq!(enc.count(text, &SpecialTokens::All, &SpecialTokens::All).unwrap(), 3);
    assert_eq!(enc.eot_token(), Some(100257));
    assert_eq!(enc.n_vocab(), 100277);
    assert_eq!(enc.special_tokens_set().len(), 5);
    assert_eq!(enc.encode_single_token(b"<|endofprompt|>").unwrap(), 100276);
    assert_eq!(enc.encode_single_token(b"Hello").unwrap(), 9906);
    assert!(enc.encode_single_token(b"Hello world").is_err());
}

#[test]
fn decoding() {
    let Some(enc) = load("cl100k_base", "cl100k_base") else { return };
    let ids = enc.encode_ordinary("héllo 日本").unwrap();
    // tiktoken: ('héllo 日本', [0, 1, 3, 5, 7])
    assert_eq!(enc.decode_with_offsets(&ids).unwrap(), ("héllo 日本".to_owned(), vec![0, 1, 3, 5, 7]));
    assert_eq!(enc.decode_single_token_bytes(9906).unwrap(), b"Hello");
    assert!(matches!(enc.decode_bytes(&[100256]), Err(Error::IdOutOfRange { id: 100256, .. })));
    assert!(enc.decode(&[u32::MAX]).is_err());
    // A lone first byte of a 3-byte char: lossy gives U+FFFD, strict fails.
    let half = enc.encode_ordinary("𒀀").unwrap();
    assert_eq!(half, vec![172, 240, 222, 222]);
    assert_eq!(enc.decode(&half[..1]).unwrap(), "\u{FFFD}");
    assert!(enc.decode_strict(&half[..1]).is_err());
}

#[test]
fn harmony_and_p50k_edit_specials() {
    if let Some(enc) = load("o200k_harmony", "o200k_base") {
        assert_eq!(enc.n_vocab(), 201088);
        assert_eq!(enc.special_tokens()["<|reserved_200018|>"], 200018);
        // tiktoken 0.14: both encode to 200018, which decodes to <|endofprompt|>.
        assert_eq!(enc.special_tokens()["<|endofprompt|>"], 200018);
        assert_eq!(enc.decode_single_token_bytes(200018).unwrap(), b"<|endofprompt|>");
        let ids = enc.encode("<|endofprompt|><|reserved_200018|>", &SpecialTokens::All, &SpecialTokens::All).unwrap();
        assert_eq!(ids, vec![200018, 200018]);
        assert_eq!(enc.special_tokens_set().len(), 1091);
    }
    if let Some(enc) = load("p50k_edit", "p50k_base") {
        assert_eq!(enc.n_vocab(), 50284);
    }
}

#[test]
fn unknown_encoding_is_an_error() {
    let err = Encoding::get("cl200k").unwrap_err().to_string();
    assert!(err.contains("unknown tiktoken encoding \"cl200k\""), "{err}");
}

/// Deterministic random text of `n` chars from `alphabet`.
fn random_text(alphabet: &[char], n: usize, mut x: u64) -> String {
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            alphabet[(x % alphabet.len() as u64) as usize]
        })
        .collect()
}

/// The fast paths (one- and two-byte pieces by table, short pieces in fixed arrays, long ones
/// by the search; ids appended in blocks or one by one) against tiktoken's algorithm piece by
/// piece: the whole piece when it is a token, else the plain merge loop.
#[test]
fn fast_paths_same_as_whole_piece_then_merge_loop() {
    use crate::tokenizer::Model as _;
    let printable: Vec<char> = (b'!'..=b'~').map(char::from).collect();
    let cjk: Vec<char> = (0x4E00..0x4E00 + 0x5000).filter_map(char::from_u32).collect();
    let mixed: Vec<char> = " \t\n\r'sStT0123456789aeiouxyzAEZ.,;:!?-_()[]{}/\\\"'éßſ日本語😀\u{301}\u{3000}".chars().collect();
    let texts = [
        random_text(&printable, 40_000, 0x9E37_79B9_7F4A_7C15),
        random_text(&cjk, 4_000, 0x2545_F491_4F6C_DD1D),
        random_text(&mixed, 40_000, 0x1234_5678_9ABC_DEF1),
    ];
    for name in ["cl100k_base", "o200k_base", "r50k_base"] {
        let Some(enc) = load(name, name) else { continue };
        let (bpe, _, regex) = enc.plan().unwrap();
        for text in &texts {
            let mut want = Vec::new();
            for (s, e) in regex.find_iter(text) {
                let word = format::byte_level_string(&text.as_bytes()[s..e]);
                match bpe.token_to_id(&word) {
                    Some(id) => want.push(id),
                    None => want.extend(bpe.merge_loop_ids(&word).unwrap()),
                }
            }
            assert_eq!(enc.encode_ordinary(text).unwrap(), want, "{name}");
            assert_eq!(enc.encode(text, &SpecialTokens::All, &SpecialTokens::none()).unwrap(), want, "{name}");
            assert_eq!(enc.count_ordinary(text).unwrap(), want.len(), "{name}");
            // The tokenizer pipeline (ids with offsets, token by token) gives the same ids,
            // and on ASCII text its offsets tile the text.
            let e = enc.tokenizer().encode(text.as_str(), false).unwrap();
            assert_eq!(e.get_ids(), want, "{name}");
            if text.is_ascii() {
                let mut at = 0;
                for &(s, end) in e.get_offsets() {
                    assert_eq!((s, end > s), (at, true), "{name}");
                    at = end;
                }
                assert_eq!(at, text.len(), "{name}");
            }
        }
    }
}

/// The 256 single bytes at their own ranks, then `extra` (tiktoken's shape of a rank table).
fn byte_ranks(extra: &[&[u8]]) -> crate::formats::tiktoken::Ranks {
    (0..=255u8).map(|b| Some(vec![b])).chain(extra.iter().map(|t| Some(t.to_vec()))).collect()
}

/// A special token at id 2^32 - 1 (tiktoken accepts it) costs one entry, not a table of 2^32
/// ids (which aborted on allocation); it encodes and decodes as in tiktoken 0.14.0
/// (`Encoding("x", pat_str=R50K, mergeable_ranks=bytes + {b"ab": 256}, special_tokens=
/// {"<|x|>": 2**32 - 1})`: `encode("ab<|x|>", allowed_special="all") == [256, 4294967295]`,
/// `n_vocab == 2**32`).
#[test]
fn a_sparse_special_token_id_is_accepted() {
    let specials = [("<|x|>".to_owned(), u32::MAX)];
    let enc = Encoding::new("x", format::R50K_PATTERN, byte_ranks(&[b"ab"]), &specials, None).unwrap();
    assert_eq!(enc.encode("ab<|x|>", &SpecialTokens::All, &SpecialTokens::none()).unwrap(), [256, u32::MAX]);
    assert_eq!(enc.decode_single_token_bytes(u32::MAX).unwrap(), b"<|x|>");
    assert_eq!(enc.decode(&[97, 256, u32::MAX]).unwrap(), "aab<|x|>");
    assert!(enc.decode_single_token_bytes(u32::MAX - 1).is_err());
    assert_eq!((enc.n_vocab(), enc.max_token_value()), (1 << 32, u32::MAX));
}

/// Loading is linear in a rank's token length (every split of it was hashed: one 300 KB
/// token took 28 s), and the long token encodes to its rank as in tiktoken (a piece that is
/// a token is that token).
#[test]
fn a_long_rank_token_loads_in_linear_time() {
    let build = |n: usize| byte_ranks(&[b"ab", "x".repeat(n).as_bytes()]);
    crate::utils::lexers::adversarial::assert_linear("a long rank token", &build(4096), &build(65_536), |r| {
        Encoding::new("x", format::R50K_PATTERN, r.clone(), &[], None).unwrap();
    });
    let enc = Encoding::new("x", format::R50K_PATTERN, build(300_000), &[], None).unwrap();
    assert_eq!(enc.encode_ordinary(&"x".repeat(300_000)).unwrap(), [257]);
    // One byte short of the long token: the search's trie walks stop where no reachable token
    // lies ahead, instead of walking the unreachable token's prefix from every position
    // (quadratic: 0.7 s for 20,000 bytes, 2.9 s for 40,000, minutes for 300,000).
    let short = |n: usize| {
        let enc = Encoding::new("x", format::R50K_PATTERN, build(n), &[], None).unwrap();
        (enc, "x".repeat(n - 1))
    };
    crate::utils::lexers::adversarial::assert_linear(
        "one byte short of a long rank token",
        &short(4_096),
        &short(65_536),
        |(enc, text)| assert_eq!(enc.encode_ordinary(text).unwrap().len(), text.len()),
    );
    let (enc, text) = short(300_000);
    assert_eq!(enc.encode_ordinary(&text).unwrap(), vec![u32::from(b'x'); 299_999]);
}

#[test]
fn cached_tables_read_back_to_the_same_encoding() {
    let mut ranks: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
    for t in [&b"he"[..], b"ll", b"hell", b"hello", b" w", b" wo", b"rl", b"rld", b" world", b"\xe4\xb8"] {
        ranks.push(Some(t.to_vec()));
    }
    let specials = vec![("<|end|>".to_owned(), 300), ("<|alias|>".to_owned(), 300), ("<|x|>".to_owned(), 301)];
    let enc = Encoding::build("t", format::R50K_PATTERN, &format::Ranks::from(ranks), &specials, None).unwrap();
    let payload = enc.write_table().expect("a byte-level rank table is cached");
    let back = Encoding::read_table("t", format::R50K_PATTERN, &specials, table_cache::Reader::new(&payload)).unwrap();
    let all = SpecialTokens::All;
    for text in ["hello world", " hello, world<|end|>", "hellhello  worldrld\n", "中文 <|x|><|alias|>", ""] {
        let ids = enc.encode(text, &all, &SpecialTokens::none()).unwrap();
        assert_eq!(back.encode(text, &all, &SpecialTokens::none()).unwrap(), ids, "{text:?}");
        assert_eq!(back.decode(&ids).unwrap(), enc.decode(&ids).unwrap());
    }
    assert_eq!((back.n_vocab(), back.special_tokens()), (enc.n_vocab(), enc.special_tokens()));
    assert_eq!(back.token_byte_values(), enc.token_byte_values());
    // A cut payload is an error (then the tables are built again), never a panic.
    for cut in (0..payload.len()).step_by(997) {
        assert!(Encoding::read_table("t", format::R50K_PATTERN, &specials, table_cache::Reader::new(&payload[..cut])).is_err(), "{cut}");
    }
}
