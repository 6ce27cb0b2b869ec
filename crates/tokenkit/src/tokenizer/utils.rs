//! Padding and truncation settings and how they apply, as HF does them.

use serde::{Deserialize, Serialize};

use crate::tokenizer::{Encoding, PaddingDirection, TruncationDirection};
use crate::{Error, Result};

/// How long to pad.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum PaddingStrategy {
    /// To the longest encoding of the batch.
    BatchLongest,
    /// To a fixed number of tokens.
    Fixed(usize),
}

/// Padding settings (the `padding` object of tokenizer.json).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaddingParams {
    pub strategy: PaddingStrategy,
    pub direction: PaddingDirection,
    pub pad_to_multiple_of: Option<usize>,
    pub pad_id: u32,
    pub pad_type_id: u32,
    pub pad_token: String,
}

/// The longest padded length [`PaddingParams`] accept, in tokens (`Fixed` and
/// `pad_to_multiple_of`): 16 GiB of ids alone, far past any model's context. Larger values can
/// only be mistakes (a fuzzer's `2**63`), and would overflow the size computations.
pub const MAX_PADDING_LENGTH: usize = u32::MAX as usize;

impl PaddingParams {
    /// Checks the lengths against [`MAX_PADDING_LENGTH`]; called wherever padding is set
    /// ([`Tokenizer::with_padding`](crate::Tokenizer::with_padding), tokenizer.json loading).
    pub fn validate(&self) -> Result<()> {
        let check = |field: &str, n: usize| {
            if n > MAX_PADDING_LENGTH {
                return Err(Error::invalid(format!("padding `{field}` is {n} tokens; at most {MAX_PADDING_LENGTH} are allowed")));
            }
            Ok(())
        };
        if let PaddingStrategy::Fixed(n) = self.strategy {
            check("strategy.Fixed", n)?;
        }
        self.pad_to_multiple_of.map_or(Ok(()), |m| check("pad_to_multiple_of", m))
    }
}

impl Default for PaddingParams {
    fn default() -> Self {
        Self {
            strategy: PaddingStrategy::BatchLongest,
            direction: PaddingDirection::Right,
            pad_to_multiple_of: None,
            pad_id: 0,
            pad_type_id: 0,
            pad_token: "[PAD]".into(),
        }
    }
}

/// Which sequence(s) truncation cuts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TruncationStrategy {
    LongestFirst,
    OnlyFirst,
    OnlySecond,
}

/// Truncation settings (the `truncation` object of tokenizer.json). Lengths are in tokens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TruncationParams {
    #[serde(default)]
    pub direction: TruncationDirection,
    pub max_length: usize,
    pub strategy: TruncationStrategy,
    pub stride: usize,
}

impl Default for TruncationParams {
    fn default() -> Self {
        Self { direction: TruncationDirection::Right, max_length: 512, strategy: TruncationStrategy::LongestFirst, stride: 0 }
    }
}

/// Truncates a sequence and its optional pair to `params.max_length` tokens in total.
pub fn truncate_encodings(
    mut encoding: Encoding,
    mut pair: Option<Encoding>,
    params: &TruncationParams,
) -> Result<(Encoding, Option<Encoding>)> {
    if params.max_length == 0 {
        encoding.truncate(0, params.stride, params.direction)?;
        if let Some(p) = pair.as_mut() {
            p.truncate(0, params.stride, params.direction)?;
        }
        return Ok((encoding, pair));
    }
    let total = encoding.len() + pair.as_ref().map_or(0, Encoding::len);
    if total <= params.max_length {
        return Ok((encoding, pair));
    }
    let to_remove = total - params.max_length;
    match params.strategy {
        TruncationStrategy::LongestFirst => {
            if let Some(other) = pair.as_mut() {
                let (mut n1, mut n2) = (encoding.len(), other.len());
                let swap = n1 > n2;
                if swap {
                    std::mem::swap(&mut n1, &mut n2);
                }
                n2 = if n1 > params.max_length { n1 } else { n1.max(params.max_length - n1) };
                if n1 + n2 > params.max_length {
                    n1 = params.max_length / 2;
                    n2 = n1 + params.max_length % 2;
                }
                if swap {
                    std::mem::swap(&mut n1, &mut n2);
                }
                encoding.truncate(n1, params.stride, params.direction)?;
                other.truncate(n2, params.stride, params.direction)?;
            } else {
                encoding.truncate(total - to_remove, params.stride, params.direction)?;
            }
        }
        TruncationStrategy::OnlyFirst | TruncationStrategy::OnlySecond => {
            let target = if params.strategy == TruncationStrategy::OnlyFirst {
                &mut encoding
            } else {
                pair.as_mut().ok_or_else(|| Error::invalid("truncation error: second sequence not provided"))?
            };
            let len = target.len();
            if len > to_remove {
                target.truncate(len - to_remove, params.stride, params.direction)?;
            } else {
                return Err(Error::invalid("truncation error: sequence to truncate too short to respect the provided max_length"));
            }
        }
    }
    Ok((encoding, pair))
}

/// Pads encodings as the settings say (to the longest of them, or a fixed length). An error,
/// not an abort, when the padded encodings do not fit in memory.
pub fn pad_encodings(encodings: &mut [Encoding], params: &PaddingParams) -> Result<()> {
    if encodings.is_empty() {
        return Ok(());
    }
    let mut len = match params.strategy {
        PaddingStrategy::Fixed(n) => n,
        PaddingStrategy::BatchLongest => encodings.iter().map(Encoding::len).max().unwrap_or(0),
    };
    if let Some(m) = params.pad_to_multiple_of.filter(|&m| m > 0) {
        len = len.checked_next_multiple_of(m).ok_or_else(|| {
            Error::invalid(format!("padding: {len} tokens rounded up to a multiple of {m} (pad_to_multiple_of) overflows"))
        })?;
    }
    Encoding::pad_all(encodings, len, params.pad_id, params.pad_type_id, &params.pad_token, params.direction)
}
