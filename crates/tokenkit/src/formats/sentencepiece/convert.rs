//! `.model` → HF tokenizer.json. BPE models get transformers' `LlamaConverter` layout
//! (legacy: Prepend + Replace normalizer, no pre-tokenizer, BPE with merges generated from the
//! piece scores as `generate_merges` does, unk/control/user-defined pieces as added tokens,
//! Replace/ByteFallback/Fuse/Strip decoder); a model whose normalizer spec has a charsmap or
//! removes extra whitespace gets `Precompiled`, `Replace("\\A +| +\\z", "")` and
//! `Replace(" {2,}", " ")` in front.
//! Unigram models get the same layout with a Unigram model, rather than T5/XLNet's
//! `WhitespaceSplit + Metaspace` pre-tokenizer, and their user-defined pieces stay in the
//! vocabulary instead of becoming added tokens: the model then sees the whole normalized text,
//! as in sentencepiece, which avoids the known differences of the transformers conversions
//! (DATA.md: a trailing `\n` dropped with an `nfkc` charsmap; ALBERT's whitespace around
//! unknown chars).
//!
//! Remaining differences with sentencepiece: HF's Precompiled works per grapheme (shortest
//! match) where sentencepiece is leftmost-longest; HF's Unigram adds scores in `f64` and takes
//! the unknown score below the lowest score of any piece (sentencepiece: `f32`, normal pieces);
//! control pieces are special added tokens, so `<s>` in the text becomes a token; decoding
//! keeps the unknown surface but strips the space of a leading one.

use std::collections::HashMap;
use std::path::Path;

use base64::Engine as _;
use serde_json::{json, Value};

use super::model::SentencePiece;
use super::proto::{ModelType, PieceType};
use crate::tokenizer::Tokenizer;
use crate::{Error, Result};

