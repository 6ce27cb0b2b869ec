//! BPE against HF tokenizers 0.23.3: every expected value below is HF's output for the same
//! model (offsets converted from chars to bytes where they differ).

use super::*;

fn vocab(entries: &[(&str, u32)]) -> Vec<(String, u32)> {
    entries.iter().map(|&(t, i)| (t.to_string(), i)).collect()
}

fn merges(pairs: &[(&str, &str)]) -> Merges {
    pairs.iter().map(|&(a, b)| (a.to_string(), b.to_string())).collect()
}

fn run(m: &BPE, s: &str) -> Vec<(u32, String, (usize, usize))> {
    m.tokenize(s).unwrap().into_iter().map(|t| (t.id, t.value, t.offsets)).collect()
}

fn ids(m: &BPE, s: &str) -> Vec<u32> {
    m.tokenize(s).unwrap().into_iter().map(|t| t.id).collect()
}

const V: &[(&str, u32)] = &[("a", 0), ("b", 1), ("ab", 2), ("<unk>", 3), ("c", 4), ("abc", 5), ("##b", 6), ("a##b", 7)];

#[test]
fn unk_not_fused_and_fused() {
    let m = BPE::builder().vocab_and_merges(vocab(&V[..5]), merges(&[("a", "b")])).unk_token(Some("<unk>".into())).build().unwrap();
    assert_eq!(
        run(&m, "abxxc"),
        vec![(2, "ab".into(), (0, 2)), (3, "<unk>".into(), (2, 3)), (3, "<unk>".into(), (3, 4)), (4, "c".into(), (4, 5))]
    );
    let fused = BPE::builder()
        .vocab_and_merges(vocab(&V[..5]), merges(&[("a", "b")]))
        .unk_token(Some("<unk>".into()))
        .fuse_unk(true)
        .build()
        .unwrap();
    // HF: ['<unk>', 'ab', '<unk>'] [3, 2, 3] [(0, 2), (2, 4), (4, 6)] (chars) for "xxabyé".
    assert_eq!(run(&fused, "xxabyé"), vec![(3, "<unk>".into(), (0, 2)), (2, "ab".into(), (2, 4)), (3, "<unk>".into(), (4, 7))]);
}

#[test]
fn without_unk_unknown_chars_vanish() {
    let m = BPE::new(vocab(V), merges(&[("a", "b")])).unwrap();
    // HF: 'axb' -> ['ab'] (0, 2): the dropped char lets its neighbours merge.
    assert_eq!(run(&m, "axb"), vec![(2, "ab".into(), (0, 2))]);
    assert_eq!(run(&m, "xyz"), vec![]);
    assert_eq!(run(&m, ""), vec![]);
    let bad = BPE::builder().vocab_and_merges(vocab(V), vec![]).unk_token(Some("zz".into())).build().unwrap();
    let e = bad.tokenize("axb").unwrap_err().to_string();
    assert!(e.contains("`zz`"), "{e}");
}

#[test]
fn prefix_and_suffix() {
    let v = [
        ("a", 0),
        ("b", 1),
        ("ab", 2),
        ("c", 3),
        ("b</w>", 4),
        ("ab</w>", 5),
        ("##b", 6),
        ("a##b", 7),
        ("##c</w>", 8),
        ("ab##c</w>", 9),
        ("abc</w>", 10),
        ("##b</w>", 11),
    ];
    let m = BPE::builder()
        .vocab_and_merges(vocab(&v), merges(&[("a", "##b"), ("ab", "##c</w>")]))
        .continuing_subword_prefix(Some("##".into()))
        .end_of_word_suffix(Some("</w>".into()))
        .build()
        .unwrap();
    // HF: 'abc' -> ['abc</w>']; 'ab' -> ['a', '##b</w>']; 'a' -> []; 'b' -> ['b</w>'].
    assert_eq!(run(&m, "abc"), vec![(10, "abc</w>".into(), (0, 3))]);
    assert_eq!(run(&m, "ab"), vec![(0, "a".into(), (0, 1)), (11, "##b</w>".into(), (1, 2))]);
    assert_eq!(run(&m, "a"), vec![]);
    assert_eq!(run(&m, "b"), vec![(4, "b</w>".into(), (0, 1))]);
}

