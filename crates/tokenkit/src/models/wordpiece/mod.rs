//! WordPiece: greedy longest-match-first segmentation of a piece (BERT).
//!
//! Non-initial subwords carry `continuing_subword_prefix` (`##`). A piece longer than
//! `max_input_chars_per_word` chars, or with any part that matches nothing, becomes one unk
//! token covering the whole piece.

pub mod trainer;
mod trie;

use std::sync::Arc;

use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use super::serialization::{deserialize_via_fields, missing, ModelFields};
use crate::base::vocab::{vocab_model_methods, ReverseVocab, Vocab, VocabMap};
use crate::base::{Model, Token};
use crate::Offsets;
use crate::{Error, Result};
use trie::Trie;

/// The WordPiece model (HF `models.WordPiece`).
#[derive(Debug, Clone)]
pub struct WordPiece {
    vocab: Vocab,
    unk_token: String,
    continuing_subword_prefix: String,
    max_input_chars_per_word: usize,
    /// Length in bytes of the longest vocabulary token: longer candidates are never looked up.
    max_token_len: usize,
    /// Tries of the tokens (first subword) and of the prefixed tokens without their prefix
    /// (later subwords); `None` for vocabularies they cannot hold.
    tries: Option<Arc<(Trie, Trie)>>,
    /// The id of each token of one char below [`CHAR_IDS_LIMIT`], by char ([`NO_ID`] for the
    /// other chars); empty when it cannot be used (see [`single_char_ids`]).
    char_ids: Arc<[u32]>,
    /// The id of the unk token.
    unk_id: Option<u32>,
}

/// Tokens of one char are indexed by char below this (the Basic Multilingual Plane).
const CHAR_IDS_LIMIT: usize = 0x1_0000;
/// No token for this char.
const NO_ID: u32 = u32::MAX;

/// The table of [`WordPiece::char_ids`]: empty when pieces are never split
/// (`max_input_chars_per_word` 0) or an id is [`NO_ID`].
fn single_char_ids(vocab: &VocabMap, max_input_chars_per_word: usize) -> Arc<[u32]> {
    if max_input_chars_per_word == 0 || vocab.values().any(|&id| id == NO_ID) {
        return Arc::from([]);
    }
    let singles: Vec<(usize, u32)> = vocab
        .iter()
        .filter_map(|(token, &id)| {
            let mut chars = token.chars();
            let c = chars.next()? as usize;
            (chars.next().is_none() && c < CHAR_IDS_LIMIT).then_some((c, id))
        })
        .collect();
    let mut table = vec![NO_ID; singles.iter().map(|&(c, _)| c + 1).max().unwrap_or(0)];
    for (c, id) in singles {
        table[c] = id;
    }
    table.into()
}

impl PartialEq for WordPiece {
    fn eq(&self, o: &Self) -> bool {
        self.vocab == o.vocab
            && self.unk_token == o.unk_token
            && self.continuing_subword_prefix == o.continuing_subword_prefix
            && self.max_input_chars_per_word == o.max_input_chars_per_word
    }
}

impl Default for WordPiece {
    /// Empty vocabulary, unk `[UNK]`, prefix `##`, 100 chars per word (HF's defaults).
    fn default() -> Self {
        Self::new(VocabMap::default(), "[UNK]".into(), "##".into(), 100)
    }
}

impl WordPiece {
    /// Builds the model.
    pub fn new(
        vocab: impl IntoIterator<Item = (String, u32)>,
        unk_token: String,
        continuing_subword_prefix: String,
        max_input_chars_per_word: usize,
    ) -> Self {
        let vocab: VocabMap = vocab.into_iter().collect();
        let tries = Trie::new(&vocab, "").zip(Trie::new(&vocab, &continuing_subword_prefix)).map(Arc::new);
        Self {
            tries,
            char_ids: single_char_ids(&vocab, max_input_chars_per_word),
            unk_id: vocab.get(&unk_token).copied(),
            max_token_len: vocab.keys().map(String::len).max().unwrap_or(0),
            vocab: Vocab::new(vocab),
            unk_token,
            continuing_subword_prefix,
            max_input_chars_per_word,
        }
    }

    /// A model with this vocabulary and the default options.
    pub fn from_vocab(vocab: impl IntoIterator<Item = (String, u32)>) -> Self {
        let d = Self::default();
        Self::new(vocab, d.unk_token, d.continuing_subword_prefix, d.max_input_chars_per_word)
    }

