//! Added tokens: tokens cut out of the input before normalization and the model, matched
//! leftmost-longest, as HF's `AddedVocabulary` does.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use aho_corasick::AhoCorasick;
use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::tokenizer::normalized::{NormalizedString, Range};
use crate::tokenizer::pre_tokenized::PreTokenizedString;
use crate::tokenizer::{Model, Normalizer, Token};
use crate::utils::aho::leftmost_longest;
use crate::{Offsets, Result};

pub use crate::base::added_token::AddedToken;

/// An added token with its id, the way tokenizer.json lists them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AddedTokenWithId {
    /// Its id.
    pub id: u32,
    /// The token.
    #[serde(flatten)]
    pub token: AddedToken,
}

type MatchingSet = (AhoCorasick, Vec<u32>);

static STARTS_WITH_WORD: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\w").unwrap());
static ENDS_WITH_WORD: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\w$").unwrap());

fn empty_set() -> MatchingSet {
    let ac = leftmost_longest::<&str>(&[]).expect("an empty automaton builds");
    (ac, Vec::new())
}

/// The added vocabulary of a tokenizer.
#[derive(Clone, Debug)]
pub struct AddedVocabulary {
    /// content → id, special and not.
    added_tokens_map: HashMap<String, u32>,
    /// id → token.
    added_tokens_map_r: HashMap<u32, AddedToken>,
    /// Non-special added tokens in the order given.
    added_tokens: Vec<AddedToken>,
    /// Special tokens in the order given.
    special_tokens: Vec<AddedToken>,
    special_tokens_set: HashSet<String>,
    /// Automaton over the raw text (non-normalized tokens).
    split_trie: MatchingSet,
    /// Automaton over the normalized text (normalized tokens).
    split_normalized_trie: MatchingSet,
    /// When true, special tokens are not matched: they are encoded as ordinary text.
    encode_special_tokens: bool,
    /// id → normalized content, for normalized tokens the normalizer changes: decoding uses
    /// this form so that the decoder can invert the normalization (as HF 0.23 does).
    normalized_cache: HashMap<u32, String>,
}

impl Default for AddedVocabulary {
    fn default() -> Self {
        Self::new()
    }
}

impl AddedVocabulary {
    /// An empty added vocabulary.
    pub fn new() -> Self {
        Self {
            added_tokens_map: HashMap::new(),
            added_tokens_map_r: HashMap::new(),
            added_tokens: Vec::new(),
            special_tokens: Vec::new(),
            special_tokens_set: HashSet::new(),
            split_trie: empty_set(),
            split_normalized_trie: empty_set(),
            encode_special_tokens: false,
            normalized_cache: HashMap::new(),
        }
    }

    /// Number of added tokens.
    pub fn len(&self) -> usize {
        self.added_tokens_map.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.added_tokens_map.is_empty()
    }

    /// content → id of every added token.
    pub fn get_vocab(&self) -> &HashMap<String, u32> {
        &self.added_tokens_map
    }

    /// id → token of every added token.
    pub fn get_added_tokens_decoder(&self) -> &HashMap<u32, AddedToken> {
        &self.added_tokens_map_r
    }

    /// The id of `token`, looking at added tokens first, then the model.
    pub fn token_to_id(&self, token: &str, model: &impl Model) -> Option<u32> {
        self.added_tokens_map.get(token).copied().or_else(|| model.token_to_id(token))
    }

    /// The string of added token `id` used for decoding, if it is one: its normalized form
    /// when it is a normalized token the normalizer changes, else its content.
    pub fn simple_id_to_token(&self, id: u32) -> Option<&str> {
        let t = self.added_tokens_map_r.get(&id)?;
        Some(self.normalized_cache.get(&id).map_or(t.content.as_str(), String::as_str))
    }

    /// Whether `token` is a special token.
    pub fn is_special_token(&self, token: &str) -> bool {
        self.special_tokens_set.contains(token)
    }

    /// Whether special tokens are encoded as plain text.
    pub fn get_encode_special_tokens(&self) -> bool {
        self.encode_special_tokens
    }

    /// Sets whether special tokens are encoded as plain text.
    pub fn set_encode_special_tokens(&mut self, v: bool) {
        self.encode_special_tokens = v;
    }

