//! Decoding as sentencepiece's `Decode` does it: control pieces vanish, the unknown piece
//! becomes `unk_surface`, runs of `<0xNN>` byte pieces are fused into UTF-8 (each invalid
//! byte becomes U+FFFD), `▁` becomes a space and the first piece loses its leading `▁`.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::base::{Decoder, Model as _};
use crate::models::sentencepiece::model::{parse_byte_piece, SentencePiece};
use crate::models::sentencepiece::proto::PieceType;
pub use crate::normalizers::sentencepiece::Denormalizer;
use crate::normalizers::sentencepiece::SPACE_SYMBOL;
use crate::{Error, Result};

/// The decoder of a `.model` file. JSON
/// `{"type":"SentencePiece","unk_piece":"<unk>","unk_surface":" ⁇ ","control":["<s>","</s>"],
/// "byte_fallback":true,"strip_leading_space":true}` (a `treat_whitespace_as_suffix` field,
/// written by earlier releases, is ignored: sentencepiece decodes such models the same way).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SentencePieceDecoder {
    /// The unknown piece.
    pub unk_piece: String,
    /// What the unknown piece decodes to.
    pub unk_surface: String,
    /// Control pieces (decode to nothing).
    pub control: BTreeSet<String>,
    /// `<0xNN>` pieces are bytes.
    pub byte_fallback: bool,
    /// Drop the `▁` that starts the text (the model adds a dummy prefix or removes extra
    /// whitespace).
    pub strip_leading_space: bool,
    /// The `▁` is dropped from every piece until some text is decoded, not only from the
    /// first (sentencepiece does so when the model removes extra whitespace).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub strip_all_leading_spaces: bool,
    /// The model's denormalizer, applied to the decoded text (absent in most models).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub denormalizer: Option<Denormalizer>,
}

impl SentencePiece {
    /// Decodes ids as sentencepiece's `DecodeIds` does.
    pub fn decode_ids(&self, ids: &[u32]) -> Result<String> {
        let decoder = SentencePieceDecoder::from_model(self);
        let mut pieces = Vec::with_capacity(ids.len());
        for &id in ids {
            let p = self.id_to_token(id).ok_or(Error::IdOutOfRange { id, vocab_size: self.get_vocab_size() })?;
            pieces.push(p);
        }
        Ok(decoder.decode_pieces(&pieces))
    }
}

impl SentencePieceDecoder {
    /// The decoder that goes with `model`.
    pub fn from_model(model: &SentencePiece) -> Self {
        let trainer = model.trainer_spec();
        let norm = model.normalizer_spec();
        let n = model.get_vocab_size() as u32;
        let control = (0..n)
            .filter(|&id| model.kind(id) == Some(PieceType::Control))
            .filter_map(|id| model.id_to_token(id).map(str::to_owned))
            .collect();
        let unk_piece = model.id_to_token(model.unk_id()).unwrap_or_default().to_owned();
        Self {
            unk_piece,
            unk_surface: trainer.unk_surface.clone().unwrap_or_else(|| " \u{2047} ".into()),
            control,
            byte_fallback: model.byte_fallback(),
            strip_leading_space: norm.add_dummy_prefix() || norm.remove_extra_whitespaces(),
            strip_all_leading_spaces: norm.remove_extra_whitespaces(),
            // The charsmap was checked when the model was read.
            denormalizer: model.denormalizer().cloned(),
        }
    }

    fn byte_of(&self, piece: &str) -> Option<u8> {
        if self.byte_fallback {
            parse_byte_piece(piece)
        } else {
            None
        }
    }

    /// Decodes pieces of the vocabulary to text.
    pub fn decode_pieces<S: AsRef<str>>(&self, pieces: &[S]) -> String {
        self.decode_pieces_with(pieces, |_| true)
    }

    /// Decodes pieces to text as sentencepiece's `DecodePieces` does, where a piece that is not
    /// in the vocabulary (`in_vocab` says) is its own text, `▁` and all.
    pub fn decode_pieces_with<S: AsRef<str>>(&self, pieces: &[S], in_vocab: impl Fn(&str) -> bool) -> String {
        let text = self.decode_raw(pieces, in_vocab, None);
        self.denormalize(text)
    }