#[test]
fn byte_fallback() {
    let mut v = vocab(V);
    v.extend((0..=255u8).map(|b| (byte_token(b), 100 + b as u32)));
    let m = BPE::builder()
        .vocab_and_merges(v, vec![])
        .continuing_subword_prefix(Some("##".into()))
        .byte_fallback(true)
        .unk_token(Some("<unk>".into()))
        .build()
        .unwrap();
    // HF: 'aé' -> ['a', '<0x23>', '<0x23>', '<0xC3>', '<0xA9>'] (the prefix's bytes included).
    assert_eq!(ids(&m, "aé"), vec![0, 135, 135, 295, 269]);
    assert_eq!(ids(&m, "ab"), vec![0, 6]);

    // Only <0x78> exists: 'ayxya' -> a, <0x78>, <unk> (fused y..y), a.
    let mut v = vocab(V);
    v.push(("<0x78>".into(), 200));
    let m = BPE::builder().vocab_and_merges(v, vec![]).byte_fallback(true).fuse_unk(true).unk_token(Some("<unk>".into())).build().unwrap();
    assert_eq!(
        run(&m, "ayxya"),
        vec![(0, "a".into(), (0, 1)), (200, "<0x78>".into(), (1, 2)), (3, "<unk>".into(), (2, 4)), (0, "a".into(), (4, 5))]
    );
}

#[test]
fn ignore_merges_and_dropout() {
    let build =
        |dropout| BPE::builder().vocab_and_merges(vocab(V), merges(&[("a", "b")])).ignore_merges(true).dropout(dropout).build().unwrap();
    // HF: with ignore_merges, 'abc' is one token; with dropout 1.0 ignore_merges is not applied.
    assert_eq!(ids(&build(None), "abc"), vec![5]);
    assert_eq!(ids(&build(Some(0.0)), "abc"), vec![5]);
    assert_eq!(ids(&build(Some(1.0)), "abc"), vec![0, 1, 4]);
    assert_eq!(ids(&build(Some(1.0)), "ab"), vec![0, 1]);
    assert!(BPE::builder().dropout(Some(1.5)).build().is_err());
}

#[test]
fn seeded_dropout_is_reproducible() {
    let v: Vec<(String, u32)> = ["a", "b", "ab", "aba", "abab"].iter().enumerate().map(|(i, t)| (t.to_string(), i as u32)).collect();
    let m = BPE::builder().vocab_and_merges(v, merges(&[("a", "b"), ("ab", "a"), ("ab", "ab")])).dropout(Some(0.5)).build().unwrap();
    let a = m.clone().with_seed(42);
    let b = m.with_seed(42);
    let word = "ababababababab";
    let runs_a: Vec<Vec<u32>> = (0..20).map(|_| ids(&a, word)).collect();
    let runs_b: Vec<Vec<u32>> = (0..20).map(|_| ids(&b, word)).collect();
    assert_eq!(runs_a, runs_b);
    assert!(runs_a.iter().any(|r| r != &runs_a[0]), "dropout should vary between calls");
}

#[test]
fn cache_does_not_change_results() {
    let m = BPE::new(vocab(V), merges(&[("a", "b")])).unwrap();
    let mut uncached = m.clone();
    uncached.resize_cache(0);
    for s in ["ab", "abc", "cab", "ab", "abab", "abc"] {
        assert_eq!(run(&m, s), run(&uncached, s));
    }
}