    /// Adds tokens with HF's rules: a token already in the vocabulary keeps its id; a new one
    /// gets the next free id after the model's vocabulary. Returns how many were added.
    pub fn add_tokens<N: Normalizer>(&mut self, tokens: &[AddedToken], model: &impl Model, normalizer: Option<&N>) -> Result<usize> {
        for t in tokens {
            if t.special && !t.content.is_empty() && !self.special_tokens_set.contains(&t.content) {
                self.special_tokens.push(t.clone());
                self.special_tokens_set.insert(t.content.clone());
            }
        }
        let mut ignored = 0;
        for t in tokens {
            if t.content.is_empty() || self.added_tokens_map_r.values().any(|v| v == t) {
                ignored += 1;
                continue;
            }
            let vocab_size = model.get_vocab_size() as u32;
            let new_id = match self.token_to_id(&t.content, model) {
                Some(id) => id,
                None => match self.added_tokens_map.values().max() {
                    None => vocab_size,
                    Some(&max) if max >= vocab_size || vocab_size == 0 => max + 1,
                    Some(_) => vocab_size,
                },
            };
            if t.normalized {
                if let Some(n) = normalizer {
                    let mut content = NormalizedString::from(t.content.as_str());
                    n.normalize(&mut content)?;
                    if content.get() != t.content {
                        self.normalized_cache.insert(new_id, content.get().to_owned());
                    }
                }
            }
            self.added_tokens_map.insert(t.content.clone(), new_id);
            self.added_tokens_map_r.insert(new_id, t.clone());
            if !self.special_tokens_set.contains(&t.content) {
                self.added_tokens.push(t.clone());
            }
        }
        self.refresh_added_tokens(model, normalizer)?;
        Ok(tokens.len() - ignored)
    }

    /// Re-normalizes the normalized tokens and rebuilds the matchers (after the normalizer
    /// changed).
    pub fn refresh_normalized_tokens<N: Normalizer>(&mut self, model: &impl Model, normalizer: Option<&N>) -> Result<()> {
        self.normalized_cache.clear();
        if let Some(n) = normalizer {
            for (id, t) in &self.added_tokens_map_r {
                if t.normalized {
                    let mut content = NormalizedString::from(t.content.as_str());
                    n.normalize(&mut content)?;
                    if content.get() != t.content {
                        self.normalized_cache.insert(*id, content.get().to_owned());
                    }
                }
            }
        }
        self.refresh_added_tokens(model, normalizer)
    }

    fn refresh_added_tokens<N: Normalizer>(&mut self, model: &impl Model, normalizer: Option<&N>) -> Result<()> {
        let mut raw: (Vec<&str>, Vec<u32>) = Default::default();
        let mut normalized: (Vec<String>, Vec<u32>) = Default::default();
        for t in self.special_tokens.iter().chain(self.added_tokens.iter()) {
            let Some(id) = self.token_to_id(&t.content, model) else { continue };
            if t.normalized {
                let mut content = NormalizedString::from(t.content.as_str());
                if let Some(n) = normalizer {
                    n.normalize(&mut content)?;
                }
                normalized.0.push(content.get().to_owned());
                normalized.1.push(id);
            } else {
                raw.0.push(&t.content);
                raw.1.push(id);
            }
        }
        let build = |patterns: &[&str]| {
            leftmost_longest(patterns).map_err(|e| crate::Error::invalid(format!("cannot build the added-token matcher: {e}")))
        };
        self.split_trie = (build(&raw.0)?, raw.1);
        let npatterns: Vec<&str> = normalized.0.iter().map(String::as_str).collect();
        self.split_normalized_trie = (build(&npatterns)?, normalized.1);
        Ok(())
    }

    /// Cuts `sentence` into pieces covering it, `Some(id)` for the added tokens found.
    fn find_matches(&self, sentence: &str, set: &MatchingSet) -> Vec<(Option<u32>, Offsets)> {
        let mut splits = Vec::new();
        self.for_each_match(sentence, set, |id, offsets| splits.push((id, offsets)));
        splits
    }

    /// Cuts `sentence` by the tokens of `set`, calling `split(id, offsets)` for each part in
    /// order: `Some(id)` for a token, `None` for the text between (an empty sentence is one
    /// empty part).
    fn for_each_match(&self, sentence: &str, set: &MatchingSet, mut split: impl FnMut(Option<u32>, Offsets)) {
        if sentence.is_empty() {
            return split(None, (0, 0));
        }
        let mut start_offset = 0;
        for m in set.0.find_iter(sentence) {
            let (mut start, mut stop) = (m.start(), m.end());
            let id = set.1[m.pattern().as_usize()];
            let token = &self.added_tokens_map_r[&id];
            if self.encode_special_tokens && self.special_tokens_set.contains(&token.content) {
                continue;
            }
            if token.single_word {
                let start_space = start == 0 || !ENDS_WITH_WORD.is_match(&sentence[..start]);
                let stop_space = stop == sentence.len() || !STARTS_WITH_WORD.is_match(&sentence[stop..]);
                if !start_space || !stop_space {
                    continue;
                }
            }
            if token.lstrip {
                let new_start = sentence[..start].trim_end_matches(char::is_whitespace).len();
                start = new_start.max(start_offset);
            }
            if token.rstrip {
                let rest = &sentence[stop..];
                stop += rest.len() - rest.trim_start_matches(char::is_whitespace).len();
            }
            if start_offset < start {
                split(None, (start_offset, start));
            }
            split(Some(id), (start, stop));
            start_offset = stop;
        }
        if start_offset != sentence.len() {
            split(None, (start_offset, sentence.len()));
        }
    }