    /// The unk token.
    pub fn unk_token(&self) -> &str {
        &self.unk_token
    }
    /// The prefix of non-initial subwords.
    pub fn continuing_subword_prefix(&self) -> &str {
        &self.continuing_subword_prefix
    }
    /// Longest piece, in chars, that is split rather than mapped to unk.
    pub fn max_input_chars_per_word(&self) -> usize {
        self.max_input_chars_per_word
    }
    /// The vocabulary (token → id and id → token).
    pub fn vocab(&self) -> &Vocab {
        &self.vocab
    }

    /// The id of the unk token.
    fn unk_id(&self) -> Result<u32> {
        self.unk_id.ok_or_else(|| Error::MissingToken(format!("WordPiece: the unk token `{}` is not in the vocabulary", self.unk_token)))
    }

    /// Appends the subwords of `sequence` to `out` as `(id, byte offsets into it)`: the
    /// tokens [`Model::tokenize`] gives, without their strings. `false`, with `out` as it
    /// was, when `sequence` is one unk token instead (too long, or a part matches nothing).
    fn subwords(&self, sequence: &str, out: &mut Vec<(u32, Offsets)>) -> bool {
        // A piece has at most as many chars as bytes: count them only when it may be too long.
        if sequence.len() > self.max_input_chars_per_word && sequence.chars().count() > self.max_input_chars_per_word {
            return false;
        }
        let len = out.len();
        let found = match &self.tries {
            // The first walk finds a piece that is a single vocabulary word (most are).
            Some(tries) => self.subwords_by_tries(sequence, tries, out),
            None => match self.vocab.id(sequence) {
                Some(id) => {
                    out.push((id, (0, sequence.len())));
                    true
                }
                None => self.subwords_by_lookups(sequence, out),
            },
        };
        if !found {
            out.truncate(len);
        }
        found
    }

    /// The tokens of `sequence` as `(id, byte offsets into it)`, appended to `out`: what
    /// [`Model::tokenize`] gives without building the strings, which are the vocabulary
    /// strings of the ids when [`tokens_are_vocab_strings`](Self::tokens_are_vocab_strings).
    pub(crate) fn tokenize_spans(&self, sequence: &str, out: &mut Vec<(u32, Offsets)>) -> Result<()> {
        if !self.subwords(sequence, out) {
            out.push((self.unk_id()?, (0, sequence.len())));
        }
        Ok(())
    }

    /// The token of a piece that is the single char `c`, when the table of such tokens
    /// knows it: the char's own token, else the unk token (a piece of one char cannot be
    /// split). What [`tokenize_spans`](Self::tokenize_spans) gives for it, without a lookup.
    #[inline]
    pub(crate) fn char_token(&self, c: char) -> Option<u32> {
        match *self.char_ids.get(c as usize)? {
            NO_ID => self.unk_id,
            id => Some(id),
        }
    }

    /// Whether the string of every token is the vocabulary string of its id: each token is
    /// the string matched (or the unk token), so unless two strings share an id.
    pub(crate) fn tokens_are_vocab_strings(&self) -> bool {
        !self.vocab.has_shared_ids()
    }

    /// The id → token table, which encodings share to build their token strings lazily.
    pub(crate) fn reverse_vocab(&self) -> &Arc<ReverseVocab> {
        self.vocab.reverse()
    }

    /// Greedy longest-match-first by walking the tries: the same subwords as trying every
    /// candidate length from the longest down, in one walk per subword.
    fn subwords_by_tries(&self, sequence: &str, (initial, continuing): &(Trie, Trie), out: &mut Vec<(u32, Offsets)>) -> bool {
        let bytes = sequence.as_bytes();
        let mut start = 0;
        while start < bytes.len() {
            let trie = if start == 0 { initial } else { continuing };
            let Some((id, len)) = trie.longest(&bytes[start..]) else {
                return false;
            };
            out.push((id, (start, start + len)));
            start += len;
        }
        true
    }