#[test]
fn serialization_like_hf() {
    // HF 0.23.3: Tokenizer(BPE(vocab, [("a","b")], unk_token="<unk>")).to_str()["model"].
    let hf = r#"{"type":"BPE","dropout":null,"unk_token":"<unk>","continuing_subword_prefix":null,"end_of_word_suffix":null,"fuse_unk":false,"byte_fallback":false,"ignore_merges":false,"vocab":{"a":0,"b":1,"ab":2,"<unk>":3,"c":4},"merges":[["a","b"]]}"#;
    let m: BPE = serde_json::from_str(hf).unwrap();
    assert_eq!(serde_json::to_string(&m).unwrap(), hf);
    // Legacy: "a b" merges, no type, no newer fields.
    let legacy = r#"{"dropout":null,"unk_token":"<unk>","continuing_subword_prefix":null,"end_of_word_suffix":null,"fuse_unk":false,"vocab":{"a":0,"b":1,"ab":2,"<unk>":3,"c":4},"merges":["a b"]}"#;
    let l: BPE = serde_json::from_str(legacy).unwrap();
    assert_eq!(l, m);
    assert_eq!(serde_json::to_string(&l).unwrap(), hf);
}

#[test]
fn cutting_before_metaspace_does_not_change_results() {
    use rand::{Rng, SeedableRng};
    let mut rng = StdRng::seed_from_u64(3);
    let chars = ["a", "b", "▁", "é"];
    let mut cut_models = 0;
    for _ in 0..200 {
        let mut tokens: Vec<String> = chars.iter().map(|c| c.to_string()).collect();
        tokens.push("<unk>".into());
        let mut merge_list = Merges::new();
        for _ in 0..rng.gen_range(1..25) {
            let a = tokens[rng.gen_range(0..tokens.len())].clone();
            let b = tokens[rng.gen_range(0..tokens.len())].clone();
            if a == "<unk>" || b == "<unk>" {
                continue;
            }
            let joined = format!("{a}{b}");
            if !tokens.contains(&joined) {
                tokens.push(joined);
            }
            merge_list.push((a, b));
        }
        let v: Vec<(String, u32)> = tokens.iter().enumerate().map(|(i, t)| (t.clone(), i as u32)).collect();
        let m = BPE::builder().vocab_and_merges(v, merge_list).unk_token(Some("<unk>".into())).fuse_unk(rng.gen()).build().unwrap();
        let mut whole = m.clone();
        whole.cut = None;
        whole.resize_cache(0);
        cut_models += usize::from(m.cut.is_some());
        for _ in 0..30 {
            let s: String = (0..rng.gen_range(0..20)).map(|_| ["a", "b", "▁", "é", "x"][rng.gen_range(0..5)]).collect();
            assert_eq!(run(&m, &s), run(&whole, &s), "{s:?}");
        }
    }
    assert!(cut_models > 20, "{cut_models}");
}

/// Deterministic random numbers (xorshift from `state`): `next(m)` is below `m`.
fn xorshift(mut state: u64) -> impl FnMut(u64) -> u64 {
    move |m| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % m
    }
}