    fn split_with_indices(&self, sentence: NormalizedString, set: &MatchingSet) -> Vec<(NormalizedString, Option<Vec<Token>>)> {
        let matches = self.find_matches(sentence.get(), set);
        // No added token: the whole string, as its slice of everything would be (no copy).
        if let [(None, (0, e))] = matches.as_slice() {
            if *e == sentence.len() && sentence.covers_its_original() {
                return vec![(sentence, None)];
            }
        }
        matches
            .into_iter()
            .filter_map(|(id, (s, e))| {
                let slice = sentence.slice(Range::Normalized(s..e))?;
                let tokens = id.map(|id| {
                    let value = slice.get().to_owned();
                    let len = value.len();
                    vec![Token { id, value, offsets: (0, len) }]
                });
                Some((slice, tokens))
            })
            .collect()
    }

    /// Cuts the added tokens out of `sequence` (raw ones first, then normalized ones on the
    /// normalized remaining pieces) and normalizes the rest.
    pub fn extract_and_normalize<N: Normalizer>(&self, normalizer: Option<&N>, sequence: &str) -> Result<PreTokenizedString> {
        let mut pretokenized = PreTokenizedString::from(sequence);
        if !self.split_trie.1.is_empty() {
            pretokenized.split(|_, s| Ok(self.split_with_indices(s, &self.split_trie)))?;
        }
        pretokenized.split(|_, mut s| {
            if let Some(n) = normalizer {
                n.normalize(&mut s)?;
            }
            if self.split_normalized_trie.1.is_empty() {
                Ok(vec![(s, None)])
            } else {
                Ok(self.split_with_indices(s, &self.split_normalized_trie))
            }
        })?;
        Ok(pretokenized)
    }

    /// The added-token cut of `text` when there is no normalizer: `(Some(id), range)` for the
    /// added tokens, `(None, range)` for the text between them (byte ranges into `text`), the
    /// same pieces [`extract_and_normalize`](Self::extract_and_normalize) makes.
    pub fn split_unnormalized(&self, text: &str) -> Vec<(Option<u32>, Offsets)> {
        let mut out = Vec::new();
        self.for_each_unnormalized_split(text, |id, offsets| out.push((id, offsets)));
        out
    }

    /// [`split_unnormalized`](Self::split_unnormalized) without the vector: calls
    /// `split(id, offsets)` for each part in order.
    pub(crate) fn for_each_unnormalized_split(&self, text: &str, mut split: impl FnMut(Option<u32>, Offsets)) {
        let mut non_empty = |id, (s, e): Offsets| {
            if s < e {
                split(id, (s, e));
            }
        };
        let mut first = |id: Option<u32>, (s, e): Offsets| {
            if id.is_some() || self.split_normalized_trie.1.is_empty() {
                non_empty(id, (s, e));
            } else {
                self.for_each_match(&text[s..e], &self.split_normalized_trie, |id, (s2, e2)| non_empty(id, (s + s2, s + e2)));
            }
        };
        if self.split_trie.1.is_empty() {
            first(None, (0, text.len()));
        } else {
            self.for_each_match(text, &self.split_trie, first);
        }
    }

    /// Whether some added tokens are matched on the normalized text (`normalized: true`).
    pub(crate) fn has_normalized_tokens(&self) -> bool {
        !self.split_normalized_trie.1.is_empty()
    }

    /// The tokens sorted by id, as tokenizer.json stores them.
    pub fn sorted_with_ids(&self) -> Vec<AddedTokenWithId> {
        let mut v: Vec<AddedTokenWithId> =
            self.added_tokens_map_r.iter().map(|(id, t)| AddedTokenWithId { id: *id, token: t.clone() }).collect();
        v.sort_unstable_by_key(|t| t.id);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::utils::lexers::adversarial::assert_linear;
    use crate::Tokenizer;

    fn wordlevel() -> Tokenizer {
        Tokenizer::from_json(
            r#"{"added_tokens":[],"normalizer":{"type":"Lowercase"},"pre_tokenizer":{"type":"WhitespaceSplit"},
                "model":{"type":"WordLevel","vocab":{"<unk>":0,"a":1},"unk_token":"<unk>"}}"#,
        )
        .unwrap()
    }

    /// Loading is linear in a token's length (the automaton's DFA made 16,000 chars take
    /// 9.6 s), for raw and normalized tokens, and the long tokens still match.
    #[test]
    fn long_added_tokens_load_in_linear_time() {
        let tokens = |n: usize| vec![AddedToken::from("x".repeat(n), true), AddedToken::from("Ab".repeat(n / 2), false)];
        assert_linear("adding long tokens", &tokens(8192), &tokens(131_072), |t| {
            wordlevel().add_tokens(t).unwrap();
        });
        let mut tok = wordlevel();
        tok.add_tokens(&tokens(1_000_000)).unwrap();
        let text = format!("a {} a {}", "x".repeat(1_000_000), "aB".repeat(500_000));
        assert_eq!(tok.encode(text.as_str(), false).unwrap().get_ids(), [1, 2, 1, 3]);
    }
}
