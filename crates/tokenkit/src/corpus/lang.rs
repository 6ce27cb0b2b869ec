//! Language identification (the `whatlang` crate: 70 languages, trigram profiles per script),
//! a filter by language and confidence, and sampling to target proportions per language.
//!
//! Labels are whatlang's ISO 639-3 codes (`eng`, `cmn`, `jpn`, `rus`, ...); a text it cannot
//! place (no letters, or too short) is `und` (ISO 639-2 "undetermined") with confidence 0.
//! Confidence is whatlang's, from 0 to 1.
//!
//! Sampling to proportions keeps as many documents as the targets allow: the language that is
//! scarcest relative to its target is kept whole, the others are sampled down to match it. A
//! document is kept when a hash of its text (and the seed) falls below its language's keep
//! rate, so the choice is deterministic, does not depend on the order or the thread count, and
//! identical texts share their fate.

use std::collections::BTreeMap;

use crate::{Error, Result};

/// The label of a text whatlang cannot place.
pub const UNDETERMINED: &str = "und";

/// A text's language and whatlang's confidence.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Detected {
    pub lang: &'static str,
    pub confidence: f64,
}

/// The language of `text`.
pub fn detect(text: &str) -> Detected {
    match whatlang::detect(text) {
        Some(info) => Detected { lang: info.lang().code(), confidence: info.confidence() },
        None => Detected { lang: UNDETERMINED, confidence: 0.0 },
    }
}

/// Whether `code` is a label [`detect`] can give.
pub fn is_known(code: &str) -> bool {
    code == UNDETERMINED || whatlang::Lang::from_code(code).is_some()
}

/// Which documents the language step keeps. In a pipeline file or from Python: `{"keep":
/// ["eng"], "min_confidence": 0.5, "proportions": {"eng": 0.5, "cmn": 0.5}, "seed": 0, "label":
/// "lang"}`, each optional.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LangOptions {
    /// Only these languages (empty: all).
    pub keep: Vec<String>,
    /// Only documents detected with at least this confidence.
    pub min_confidence: f64,
    /// Target proportions per language (they need not sum to 1: they are scaled); languages
    /// not named are removed. Empty: no sampling.
    pub proportions: BTreeMap<String, f64>,
    /// The seed of the sampling hash.
    pub seed: u64,
    /// The JSON member the label is written to (and `LABEL_score` for the confidence); `None`:
    /// no label.
    pub label: Option<String>,
}

impl LangOptions {
    /// Checks the codes and numbers.
    pub fn check(&self) -> Result<()> {
        for code in self.keep.iter().chain(self.proportions.keys()) {
            if !is_known(code) {
                return Err(Error::invalid(format!(
                    "unknown language code {code:?}: use whatlang's ISO 639-3 codes (eng, cmn, jpn, deu, ...) or \"und\""
                )));
            }
        }
        if !(0.0..=1.0).contains(&self.min_confidence) {
            return Err(Error::invalid(format!("the minimum confidence must be in [0, 1], not {}", self.min_confidence)));
        }
        if self.proportions.values().any(|p| !p.is_finite() || *p <= 0.0) {
            return Err(Error::invalid("every proportion must be a positive number"));
        }
        Ok(())
    }

    /// Whether a document of this language and confidence passes the filter.
    pub fn passes(&self, d: &Detected) -> bool {
        d.confidence >= self.min_confidence
            && (self.keep.is_empty() || self.keep.iter().any(|k| k == d.lang))
            && (self.proportions.is_empty() || self.proportions.contains_key(d.lang))
    }

    /// The JSON members of a document's label.
    pub fn label_members(&self, d: &Detected) -> Option<String> {
        let key = self.label.as_ref()?;
        let k = serde_json::to_string(key).expect("strings serialize");
        let ks = serde_json::to_string(&format!("{key}_score")).expect("strings serialize");
        Some(format!("{k}:\"{}\",{ks}:{:.4}", d.lang, d.confidence))
    }
}

/// The keep rate per language that matches `proportions` given the documents per language
/// (`counts`, after the filter), keeping as many documents as possible. A language with no
/// documents is left out and the others keep their shares relative to each other.
pub fn keep_rates(proportions: &BTreeMap<String, f64>, counts: &BTreeMap<String, u64>) -> BTreeMap<String, f64> {
    let present = |l: &String| counts.get(l).is_some_and(|&n| n > 0);
    let proportions: BTreeMap<String, f64> = proportions.iter().filter(|(l, _)| present(l)).map(|(l, p)| (l.clone(), *p)).collect();
    let proportions = &proportions;
    let total: f64 = proportions.values().sum();
    // The output size each language allows: its count over its share.
    let size = proportions.iter().map(|(l, p)| counts.get(l).copied().unwrap_or(0) as f64 / (p / total)).fold(f64::INFINITY, f64::min);
    proportions
        .iter()
        .map(|(l, p)| {
            let n = counts.get(l).copied().unwrap_or(0) as f64;
            (l.clone(), (size * p / total / n).min(1.0))
        })
        .collect()
}