/// Long pieces that repeat themselves (runs of one char at many lengths and phases, repeated
/// patterns, runs broken by other chars, a repeated paragraph), long enough for the search to
/// reuse windows of its path (`repeats`): the backtracker and the raw-byte encoder give the
/// merge loop's ids, on the cl100k, o200k, GPT-2 and Llama-3 vocabularies.
#[test]
fn repeated_text_same_as_merge_loop() {
    use crate::models::ModelWrapper;
    use crate::utils::byte_level::BYTES_CHAR;
    let mut texts: Vec<String> = Vec::new();
    for unit in ["/", "\t", "-", "=", "#", "*", " ", "!", "a", "1", "\u{65e5}", "\u{1f600}"] {
        for n in [1024, 1031, 1100, 1153, 2049, 4099] {
            texts.push(unit.repeat(n / unit.len()));
            texts.push(format!("!{}", unit.repeat(n / unit.len())));
            texts.push(format!("{}?/", unit.repeat(n / unit.len())));
        }
    }
    for unit in ["!/", "/*", "ab", "a b", "-=", "\t\n", "//!", "x/yz"] {
        texts.push(unit.repeat(3001 / unit.len()));
    }
    // Runs of `/` and tabs of random lengths between random punctuation (xorshift, fixed seed).
    let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
    for unit in ["/", "\t"] {
        let mut s = String::new();
        while s.len() < 20_000 {
            s.push_str(&unit.repeat(60 + next(400) as usize));
            s.push(['!', '?', '.', '#', '-', '/', '\t'][next(7) as usize]);
        }
        texts.push(s);
    }
    let corpora = crate::test_fixtures::corpora();
    let paragraph = ["en/pride_and_prejudice.txt", "builtin/en/sample.txt"]
        .iter()
        .find_map(|rel| std::fs::read_to_string(corpora.join(rel)).ok())
        .expect("an English corpus");
    let paragraph: String = paragraph.chars().take(700).collect();
    texts.push(paragraph.repeat(5));
    let models: Vec<BPE> = ["cl100k_base", "o200k_base"]
        .into_iter()
        .filter_map(|name| {
            let file = crate::test_fixtures::get(&format!("tiktoken/{name}.tiktoken"))?;
            let enc = crate::tiktoken::Encoding::from_file(&file, Some(name)).unwrap();
            let ModelWrapper::BPE(bpe) = enc.tokenizer().get_model() else { panic!("BPE") };
            Some(bpe.clone())
        })
        .chain(["hub/gpt2.json", "registry/llama3/tokenizer.json"].into_iter().filter_map(|rel| {
            let tok = crate::Tokenizer::from_file(crate::test_fixtures::get(rel)?).unwrap();
            let ModelWrapper::BPE(bpe) = tok.get_model() else { panic!("BPE") };
            Some(bpe.clone())
        }))
        .collect();
    assert!(models.len() >= 2, "the tiktoken fixtures and the registry's Llama-3 are always there");
    let mut scratch = backtrack::BacktrackScratch::default();
    let mut compared = 0;
    for bpe in &models {
        let bt = bpe.backtracker().expect("the backtracker applies");
        let raw = bpe.byte_level().expect("a byte-level model");
        for text in &texts {
            let word: String = text.bytes().map(|b| BYTES_CHAR[b as usize]).collect();
            let reference = bpe.merge_loop_ids(&word).unwrap();
            let mut ours = Vec::new();
            assert!(bt.encode(word.as_bytes(), &mut ours, &mut scratch));
            assert_eq!(ours, reference, "{bpe:?} on {:?}", text.chars().take(40).collect::<String>());
            let mut ours = Vec::new();
            raw.extend_tokens(text.as_bytes(), &mut ours);
            assert_eq!(ours, reference, "{bpe:?} (raw bytes) on {:?}", text.chars().take(40).collect::<String>());
            compared += 1;
        }
    }
    eprintln!("{compared} long repeated pieces identical to the merge loop");
    assert_eq!(compared, models.len() * texts.len());
}

/// Asserts that both raw-byte entry points give `reference` for `piece`: `extend_tokens` (after
/// an id already in the output, which it must keep) and `for_each_token` (whose lengths must
/// add up to the piece's).
fn assert_raw_tokens(raw: &ByteLevelBpe, piece: &[u8], reference: &[u32], what: &str) {
    let mut ours = vec![7];
    raw.extend_tokens(piece, &mut ours);
    assert_eq!((ours[0], &ours[1..]), (7, reference), "{what}");
    let (mut each, mut len) = (Vec::new(), 0);
    raw.for_each_token(piece, |id, n| {
        each.push(id);
        len += n as usize;
    });
    assert_eq!((&each[..], len), (reference, piece.len()), "{what}");
}