    /// Builds the model from the fields of a tokenizer.json model object (all four fields
    /// are required, as in HF).
    pub(crate) fn from_fields(mut f: ModelFields) -> Result<Self> {
        f.expect_type("WordPiece")?;
        let unk = f.unk_token.take().ok_or_else(|| missing("WordPiece", "unk_token"))?;
        let prefix = f.continuing_subword_prefix.take().ok_or_else(|| missing("WordPiece", "continuing_subword_prefix"))?;
        let max = f.max_input_chars_per_word.take().ok_or_else(|| missing("WordPiece", "max_input_chars_per_word"))?;
        let vocab = f.take_vocab_map("WordPiece")?;
        let null = |field: &str| Error::invalid(format!("WordPiece model: `{field}` must not be null"));
        Ok(Self::new(
            vocab,
            unk.ok_or_else(|| null("unk_token"))?,
            prefix.ok_or_else(|| null("continuing_subword_prefix"))?,
            max.ok_or_else(|| null("max_input_chars_per_word"))?,
        ))
    }
}

impl Model for WordPiece {
    fn tokenize(&self, sequence: &str) -> Result<Vec<Token>> {
        let mut spans = Vec::new();
        if !self.subwords(sequence, &mut spans) {
            return Ok(vec![Token::new(self.unk_id()?, self.unk_token.clone(), (0, sequence.len()))]);
        }
        // The matched string itself (a vocabulary may give two strings one id).
        let prefix = self.continuing_subword_prefix.as_str();
        let token = |(id, (start, end)): (u32, Offsets)| {
            let piece = &sequence[start..end];
            let value = if start == 0 { piece.to_owned() } else { [prefix, piece].concat() };
            Token::new(id, value, (start, end))
        };
        Ok(spans.into_iter().map(token).collect())
    }

    vocab_model_methods!();
}

impl WordPiece {
    /// Greedy longest-match-first by looking up every candidate, longest first.
    fn subwords_by_lookups(&self, sequence: &str, out: &mut Vec<(u32, Offsets)>) -> bool {
        let prefix = self.continuing_subword_prefix.as_str();
        let mut candidate = String::new();
        let mut start = 0;
        while start < sequence.len() {
            let affix = if start > 0 { prefix.len() } else { 0 };
            // Candidates longer than the longest token cannot match: start below that bound.
            let Some(room) = self.max_token_len.checked_sub(affix) else {
                return false;
            };
            let mut end = sequence.len().min(start + room);
            while !sequence.is_char_boundary(end) {
                end -= 1;
            }
            let mut found = None;
            while end > start {
                let piece = &sequence[start..end];
                let s = if start > 0 {
                    candidate.clear();
                    candidate.push_str(prefix);
                    candidate.push_str(piece);
                    candidate.as_str()
                } else {
                    piece
                };
                if let Some(id) = self.vocab.id(s) {
                    found = Some(id);
                    break;
                }
                end -= piece.chars().next_back().map_or(1, char::len_utf8);
            }
            let Some(id) = found else {
                return false;
            };
            out.push((id, (start, end)));
            start = end;
        }
        true
    }
}

impl WordPiece {
    /// Writes the built model (vocabulary, options, tries, char table), for
    /// [`crate::utils::table_cache`]; `false` (nothing usable written) when two tokens share
    /// an id.
    pub(crate) fn write_table(&self, w: &mut crate::utils::table_cache::Writer) -> bool {
        if !self.vocab.write_table(w) {
            return false;
        }
        w.bytes(self.unk_token.as_bytes());
        w.bytes(self.continuing_subword_prefix.as_bytes());
        w.len(self.max_input_chars_per_word);
        w.len(self.max_token_len);
        w.bool(self.tries.is_some());
        if let Some(tries) = &self.tries {
            tries.0.write_table(w);
            tries.1.write_table(w);
        }
        w.u32s(&self.char_ids);
        true
    }

    /// Reads what [`WordPiece::write_table`] wrote.
    pub(crate) fn read_table(r: &mut crate::utils::table_cache::Reader<'_>) -> Result<Self> {
        let vocab = Vocab::read_table(r)?;
        let text = |b: &[u8]| String::from_utf8(b.to_vec()).map_err(|_| Error::invalid("table cache: malformed WordPiece"));
        let unk_token = text(r.bytes()?)?;
        let continuing_subword_prefix = text(r.bytes()?)?;
        let (max_input_chars_per_word, max_token_len) = (r.len(0)?, r.len(0)?);
        let tries = if r.bool()? { Some(Arc::new((Trie::read_table(r)?, Trie::read_table(r)?))) } else { None };
        let char_ids: Arc<[u32]> = r.u32s()?.into();
        Ok(Self {
            unk_id: vocab.id(&unk_token),
            vocab,
            unk_token,
            continuing_subword_prefix,
            max_input_chars_per_word,
            max_token_len,
            tries,
            char_ids,
        })
    }
}

