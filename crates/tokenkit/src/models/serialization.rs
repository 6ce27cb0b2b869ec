//! Reading a tokenizer.json `model` object in one streaming pass.
//!
//! All four models are read by the same visitor: it collects every field any model knows
//! (the vocabulary straight into its final map or list, never through `serde_json::Value`),
//! then the `type` field, or for legacy files without one the set of fields present,
//! decides which model to build.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::base::vocab::VocabMap;
use crate::{Error, Result};

/// The model names tokenizer.json uses in `type`.
pub const MODEL_TYPES: [&str; 5] = ["BPE", "WordPiece", "WordLevel", "Unigram", "SentencePiece"];

/// A `vocab` field: an object `{token: id}` (BPE, WordPiece, WordLevel) or a list
/// `[[piece, score], ...]` (Unigram).
#[derive(Debug)]
pub enum VocabField {
    /// Token → id.
    Map(VocabMap),
    /// Pieces with their log-probability scores; the id is the position.
    Scores(Vec<(String, f64)>),
}

/// Every field a model object can carry. For the optional ones, the outer `Option` says
/// whether the field was present and the inner one whether it was `null`.
#[derive(Debug, Default)]
pub struct ModelFields {
    /// `type`.
    pub kind: Option<String>,
    /// `vocab`.
    pub vocab: Option<VocabField>,
    /// `merges`, already split into pairs (legacy `"a b"` lines are accepted).
    pub merges: Option<Vec<(String, String)>>,
    /// `dropout` (BPE).
    pub dropout: Option<Option<f32>>,
    /// `unk_token` (BPE, WordPiece, WordLevel).
    pub unk_token: Option<Option<String>>,
    /// `continuing_subword_prefix` (BPE, WordPiece).
    pub continuing_subword_prefix: Option<Option<String>>,
    /// `end_of_word_suffix` (BPE).
    pub end_of_word_suffix: Option<Option<String>>,
    /// `fuse_unk` (BPE).
    pub fuse_unk: Option<Option<bool>>,
    /// `byte_fallback` (BPE, Unigram).
    pub byte_fallback: Option<Option<bool>>,
    /// `ignore_merges` (BPE).
    pub ignore_merges: Option<Option<bool>>,
    /// `max_input_chars_per_word` (WordPiece).
    pub max_input_chars_per_word: Option<Option<usize>>,
    /// `unk_id` (Unigram).
    pub unk_id: Option<Option<usize>>,
    /// `model_proto` (SentencePiece, a tokenkit extension): base64 of the `.model` file.
    pub model_proto: Option<String>,
}

impl ModelFields {
    /// The model type: `type` when present, otherwise inferred from the fields the way HF
    /// reads legacy files (BPE has merges; WordPiece has a prefix and a word length limit;
    /// WordLevel has an unk token; Unigram has a vocabulary list).
    pub fn model_type(&self) -> Result<&str> {
        if let Some(kind) = &self.kind {
            return match MODEL_TYPES.iter().find(|t| **t == kind) {
                Some(t) => Ok(t),
                None => Err(Error::invalid(format!("unknown model type `{kind}`; expected one of {}", MODEL_TYPES.join(", ")))),
            };
        }
        fn has<T>(f: &Option<Option<T>>) -> bool {
            matches!(f, Some(Some(_)))
        }
        match &self.vocab {
            Some(VocabField::Map(_)) if self.merges.is_some() => Ok("BPE"),
            Some(VocabField::Map(_))
                if has(&self.unk_token) && has(&self.continuing_subword_prefix) && has(&self.max_input_chars_per_word) =>
            {
                Ok("WordPiece")
            }
            Some(VocabField::Map(_)) if has(&self.unk_token) => Ok("WordLevel"),
            Some(VocabField::Scores(_)) => Ok("Unigram"),
            _ => Err(Error::invalid(
                "cannot tell the model type: no `type` field, and the fields match none of BPE \
                 (vocab + merges), WordPiece (vocab + unk_token + continuing_subword_prefix + \
                 max_input_chars_per_word), WordLevel (vocab + unk_token), Unigram (vocab as a list)",
            )),
        }
    }

    /// Checks that the object is a `kind` model (or has no `type`, the legacy form).
    pub fn expect_type(&self, kind: &str) -> Result<()> {
        match &self.kind {
            Some(k) if k != kind => Err(Error::invalid(format!("expected a {kind} model, got type `{k}`"))),
            _ => Ok(()),
        }
    }

    /// Takes the vocabulary as a token → id map (`model` names the model in the error).
    pub fn take_vocab_map(&mut self, model: &str) -> Result<VocabMap> {
        match self.vocab.take() {
            Some(VocabField::Map(m)) => Ok(m),
            Some(VocabField::Scores(_)) => {
                Err(Error::invalid(format!("{model} model: `vocab` must be an object {{token: id}}, not a list")))
            }
            None => Err(missing(model, "vocab")),
        }
    }
}

/// The error for a required field that is absent.
pub fn missing(model: &str, field: &str) -> Error {
    Error::invalid(format!("{model} model: missing field `{field}`"))
}

