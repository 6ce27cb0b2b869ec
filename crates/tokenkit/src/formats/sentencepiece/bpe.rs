//! SentencePiece's BPE (`bpe_model.cc`): start from chars (user-defined symbols whole and
//! frozen), repeatedly merge the adjacent pair whose concatenation is the highest-scoring
//! piece (leftmost on ties), then split back any unused piece into the pair it was made of.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

use super::model::{Segment, SentencePiece};
use super::normalizer::{utf8_len, SPACE_SYMBOL};
use crate::models::cache::{Cache, MAX_CACHED_LENGTH};

#[derive(Debug, Clone, Copy)]
struct Symbol {
    start: u32,
    end: u32,
    prev: i32,
    next: i32,
    freeze: bool,
}

/// A candidate merge of `symbols[left]` and `symbols[right]`, whose result is `size` bytes.
#[derive(Debug, Clone, Copy)]
struct Pair {
    score: f32,
    left: u32,
    right: u32,
    size: u32,
}

impl PartialEq for Pair {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Pair {}
impl PartialOrd for Pair {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Pair {
    /// The max-heap pops the highest score first, then the leftmost pair.
    fn cmp(&self, o: &Self) -> Ordering {
        self.score.total_cmp(&o.score).then_with(|| o.left.cmp(&self.left))
    }
}

/// Encodes the normalized `text` into `(start, end, id)` byte ranges, in order.
///
/// When no piece has a `▁` after its first non-`▁` char (the usual `split_by_whitespace`
/// training), no merge can cross the start of a word (`▁` after a non-`▁` char), so the words
/// are encoded one by one, each result cached: the same ids, without a heap over the whole text.
pub(crate) fn encode(model: &SentencePiece, text: &str, out: &mut Vec<Segment>) {
    out.clear();
    let Some(cache) = model.bpe_word_cache() else {
        encode_span(model, text, 0, out);
        return;
    };
    let bytes = text.as_bytes();
    let space = SPACE_SYMBOL.as_bytes();
    let mut start = 0;
    let mut prev_space = false;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(space) {
            if i > start && !prev_space {
                encode_word(cache, model, &text[start..i], start, out);
                start = i;
            }
            prev_space = true;
            i += space.len();
        } else {
            prev_space = false;
            i += 1;
        }
    }
    encode_word(cache, model, &text[start..], start, out);
}

fn encode_word(cache: &Cache<Box<[Segment]>>, model: &SentencePiece, word: &str, base: usize, out: &mut Vec<Segment>) {
    let base32 = base as u32;
    let cacheable = word.len() < MAX_CACHED_LENGTH;
    if cacheable && cache.with(word, |segs| out.extend(segs.iter().map(|&(s, e, id)| (s + base32, e + base32, id)))).is_some() {
        return;
    }
    let before = out.len();
    encode_span(model, word, base, out);
    if cacheable {
        cache.insert(word, out[before..].iter().map(|&(s, e, id)| (s - base32, e - base32, id)).collect());
    }
}

/// BPE over the whole of `text`, appending `(start + base, end + base, id)` to `out`.
fn encode_span(model: &SentencePiece, text: &str, base: usize, out: &mut Vec<Segment>) {
    if text.is_empty() {
        return;
    }
    let bytes = text.as_bytes();
    let mut symbols: Vec<Symbol> = Vec::with_capacity(text.len());
    let mut pos = 0;
    while pos < bytes.len() {
        let mut len = 0;
        if let Some(t) = model.user_defined_trie() {
            t.common_prefixes(&bytes[pos..], |l, _| len = l);
        }
        let freeze = len > 0;
        if !freeze {
            len = utf8_len(bytes[pos]).min(bytes.len() - pos);
        }
        let index = symbols.len() as i32;
        symbols.push(Symbol {
            start: pos as u32,
            end: (pos + len) as u32,
            prev: index - 1,
            next: if pos + len < bytes.len() { index + 1 } else { -1 },
            freeze,
        });
        pos += len;
    }
    let mut agenda = BinaryHeap::with_capacity(symbols.len());
    let mut rev_merge: HashMap<&str, (&str, &str)> = HashMap::new();
    let mut add_pair = |symbols: &[Symbol], agenda: &mut BinaryHeap<Pair>, left: i32, right: i32| {
        if left < 0 || right < 0 {
            return;
        }
        let (l, r) = (&symbols[left as usize], &symbols[right as usize]);
        if l.freeze || r.freeze {
            return;
        }
        let piece = &text[l.start as usize..r.end as usize];
        let Some(id) = model.mergeable_id(piece) else { return };
        if model.is_unused(id) {
            rev_merge.insert(piece, (&text[l.start as usize..l.end as usize], &text[r.start as usize..r.end as usize]));
        }
        agenda.push(Pair { score: model.score(id), left: left as u32, right: right as u32, size: piece.len() as u32 });
    };
    for i in 1..symbols.len() {
        add_pair(&symbols, &mut agenda, i as i32 - 1, i as i32);
    }
    while let Some(top) = agenda.pop() {
        let (li, ri) = (top.left as usize, top.right as usize);
        let (l, r) = (symbols[li], symbols[ri]);
        if l.start == l.end || r.start == r.end || (l.end - l.start) + (r.end - r.start) != top.size || l.next != ri as i32 {
            continue;
        }
        symbols[li].end = r.end;
        symbols[li].next = r.next;
        if r.next >= 0 {
            symbols[r.next as usize].prev = li as i32;
        }
        symbols[ri].end = symbols[ri].start;
        let prev = symbols[li].prev;
        let next = symbols[li].next;
        add_pair(&symbols, &mut agenda, prev, li as i32);
        add_pair(&symbols, &mut agenda, li as i32, next);
    }
    let mut index = 0i32;
    while index >= 0 {
        let s = symbols[index as usize];
        resegment(model, text, s.start as usize, s.end as usize, base, &rev_merge, out);
        index = s.next;
    }
}

/// Emits `text[start..end]`, splitting an unused piece back into the pair that made it.
fn resegment(
    model: &SentencePiece,
    text: &str,
    start: usize,
    end: usize,
    base: usize,
    rev_merge: &HashMap<&str, (&str, &str)>,
    out: &mut Vec<Segment>,
) {
    let piece = &text[start..end];
    let id = model.piece_to_id_or_unk(piece);
    let span = ((base + start) as u32, (base + end) as u32, id);
    if !model.is_unused(id) {
        out.push(span);
        return;
    }
    match rev_merge.get(piece) {
        Some(&(left, _)) => {
            let mid = start + left.len();
            resegment(model, text, start, mid, base, rev_merge, out);
            resegment(model, text, mid, end, base, rev_merge, out);
        }
        None => out.push(span),
    }
}
