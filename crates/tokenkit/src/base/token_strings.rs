//! The token strings of an [`Encoding`](super::Encoding), built only when they are read.
//!
//! Almost every token's string is the vocabulary string of its id. Allocating a `String` per
//! token while encoding (as HF does) costs more than the BPE itself on cached words, and most
//! callers only read the ids. So an encoding filled from a model's vocabulary keeps a shared
//! handle on the id → token table and only the strings that differ from it (added tokens as
//! matched in the text, special and pad tokens whose string is not the vocabulary's); the
//! `Vec<String>` the public API returns is built on the first read.

use std::borrow::Cow;
use std::collections::TryReserveError;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use crate::base::vocab::ReverseVocab;

/// The strings of a sequence of tokens; the ids live beside them in the encoding and are
/// passed in by every method that needs them.
#[derive(Clone)]
pub(crate) enum TokenStrings {
    /// Every string, in token order.
    Owned(Vec<String>),
    /// The string of token `i` is `explicit`'s entry for `i` if there is one, else the
    /// vocabulary string of its id (empty for an id outside it).
    Vocab {
        vocab: Arc<ReverseVocab>,
        /// `(position, string)`, in increasing position.
        explicit: Vec<(usize, String)>,
        /// All the strings, built on the first read and dropped by every change.
        built: OnceLock<Vec<String>>,
    },
}

impl Default for TokenStrings {
    fn default() -> Self {
        TokenStrings::Owned(Vec::new())
    }
}

impl From<Vec<String>> for TokenStrings {
    fn from(v: Vec<String>) -> Self {
        TokenStrings::Owned(v)
    }
}

impl std::fmt::Debug for TokenStrings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TokenStrings::Owned(v) => v.fmt(f),
            TokenStrings::Vocab { explicit, .. } => f.debug_struct("VocabStrings").field("explicit", explicit).finish(),
        }
    }
}

/// The string of a token with id `id` at position `pos`, `explicit` being the entries from
/// `pos` on.
#[inline]
fn lookup<'a>(vocab: &'a ReverseVocab, explicit: &mut &'a [(usize, String)], pos: usize, id: u32) -> &'a str {
    match explicit.first() {
        Some((p, s)) if *p == pos => {
            *explicit = &explicit[1..];
            s
        }
        _ => vocab.get(id).unwrap_or_default(),
    }
}

impl TokenStrings {
    /// Strings for tokens looked up in `vocab`, none yet.
    fn vocab(vocab: Arc<ReverseVocab>, explicit: Vec<(usize, String)>) -> Self {
        TokenStrings::Vocab { vocab, explicit, built: OnceLock::new() }
    }

    /// The strings of the tokens `ids`: each its string in `vocab` but for the `(position,
    /// string)` entries of `explicit`, in increasing position.
    pub(crate) fn with_vocab(vocab: &Arc<ReverseVocab>, mut explicit: Vec<(usize, String)>, ids: &[u32]) -> Self {
        explicit.retain(|(pos, s)| ids.get(*pos).is_none_or(|&id| vocab.get(id) != Some(s.as_str())));
        Self::vocab(vocab.clone(), explicit)
    }

    /// The strings of the tokens `ids`, built on the first call.
    pub(crate) fn get(&self, ids: &[u32]) -> &[String] {
        match self {
            TokenStrings::Owned(v) => v,
            TokenStrings::Vocab { built, .. } => built.get_or_init(|| self.iter(ids).map(str::to_owned).collect()),
        }
    }

