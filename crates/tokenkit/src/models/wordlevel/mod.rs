//! WordLevel: each piece is looked up whole in the vocabulary, unk otherwise.

pub mod trainer;

use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use super::serialization::{deserialize_via_fields, missing, ModelFields};
use crate::base::vocab::{vocab_model_methods, Vocab, VocabMap};
use crate::base::{Model, Token};
use crate::{Error, Result};

/// The WordLevel model (HF `models.WordLevel`): a word → id table with an unknown token.
#[derive(Debug, Clone)]
pub struct WordLevel {
    vocab: Vocab,
    unk_token: String,
}

impl PartialEq for WordLevel {
    fn eq(&self, o: &Self) -> bool {
        self.vocab == o.vocab && self.unk_token == o.unk_token
    }
}

impl Default for WordLevel {
    /// Empty vocabulary, unk `<unk>` (HF's defaults).
    fn default() -> Self {
        Self::new(VocabMap::default(), "<unk>".into())
    }
}

impl WordLevel {
    /// Builds the model from a vocabulary (token → id) and the unk token.
    pub fn new(vocab: impl IntoIterator<Item = (String, u32)>, unk_token: String) -> Self {
        Self { vocab: Vocab::new(vocab.into_iter().collect()), unk_token }
    }

    /// The unk token.
    pub fn unk_token(&self) -> &str {
        &self.unk_token
    }

    /// The vocabulary (token → id and id → token).
    pub fn vocab(&self) -> &Vocab {
        &self.vocab
    }

    /// Builds the model from the fields of a tokenizer.json model object (`vocab` and
    /// `unk_token` are required, as in HF).
    pub(crate) fn from_fields(mut f: ModelFields) -> Result<Self> {
        f.expect_type("WordLevel")?;
        let unk = f.unk_token.take().ok_or_else(|| missing("WordLevel", "unk_token"))?;
        let vocab = f.take_vocab_map("WordLevel")?;
        let unk = unk.ok_or_else(|| Error::invalid("WordLevel model: `unk_token` must not be null"))?;
        Ok(Self::new(vocab, unk))
    }
}

impl Model for WordLevel {
    fn tokenize(&self, sequence: &str) -> Result<Vec<Token>> {
        let (id, value) = match self.vocab.id(sequence) {
            Some(id) => (id, sequence),
            None => match self.vocab.id(&self.unk_token) {
                Some(id) => (id, self.unk_token.as_str()),
                None => return Err(Error::MissingToken(format!("WordLevel: the unk token `{}` is not in the vocabulary", self.unk_token))),
            },
        };
        Ok(vec![Token::new(id, value.to_owned(), (0, sequence.len()))])
    }

    vocab_model_methods!();
}

impl Serialize for WordLevel {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut m = serializer.serialize_struct("WordLevel", 3)?;
        m.serialize_field("type", "WordLevel")?;
        m.serialize_field("vocab", &self.vocab.ordered())?;
        m.serialize_field("unk_token", &self.unk_token)?;
        m.end()
    }
}

deserialize_via_fields!(WordLevel);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_and_unk() {
        let m = WordLevel::new([("<unk>".to_string(), 0), ("a".to_string(), 1)], "<unk>".into());
        assert_eq!(m.tokenize("a").unwrap(), vec![Token::new(1, "a".into(), (0, 1))]);
        assert_eq!(m.tokenize("héllo").unwrap(), vec![Token::new(0, "<unk>".into(), (0, 6))]);
        let bad = WordLevel::new([("a".to_string(), 1)], "[UNK]".into());
        assert!(bad.tokenize("b").unwrap_err().to_string().contains("[UNK]"));
    }

    #[test]
    fn serde_like_hf() {
        // HF 0.23.3: WordLevel({"<unk>":0,"a":1}, unk_token="<unk>") serializes to this,
        // with the vocabulary in id order (not key order).
        let hf = r#"{"type":"WordLevel","vocab":{"z":0,"<unk>":1,"a":3},"unk_token":"<unk>"}"#;
        let m: WordLevel = serde_json::from_str(hf).unwrap();
        assert_eq!(serde_json::to_string(&m).unwrap(), hf);
        let e = serde_json::from_str::<WordLevel>(r#"{"type":"WordLevel","vocab":{}}"#).unwrap_err().to_string();
        assert!(e.contains("missing field `unk_token`"), "{e}");
        let e = serde_json::from_str::<WordLevel>(r#"{"type":"WordPiece","vocab":{}}"#).unwrap_err().to_string();
        assert!(e.contains("WordLevel") && e.contains("WordPiece"), "{e}");
    }
}
