//! `PreTokenizedString`: the input cut into splits (words), each a `NormalizedString` that may
//! already carry its tokens.

use crate::base::normalized::{NormalizedString, OffsetReferential, OffsetsIn};
use crate::base::{Encoding, OffsetType, Token};
use crate::{Error, Offsets, Result};

/// One piece of a pre-tokenized string; `tokens` is set once the model has run on it.
#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    /// The piece, with offsets into the full input.
    pub normalized: NormalizedString,
    /// Its tokens; offsets are relative to `normalized` (normalized bytes).
    pub tokens: Option<Vec<Token>>,
}

impl From<NormalizedString> for Split {
    fn from(normalized: NormalizedString) -> Self {
        Self { normalized, tokens: None }
    }
}

impl From<(NormalizedString, Option<Vec<Token>>)> for Split {
    fn from((normalized, tokens): (NormalizedString, Option<Vec<Token>>)) -> Self {
        Self { normalized, tokens }
    }
}

/// The input during pre-tokenization: the original string and its current splits.
#[derive(Debug, Clone, PartialEq)]
pub struct PreTokenizedString {
    original: String,
    splits: Vec<Split>,
}

impl From<NormalizedString> for PreTokenizedString {
    fn from(n: NormalizedString) -> Self {
        Self { original: n.get_original().to_owned(), splits: vec![Split { normalized: n, tokens: None }] }
    }
}

impl From<&str> for PreTokenizedString {
    fn from(s: &str) -> Self {
        NormalizedString::from(s).into()
    }
}

impl PreTokenizedString {
    /// Builds from ready-made splits of `original`.
    pub fn from_splits(original: String, splits: Vec<Split>) -> Self {
        Self { original, splits }
    }

    /// Splits every not-yet-tokenized piece with `f(index, piece)`; empty results are dropped.
    pub fn split<F, U>(&mut self, mut f: F) -> Result<()>
    where
        F: FnMut(usize, NormalizedString) -> Result<U>,
        U: IntoIterator,
        U::Item: Into<Split>,
    {
        let mut new_splits = Vec::with_capacity(self.splits.len());
        for (i, original) in std::mem::take(&mut self.splits).into_iter().enumerate() {
            if original.tokens.is_some() {
                new_splits.push(original);
                continue;
            }
            for s in f(i, original.normalized)? {
                let s: Split = s.into();
                if !s.normalized.is_empty() {
                    new_splits.push(s);
                }
            }
        }
        self.splits = new_splits;
        Ok(())
    }

    /// Normalizes every not-yet-tokenized piece in place.
    pub fn normalize<F: Fn(&mut NormalizedString) -> Result<()>>(&mut self, f: F) -> Result<()> {
        for s in self.splits.iter_mut().filter(|s| s.tokens.is_none()) {
            f(&mut s.normalized)?;
        }
        Ok(())
    }

    /// Runs the model on every not-yet-tokenized piece.
    pub fn tokenize<F: FnMut(&NormalizedString) -> Result<Vec<Token>>>(&mut self, mut f: F) -> Result<()> {
        for s in self.splits.iter_mut().filter(|s| s.tokens.is_none()) {
            s.tokens = Some(f(&s.normalized)?);
        }
        Ok(())
    }

    /// The original input.
    pub fn original(&self) -> &str {
        &self.original
    }

    /// The splits.
    pub fn splits(&self) -> &[Split] {
        &self.splits
    }

    /// Mutable access to the splits.
    pub fn splits_mut(&mut self) -> &mut Vec<Split> {
        &mut self.splits
    }

    /// The pieces with their offsets, in the referential and unit asked for.
    pub fn get_splits(&self, referential: OffsetReferential, offset_type: OffsetType) -> Vec<(&str, Offsets, &Option<Vec<Token>>)> {
        let offsets_in = OffsetsIn::new(&self.original, offset_type);
        let mut offset = 0;
        self.splits
            .iter()
            .map(|s| {
                let offsets = match referential {
                    OffsetReferential::Original => s.normalized.offsets_original(),
                    OffsetReferential::Normalized => {
                        let len = s.normalized.len();
                        offset += len;
                        (offset - len, offset)
                    }
                };
                (s.normalized.get(), offsets_in.convert(offsets), &s.tokens)
            })
            .collect()
    }

    /// Turns the tokenized splits into an `Encoding`. `word_idx` overrides the word index of
    /// every token (used for pre-tokenized input); otherwise each split is one word.
    pub fn into_encoding(self, word_idx: Option<u32>, type_id: u32, offset_type: OffsetType) -> Result<Encoding> {
        if self.splits.is_empty() {
            return Ok(Encoding::default());
        }
        if !self.splits.iter().all(|s| s.tokens.is_some()) {
            return Err(Error::invalid("a split has not been tokenized; call tokenize first"));
        }
        let offsets_in = OffsetsIn::new(&self.original, offset_type);
        let n: usize = self.splits.iter().map(|s| s.tokens.as_ref().map_or(0, Vec::len)).sum();
        let mut enc = Encoding::with_capacity(n);
        for (idx, split) in self.splits.into_iter().enumerate() {
            let normalized = split.normalized;
            for token in split.tokens.unwrap_or_default() {
                let offsets = offsets_in.convert(normalized.offsets_in_input(token.offsets));
                enc.push_token(token.id, token.value, offsets, word_idx.or(Some(idx as u32)), type_id);
            }
        }
        Ok(enc)
    }
}
