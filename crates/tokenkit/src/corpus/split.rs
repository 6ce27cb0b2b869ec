//! Deterministic train / validation / test splits by document hash.
//!
//! A document goes to the split whose share of [0, 1) holds a hash of its text and the seed
//! (splits in the order given). The split of a document depends on its text alone: adding
//! documents to the corpus never moves another one, identical texts land in the same split (no
//! leak between train and test), and the result is the same for any order or thread count.

use crate::{Error, Result};

/// `NAME=NUMBER,...` pairs, in order (split fractions, language proportions).
pub fn parse_pairs(spec: &str) -> Result<Vec<(String, f64)>> {
    spec.split(',')
        .map(|p| {
            let (name, v) = p.split_once('=').ok_or_else(|| Error::invalid(format!("{p:?} is not NAME=NUMBER")))?;
            let v = v.trim().parse::<f64>().map_err(|_| Error::invalid(format!("{v:?} is not a number")))?;
            Ok((name.trim().to_owned(), v))
        })
        .collect()
}

/// Named splits and their fractions, in order.
#[derive(Debug, Clone)]
pub struct Splits {
    parts: Vec<(String, f64)>,
    /// Each split's upper bound in [0, 1).
    bounds: Vec<f64>,
    pub seed: u64,
}

impl Splits {
    /// Splits from `name=fraction` pairs, which must be positive and sum to 1.
    pub fn new(parts: Vec<(String, f64)>, seed: u64) -> Result<Self> {
        if parts.is_empty() {
            return Err(Error::invalid("no splits given"));
        }
        for (i, (name, f)) in parts.iter().enumerate() {
            if name.is_empty() || name.contains(['/', '\\']) || name == "." || name == ".." {
                return Err(Error::invalid(format!("{name:?} cannot name a split (it names the output file)")));
            }
            if parts[..i].iter().any(|(n, _)| n == name) {
                return Err(Error::invalid(format!("the split {name:?} is named twice")));
            }
            if !f.is_finite() || *f <= 0.0 {
                return Err(Error::invalid(format!("the fraction of {name:?} must be a positive number, not {f}")));
            }
        }
        let sum: f64 = parts.iter().map(|(_, f)| f).sum();
        if (sum - 1.0).abs() > 1e-6 {
            return Err(Error::invalid(format!("the fractions must sum to 1, not {sum}")));
        }
        let mut acc = 0.0;
        let mut bounds: Vec<f64> = parts
            .iter()
            .map(|(_, f)| {
                acc += f;
                acc
            })
            .collect();
        *bounds.last_mut().expect("one split at least") = f64::INFINITY;
        Ok(Splits { parts, bounds, seed })
    }

    /// Parses `train=0.98,validation=0.01,test=0.01`.
    pub fn parse(spec: &str, seed: u64) -> Result<Self> {
        Splits::new(parse_pairs(spec)?, seed)
    }

    /// The split names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().map(|(n, _)| n.as_str())
    }

    /// The index of the split `text` goes to.
    pub fn of(&self, text: &str) -> usize {
        let u = super::dedup::unit_hash(text, self.seed);
        self.bounds.iter().position(|&b| u < b).expect("the last bound is infinite")
    }
}
