//! Property tests (proptest): byte-level encode → decode is lossless for any input, and decode
//! never panics for any id sequence, on the real fixtures when present and on tokenizers built
//! here otherwise.

use std::path::Path;
use std::sync::OnceLock;

use proptest::prelude::*;
use tokenkit::tiktoken::{Encoding, SpecialTokens};
use tokenkit::Tokenizer;

fn fixture(rel: &str) -> Option<std::path::PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.fixtures").join(rel);
    p.exists().then_some(p)
}

/// cl100k_base from the fixtures, or a byte-level encoding of the 256 bytes and a few merges.
fn tiktoken() -> &'static Encoding {
    static ENC: OnceLock<Encoding> = OnceLock::new();
    ENC.get_or_init(|| match fixture("tiktoken/cl100k_base.tiktoken") {
        Some(p) => Encoding::from_file(&p, None).unwrap(),
        None => {
            let mut ranks: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
            for t in ["th", "he", "the", " t", "in", "ing", "\u{e4}", "\u{65e5}\u{672c}"] {
                ranks.push(Some(t.as_bytes().to_vec()));
            }
            let n = ranks.len() as u32;
            Encoding::new("test", tokenkit::formats::tiktoken::CL100K_PATTERN, ranks, &[("<|endoftext|>".into(), n)], None).unwrap()
        }
    })
}

/// Tokenizers of every family to decode with: the fixtures (GPT-2, BERT, Llama-2's SentencePiece
/// model, XLNet) that are present, and always a WordLevel built here.
fn tokenizers() -> &'static [Tokenizer] {
    static TOKS: OnceLock<Vec<Tokenizer>> = OnceLock::new();
    TOKS.get_or_init(|| {
        let mut v: Vec<Tokenizer> = ["hub/gpt2.json", "hub/bert_base_cased.json", "hub/llama2.model", "hub/xlnet_base_cased.json"]
            .iter()
            .filter_map(|rel| fixture(rel))
            .map(|p| tokenkit::load(p).unwrap())
            .collect();
        v.push(
            Tokenizer::from_json(
                r#"{"version":"1.0","added_tokens":[{"id":3,"content":"[X]","single_word":false,"lstrip":false,
                "rstrip":false,"normalized":false,"special":true}],"normalizer":null,
                "pre_tokenizer":{"type":"WhitespaceSplit"},"post_processor":null,"decoder":null,
                "model":{"type":"WordLevel","vocab":{"<unk>":0,"a":1,"b":2},"unk_token":"<unk>"}}"#,
            )
            .unwrap(),
        );
        v
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Any bytes, valid UTF-8 or not, come back from byte-level BPE unchanged.
    #[test]
    fn byte_level_bytes_round_trip(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let enc = tiktoken();
        let ids = enc.encode_bytes(&bytes).unwrap();
        prop_assert_eq!(enc.decode_bytes(&ids).unwrap(), bytes);
    }

    /// Any text, special-token spellings included, comes back from a byte-level encoding.
    #[test]
    fn byte_level_text_round_trips(text in "(\\PC|<\\|endoftext\\|>|\\s){0,80}") {
        let enc = tiktoken();
        let ids = enc.encode(&text, &SpecialTokens::All, &SpecialTokens::none()).unwrap();
        prop_assert_eq!(enc.decode(&ids).unwrap(), text);
    }

    /// Decoding any ids gives text or an error (an id out of range), never a panic.
    #[test]
    fn decode_never_panics(ids in proptest::collection::vec(prop_oneof![0u32..300, 0u32..60_000, any::<u32>()], 0..40),
                           skip_special in any::<bool>()) {
        let enc = tiktoken();
        let _ = enc.decode_bytes(&ids);
        let _ = enc.decode(&ids);
        for tok in tokenizers() {
            let _ = tok.decode(&ids, skip_special);
        }
    }
}
