//! TemplateProcessing: special tokens and type ids placed by a template such as
//! `[CLS] $A [SEP] $B:1 [SEP]:1`.
//!
//! A template is a list of [`Piece`]s: `$A`/`$B` stand for the first/second sequence, any other
//! word names a [`SpecialToken`] (one or several ids). Each piece may end in `:<type_id>`.
//! Shorthands: `$` is `$A`, `$<n>` is `$A:<n>`.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::base::{process_by_parts, Encoding, PostProcessor};
use crate::{Error, Result};

/// Which input sequence a template piece stands for. Serializes as `"A"` or `"B"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SequenceId {
    /// The first sequence (always present).
    A,
    /// The second sequence of a pair.
    B,
}

impl SequenceId {
    /// Index of the sequence among the encodings given to the processor.
    fn index(self) -> usize {
        match self {
            SequenceId::A => 0,
            SequenceId::B => 1,
        }
    }
}

/// One element of a template. Serializes as `{"Sequence":{"id":"A","type_id":0}}` or
/// `{"SpecialToken":{"id":"[CLS]","type_id":0}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Piece {
    /// An input sequence, whose tokens all get `type_id`.
    Sequence {
        /// Which sequence.
        id: SequenceId,
        /// Type id given to its tokens.
        type_id: u32,
    },
    /// A special token, looked up by `id` in the processor's `special_tokens`.
    SpecialToken {
        /// Key into `special_tokens`.
        id: String,
        /// Type id given to its tokens.
        type_id: u32,
    },
}

impl Piece {
    /// The piece a word of a template string names, without its `:type_id` suffix.
    fn from_name(name: &str) -> Option<Self> {
        let Some(rest) = name.strip_prefix('$') else {
            return Some(Piece::SpecialToken { id: name.to_owned(), type_id: 0 });
        };
        let (id, type_id) = match rest {
            "" | "A" | "a" => (SequenceId::A, 0),
            "B" | "b" => (SequenceId::B, 0),
            n => (SequenceId::A, n.parse().ok()?),
        };
        Some(Piece::Sequence { id, type_id })
    }

    fn set_type_id(&mut self, t: u32) {
        match self {
            Piece::Sequence { type_id, .. } | Piece::SpecialToken { type_id, .. } => *type_id = t,
        }
    }
}

impl TryFrom<&str> for Piece {
    type Error = Error;

    /// Parses `name` or `name:type_id` (`$A`, `$B:1`, `$1`, `[SEP]:1`, ...).
    fn try_from(s: &str) -> Result<Self> {
        let err = || {
            Error::invalid(format!("cannot build a template piece from \"{s}\": expected `$A`, `$B`, `$<type_id>` or a special token, optionally followed by `:<type_id>`"))
        };
        let mut parts = s.split(':');
        let name = parts.next().unwrap_or_default();
        let type_id = parts.next();
        if parts.next().is_some() {
            return Err(err());
        }
        let mut piece = Piece::from_name(name).ok_or_else(err)?;
        if let Some(t) = type_id {
            piece.set_type_id(t.parse().map_err(|_| err())?);
        }
        Ok(piece)
    }
}

impl TryFrom<String> for Piece {
    type Error = Error;
    fn try_from(s: String) -> Result<Self> {
        Piece::try_from(s.as_str())
    }
}

/// A special token of a template: its key `id`, and the `ids`/`tokens` it expands to
/// (same length). Serializes as `{"id":"[CLS]","ids":[101],"tokens":["[CLS]"]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "SpecialTokenFields")]
pub struct SpecialToken {
    /// The name the template uses.
    pub id: String,
    /// The token ids it adds.
    pub ids: Vec<u32>,
    /// The token strings it adds, one per id.
    pub tokens: Vec<String>,
}

#[derive(Deserialize)]
struct SpecialTokenFields {
    id: String,
    ids: Vec<u32>,
    tokens: Vec<String>,
}

impl TryFrom<SpecialTokenFields> for SpecialToken {
    type Error = Error;
    fn try_from(f: SpecialTokenFields) -> Result<Self> {
        SpecialToken::new(f.id, f.ids, f.tokens)
    }
}

impl SpecialToken {
    /// A special token adding `ids`/`tokens`; an error if their lengths differ.
    pub fn new(id: String, ids: Vec<u32>, tokens: Vec<String>) -> Result<Self> {
        if ids.len() != tokens.len() {
            return Err(Error::invalid(format!(
                "special token {id:?}: `ids` ({}) and `tokens` ({}) must have the same length",
                ids.len(),
                tokens.len()
            )));
        }
        Ok(Self { id, ids, tokens })
    }
}

