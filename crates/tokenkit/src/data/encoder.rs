//! The encoder of a dataset job: a tiktoken encoding (`encode_ordinary`, as nanoGPT's
//! `prepare.py`) or a tokenizer (`encode` with its post-processor, as `tokenizer(text)` in HF
//! and Megatron's `preprocess_data.py`), and the separator that follows each document.

use std::sync::Arc;

use crate::tiktoken::Encoding as TiktokenEncoding;
use crate::{Error, Result, Tokenizer};

/// The end-of-document tokens looked for, in this order, in a tokenizer that does not end
/// its encodings with a special token: the EOS of SentencePiece / Llama-2 / Mistral, of
/// GPT-2 and its descendants, of Llama-3, of Gemma, of DeepSeek.
pub const EOS_CANDIDATES: [&str; 5] = ["</s>", "<|endoftext|>", "<|end_of_text|>", "<eos>", "<｜end▁of▁sentence｜>"];

/// What encodes the documents.
#[derive(Clone)]
pub enum DocEncoder {
    /// tiktoken: `encode_ordinary` (special-token text is text).
    Tiktoken(Arc<TiktokenEncoding>),
    /// A tokenizer's `encode`, with the post-processor's special tokens when `add_special_tokens`.
    Tokenizer { tokenizer: Arc<Tokenizer>, add_special_tokens: bool },
}

/// Which token follows each document.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SeparatorChoice {
    /// The tokenizer's own (see [`DocEncoder::separator`]).
    Default,
    /// No separator.
    None,
    /// This token (its text; it must be one token of the vocabulary).
    Token(String),
}

impl DocEncoder {
    /// The encoder of `tokenizer`. Its truncation and padding (set for model inputs in some
    /// tokenizer.json files) are turned off: a document is encoded whole.
    pub fn tokenizer(tokenizer: &Tokenizer, add_special_tokens: bool) -> Result<Self> {
        let mut tokenizer = tokenizer.clone();
        tokenizer.with_truncation(None)?.with_padding(None)?;
        Ok(DocEncoder::Tokenizer { tokenizer: Arc::new(tokenizer), add_special_tokens })
    }

    /// The ids of one document, without the separator.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        match self {
            DocEncoder::Tiktoken(enc) => enc.encode_ordinary(text),
            DocEncoder::Tokenizer { tokenizer, add_special_tokens } => Ok(tokenizer.encode(text, *add_special_tokens)?.get_ids().to_vec()),
        }
    }

    /// The ids of each document followed by `separator`, in parallel on the current rayon
    /// pool: what a dataset job writes for these documents.
    pub fn encode_documents(&self, texts: &[&str], separator: Option<u32>) -> Result<Vec<Vec<u32>>> {
        crate::utils::parallel::try_map(
            texts,
            |t| t.len(),
            |t| {
                let mut ids = self.encode(t)?;
                ids.extend(separator);
                Ok(ids)
            },
        )
    }

    /// One more than the largest id the encoder can give (added tokens included).
    pub fn id_space(&self) -> usize {
        match self {
            DocEncoder::Tiktoken(enc) => enc.n_vocab(),
            DocEncoder::Tokenizer { tokenizer, .. } => {
                let max_added = tokenizer.get_added_vocabulary().get_added_tokens_decoder().keys().max().map_or(0, |&m| m as usize + 1);
                tokenizer.get_vocab_size(true).max(max_added)
            }
        }
    }

    /// The id of `token` (a special token of a tiktoken encoding, any token of a tokenizer).
    pub fn token_id(&self, token: &str) -> Option<u32> {
        match self {
            DocEncoder::Tiktoken(enc) => {
                enc.special_tokens().get(token).copied().or_else(|| enc.encode_single_token(token.as_bytes()).ok())
            }
            DocEncoder::Tokenizer { tokenizer, .. } => tokenizer.token_to_id(token),
        }
    }

    /// The separator `choice` stands for, as `(token, id)`; `None` for no separator.
    ///
    /// The default: `<|endoftext|>` for a tiktoken encoding (an error when it has none). For a
    /// tokenizer, nothing when its post-processor already ends every document with a special
    /// token (BERT's `[SEP]`, or an EOS in the template) and special tokens are added;
    /// otherwise the first of [`EOS_CANDIDATES`] in its vocabulary, which is what Megatron's
    /// `--append-eod` and HF's `group_texts` recipes put between documents. A tokenizer with
    /// none of them is an error that asks for `--separator TOKEN` or `--no-eos`.
    pub fn separator(&self, choice: &SeparatorChoice) -> Result<Option<(String, u32)>> {
        match choice {
            SeparatorChoice::None => Ok(None),
            SeparatorChoice::Token(t) => match self.token_id(t) {
                Some(id) => Ok(Some((t.clone(), id))),
                None => Err(Error::invalid(format!("the separator {t:?} is not a token of the tokenizer"))),
            },
            SeparatorChoice::Default => match self {
                DocEncoder::Tiktoken(enc) => match enc.eot_token() {
                    Some(id) => Ok(Some(("<|endoftext|>".into(), id))),
                    None => Err(Error::invalid(format!(
                        "the encoding {} has no <|endoftext|>: choose the separator with --separator TOKEN, or none \
                         with --no-eos",
                        enc.name()
                    ))),
                },
                DocEncoder::Tokenizer { tokenizer, add_special_tokens } => {
                    if *add_special_tokens && ends_with_special(tokenizer)? {
                        return Ok(None);
                    }
                    EOS_CANDIDATES.iter().find_map(|t| tokenizer.token_to_id(t).map(|id| (t.to_string(), id))).map(Some).ok_or_else(|| {
                        Error::invalid(format!(
                            "the tokenizer has no end-of-document token (looked for {}): choose one with \
                                 --separator TOKEN, or none with --no-eos",
                            EOS_CANDIDATES.join(", ")
                        ))
                    })
                }
            },
        }
    }
}

/// Whether the post-processor ends an encoding with a special token.
fn ends_with_special(tok: &Tokenizer) -> Result<bool> {
    let e = tok.encode("a", true)?;
    Ok(e.get_special_tokens_mask().last() == Some(&1))
}