/// The tokenizer.json document transformers' converters would write for `model` (a Unigram or
/// BPE model: HF has no model that segments as sentencepiece's character and word models do).
pub fn to_tokenizer_json(model: &SentencePiece) -> Result<Value> {
    let proto = model.proto();
    if !matches!(proto.model_type(), ModelType::Unigram | ModelType::Bpe) {
        return Err(Error::invalid(format!(
            "a SentencePiece {:?} model has no tokenizer.json form (HF tokenizers, like transformers' converters, has only Unigram and BPE); use the .model itself",
            proto.model_type()
        )));
    }
    let trainer = proto.trainer_spec.clone().unwrap_or_default();
    let norm = proto.normalizer_spec.clone().unwrap_or_default();
    let add_prefix = norm.add_dummy_prefix();
    let byte_fallback = model.byte_fallback();
    let pieces: Vec<(&str, f32, PieceType)> =
        proto.pieces.iter().map(|p| (p.piece.as_deref().unwrap_or(""), p.score.unwrap_or(0.0), p.kind())).collect();
    let model_type = proto.model_type();
    // User-defined pieces are added tokens only for BPE, whose merges could not form them. A
    // Unigram vocabulary scores them high enough that Viterbi keeps them whole, as
    // sentencepiece does; as added tokens they would cut the text before normalization and
    // each segment would get its own `▁` prefix, which sentencepiece does not do.
    let user_added = model_type == ModelType::Bpe;
    let added: Vec<Value> = pieces
        .iter()
        .enumerate()
        .filter(|(_, p)| match p.2 {
            PieceType::Unknown | PieceType::Control => true,
            PieceType::UserDefined => user_added,
            _ => false,
        })
        .map(|(id, p)| {
            json!({"id": id, "content": p.0, "single_word": false, "lstrip": false, "rstrip": false,
                   "normalized": false, "special": p.2 != PieceType::UserDefined})
        })
        .collect();
    // sentencepiece's normalization as HF stages, applied to the whole text (no
    // pre-tokenizer, so the model sees the whole normalized string as sentencepiece does).
    let mut norms = Vec::new();
    let charsmap = norm.precompiled_charsmap.as_deref().unwrap_or_default();
    if !charsmap.is_empty() {
        norms.push(json!({"type": "Precompiled",
                          "precompiled_charsmap": base64::engine::general_purpose::STANDARD.encode(charsmap)}));
    }
    if norm.remove_extra_whitespaces() {
        // Spaces only (the Strip normalizer would also remove a `\n` that an nfkc charsmap
        // keeps, and sentencepiece with it).
        norms.push(json!({"type": "Replace", "pattern": {"Regex": "\\A +| +\\z"}, "content": ""}));
        norms.push(json!({"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}));
    }
    if add_prefix {
        norms.push(json!({"type": "Prepend", "prepend": "\u{2581}"}));
    }
    if norm.escape_whitespaces() {
        norms.push(json!({"type": "Replace", "pattern": {"String": " "}, "content": "\u{2581}"}));
    }
    let unk = pieces.get(model.unk_id() as usize).map_or("<unk>", |p| p.0);
    let unk_surface = trainer.unk_surface.as_deref().unwrap_or(" \u{2047} ");
    let mut decoders = vec![
        json!({"type": "Replace", "pattern": {"String": "\u{2581}"}, "content": " "}),
        json!({"type": "Replace", "pattern": {"String": unk}, "content": unk_surface}),
    ];
    if byte_fallback || model_type == ModelType::Bpe {
        decoders.push(json!({"type": "ByteFallback"}));
    }
    decoders.push(json!({"type": "Fuse"}));
    if add_prefix {
        decoders.push(json!({"type": "Strip", "content": " ", "start": 1, "stop": 0}));
    }
    let model_json = if model_type == ModelType::Bpe {
        let vocab: serde_json::Map<String, Value> = pieces.iter().enumerate().map(|(i, p)| (p.0.to_owned(), json!(i))).collect();
        let merges: Vec<Value> = bpe_merges(&pieces).into_iter().map(|(l, r)| json!([l, r])).collect();
        json!({"type": "BPE", "dropout": null, "unk_token": unk, "continuing_subword_prefix": null,
               "end_of_word_suffix": null, "fuse_unk": true, "byte_fallback": byte_fallback,
               "ignore_merges": false, "vocab": vocab, "merges": merges})
    } else {
        let vocab: Vec<Value> = pieces.iter().map(|p| json!([p.0, p.1 as f64])).collect();
        json!({"type": "Unigram", "unk_id": model.unk_id(), "vocab": vocab, "byte_fallback": byte_fallback})
    };
    let normalizer = json!({"type": "Sequence", "normalizers": norms});
    let pre_tokenizer = Value::Null;
    let decoder = json!({"type": "Sequence", "decoders": decoders});
    Ok(json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": added,
        "normalizer": normalizer,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": null,
        "decoder": decoder,
        "model": model_json,
    }))
}

/// transformers' `generate_merges(vocab, vocab_scores)`: for every normal piece, each split
/// into two pieces of the vocabulary (ordered by their ids), all sorted by the merged piece's
/// score, highest first (stable, then longer left part, then longer right part first).
fn bpe_merges<'a>(pieces: &[(&'a str, f32, PieceType)]) -> Vec<(&'a str, &'a str)> {
    let ids: HashMap<&str, usize> = pieces.iter().enumerate().map(|(i, p)| (p.0, i)).collect();
    let mut merges: Vec<(&str, &str, f32)> = Vec::new();
    let mut local = Vec::new();
    for &(piece, score, kind) in pieces {
        if kind != PieceType::Normal {
            continue;
        }
        local.clear();
        for (i, _) in piece.char_indices().skip(1) {
            let (l, r) = piece.split_at(i);
            if let (Some(&li), Some(&ri)) = (ids.get(l), ids.get(r)) {
                local.push((li, ri, l, r));
            }
        }
        local.sort_by_key(|&(li, ri, _, _)| (li, ri));
        merges.extend(local.iter().map(|&(_, _, l, r)| (l, r, score)));
    }
    // Python's sorted(reverse=True) keeps equal keys in their original order.
    merges.sort_by(|a, b| {
        b.2.total_cmp(&a.2)
            .then_with(|| b.0.chars().count().cmp(&a.0.chars().count()))
            .then_with(|| b.1.chars().count().cmp(&a.1.chars().count()))
    });
    merges.into_iter().map(|(l, r, _)| (l, r)).collect()
}

/// Converts a `.model` file to an HF-layout tokenizer (what `tokenkit save` writes).
pub fn convert(path: &Path) -> Result<Tokenizer> {
    let model = super::read_model(path)?;
    crate::formats::from_value(to_tokenizer_json(&model)?, &format!("{} (converted)", path.display()))
}
