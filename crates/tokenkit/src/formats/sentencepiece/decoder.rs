//! Decoding as sentencepiece's `Decode` does it: control pieces vanish, the unknown piece
//! becomes `unk_surface`, runs of `<0xNN>` byte pieces are fused into UTF-8 (each invalid
//! byte becomes U+FFFD), `▁` becomes a space and the first piece loses its leading `▁`.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::model::{parse_byte_piece, SentencePiece};
use super::normalizer::SPACE_SYMBOL;
use super::proto::PieceType;
use crate::tokenizer::Decoder;
use crate::Result;

/// The decoder of a `.model` file. JSON
/// `{"type":"SentencePiece","unk_piece":"<unk>","unk_surface":" ⁇ ","control":["<s>","</s>"],
/// "byte_fallback":true,"strip_leading_space":true,"treat_whitespace_as_suffix":false}`.
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
    /// Whitespace ends pieces: drop the `▁` that ends the text instead.
    pub treat_whitespace_as_suffix: bool,
}

impl SentencePieceDecoder {
    /// The decoder that goes with `model`.
    pub fn from_model(model: &SentencePiece) -> Self {
        let proto = model.proto();
        let trainer = proto.trainer_spec.clone().unwrap_or_default();
        let norm = proto.normalizer_spec.clone().unwrap_or_default();
        let control = proto
            .pieces
            .iter()
            .filter(|p| p.kind() == PieceType::Control)
            .filter_map(|p| p.piece.clone())
            .collect();
        let unk_piece = proto.pieces.get(model.unk_id() as usize).and_then(|p| p.piece.clone()).unwrap_or_default();
        Self {
            unk_piece,
            unk_surface: trainer.unk_surface.unwrap_or_else(|| " \u{2047} ".into()),
            control,
            byte_fallback: model.byte_fallback(),
            strip_leading_space: norm.add_dummy_prefix() || norm.remove_extra_whitespaces(),
            treat_whitespace_as_suffix: trainer.treat_whitespace_as_suffix.unwrap_or(false),
        }
    }

    fn byte_of(&self, piece: &str) -> Option<u8> {
        if self.byte_fallback {
            parse_byte_piece(piece)
        } else {
            None
        }
    }

    /// Decodes pieces to text.
    pub fn decode_pieces<S: AsRef<str>>(&self, pieces: &[S]) -> String {
        let mut text = String::new();
        let mut bytes = Vec::new();
        let n = pieces.len();
        // Only the first piece that is not a control piece loses its `▁` (even when what
        // comes before it decoded to nothing).
        let mut first = true;
        for (i, piece) in pieces.iter().enumerate() {
            let piece = piece.as_ref();
            if let Some(b) = self.byte_of(piece) {
                bytes.push(b);
                first = false;
                continue;
            }
            push_bytes(&mut text, &mut bytes);
            if self.control.contains(piece) {
                continue;
            }
            let at_start = std::mem::replace(&mut first, false);
            if piece == self.unk_piece {
                text.push_str(&self.unk_surface);
                continue;
            }
            let mut p = piece;
            if self.strip_leading_space {
                if self.treat_whitespace_as_suffix {
                    if i + 1 == n {
                        p = p.strip_suffix(SPACE_SYMBOL).unwrap_or(p);
                    }
                } else if at_start {
                    p = p.strip_prefix(SPACE_SYMBOL).unwrap_or(p);
                }
            }
            push_unescaped(&mut text, p);
        }
        push_bytes(&mut text, &mut bytes);
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
fn push_bytes(text: &mut String, bytes: &mut Vec<u8>) {
    for chunk in bytes.utf8_chunks() {
        text.push_str(chunk.valid());
        text.extend(std::iter::repeat_n('\u{FFFD}', chunk.invalid().len()));
    }
    bytes.clear();
}

impl Decoder for SentencePieceDecoder {
    fn decode_chain(&self, tokens: Vec<String>) -> Result<Vec<String>> {
        Ok(vec![self.decode_pieces(&tokens)])
    }
}