impl From<(String, u32)> for SpecialToken {
    fn from((token, id): (String, u32)) -> Self {
        Self { id: token.clone(), ids: vec![id], tokens: vec![token] }
    }
}
impl From<(&str, u32)> for SpecialToken {
    fn from((token, id): (&str, u32)) -> Self {
        Self::from((token.to_owned(), id))
    }
}
impl From<(u32, String)> for SpecialToken {
    fn from((id, token): (u32, String)) -> Self {
        Self::from((token, id))
    }
}
impl From<(u32, &str)> for SpecialToken {
    fn from((id, token): (u32, &str)) -> Self {
        Self::from((token.to_owned(), id))
    }
}

/// A template: the pieces concatenated in order. Serializes as a JSON list of [`Piece`]s.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Template(pub Vec<Piece>);

impl<T: TryInto<Piece, Error = Error>> TryFrom<Vec<T>> for Template {
    type Error = Error;
    fn try_from(v: Vec<T>) -> Result<Self> {
        v.into_iter().map(TryInto::try_into).collect::<Result<_>>().map(Template)
    }
}

impl TryFrom<&str> for Template {
    type Error = Error;
    /// Parses pieces separated by single spaces, e.g. `"[CLS] $A [SEP]"`.
    fn try_from(s: &str) -> Result<Self> {
        Template::try_from(s.split(' ').collect::<Vec<_>>())
    }
}

impl TryFrom<String> for Template {
    type Error = Error;
    fn try_from(s: String) -> Result<Self> {
        Template::try_from(s.as_str())
    }
}

/// The special tokens of a template, by their `id`. Serializes as a JSON object sorted by key.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Tokens(pub BTreeMap<String, SpecialToken>);

impl<T: Into<SpecialToken>> From<Vec<T>> for Tokens {
    fn from(v: Vec<T>) -> Self {
        Tokens(v.into_iter().map(Into::into).map(|t: SpecialToken| (t.id.clone(), t)).collect())
    }
}
impl From<BTreeMap<String, SpecialToken>> for Tokens {
    fn from(m: BTreeMap<String, SpecialToken>) -> Self {
        Tokens(m)
    }
}
impl From<HashMap<String, SpecialToken>> for Tokens {
    fn from(m: HashMap<String, SpecialToken>) -> Self {
        Tokens(m.into_iter().collect())
    }
}

/// Number of tokens the special pieces of `template` add (unknown ids add none).
fn count_added(template: &Template, special_tokens: &Tokens) -> usize {
    template
        .0
        .iter()
        .map(|p| match p {
            Piece::Sequence { .. } => 0,
            Piece::SpecialToken { id, .. } => special_tokens.0.get(id).map_or(0, |t| t.ids.len()),
        })
        .sum()
}

/// Applies a `single` template to one sequence and a `pair` template to two. Serializes as
/// `{"type":"TemplateProcessing","single":[...],"pair":[...],"special_tokens":{...}}`.
///
/// Build one from strings with [`TemplateProcessing::builder`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "TemplateProcessingFields")]
pub struct TemplateProcessing {
    single: Template,
    pair: Template,
    #[serde(skip)]
    added_single: usize,
    #[serde(skip)]
    added_pair: usize,
    special_tokens: Tokens,
}

#[derive(Deserialize)]
struct TemplateProcessingFields {
    single: Template,
    pair: Template,
    special_tokens: Tokens,
}

impl From<TemplateProcessingFields> for TemplateProcessing {
    fn from(f: TemplateProcessingFields) -> Self {
        Self::from_parts(f.single, f.pair, f.special_tokens)
    }
}

impl Default for TemplateProcessing {
    /// `$0` for a single sequence, `$1` for a pair (HF's default), no special token.
    fn default() -> Self {
        let seq = |type_id| Template(vec![Piece::Sequence { id: SequenceId::A, type_id }]);
        Self::from_parts(seq(0), seq(1), Tokens::default())
    }
}

impl TemplateProcessing {
    /// A builder: `TemplateProcessing::builder().try_single("[CLS] $A [SEP]")?.try_pair("[CLS] $A [SEP] $B:1 [SEP]:1")?.special_tokens(vec![("[CLS]", 101), ("[SEP]", 102)]).build()?`.
    pub fn builder() -> TemplateProcessingBuilder {
        TemplateProcessingBuilder::default()
    }