    /// [`Self::decode_pieces_with`] with each piece's surface: the decoded text before the
    /// denormalizer, and per piece the byte range of that text it decoded to (empty for
    /// control pieces and for the byte pieces of a char but its last), as sentencepiece's
    /// `Decode` fills a `SentencePieceText`. The final text is [`Self::denormalize`] of it.
    pub fn decode_pieces_spans<S: AsRef<str>>(&self, pieces: &[S], in_vocab: impl Fn(&str) -> bool) -> (String, Vec<(usize, usize)>) {
        let mut spans = Vec::with_capacity(pieces.len());
        let text = self.decode_raw(pieces, in_vocab, Some(&mut spans));
        (text, spans)
    }

    /// The model's denormalizer applied to decoded text (the text itself when there is none).
    pub fn denormalize(&self, text: String) -> String {
        match &self.denormalizer {
            Some(d) => d.apply(&text),
            None => text,
        }
    }

    /// Decodes pieces (see [`Self::decode_pieces_with`]) without the denormalizer, pushing each
    /// piece's byte range of the text to `spans` when given.
    fn decode_raw<S: AsRef<str>>(
        &self,
        pieces: &[S],
        in_vocab: impl Fn(&str) -> bool,
        mut spans: Option<&mut Vec<(usize, usize)>>,
    ) -> String {
        let mut text = String::new();
        let mut bytes = Vec::new();
        // sentencepiece's `is_bos_ws`: a piece may lose its leading `▁` while nothing has been
        // decoded and no piece has lost one yet (or, with `strip_all_leading_spaces`, while
        // nothing has been decoded).
        let mut at_start = true;
        let mut stripped = false;
        for piece in pieces {
            let piece = piece.as_ref();
            if let Some(b) = self.byte_of(piece) {
                bytes.push(b);
                continue;
            }
            push_bytes(&mut text, &mut bytes, spans.as_deref_mut());
            at_start &= !stripped && text.is_empty();
            stripped = false;
            let begin = text.len();
            if self.control.contains(piece) {
                // Decodes to nothing.
            } else if piece == self.unk_piece {
                text.push_str(&self.unk_surface);
            } else if !in_vocab(piece) {
                text.push_str(piece);
            } else {
                let mut p = piece;
                // Models that treat whitespace as a suffix too (sentencepiece 0.2.3 keeps their
                // final space).
                if self.strip_leading_space && at_start {
                    if let Some(rest) = p.strip_prefix(SPACE_SYMBOL) {
                        p = rest;
                        stripped = !self.strip_all_leading_spaces;
                    }
                }
                push_unescaped(&mut text, p);
            }
            if let Some(spans) = spans.as_deref_mut() {
                spans.push((begin, text.len()));
            }
        }
        push_bytes(&mut text, &mut bytes, spans);
        text
    }
}

/// Appends `p` with `▁` turned into spaces.
fn push_unescaped(text: &mut String, p: &str) {
    let mut rest = p;
    while let Some(i) = rest.find(SPACE_SYMBOL) {
        text.push_str(&rest[..i]);
        text.push(' ');
        rest = &rest[i + SPACE_SYMBOL.len()..];
    }
    text.push_str(rest);
}

/// Appends a run of bytes as UTF-8, each byte of an invalid sequence as U+FFFD; empties `bytes`.
/// With `spans`, pushes each byte's range of `text`: a char's last byte spans the char (an
/// invalid byte its U+FFFD), its other bytes are empty at the char's start.
fn push_bytes(text: &mut String, bytes: &mut Vec<u8>, mut spans: Option<&mut Vec<(usize, usize)>>) {
    for chunk in bytes.utf8_chunks() {
        match spans.as_deref_mut() {
            None => text.push_str(chunk.valid()),
            Some(spans) => {
                for c in chunk.valid().chars() {
                    let begin = text.len();
                    spans.extend(std::iter::repeat_n((begin, begin), c.len_utf8() - 1));
                    text.push(c);
                    spans.push((begin, text.len()));
                }
            }
        }
        for _ in chunk.invalid() {
            let begin = text.len();
            text.push('\u{FFFD}');
            if let Some(spans) = spans.as_deref_mut() {
                spans.push((begin, text.len()));
            }
        }
    }
    bytes.clear();
}

impl Decoder for SentencePieceDecoder {
    fn decode_chain(&self, tokens: Vec<String>) -> Result<Vec<String>> {
        Ok(vec![self.decode_pieces(&tokens)])
    }
}