/// Pieces cut where no merge crosses ([`byte_level`]'s crossings): random code points,
/// punctuation, CJK, emoji and letters, and pieces of the adversarial texts of every length up
/// to a few hundred bytes, for each byte-level fixture model: the merge loop's ids, through
/// both raw-byte entry points. The cells of the linear benchmark also check these texts
/// against the reference library.
#[test]
fn cut_pieces_same_as_merge_loop() {
    use crate::models::ModelWrapper;
    use crate::utils::byte_level::BYTES_CHAR;
    let models: Vec<BPE> = ["hub/gpt2.json", "registry/llama3/tokenizer.json", "registry/qwen3/tokenizer.json"]
        .into_iter()
        .filter_map(|rel| {
            let tok = crate::Tokenizer::from_file(crate::test_fixtures::get(rel)?).unwrap();
            let ModelWrapper::BPE(bpe) = tok.get_model() else { panic!("BPE") };
            Some(bpe.clone())
        })
        .collect();
    assert!(!models.is_empty(), "the registry's Llama-3 is always there");
    let mut next = xorshift(0x2545_F491_4F6C_DD1D);
    let alphabet: Vec<char> =
        "!?/#-=.,;:()[]{}<>@$%^&*_~`'\" a1Z\u{e9}\u{65e5}\u{672c}\u{4e2d}\u{56fd}\u{1f600}\u{1f44d}\u{301}\u{3002}\u{20ac}\u{ff01}"
            .chars()
            .collect();
    let mut pieces: Vec<String> = Vec::new();
    for _ in 0..3000 {
        let len = 1 + next(40) as usize;
        let piece: String = (0..len)
            .map(|_| match next(3) {
                0 => alphabet[next(alphabet.len() as u64) as usize],
                1 => char::from_u32(next(0x1_0000) as u32).unwrap_or('\u{fffd}'),
                _ => char::from_u32(0x1_0000 + next(0x10_0000) as u32).unwrap_or('\u{fffd}'),
            })
            .collect();
        pieces.push(piece);
    }
    for (_, text) in crate::utils::lexers::adversarial_texts(4096) {
        let mut at = 0;
        while at < text.len() {
            let mut end = (at + 1 + next(300) as usize).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            pieces.push(text[at..end].to_owned());
            at = end;
        }
    }
    let (mut compared, cut_before) = (0, byte_level::CUT_PIECES.get());
    for bpe in &models {
        // Made by a load: no crossings until enough pieces need them (searched whole before).
        let lazy = ByteLevelBpe::new(&bpe.vocab, &bpe.merges, &bpe.chars, bpe.ignore_merges).expect("a byte-level model");
        let read_back = |raw: &ByteLevelBpe| {
            let mut w = crate::utils::table_cache::Writer::default();
            raw.write_table(&mut w);
            ByteLevelBpe::read_table(&mut crate::utils::table_cache::Reader::new(&w.buf), &bpe.merges).unwrap()
        };
        // Its first char is no token of any model (a last private-use code point): it may be cut.
        // Longer than the searched pieces' cache keeps, so that every call comes to the search.
        let piece = "\u{10FFFD}\u{4e2d}\u{56fd}\u{1F44D}\u{4e2d}\u{56fd}\u{1F44D}\u{4e2d}\u{56fd}\u{1F44D}".as_bytes();
        let (mut first, mut again) = (Vec::new(), Vec::new());
        lazy.extend_tokens(piece, &mut first);
        assert_eq!((lazy.crossings_made(), read_back(&lazy).crossings_made()), (None, None));
        for _ in 0..byte_level::CROSSINGS_AFTER {
            again.clear();
            lazy.extend_tokens(piece, &mut again);
        }
        let made = lazy.crossings_made().flatten().expect("crossings made");
        assert_eq!((made.len(), &again), (1024, &first));
        // Written to the table cache once made, read back with them (no pass over the merges).
        let back = read_back(&lazy);
        assert_eq!(back.crossings_made(), Some(Some(made)));
        let raws = [bpe.byte_level().expect("a byte-level model"), &lazy, &back];
        for piece in &pieces {
            let word: String = piece.bytes().map(|b| BYTES_CHAR[b as usize]).collect();
            if bpe.vocab().contains(&word) {
                continue;
            }
            let reference = bpe.merge_loop_ids(&word).unwrap();
            for raw in raws {
                assert_raw_tokens(raw, piece.as_bytes(), &reference, &format!("{piece:?}"));
                compared += 1;
            }
        }
    }
    assert!(compared > 3 * 3000 * models.len(), "{compared}");
    // Not vacuous: many pieces were cut (each model's random code points).
    let cut = byte_level::CUT_PIECES.get() - cut_before;
    eprintln!("{compared} pieces identical to the merge loop, {cut} of them cut");
    assert!(cut > 1000 * models.len(), "{cut}");
}

