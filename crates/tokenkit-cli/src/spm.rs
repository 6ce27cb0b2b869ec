//! `tokenkit encode` options for SentencePiece Unigram models: n-best segmentations and
//! subword-regularisation sampling (sentencepiece's `nbest_encode` and `sample_encode`).

use std::io::{BufWriter, Write};

use anyhow::{anyhow, bail, Result};
use serde::Serialize;
use tokenkit::models::ModelWrapper;
use tokenkit::{Token, Tokenizer};

/// The SentencePiece-only encode options.
#[derive(clap::Args, Default)]
pub struct SpArgs {
    /// Write the N best segmentations per input (SentencePiece Unigram models), best first:
    /// {"nbest": [{"ids": [...], "tokens": [...], "offsets": [...], "score": s}, ...]}.
    #[arg(long, value_name = "N")]
    pub nbest: Option<usize>,
    /// Sample a segmentation (subword regularisation, SentencePiece Unigram models) with
    /// weight exp(alpha * score).
    #[arg(long, value_name = "ALPHA")]
    pub sample_alpha: Option<f32>,
    /// With --sample-alpha: sample among the K best segmentations (K > 1), or among all of
    /// them (K < 0, the default); 0 or 1 is the best segmentation.
    #[arg(long, value_name = "K", default_value_t = -1, allow_negative_numbers = true)]
    pub nbest_size: i64,
    /// With --sample-alpha: the random seed (input i uses seed + i), for reproducible samples.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

impl SpArgs {
    /// Whether any SentencePiece-only option was given.
    pub fn active(&self) -> bool {
        self.nbest.is_some() || self.sample_alpha.is_some()
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

/// Runs n-best encoding or sampling over `texts`, one JSON object per line.
pub fn encode(tok: &Tokenizer, args: &SpArgs, texts: &[String]) -> Result<()> {
    let ModelWrapper::SentencePiece(model) = tok.get_model() else {
        bail!("--nbest and --sample-alpha need a SentencePiece .model file (Unigram)");
    };
    let mut w = BufWriter::new(std::io::stdout().lock());
    for (i, text) in texts.iter().enumerate() {
        let line = i + 1;
        if let Some(n) = args.nbest {
            if n == 0 {
                bail!("--nbest must be at least 1");
            }
            let nbest = model.nbest_encode(text, n).map_err(|e| anyhow!("input {line}: {e}"))?;
            let list: Vec<Out> = nbest.iter().map(|(toks, score)| out(text, toks, Some(*score))).collect();
            serde_json::to_writer(&mut w, &serde_json::json!({ "nbest": list }))?;
        } else if let Some(alpha) = args.sample_alpha {
            let toks = model
                .sample_encode(text, args.nbest_size, alpha, args.seed.wrapping_add(i as u64))
                .map_err(|e| anyhow!("input {line}: {e}"))?;
            serde_json::to_writer(&mut w, &out(text, &toks, None))?;
        }
        w.write_all(b"\n")?;
    }
    w.flush()?;
    Ok(())
}
