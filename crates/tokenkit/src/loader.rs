//! Any tokenizer file, its format detected ([`crate::formats::detect`]): [`load`] it, or describe it
//! ([`inspect_file`]). Above `formats` and `tiktoken`: a `.tiktoken` rank file loads through
//! [`tiktoken::Encoding`] (its table cache, its named encoding's pattern and special tokens),
//! every other format through its reader in [`crate::formats`].

use std::path::Path;

use crate::formats::{detect, gguf, gpt2_files, inspect, sentencepiece, tekken, vocab_txt, Format};
use crate::tiktoken;
use crate::tokenizer::Tokenizer;
use crate::Result;

/// Loads a tokenizer from any supported format.
pub fn load(path: impl AsRef<Path>) -> Result<Tokenizer> {
    match detect(path.as_ref())? {
        Format::TokenizerJson(p) => Tokenizer::from_file(p),
        Format::VocabTxt(p) => vocab_txt::from_vocab_txt(&p),
        Format::Gpt2 { vocab, merges } => gpt2_files::from_vocab_merges(&vocab, &merges),
        Format::Tiktoken(p) => Ok(tiktoken::Encoding::from_file(&p, None)?.tokenizer_with_rank_ids()?.clone()),
        Format::SentencePiece(p) => sentencepiece::from_model_file(&p),
        Format::Tekken(p) => tekken::from_tekken_file(&p),
        Format::Gguf(p) => gguf::from_gguf_file(&p),
    }
}

/// Loads a tokenizer in the form `tokenkit save` writes: like [`load`], except that a
/// SentencePiece `.model` is converted to HF's layout (as transformers' converters do).
pub fn load_for_save(path: impl AsRef<Path>) -> Result<Tokenizer> {
    match detect(path.as_ref())? {
        Format::SentencePiece(p) => sentencepiece::convert::convert(&p),
        _ => load(path),
    }
}

/// What `tokenkit inspect` prints for the file at `path`: its format, then for a
/// SentencePiece `.model` the [`sentencepiece::summary`], for a tiktoken rank file the
/// encoding's summary, and the pipeline and vocabulary ([`inspect`]).
pub fn inspect_file(path: impl AsRef<Path>) -> Result<String> {
    let format = detect(path.as_ref())?;
    let (name, extra, tok) = match &format {
        Format::Tiktoken(p) => return Ok(tiktoken::Encoding::from_file(p, None)?.inspect()),
        Format::TokenizerJson(p) => (format!("HF tokenizer.json ({})", p.display()), String::new(), Tokenizer::from_file(p)?),
        Format::VocabTxt(p) => (format!("BERT WordPiece vocab.txt ({})", p.display()), String::new(), vocab_txt::from_vocab_txt(p)?),
        Format::Gpt2 { vocab, merges } => (
            format!("GPT-2 vocab.json + merges ({}, {})", vocab.display(), merges.display()),
            String::new(),
            gpt2_files::from_vocab_merges(vocab, merges)?,
        ),
        Format::SentencePiece(p) => {
            let tok = sentencepiece::from_model_file(p)?;
            let crate::models::ModelWrapper::SentencePiece(model) = tok.get_model() else { unreachable!() };
            (format!("SentencePiece .model ({})", p.display()), sentencepiece::summary(model), tok)
        }
        Format::Tekken(p) => (format!("Mistral Tekken tekken.json ({})", p.display()), tekken::summary(p)?, tekken::from_tekken_file(p)?),
        Format::Gguf(p) => {
            let file = gguf::GgufTokenizer::read(p)?;
            (format!("GGUF tokenizer metadata ({})", p.display()), file.summary(), file.to_tokenizer()?)
        }
    };
    Ok(format!("format:         {name}\n{extra}{}", inspect(&tok)))
}