    fn from_parts(single: Template, pair: Template, special_tokens: Tokens) -> Self {
        let added_single = count_added(&single, &special_tokens);
        let added_pair = count_added(&pair, &special_tokens);
        Self { single, pair, added_single, added_pair, special_tokens }
    }

    /// The template for one sequence.
    pub fn single(&self) -> &Template {
        &self.single
    }
    /// The template for a pair.
    pub fn pair(&self) -> &Template {
        &self.pair
    }
    /// The special tokens the templates use.
    pub fn special_tokens(&self) -> &Tokens {
        &self.special_tokens
    }

    fn special_token(&self, id: &str) -> Result<&SpecialToken> {
        self.special_tokens.0.get(id).ok_or_else(|| {
            Error::invalid(format!("TemplateProcessing: the template uses special token `{id}`, which is not in `special_tokens`"))
        })
    }

    fn special_encoding(&self, id: &str, type_id: u32) -> Result<Encoding> {
        let tok = self.special_token(id)?;
        let n = tok.ids.len();
        Ok(Encoding::new(
            tok.ids.clone(),
            vec![type_id; n],
            tok.tokens.clone(),
            vec![None; n],
            vec![(0, 0); n],
            vec![1; n],
            vec![1; n],
            Vec::new(),
            [],
        ))
    }

    /// The piece of `template` where each sequence is used last (that use takes it, the
    /// others copy it).
    fn last_uses(template: &Template) -> [Option<usize>; 2] {
        let mut last_use = [None; 2];
        for (pos, piece) in template.0.iter().enumerate() {
            if let Piece::Sequence { id, .. } = piece {
                last_use[id.index()] = Some(pos);
            }
        }
        last_use
    }

    /// The parts of the output, in template order: each sequence gets the type id of its piece
    /// and its sequence index; special pieces become encodings of their own (only when
    /// `add_special_tokens`).
    fn apply_template(&self, template: &Template, mut encodings: Vec<Encoding>, add_special_tokens: bool) -> Result<Vec<Encoding>> {
        let last_use = Self::last_uses(template);
        let mut parts = Vec::with_capacity(template.0.len());
        for (pos, piece) in template.0.iter().enumerate() {
            match piece {
                Piece::Sequence { id, type_id } => {
                    let i = id.index();
                    let n = encodings.len();
                    let e = encodings.get_mut(i).ok_or_else(|| missing_sequence(*id, n))?;
                    e.set_as_sequence(i, *type_id);
                    parts.push(if last_use[i] == Some(pos) { std::mem::take(e) } else { e.clone() });
                }
                Piece::SpecialToken { id, type_id } => {
                    if add_special_tokens {
                        parts.push(self.special_encoding(id, *type_id)?);
                    }
                }
            }
        }
        Ok(parts)
    }
}

/// The error for a template that uses sequence `id` when only `given` sequences were given.
fn missing_sequence(id: SequenceId, given: usize) -> Error {
    Error::invalid(format!("TemplateProcessing: the template uses sequence ${id:?} but {given} sequence(s) were given"))
}

impl PostProcessor for TemplateProcessing {
    fn added_tokens(&self, is_pair: bool) -> usize {
        if is_pair {
            self.added_pair
        } else {
            self.added_single
        }
    }