/// Words of more than [`backtrack::SHORT`] bytes, one token or several, encoded again and
/// again by two encoders of each model (a load and its table-cache copy, so two serials)
/// through both raw-byte entry points: the merge loop's ids every time, most of them answered
/// by the searched pieces' cache after their first encode, and none by the other encoder's.
#[test]
fn searched_pieces_cache_same_as_merge_loop() {
    use crate::models::ModelWrapper;
    use crate::utils::byte_level::BYTES_CHAR;
    let mut models: Vec<BPE> = Vec::new();
    for rel in ["hub/gpt2.json", "registry/llama3/tokenizer.json"] {
        let Some(file) = crate::test_fixtures::get(rel) else { continue };
        let tok = crate::Tokenizer::from_file(file).unwrap();
        let ModelWrapper::BPE(bpe) = tok.get_model() else { panic!("BPE") };
        models.push(bpe.clone());
    }
    assert!(!models.is_empty(), "the registry's Llama-3 is always there");
    // Words and pieces around the cache's bounds (7 to 30 bytes; one of 24 bytes exactly),
    // with spaces, case, digits, punctuation runs and non-ASCII letters.
    let words = [
        " begotten",
        " Jerusalem's",
        " unfathomably",
        " antidisestablishment",
        " Zyxwvutsrqponm",
        "!!!!!!!!!!",
        " ____________________",
        " \u{e9}t\u{e9}s-l\u{e0}",
        " \u{4e2d}\u{56fd}\u{4eba}",
        "tokenizers",
        " supercalifragilisti",
        " understanding",
        "        ",
        " international",
        " abcdefghijklmnopqrstuvw",
        " qwertyuiopasdfghjklzxcvbnmqwe",
    ];
    let (mut compared, hits_before) = (0, byte_level::LONG_HITS.get());
    for bpe in &models {
        let first = ByteLevelBpe::new(&bpe.vocab, &bpe.merges, &bpe.chars, bpe.ignore_merges).expect("a byte-level model");
        let mut w = crate::utils::table_cache::Writer::default();
        first.write_table(&mut w);
        let second = ByteLevelBpe::read_table(&mut crate::utils::table_cache::Reader::new(&w.buf), &bpe.merges).unwrap();
        for round in 0..3 {
            for raw in [&first, &second] {
                for word in words {
                    let mapped: String = word.bytes().map(|b| BYTES_CHAR[b as usize]).collect();
                    // A word that is one token is that token (the model's `ignore_merges`, or
                    // the merges reach it); the others are the merge loop's.
                    let reference = match bpe.vocab().id(&mapped) {
                        Some(id) if bpe.ignore_merges || bpe.merge_loop_ids(&mapped).unwrap() == [id] => vec![id],
                        _ => bpe.merge_loop_ids(&mapped).unwrap(),
                    };
                    assert_raw_tokens(raw, word.as_bytes(), &reference, &format!("{word:?}, round {round}"));
                    compared += 2;
                }
            }
        }
    }
    let hits = byte_level::LONG_HITS.get() - hits_before;
    eprintln!("{compared} encodes of long pieces identical to the merge loop, {hits} from the cache");
    assert_eq!(compared, 2 * 3 * 2 * 16 * models.len());
    // Each encoder misses a word once (the longest are not kept), then hits it five times.
    assert!(hits >= compared / 2, "{hits} of {compared}");
}
