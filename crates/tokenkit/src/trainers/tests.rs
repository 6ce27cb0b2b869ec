//! Tests of word counting and `Tokenizer::train*`.

use super::*;
use crate::models::{WordLevel, BPE};
use crate::Tokenizer;

#[test]
fn trainer_json_matches_hf() {
    // `trainers.BpeTrainer().__getstate__()` in HF 0.23.3, minus `progress_format` and `words`.
    let j = serde_json::to_string(&TrainerWrapper::from(BpeTrainer::default())).unwrap();
    assert_eq!(
        j,
        r###"{"BpeTrainer":{"min_frequency":0,"vocab_size":30000,"show_progress":true,"special_tokens":[],"limit_alphabet":null,"initial_alphabet":[],"continuing_subword_prefix":null,"end_of_word_suffix":null,"max_token_length":null}}"###
    );
    let hf = r###"{"WordPieceTrainer":{"bpe_trainer":{"min_frequency":0,"vocab_size":30000,"show_progress":true,"progress_format":"Indicatif","special_tokens":[],"limit_alphabet":null,"initial_alphabet":[],"continuing_subword_prefix":"##","end_of_word_suffix":null,"max_token_length":null,"words":{}}}}"###;
    let t: TrainerWrapper = serde_json::from_str(hf).unwrap();
    assert_eq!(t, TrainerWrapper::from(WordPieceTrainer::default()));
    let hf = r###"{"UnigramTrainer":{"show_progress":true,"vocab_size":8000,"n_sub_iterations":2,"shrinking_factor":0.75,"special_tokens":[],"initial_alphabet":[],"unk_token":null,"max_piece_length":16,"seed_size":1000000,"words":{}}}"###;
    let t: TrainerWrapper = serde_json::from_str(hf).unwrap();
    assert_eq!(t, TrainerWrapper::from(UnigramTrainer::default()));
}

#[test]
fn train_bpe_from_iterator_adds_special_tokens() {
    let mut tok = Tokenizer::new(BPE::default());
    tok.with_pre_tokenizer(Some(serde_json::from_str(r#"{"type":"Whitespace"}"#).unwrap()));
    let trainer = TrainerWrapper::from(BpeTrainer {
        vocab_size: 30,
        special_tokens: vec![crate::AddedToken::from("[UNK]", true)],
        ..Default::default()
    });
    let report = tok.train_from_iterator(&trainer, ["hello world hello there", "a b c a b"].iter()).unwrap();
    assert_eq!(report.input.sequences, 2);
    assert_eq!(tok.token_to_id("[UNK]"), Some(0));
    // HF 0.23.3 gives 23 tokens here (no more pairs to merge).
    assert_eq!(tok.get_vocab_size(true), 23);
    assert!(tok.get_added_vocabulary().is_special_token("[UNK]"));
}

#[test]
fn empty_corpus_is_an_error() {
    let mut tok = Tokenizer::new(WordLevel::default());
    tok.with_pre_tokenizer(Some(serde_json::from_str(r#"{"type":"Whitespace"}"#).unwrap()));
    let trainer = TrainerWrapper::from(WordLevelTrainer::default());
    let err = tok.train_from_iterator(&trainer, ["   ", "\n"].iter()).unwrap_err();
    assert!(err.to_string().contains("no words"), "{err}");
}

#[test]
fn mismatched_model_is_an_error() {
    let mut tok = Tokenizer::new(WordLevel::default());
    let trainer = TrainerWrapper::from(BpeTrainer::default());
    let err = tok.train_from_iterator(&trainer, ["a b"].iter()).unwrap_err();
    assert!(err.to_string().contains("cannot train a WordLevel model with a BpeTrainer"), "{err}");
}

#[test]
fn counts_do_not_depend_on_threads() {
    let text: Vec<String> = (0..5000).map(|i| format!("w{} x{} common", i % 37, i % 11)).collect();
    let mut tok = Tokenizer::new(BPE::default());
    tok.with_pre_tokenizer(Some(
        serde_json::from_str(r#"{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true}"#).unwrap(),
    ));
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let (a, _) = one.install(|| tok.count_words_from_iterator(text.iter(), &NoProgress)).unwrap();
    let (b, _) = tok.count_words_from_iterator(text.iter(), &NoProgress).unwrap();
    assert_eq!(a, b);
    assert_eq!(a["Ġcommon"], 5000);
}
