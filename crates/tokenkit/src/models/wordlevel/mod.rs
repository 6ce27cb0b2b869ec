//! WordLevel: each piece is looked up whole in the vocabulary.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::tokenizer::{Model, Token};
use crate::{Error, Result};

/// A word → id table with an unknown token.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "WordLevelSerde", into = "WordLevelSerde")]
pub struct WordLevel {
    vocab: HashMap<String, u32>,
    vocab_r: Vec<Option<String>>,
    unk_token: String,
}

#[derive(Serialize, Deserialize)]
struct WordLevelSerde {
    vocab: std::collections::BTreeMap<String, u32>,
    unk_token: String,
}

impl From<WordLevelSerde> for WordLevel {
    fn from(s: WordLevelSerde) -> Self {
        WordLevel::new(s.vocab.into_iter().collect(), s.unk_token)
    }
}

impl From<WordLevel> for WordLevelSerde {
    fn from(m: WordLevel) -> Self {
        WordLevelSerde { vocab: m.vocab.into_iter().collect(), unk_token: m.unk_token }
    }
}

impl WordLevel {
    /// Builds the model.
    pub fn new(vocab: HashMap<String, u32>, unk_token: String) -> Self {
        let size = vocab.values().map(|&i| i as usize + 1).max().unwrap_or(0);
        let mut vocab_r = vec![None; size];
        for (t, &i) in &vocab {
            vocab_r[i as usize] = Some(t.clone());
        }
        Self { vocab, vocab_r, unk_token }
    }
}

impl Model for WordLevel {
    fn tokenize(&self, sequence: &str) -> Result<Vec<Token>> {
        let id = match self.vocab.get(sequence) {
            Some(&id) => id,
            None => *self.vocab.get(&self.unk_token).ok_or_else(|| {
                Error::MissingToken(format!("WordLevel: the unk token {:?} is not in the vocabulary", self.unk_token))
            })?,
        };
        let value = if self.vocab.contains_key(sequence) { sequence.to_owned() } else { self.unk_token.clone() };
        Ok(vec![Token { id, value, offsets: (0, sequence.len()) }])
    }
    fn token_to_id(&self, token: &str) -> Option<u32> {
        self.vocab.get(token).copied()
    }
    fn id_to_token(&self, id: u32) -> Option<&str> {
        self.vocab_r.get(id as usize)?.as_deref()
    }
    fn get_vocab(&self) -> HashMap<String, u32> {
        self.vocab.clone()
    }
    fn get_vocab_size(&self) -> usize {
        self.vocab.len()
    }
}
