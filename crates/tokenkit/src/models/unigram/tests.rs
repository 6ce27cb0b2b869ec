//! Unigram against HF tokenizers 0.23.3: every expected value below is HF's output for the
//! same model (offsets converted from chars to bytes where they differ).

use super::*;

fn pieces(p: &[(&str, f64)]) -> Vec<(String, f64)> {
    p.iter().map(|&(s, sc)| (s.to_string(), sc)).collect()
}

fn run(m: &Unigram, s: &str) -> Vec<(u32, String, (usize, usize))> {
    m.tokenize(s).unwrap().into_iter().map(|t| (t.id, t.value, t.offsets)).collect()
}

#[test]
fn viterbi_best_path() {
    let m = Unigram::new(
        pieces(&[("<unk>", 0.0), ("a", 0.0), ("b", 0.0), ("c", 0.0), ("d", 0.0), ("cd", 1.0), ("ab", 2.0), ("abc", 5.0), ("abcd", 10.0)]),
        Some(0),
        false,
    )
    .unwrap();
    // HF: ['abcd', 'a', 'cd', 'xx'] [8, 1, 5, 0] [(0, 4), (4, 5), (5, 7), (7, 9)]
    assert_eq!(
        run(&m, "abcdacdxx"),
        vec![(8, "abcd".into(), (0, 4)), (1, "a".into(), (4, 5)), (5, "cd".into(), (5, 7)), (0, "xx".into(), (7, 9))]
    );
    // HF: the literal unk piece fuses with unknown chars: ['<unk>x'] [0] [(0, 6)].
    assert_eq!(run(&m, "<unk>x"), vec![(0, "<unk>x".into(), (0, 6))]);
    assert_eq!(run(&m, ""), vec![]);
}

#[test]
fn unk_and_byte_fallback() {
    let m = Unigram::new(pieces(&[("<unk>", 0.0), ("a", -1.5), ("b", -2.0)]), Some(0), true).unwrap();
    // HF: 'abxyb' -> ['a', 'b', 'xy', 'b'] [1, 2, 0, 2]; 'xé' -> ['xé'] [0] (chars (0, 2)).
    assert_eq!(run(&m, "abxyb"), vec![(1, "a".into(), (0, 1)), (2, "b".into(), (1, 2)), (0, "xy".into(), (2, 4)), (2, "b".into(), (4, 5))]);
    assert_eq!(run(&m, "xé"), vec![(0, "xé".into(), (0, 3))]);

    let m = Unigram::new(pieces(&[("<unk>", 0.0), ("a", -1.5), ("b", -2.0), ("<0x78>", -1.0)]), Some(0), true).unwrap();
    // HF: 'xxb' -> ['<0x78>', '<0x78>', 'b'] [3, 3, 2] [(0, 2), (0, 2), (2, 3)]; 'abxyb' unchanged (no <0x79>).
    assert_eq!(run(&m, "xxb"), vec![(3, "<0x78>".into(), (0, 2)), (3, "<0x78>".into(), (0, 2)), (2, "b".into(), (2, 3))]);
    assert_eq!(run(&m, "abxyb")[2], (0, "xy".into(), (2, 4)));
}

#[test]
fn missing_unk_id() {
    let m = Unigram::new(pieces(&[("a", -1.0)]), None, false).unwrap();
    assert_eq!(run(&m, "a"), vec![(0, "a".into(), (0, 1))]);
    // HF: "Encountered an unknown token but `unk_id` is missing".
    assert!(m.tokenize("ab").is_err());
}

#[test]
fn serialization_like_hf() {
    // HF 0.23.3: Tokenizer(Unigram([("<unk>",0.0),("a",-1.5),("b",-2.0)], 0, False)).to_str()["model"].
    let hf = r#"{"type":"Unigram","unk_id":0,"vocab":[["<unk>",0.0],["a",-1.5],["b",-2.0]],"byte_fallback":false}"#;
    let m: Unigram = serde_json::from_str(hf).unwrap();
    assert_eq!(serde_json::to_string(&m).unwrap(), hf);
    // Scores are parsed the way HF's serde_json parses them (not always correctly rounded):
    // HF 0.23.3 reads -11.363813895245277 and writes back -11.363813895245276. Viterbi ties
    // depend on the last bit, so this must stay identical.
    let m: Unigram =
        serde_json::from_str(r#"{"type":"Unigram","unk_id":null,"vocab":[["a",-11.363813895245277]],"byte_fallback":false}"#).unwrap();
    assert_eq!(
        serde_json::to_string(&m).unwrap(),
        r#"{"type":"Unigram","unk_id":null,"vocab":[["a",-11.363813895245276]],"byte_fallback":false}"#
    );
}

/// A load builds no trie: pieces are looked up by their text until the model has encoded
/// `LAZY_UNIGRAM_BYTES_PER_PIECE` bytes a piece, then the trie is built; tokens are the same
/// as with the trie built from the start (unknown chars, byte fallback and ties included: the
/// half-integer scores make many), and the cases above (HF's outputs) run on lookups.
#[test]
fn lookups_same_as_the_trie() {
    use rand::{Rng as _, SeedableRng as _};
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    let chars = ["a", "b", "é", "▁", "中", "x", "<0x78>"];
    let mut compared = 0;
    for _ in 0..50 {
        let mut p = vec![("<unk>".to_string(), 0.0)];
        for _ in 0..40 {
            let n = rng.gen_range(1..5);
            let piece: String = (0..n).map(|_| chars[rng.gen_range(0..7)]).collect();
            p.push((piece, -(rng.gen_range(1..20) as f64) / 2.0));
        }
        let unk = rng.gen_bool(0.9).then_some(0);
        let (lazy, eager) = (Unigram::new(p.clone(), unk, true).unwrap(), Unigram::new(p, unk, true).unwrap());
        eager.trie();
        assert!(!lazy.trie_built() && eager.trie_built());
        let texts: Vec<String> = (0..60).map(|_| (0..rng.gen_range(1..30)).map(|_| chars[rng.gen_range(0..6)]).collect()).collect();
        for text in &texts {
            let (a, b) =
                (lazy.tokenize(text).map(|t| t.into_iter().map(|t| (t.id, t.value, t.offsets)).collect::<Vec<_>>()), eager.tokenize(text));
            let b = b.map(|t| t.into_iter().map(|t| (t.id, t.value, t.offsets)).collect::<Vec<_>>());
            assert_eq!(a.is_ok(), b.is_ok(), "{text:?}");
            if let (Ok(a), Ok(b)) = (a, b) {
                assert_eq!(a, b, "{text:?} (trie built: {})", lazy.trie_built());
            }
            compared += 1;
        }
        assert!(lazy.trie_built(), "the trie was not built after {} bytes", texts.iter().map(String::len).sum::<usize>());
        assert_eq!(lazy.trie(), eager.trie());
    }
    assert_eq!(compared, 3000);
}