    /// The strings of the tokens `ids`, without building them.
    pub(crate) fn iter<'a>(&'a self, ids: &'a [u32]) -> impl Iterator<Item = &'a str> + 'a {
        let (owned, vocab) = match self {
            TokenStrings::Owned(v) => (Some(v), None),
            TokenStrings::Vocab { vocab, explicit, .. } => (None, Some((&**vocab, explicit.as_slice()))),
        };
        let mut owned = owned.into_iter().flatten().map(String::as_str);
        let mut vocab =
            vocab.map(|(vocab, mut explicit)| ids.iter().enumerate().map(move |(pos, &id)| lookup(vocab, &mut explicit, pos, id)));
        std::iter::from_fn(move || match &mut vocab {
            Some(v) => v.next(),
            None => owned.next(),
        })
    }

    /// The strings as a vector (built if needed).
    pub(crate) fn into_vec(self, ids: &[u32]) -> Vec<String> {
        match self {
            TokenStrings::Owned(v) => v,
            TokenStrings::Vocab { mut built, .. } if built.get().is_some() => built.take().unwrap_or_default(),
            this => this.iter(ids).map(str::to_owned).collect(),
        }
    }

    /// Appends the string of token `id` at position `pos` (the number of tokens before it).
    pub(crate) fn push(&mut self, pos: usize, id: u32, s: Cow<'_, str>) {
        match self {
            TokenStrings::Owned(v) => v.push(s.into_owned()),
            TokenStrings::Vocab { vocab, explicit, built } => {
                built.take();
                if vocab.get(id) != Some(&*s) {
                    explicit.push((pos, s.into_owned()));
                }
            }
        }
    }

    /// Puts the string of token `id` in front of the others.
    pub(crate) fn prepend(&mut self, id: u32, s: Cow<'_, str>) {
        match self {
            TokenStrings::Owned(v) => v.insert(0, s.into_owned()),
            TokenStrings::Vocab { vocab, explicit, built } => {
                built.take();
                explicit.iter_mut().for_each(|(p, _)| *p += 1);
                if vocab.get(id) != Some(&*s) {
                    explicit.insert(0, (0, s.into_owned()));
                }
            }
        }
    }

    /// Appends token `id` at position `pos`, its string being its string in `vocab`.
    #[inline]
    pub(crate) fn push_vocab(&mut self, pos: usize, id: u32, vocab: &Arc<ReverseVocab>) {
        match self {
            TokenStrings::Vocab { vocab: v, built, .. } if Arc::ptr_eq(v, vocab) => {
                if built.get_mut().is_some() {
                    *built = OnceLock::new();
                }
            }
            TokenStrings::Owned(v) if v.is_empty() => *self = Self::vocab(vocab.clone(), Vec::new()),
            _ => self.push(pos, id, Cow::Borrowed(vocab.get(id).unwrap_or_default())),
        }
    }

    /// Appends the tokens of `other` (ids `other_ids`) after the first `len` tokens.
    pub(crate) fn append(&mut self, len: usize, other: TokenStrings, other_ids: &[u32]) {
        match (&mut *self, other) {
            (TokenStrings::Owned(a), TokenStrings::Owned(b)) => a.extend(b),
            (TokenStrings::Owned(a), other) if a.is_empty() => *self = other,
            (TokenStrings::Owned(a), TokenStrings::Vocab { vocab, explicit, .. }) => {
                let mut all: Vec<(usize, String)> = std::mem::take(a).into_iter().enumerate().collect();
                all.extend(explicit.into_iter().map(|(p, s)| (p + len, s)));
                *self = Self::vocab(vocab, all);
            }
            (TokenStrings::Vocab { vocab, explicit, built }, other) => {
                built.take();
                match other {
                    TokenStrings::Vocab { vocab: v, explicit: e, .. } if Arc::ptr_eq(vocab, &v) => {
                        explicit.extend(e.into_iter().map(|(p, s)| (p + len, s)));
                    }
                    other => {
                        for (pos, (s, &id)) in other.iter(other_ids).zip(other_ids).enumerate() {
                            if vocab.get(id) != Some(s) {
                                explicit.push((pos + len, s.to_owned()));
                            }
                        }
                    }
                }
            }
        }
    }

    /// The strings of the tokens in `range`. Strings are moved out
    /// (leaving empty ones behind) except those in `keep`, which a later window still needs.
    pub(crate) fn window(&mut self, range: Range<usize>, keep: &Range<usize>) -> TokenStrings {
        match self {
            TokenStrings::Owned(v) => {
                TokenStrings::Owned(range.map(|i| if keep.contains(&i) { v[i].clone() } else { std::mem::take(&mut v[i]) }).collect())
            }
            TokenStrings::Vocab { vocab, explicit, .. } => {
                let from = explicit.partition_point(|(p, _)| *p < range.start);
                let to = explicit.partition_point(|(p, _)| *p < range.end);
                let part = explicit[from..to].iter().map(|(p, s)| (p - range.start, s.clone())).collect();
                Self::vocab(vocab.clone(), part)
            }
        }
    }

    /// Makes room for the `n` tokens `(id, s)` of [`pad`](Self::pad), failing instead of
    /// aborting when memory runs out.
    pub(crate) fn try_reserve_padding(&mut self, n: usize, id: u32, s: &str) -> Result<(), TryReserveError> {
        match self {
            TokenStrings::Owned(v) => v.try_reserve(n),
            TokenStrings::Vocab { vocab, explicit, .. } if vocab.get(id) != Some(s) => explicit.try_reserve(n),
            TokenStrings::Vocab { .. } => Ok(()),
        }
    }

    /// Puts `n` tokens `(id, s)` in front of the first `len` tokens (`left`) or after them.
    pub(crate) fn pad(&mut self, len: usize, n: usize, id: u32, s: &str, left: bool) {
        match self {
            TokenStrings::Owned(v) if left => {
                v.splice(0..0, std::iter::repeat_n(s.to_owned(), n));
            }
            TokenStrings::Owned(v) => v.extend(std::iter::repeat_n(s.to_owned(), n)),
            TokenStrings::Vocab { vocab, explicit, built } => {
                built.take();
                let differs = vocab.get(id) != Some(s);
                if left {
                    explicit.iter_mut().for_each(|(p, _)| *p += n);
                    if differs {
                        explicit.splice(0..0, (0..n).map(|p| (p, s.to_owned())));
                    }
                } else if differs {
                    explicit.extend((len..len + n).map(|p| (p, s.to_owned())));
                }
            }
        }
    }
}
