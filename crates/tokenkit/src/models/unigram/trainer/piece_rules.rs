//! Which pieces sentencepiece's trainers may create (`TrainerInterface::IsValidSentencePiece`),
//! for the SentencePiece trainers (BPE in `trainers::spm`, Unigram here).

use crate::pre_tokenizers::unicode_scripts::{script_of, Script};

/// `▁`, the escaped space.
pub const WS: char = '\u{2581}';
/// `▅`, what rare chars are replaced with while training.
pub const UNK_CHAR: char = '\u{2585}';
/// The tab: where meta pieces were cut out of a sentence (never inside a piece).
pub const BOUNDARY: char = '\t';

/// The piece rules of a trainer spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PieceRules {
    /// `max_sentencepiece_length`, in chars.
    pub max_len: usize,
    /// `split_by_whitespace`.
    pub split_by_whitespace: bool,
    /// `split_by_unicode_script`.
    pub split_by_unicode_script: bool,
    /// `split_by_number`.
    pub split_by_number: bool,
    /// `split_digits`.
    pub split_digits: bool,
}

fn is_decimal(c: char) -> bool {
    c.is_ascii_digit() || ('\u{ff10}'..='\u{ff19}').contains(&c)
}

impl PieceRules {
    /// Whether `piece` (its chars) may be a piece: not empty nor longer than
    /// `max_sentencepiece_length`; no unk char, NUL, tab or space; `▁` only first (anywhere but
    /// last without `split_by_whitespace`); one script with `split_by_unicode_script` (Hiragana
    /// and Katakana count as Han, combining marks as the char before, digits as any script
    /// without `split_by_number`); digits alone with `split_digits`.
    pub fn is_valid(&self, piece: &[char]) -> bool {
        if piece.is_empty() || piece.len() > self.max_len {
            return false;
        }
        let mut prev: Option<Script> = None;
        let last = piece.len() - 1;
        for (pos, &c) in piece.iter().enumerate() {
            if c == UNK_CHAR || c == '\0' || c == BOUNDARY || c == ' ' {
                return false;
            }
            if c == WS {
                if pos > 0 && (self.split_by_whitespace || pos == last) {
                    return false;
                }
                continue;
            }
            // sentencepiece's table gives unlisted chars Common (HF's gives them Any).
            let mut s = match script_of(c) {
                Script::Inherited => prev,
                Script::Any => Some(Script::Common),
                s => Some(s),
            };
            if !self.split_by_number && is_decimal(c) {
                s = None;
            }
            if self.split_digits && is_decimal(c) && piece.len() > 1 {
                return false;
            }
            if self.split_by_unicode_script {
                if let (Some(a), Some(b)) = (s, prev) {
                    if a != b {
                        return false;
                    }
                }
            }
            prev = s;
        }
        true
    }
}