    /// The output straight from the template, with no encoding per part: each buffer is
    /// allocated once, at its final size (or, when the template places one sequence once,
    /// not at all: that sequence's encoding is completed in place). Overflowing parts are
    /// combined pairwise as HF does, by the general route.
    fn process(&self, encoding: Encoding, pair: Option<Encoding>, add_special_tokens: bool) -> Result<Encoding> {
        if !encoding.get_overflowing().is_empty() || pair.as_ref().is_some_and(|p| !p.get_overflowing().is_empty()) {
            return process_by_parts(self, encoding, pair, add_special_tokens);
        }
        let template = if pair.is_some() { &self.pair } else { &self.single };
        let given = 1 + usize::from(pair.is_some());
        let mut sequences = [Some(encoding), pair];
        let missing = |id: SequenceId| missing_sequence(id, given);
        let mut len = 0;
        for piece in &template.0 {
            match piece {
                Piece::Sequence { id, .. } => {
                    len += sequences[id.index()].as_ref().ok_or_else(|| missing(*id))?.len();
                }
                Piece::SpecialToken { id, .. } if add_special_tokens => {
                    len += self.special_token(id)?.ids.len();
                }
                Piece::SpecialToken { .. } => {}
            }
        }
        // A template that places one sequence once (every single-sequence template, in
        // practice): that encoding becomes the output, its special tokens put in front of it
        // and after it in place (a tokenizer's own encodings leave room for them).
        let mut sequence_pieces = template.0.iter().enumerate().filter(|(_, p)| matches!(p, Piece::Sequence { .. }));
        if let (Some((at, &Piece::Sequence { id, type_id })), None) = (sequence_pieces.next(), sequence_pieces.next()) {
            let mut seq = sequences[id.index()].take().ok_or_else(|| missing(id))?;
            seq.set_as_sequence(id.index(), type_id);
            if add_special_tokens {
                for piece in template.0[..at].iter().rev() {
                    if let Piece::SpecialToken { id, type_id } = piece {
                        let special = self.special_token(id)?;
                        for (&token_id, token) in special.ids.iter().zip(&special.tokens).rev() {
                            seq.prepend_special(token_id, token, *type_id);
                        }
                    }
                }
                for piece in &template.0[at + 1..] {
                    if let Piece::SpecialToken { id, type_id } = piece {
                        let special = self.special_token(id)?;
                        for (&token_id, token) in special.ids.iter().zip(&special.tokens) {
                            seq.push_special(token_id, token, *type_id);
                        }
                    }
                }
            }
            return Ok(seq);
        }
        let last_use = Self::last_uses(template);
        let mut out = Encoding::with_capacity(len);
        for (pos, piece) in template.0.iter().enumerate() {
            match piece {
                Piece::Sequence { id, type_id } => {
                    let i = id.index();
                    let seq = if last_use[i] == Some(pos) { sequences[i].take() } else { sequences[i].clone() };
                    out.append_sequence(seq.ok_or_else(|| missing(*id))?, i, *type_id);
                }
                Piece::SpecialToken { id, type_id } if add_special_tokens => {
                    let special = self.special_token(id)?;
                    for (&token_id, token) in special.ids.iter().zip(&special.tokens) {
                        out.push_special(token_id, token, *type_id);
                    }
                }
                Piece::SpecialToken { .. } => {}
            }
        }
        Ok(out)
    }

    fn process_encodings(&self, encodings: Vec<Encoding>, add_special_tokens: bool) -> Result<Vec<Encoding>> {
        let template = match encodings.len() {
            1 => &self.single,
            2 => &self.pair,
            n => return Err(Error::invalid(format!("TemplateProcessing: expected 1 or 2 encodings, got {n}"))),
        };
        self.apply_template(template, encodings, add_special_tokens)
    }
}

/// Builds a [`TemplateProcessing`] and checks it: the pair template must use both sequences
/// and every special token a template names must be given.
#[derive(Debug, Clone, Default)]
pub struct TemplateProcessingBuilder {
    single: Option<Template>,
    pair: Option<Template>,
    special_tokens: Tokens,
}

impl TemplateProcessingBuilder {
    /// Sets the single-sequence template (default `$0`).
    #[must_use]
    pub fn single(mut self, t: Template) -> Self {
        self.single = Some(t);
        self
    }

    /// Sets the single-sequence template from a string or a list of pieces.
    pub fn try_single<T: TryInto<Template, Error = Error>>(self, t: T) -> Result<Self> {
        Ok(self.single(t.try_into()?))
    }

    /// Sets the pair template (default `$A:0 $B:1`).
    #[must_use]
    pub fn pair(mut self, t: Template) -> Self {
        self.pair = Some(t);
        self
    }

    /// Sets the pair template from a string or a list of pieces.
    pub fn try_pair<T: TryInto<Template, Error = Error>>(self, t: T) -> Result<Self> {
        Ok(self.pair(t.try_into()?))
    }

    /// Sets the special tokens, e.g. from `vec![("[CLS]", 101), ("[SEP]", 102)]`.
    #[must_use]
    pub fn special_tokens(mut self, tokens: impl Into<Tokens>) -> Self {
        self.special_tokens = tokens.into();
        self
    }

