//! `tokenkit encode` options for SentencePiece Unigram models: n-best segmentations and
//! subword-regularisation sampling (sentencepiece's `nbest_encode` and `sample_encode`).

use anyhow::{bail, Result};
use serde::Serialize;
use tokenkit::models::sentencepiece::proto::ModelType;
use tokenkit::models::ModelWrapper;
use tokenkit::{Token, Tokenizer};

use crate::{Inputs, Output};

/// The SentencePiece-only encode options.
#[derive(clap::Args, Default)]
pub struct SpArgs {
    /// Write the N best segmentations per input (SentencePiece Unigram models), best first:
    /// {"nbest": [{"ids": [...], "tokens": [...], "offsets": [...], "score": s}, ...]}.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..),
          conflicts_with_all = ["sample_alpha", "no_special", "full", "pretokenized", "split_special_tokens"])]
    pub nbest: Option<u32>,
    /// Sample a segmentation (subword regularisation, SentencePiece Unigram models) with
    /// weight exp(alpha * score).
    #[arg(long, value_name = "ALPHA", conflicts_with_all = ["no_special", "full", "pretokenized", "split_special_tokens"])]
    pub sample_alpha: Option<f32>,
    /// With --sample-alpha: sample among the K best segmentations (K > 1), or among all of
    /// them (K < 0, the default); 0 or 1 is the best segmentation.
    #[arg(long, value_name = "K", default_value_t = -1, allow_negative_numbers = true, requires = "sample_alpha")]
    pub nbest_size: i64,
    /// With --sample-alpha: the random seed (input i uses seed + i), for reproducible samples.
    #[arg(long, default_value_t = 0, requires = "sample_alpha")]
    pub seed: u64,
}

impl SpArgs {
    /// Whether any SentencePiece-only option was given.
    pub fn active(&self) -> bool {
        self.nbest.is_some() || self.sample_alpha.is_some()
    }

    /// The options and whether each was given (for errors where they do not apply).
    pub fn given(&self) -> [(&'static str, bool); 2] {
        [("--nbest", self.nbest.is_some()), ("--sample-alpha", self.sample_alpha.is_some())]
    }
}

#[derive(Serialize)]
struct Out<'a> {
    ids: Vec<u32>,
    tokens: Vec<&'a str>,
    offsets: Vec<(usize, usize)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    score: Option<f32>,
}

/// Tokens with their byte offsets turned into char offsets into `text`.
fn out<'a>(text: &str, tokens: &'a [Token], score: Option<f32>) -> Out<'a> {
    // Char index of each byte offset, computed incrementally (offsets are non-decreasing).
    let mut chars = 0;
    let mut at = 0;
    let mut to_chars = |b: usize| {
        if b < at {
            return text[..b].chars().count();
        }
        chars += text.get(at..b).map_or(0, |s| s.chars().count());
        at = b;
        chars
    };
    let offsets = tokens.iter().map(|t| (to_chars(t.offsets.0), to_chars(t.offsets.1))).collect();
    Out { ids: tokens.iter().map(|t| t.id).collect(), tokens: tokens.iter().map(|t| t.value.as_str()).collect(), offsets, score }
}

/// Runs n-best encoding or sampling over `inputs`, one JSON object per input.
pub fn encode(tok: &Tokenizer, args: &SpArgs, inputs: Inputs<String>, mut w: Output) -> Result<()> {
    let given = args.given().iter().filter(|(_, g)| *g).map(|(n, _)| *n).collect::<Vec<_>>().join(", ");
    let ModelWrapper::SentencePiece(model) = tok.get_model() else {
        bail!("{given} needs a SentencePiece Unigram .model file; this tokenizer's model is {}", tok.get_model().type_name());
    };
    if model.model_type() != ModelType::Unigram {
        bail!("{given} needs a SentencePiece Unigram model; this .model is {:?}", model.model_type());
    }
    for (i, item) in inputs.enumerate() {
        let (origin, text) = item?;
        let result = text.and_then(|text| {
            Ok(if let Some(n) = args.nbest {
                let nbest = model.nbest_encode(&text, n as usize)?;
                let list: Vec<Out> = nbest.iter().map(|(toks, score)| out(&text, toks, Some(*score))).collect();
                serde_json::json!({ "nbest": list })
            } else {
                let alpha = args.sample_alpha.unwrap_or_default();
                let toks = model.sample_encode(&text, args.nbest_size, alpha, args.seed.wrapping_add(i as u64))?;
                serde_json::to_value(out(&text, &toks, None))?
            })
        });
        w.result(origin, result)?;
    }
    w.finish()
}