impl Serialize for WordPiece {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut m = serializer.serialize_struct("WordPiece", 5)?;
        m.serialize_field("type", "WordPiece")?;
        m.serialize_field("unk_token", &self.unk_token)?;
        m.serialize_field("continuing_subword_prefix", &self.continuing_subword_prefix)?;
        m.serialize_field("max_input_chars_per_word", &self.max_input_chars_per_word)?;
        m.serialize_field("vocab", &self.vocab.ordered())?;
        m.end()
    }
}

deserialize_via_fields!(WordPiece);

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> WordPiece {
        let vocab = [("[UNK]", 0), ("a", 1), ("##b", 2), ("ab", 3), ("##é", 4)];
        WordPiece::new(vocab.iter().map(|&(t, i)| (t.to_string(), i)), "[UNK]".into(), "##".into(), 3)
    }

    fn run(m: &WordPiece, s: &str) -> Vec<(u32, String, (usize, usize))> {
        m.tokenize(s).unwrap().into_iter().map(|t| (t.id, t.value, t.offsets)).collect()
    }

    #[test]
    fn tries_same_as_lookups() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        let alphabet = ["a", "b", "é", "日", "#"];
        for _ in 0..100 {
            let mut vocab = vec![("[UNK]".to_string(), 0)];
            for i in 1..rng.gen_range(2..30) {
                let len = rng.gen_range(1..4);
                let mut t: String = (0..len).map(|_| alphabet[rng.gen_range(0..alphabet.len())]).collect();
                if rng.gen() {
                    t.insert_str(0, "##");
                }
                vocab.push((t, i));
            }
            let m = WordPiece::new(vocab, "[UNK]".into(), "##".into(), 8);
            assert!(m.tries.is_some());
            for _ in 0..50 {
                let s: String = (0..rng.gen_range(1..8)).map(|_| alphabet[rng.gen_range(0..alphabet.len())]).collect();
                let (mut by_tries, mut by_lookups) = (Vec::new(), Vec::new());
                let found = m.subwords_by_tries(&s, m.tries.as_deref().unwrap(), &mut by_tries);
                assert_eq!(found, m.subwords_by_lookups(&s, &mut by_lookups), "{s:?}");
                if found {
                    assert_eq!(by_tries, by_lookups, "{s:?}");
                }
            }
        }
    }

    #[test]
    fn matches_hf() {
        // HF 0.23.3, WordPiece({"[UNK]":0,"a":1,"##b":2,"ab":3,"##é":4}, max_input_chars_per_word=3);
        // offsets converted to bytes.
        let m = model();
        assert_eq!(run(&m, "ab"), vec![(3, "ab".into(), (0, 2))]);
        assert_eq!(run(&m, "abb"), vec![(3, "ab".into(), (0, 2)), (2, "##b".into(), (2, 3))]);
        assert_eq!(run(&m, "abbb"), vec![(0, "[UNK]".into(), (0, 4))]);
        assert_eq!(run(&m, "aé"), vec![(1, "a".into(), (0, 1)), (4, "##é".into(), (1, 3))]);
        assert_eq!(run(&m, "ax"), vec![(0, "[UNK]".into(), (0, 2))]);
        assert_eq!(run(&m, "éa"), vec![(0, "[UNK]".into(), (0, 3))]);
        assert_eq!(run(&m, ""), vec![]);
    }

    #[test]
    fn missing_unk_is_an_error() {
        let m = WordPiece::from_vocab([("a".to_string(), 1)]);
        let e = m.tokenize("ab").unwrap_err().to_string();
        assert!(e.contains("[UNK]"), "{e}");
    }

    #[test]
    fn serde_roundtrip() {
        // HF 0.23.3 output for WordPiece({"[UNK]":0,"a":1,"##b":2}).
        let hf = r###"{"type":"WordPiece","unk_token":"[UNK]","continuing_subword_prefix":"##","max_input_chars_per_word":100,"vocab":{"[UNK]":0,"a":1,"##b":2}}"###;
        let m: WordPiece = serde_json::from_str(hf).unwrap();
        assert_eq!(serde_json::to_string(&m).unwrap(), hf);
        let e = serde_json::from_str::<WordPiece>(r#"{"type":"WordPiece","vocab":{}}"#).unwrap_err().to_string();
        assert!(e.contains("missing field `unk_token`"), "{e}");
    }
}