/// `Deserialize` for a model type through [`ModelFields`] and its `from_fields` constructor.
macro_rules! deserialize_via_fields {
    ($t:ident) => {
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                let fields = <$crate::models::serialization::ModelFields as serde::Deserialize>::deserialize(d)?;
                $t::from_fields(fields).map_err($crate::models::serialization::de_error)
            }
        }
    };
}
pub(crate) use deserialize_via_fields;

/// Turns a crate error into a serde error.
pub fn de_error<E: de::Error>(e: Error) -> E {
    E::custom(e)
}

impl<'de> serde::Deserialize<'de> for ModelFields {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_map(FieldsVisitor)
    }
}

struct FieldsVisitor;

impl<'de> Visitor<'de> for FieldsVisitor {
    type Value = ModelFields;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a model object (BPE, WordPiece, WordLevel or Unigram)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<ModelFields, A::Error> {
        let mut m = ModelFields::default();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match key.as_ref() {
                "type" => m.kind = Some(map.next_value()?),
                "vocab" => m.vocab = Some(map.next_value_seed(VocabSeed)?),
                "merges" => m.merges = Some(map.next_value_seed(MergesSeed)?),
                "dropout" => m.dropout = Some(map.next_value()?),
                "unk_token" => m.unk_token = Some(map.next_value()?),
                "continuing_subword_prefix" => m.continuing_subword_prefix = Some(map.next_value()?),
                "end_of_word_suffix" => m.end_of_word_suffix = Some(map.next_value()?),
                "fuse_unk" => m.fuse_unk = Some(map.next_value()?),
                "byte_fallback" => m.byte_fallback = Some(map.next_value()?),
                "ignore_merges" => m.ignore_merges = Some(map.next_value()?),
                "max_input_chars_per_word" => m.max_input_chars_per_word = Some(map.next_value()?),
                "unk_id" => m.unk_id = Some(map.next_value()?),
                "model_proto" => m.model_proto = Some(map.next_value()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(m)
    }
}

/// Reads `vocab` as a map or a list without an intermediate value.
struct VocabSeed;

impl<'de> DeserializeSeed<'de> for VocabSeed {
    type Value = VocabField;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<VocabField, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for VocabSeed {
    type Value = VocabField;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a vocabulary: an object {token: id} or a list [[piece, score], ...]")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<VocabField, A::Error> {
        let mut vocab = VocabMap::with_capacity_and_hasher(map.size_hint().unwrap_or(0), Default::default());
        while let Some((token, id)) = map.next_entry::<String, u32>()? {
            vocab.insert(token, id);
        }
        Ok(VocabField::Map(vocab))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<VocabField, A::Error> {
        let mut pieces = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(p) = seq.next_element::<(String, f64)>()? {
            pieces.push(p);
        }
        Ok(VocabField::Scores(pieces))
    }
}

/// Reads `merges`: a list of `["a", "b"]` pairs or of legacy `"a b"` lines.
struct MergesSeed;

impl<'de> DeserializeSeed<'de> for MergesSeed {
    type Value = Vec<(String, String)>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for MergesSeed {
    type Value = Vec<(String, String)>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of merges, each [\"a\", \"b\"] or \"a b\"")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Self::Value, A::Error> {
        let mut merges = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        // Legacy lines are numbered without the `#version` header, as HF counts them.
        let mut line = 0usize;
        while let Some(entry) = seq.next_element::<MergeEntry>()? {
            match entry {
                MergeEntry::Pair(a, b) => merges.push((a, b)),
                MergeEntry::Line(l) => {
                    if l.starts_with("#version") {
                        continue;
                    }
                    line += 1;
                    let mut parts = l.split(' ');
                    match (parts.next(), parts.next(), parts.next()) {
                        (Some(a), Some(b), None) => merges.push((a.to_owned(), b.to_owned())),
                        _ => {
                            return Err(de::Error::custom(format!(
                                "invalid merge at line {line}: {l:?} (expected two tokens separated by one space)"
                            )))
                        }
                    }
                }
            }
        }
        Ok(merges)
    }
}

/// One element of `merges`.
enum MergeEntry {
    Pair(String, String),
    Line(String),
}

impl<'de> serde::Deserialize<'de> for MergeEntry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(MergeEntryVisitor)
    }
}

struct MergeEntryVisitor;

impl<'de> Visitor<'de> for MergeEntryVisitor {
    type Value = MergeEntry;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a merge: [\"a\", \"b\"] or \"a b\"")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<MergeEntry, E> {
        Ok(MergeEntry::Line(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> std::result::Result<MergeEntry, E> {
        Ok(MergeEntry::Line(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<MergeEntry, A::Error> {
        let a: String = seq.next_element()?.ok_or_else(|| de::Error::invalid_length(0, &"a pair of tokens"))?;
        let b: String = seq.next_element()?.ok_or_else(|| de::Error::invalid_length(1, &"a pair of tokens"))?;
        if seq.next_element::<IgnoredAny>()?.is_some() {
            return Err(de::Error::invalid_length(3, &"a pair of tokens"));
        }
        Ok(MergeEntry::Pair(a, b))
    }
}