    /// Checks and builds the processor.
    pub fn build(self) -> Result<TemplateProcessing> {
        let single = self.single.unwrap_or_else(|| Template(vec![Piece::Sequence { id: SequenceId::A, type_id: 0 }]));
        let pair = self.pair.unwrap_or_else(|| {
            Template(vec![Piece::Sequence { id: SequenceId::A, type_id: 0 }, Piece::Sequence { id: SequenceId::B, type_id: 1 }])
        });
        let uses = |s| pair.0.iter().any(|p| matches!(p, Piece::Sequence { id, .. } if *id == s));
        if !(uses(SequenceId::A) && uses(SequenceId::B)) {
            return Err(Error::invalid("Template for `pair` must use both sequences"));
        }
        let mut missing: Vec<&str> = Vec::new();
        for piece in single.0.iter().chain(&pair.0) {
            if let Piece::SpecialToken { id, .. } = piece {
                if !self.special_tokens.0.contains_key(id) && !missing.contains(&id.as_str()) {
                    missing.push(id);
                }
            }
        }
        if !missing.is_empty() {
            return Err(Error::invalid(format!("Missing SpecialToken(s) with id(s) `{}`", missing.join(", "))));
        }
        Ok(TemplateProcessing::from_parts(single, pair, self.special_tokens))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::processors::PostProcessorWrapper;

    fn bert() -> TemplateProcessing {
        TemplateProcessing::builder()
            .try_single("[CLS] $A [SEP]")
            .unwrap()
            .try_pair("[CLS] $A [SEP] $B:1 [SEP]:1")
            .unwrap()
            .special_tokens(vec![("[SEP]", 102), ("[CLS]", 101)])
            .build()
            .unwrap()
    }

    #[test]
    fn serde_matches_hf() {
        // HF 0.23.3: processors.TemplateProcessing(single="[CLS] $A [SEP]",
        //   pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[SEP]",102),("[CLS]",101)]).__getstate__()
        let json = r#"{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"[CLS]","type_id":0}},{"Sequence":{"id":"A","type_id":0}},{"SpecialToken":{"id":"[SEP]","type_id":0}}],"pair":[{"SpecialToken":{"id":"[CLS]","type_id":0}},{"Sequence":{"id":"A","type_id":0}},{"SpecialToken":{"id":"[SEP]","type_id":0}},{"Sequence":{"id":"B","type_id":1}},{"SpecialToken":{"id":"[SEP]","type_id":1}}],"special_tokens":{"[CLS]":{"id":"[CLS]","ids":[101],"tokens":["[CLS]"]},"[SEP]":{"id":"[SEP]","ids":[102],"tokens":["[SEP]"]}}}"#;
        let p = PostProcessorWrapper::from(bert());
        assert_eq!(serde_json::to_string(&p).unwrap(), json);
        let back: PostProcessorWrapper = serde_json::from_str(json).unwrap();
        assert_eq!(back, p);
        assert_eq!((back.added_tokens(false), back.added_tokens(true)), (2, 3));
    }

    #[test]
    fn string_forms_match_hf() {
        // HF 0.23.3 __getstate__ of TemplateProcessing(single="$1 $", pair="$b:1 $a:0", special_tokens=[])
        let p = TemplateProcessing::builder().try_single("$1 $").unwrap().try_pair("$b:1 $a:0").unwrap().build().unwrap();
        assert_eq!(
            serde_json::to_string(&PostProcessorWrapper::from(p)).unwrap(),
            r#"{"type":"TemplateProcessing","single":[{"Sequence":{"id":"A","type_id":1}},{"Sequence":{"id":"A","type_id":0}}],"pair":[{"Sequence":{"id":"B","type_id":1}},{"Sequence":{"id":"A","type_id":0}}],"special_tokens":{}}"#
        );
        // Multi-token special tokens count every id.
        let p = TemplateProcessing::builder()
            .try_single(vec!["[X]:2", "$A"])
            .unwrap()
            .special_tokens(vec![SpecialToken::new("[X]".into(), vec![7, 8], vec!["x1".into(), "x2".into()]).unwrap()])
            .build()
            .unwrap();
        assert_eq!(p.added_tokens(false), 2);
    }

    #[test]
    fn bad_templates_are_errors_like_hf() {
        // HF 0.23.3 messages: Cannot build Piece from string "$C" / Template for `pair` must use
        // both sequences / Missing SpecialToken(s) with id(s) `[CLS]`.
        for bad in ["$C", "$A:", "$A:x", "a:b:c", "$-1"] {
            assert!(Template::try_from(bad).is_err(), "{bad}");
        }
        let e = TemplateProcessing::builder().try_pair("$A $A").unwrap().build().unwrap_err();
        assert_eq!(e.to_string(), "Template for `pair` must use both sequences");
        let e = TemplateProcessing::builder().try_single("[CLS] $A [SEP] [CLS]").unwrap().build().unwrap_err();
        assert_eq!(e.to_string(), "Missing SpecialToken(s) with id(s) `[CLS], [SEP]`");
        // A double space gives an empty special token name, as in HF.
        let e = TemplateProcessing::builder().try_single("$A  $A").unwrap().build().unwrap_err();
        assert_eq!(e.to_string(), "Missing SpecialToken(s) with id(s) ``");
        // Inconsistent special token and missing fields are load errors.
        let bad = r#"{"type":"TemplateProcessing","single":[],"pair":[],"special_tokens":{"b":{"id":"b","ids":[1,2],"tokens":["x"]}}}"#;
        assert!(serde_json::from_str::<PostProcessorWrapper>(bad).is_err());
        let bad = r#"{"type":"TemplateProcessing","single":[],"pair":[]}"#;
        assert!(serde_json::from_str::<PostProcessorWrapper>(bad).is_err());
    }

    /// An encoding of `n` ordinary tokens, ids from `first`, some with vocabulary strings.
    fn sequence(first: u32, n: u32, with_overflow: bool) -> Encoding {
        let mut e = Encoding::default();
        for i in 0..n {
            e.push_token(first + i, format!("t{}", first + i), (i as usize, i as usize + 1), Some(i), 0);
        }
        if with_overflow {
            e.truncate(2, 0, crate::base::TruncationDirection::Right).unwrap();
        }
        e
    }

    #[test]
    fn direct_processing_equals_processing_by_parts() {
        // `process` builds the output straight from the template (or hands the one sequence
        // back); the general route makes an encoding per part and merges them.
        let templates = [
            ("[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1"),
            ("$A", "$A $B:1"),
            ("$A:1", "$B:1 $A:0"),
            ("[X] $A $A:1 [SEP]", "$A [X]:2 $B:1 $A [SEP]"),
            ("[X]", "[SEP] $B $A"),
            ("[X] [CLS]:1 $A:2 [SEP] [X]:1", "$B [X] $A"),
        ];
        let special = vec![
            SpecialToken::new("[X]".into(), vec![7, 8], vec!["x1".into(), "x2".into()]).unwrap(),
            SpecialToken::from(("[SEP]", 102)),
            SpecialToken::from(("[CLS]", 101)),
        ];
        for (single, pair) in templates {
            let p = TemplateProcessing::builder()
                .try_single(single)
                .unwrap()
                .try_pair(pair)
                .unwrap()
                .special_tokens(special.clone())
                .build()
                .unwrap();
            let wrapped = PostProcessorWrapper::Sequence(crate::processors::Sequence::new(vec![
                PostProcessorWrapper::ByteLevel(crate::processors::ByteLevel::default()),
                p.clone().into(),
            ]));
            for add in [true, false] {
                for overflow in [false, true] {
                    for with_pair in [false, true] {
                        let b = with_pair.then(|| sequence(50, 3, overflow));
                        let direct = p.process(sequence(10, 4, overflow), b.clone(), add).unwrap();
                        let by_parts = process_by_parts(&p, sequence(10, 4, overflow), b.clone(), add).unwrap();
                        assert_eq!(direct, by_parts, "{single} / {pair}, add {add}, overflow {overflow}, pair {with_pair}");
                        assert_eq!(direct.get_tokens(), by_parts.get_tokens());
                        let through_sequence = wrapped.process(sequence(10, 4, overflow), b.clone(), add).unwrap();
                        let sequence_by_parts = process_by_parts(&wrapped, sequence(10, 4, overflow), b, add).unwrap();
                        assert_eq!(through_sequence, sequence_by_parts, "Sequence of {single} / {pair}");
                        assert_eq!(through_sequence.get_tokens(), sequence_by_parts.get_tokens());
                    }
                }
            }
        }
    }

    #[test]
    fn unknown_special_token_is_an_error_when_processing() {
        // HF loads this and panics on encode; we load it and report an error.
        let json = r#"{"type":"TemplateProcessing","single":[{"Sequence":{"id":"A","type_id":0}},{"SpecialToken":{"id":"X","type_id":0}}],"pair":[{"Sequence":{"id":"A","type_id":0}}],"special_tokens":{}}"#;
        let p: PostProcessorWrapper = serde_json::from_str(json).unwrap();
        assert!(p.process(Encoding::default(), None, true).is_err());
        assert!(p.process(Encoding::default(), None, false).is_ok());
    }
}
