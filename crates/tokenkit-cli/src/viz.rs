//! `tokenkit viz`: a self-contained HTML page showing how a tokenizer cuts a text (the
//! library's `tokenkit::tools::visualizer`).

use std::borrow::Cow;
use std::io::Read;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use tokenkit::tiktoken::{Encoding as TiktokenEncoding, SpecialTokens};
use tokenkit::tools::visualizer::{self, Markup, VizToken};
use tokenkit::Tokenizer;

use crate::{Loaded, Source};

#[derive(Args)]
pub struct VizArgs {
    #[command(flatten)]
    source: Source,
    /// The HTML file to write.
    #[arg(short, long, value_name = "OUT.html")]
    output: PathBuf,
    /// Do not add the post-processor's special tokens (HF's add_special_tokens=False).
    #[arg(long)]
    no_special: bool,
    /// The text (default: standard input).
    text: Option<String>,
}

pub fn run(args: VizArgs) -> Result<()> {
    let text = match args.text {
        Some(t) => t,
        None => {
            let mut t = String::new();
            std::io::stdin().read_to_string(&mut t).context("reading the text from standard input (it must be UTF-8)")?;
            t
        }
    };
    let name = args.source.display_name();
    let (shown, tokens) = match args.source.load()? {
        Loaded::Tiktoken(enc) => {
            crate::reject(&[("--no-special", args.no_special)], "in tiktoken mode: it encodes with encode_ordinary", "")?;
            tiktoken_tokens(&enc, &text, false)?
        }
        Loaded::Tokenizer(tok) => (text.clone(), tokenizer_tokens(&tok, &text, !args.no_special)?),
    };
    let body = visualizer::render(&shown, &tokens, &[], Markup::Detailed);
    let summary = format!(
        "{} tokens, {} bytes, {} characters: {:.2} bytes per token. Hover a token for its id and character offsets; \
         underlined characters are shared by several tokens (a character cut between bytes).",
        tokens.len(),
        shown.len(),
        shown.chars().count(),
        shown.len() as f64 / tokens.len().max(1) as f64
    );
    let html = visualizer::page(&name, &summary, &body);
    tokenkit::utils::atomic_file::write_atomic(&args.output, html.as_bytes())?;
    eprintln!("tokenkit: wrote {} ({} tokens)", args.output.display(), tokens.len());
    Ok(())
}

/// The tokens of a tokenizer's encoding, with character offsets as HF gives them in Python;
/// the whole text, without the padding or truncation a tokenizer.json may set for model inputs.
pub fn tokenizer_tokens(tok: &Tokenizer, text: &str, add_special_tokens: bool) -> Result<Vec<VizToken>> {
    let tok = unpadded(tok)?;
    let enc = tok.encode_char_offsets(text, add_special_tokens)?;
    let model = tok.get_model();
    // Special added tokens matched in the text (`<|im_start|>`) are special too, though HF's
    // special_tokens_mask marks only the post-processor's.
    let added = tok.get_added_vocabulary().get_added_tokens_decoder();
    let is_special_added = |id: u32| added.get(&id).is_some_and(|t| t.special);
    Ok(enc
        .get_ids()
        .iter()
        .zip(enc.get_tokens())
        .zip(enc.get_offsets())
        .zip(enc.get_special_tokens_mask())
        .map(|(((&id, token), &(s, e)), &special)| VizToken {
            id,
            token: token.clone(),
            chars: (e > s).then_some((s, e)),
            special: special != 0 || is_special_added(id),
            byte_fallback: model.is_byte_fallback(id),
        })
        .collect())
}

/// `tok` without padding or truncation: borrowed when it has neither (a copy of a large
/// vocabulary per call is what the playground must not pay on every keystroke).
pub fn unpadded(tok: &Tokenizer) -> Result<Cow<'_, Tokenizer>> {
    if tok.get_padding().is_none() && tok.get_truncation().is_none() {
        return Ok(Cow::Borrowed(tok));
    }
    let mut owned = tok.clone();
    owned.with_truncation(None)?.with_padding(None)?;
    Ok(Cow::Owned(owned))
}

/// The tokens of tiktoken's `encode_ordinary` (with `allow_special`, of `encode` with every
/// special token allowed: a rendered chat), with the characters their bytes cover (a token
/// holding part of a character covers it whole), and the text they cut (the input, or its NFC
/// form for the encodings that normalize).
pub fn tiktoken_tokens(enc: &TiktokenEncoding, text: &str, allow_special: bool) -> Result<(String, Vec<VizToken>)> {
    let ids = if allow_special { enc.encode(text, &SpecialTokens::All, &SpecialTokens::none())? } else { enc.encode_ordinary(text)? };
    let pieces = enc.decode_tokens_bytes(&ids)?;
    let mut bytes = Vec::with_capacity(text.len());
    let mut spans = Vec::with_capacity(ids.len());
    for b in &pieces {
        spans.push((bytes.len(), bytes.len() + b.len()));
        bytes.extend_from_slice(b);
    }
    let shown = String::from_utf8(bytes).context("the tokens' bytes are not the UTF-8 text")?;
    // The character index of each byte.
    let mut char_of = Vec::with_capacity(shown.len() + 1);
    for (i, c) in shown.chars().enumerate() {
        char_of.extend(std::iter::repeat_n(i, c.len_utf8()));
    }
    let n_chars = char_of.last().map_or(0, |&i| i + 1);
    char_of.push(n_chars);
    let tokens = ids
        .iter()
        .zip(pieces)
        .zip(spans)
        .map(|((&id, piece), (s, e))| VizToken {
            id,
            token: String::from_utf8_lossy(piece).into_owned(),
            chars: (e > s).then(|| (char_of[s], char_of[e - 1] + 1)),
            special: enc.is_special_token(id),
            byte_fallback: false,
        })
        .collect();
    Ok((shown, tokens))
}
