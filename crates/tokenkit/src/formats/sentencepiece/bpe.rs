//! SentencePiece's BPE (`bpe_model.cc`): start from chars (user-defined symbols whole and
//! frozen), repeatedly merge the adjacent pair whose concatenation is the highest-scoring
//! piece (leftmost on ties), then split back any unused piece into the pair it was made of.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use super::model::{Segment, SentencePiece};
use super::normalizer::{utf8_len, SPACE_SYMBOL};
use crate::models::cache::{Cache, MAX_CACHED_LENGTH};
use crate::models::vocab::VocabMap;

#[derive(Debug, Clone, Copy)]
struct Symbol {
    start: u32,
    end: u32,
    prev: i32,
    next: i32,
    /// The id of the symbol's text (`PieceToId`), `NONE` when it is not a piece.
    id: u32,
    freeze: bool,
}

/// "Not a piece".
const NONE: u32 = u32::MAX;

/// A candidate merge of `symbols[left]` and `symbols[right]` into piece `id`, whose text is
/// `size` bytes.
#[derive(Debug, Clone, Copy)]
struct Pair {
    score: f32,
    left: u32,
    right: u32,
    size: u32,
    id: u32,
}

/// Hasher for `u64` keys made of two ids (a multiply and a rotation mix them well enough for
/// a table whose keys come from the model file).
#[derive(Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (n.wrapping_mul(0x9E37_79B9_7F4A_7C15)).rotate_left(26);
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
}

type IdMap<K> = HashMap<K, u32, BuildHasherDefault<IdHasher>>;

/// Lookup tables that replace string hashing in the merge loop: the merged piece of two
/// pieces by their ids, and the id of each single-char piece.
#[derive(Debug, Clone, Default)]
pub(crate) struct BpeTables {
    /// `(left id << 32) | right id` → id of the mergeable piece `left + right`.
    pairs: IdMap<u64>,
    /// Char, by [`char_key`] → id of the piece that is that char (any type, as `PieceToId`).
    chars: IdMap<u32>,
    /// The same for ASCII, by byte (128 entries; empty for no model).
    ascii: Vec<u32>,
    /// Some mergeable piece contains a char that is not a piece by itself, so a symbol that
    /// is no piece may still merge (otherwise such symbols are skipped without a lookup).
    orphan_chars: bool,
}

impl BpeTables {
    /// Builds the tables from the piece list, every piece's id and the mergeable pieces' ids.
    pub(crate) fn new(pieces: &[String], piece_to_id: &VocabMap, mergeable: &VocabMap) -> Self {
        let mut t = Self { ascii: vec![NONE; 128], ..Default::default() };
        for (id, p) in pieces.iter().enumerate() {
            let mut cs = p.chars();
            if let (Some(c), None) = (cs.next(), cs.next()) {
                // `piece_to_id` keeps one id per text; pieces are unique, so this is it.
                if c.is_ascii() {
                    t.ascii[c as usize] = id as u32;
                }
                t.chars.insert(char_key(p.as_bytes()), id as u32);
            }
        }
        for (p, &id) in mergeable {
            t.orphan_chars |= p.char_indices().any(|(i, c)| !t.chars.contains_key(&char_key(&p.as_bytes()[i..i + c.len_utf8()])));
            for (k, _) in p.char_indices().skip(1) {
                if let (Some(&l), Some(&r)) = (piece_to_id.get(&p[..k]), piece_to_id.get(&p[k..])) {
                    t.pairs.insert(u64::from(l) << 32 | u64::from(r), id);
                }
            }
        }
        t
    }

    /// The id of the piece that is the char `c` (its UTF-8 bytes), `NONE` if there is none.
    #[inline]
    fn char_id(&self, c: &[u8]) -> u32 {
        if let Some(&id) = self.ascii.get(c[0] as usize) {
            return id;
        }
        self.chars.get(&char_key(c)).copied().unwrap_or(NONE)
    }
}

/// A char's key in [`BpeTables::chars`]: its UTF-8 bytes (at most 4) packed into a `u32`,
/// which saves decoding it.
#[inline]
fn char_key(c: &[u8]) -> u32 {
    match *c {
        [a] => u32::from(a),
        [a, b] => u32::from_be_bytes([0, 0, a, b]),
        [a, b, d] => u32::from_be_bytes([0, a, b, d]),
        [a, b, d, e, ..] => u32::from_be_bytes([a, b, d, e]),
        [] => 0,
    }
}

thread_local! {
    /// Symbols and agenda reused between calls on this thread.
    static SCRATCH: RefCell<(Vec<Symbol>, BinaryHeap<Pair>)> = RefCell::new(Default::default());
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
    SCRATCH.with(|cell| {
        let mut guard = cell.try_borrow_mut();
        let mut local = Default::default();
        let (symbols, agenda) = match guard.as_deref_mut() {
            Ok(b) => b,
            Err(_) => &mut local,
        };
        merge(model, text, base, symbols, agenda, out);
        if symbols.capacity() > 1 << 16 {
            *symbols = Vec::new();
            *agenda = BinaryHeap::new();
        }
    })
}

fn merge(
    model: &SentencePiece,
    text: &str,
    base: usize,
    symbols: &mut Vec<Symbol>,
    agenda: &mut BinaryHeap<Pair>,
    out: &mut Vec<Segment>,
) {
    let tables = model.bpe_tables();
    let bytes = text.as_bytes();
    symbols.clear();
    agenda.clear();
    let mut pos = 0;
    while pos < bytes.len() {
        let mut len = 0;
        let mut id = NONE;
        if let Some(t) = model.user_defined_trie() {
            t.common_prefixes(&bytes[pos..], |l, i| {
                len = l;
                id = i;
            });
        }
        let freeze = len > 0;
        if !freeze {
            len = utf8_len(bytes[pos]).min(bytes.len() - pos);
            id = tables.char_id(&bytes[pos..pos + len]);
        }
        let index = symbols.len() as i32;
        symbols.push(Symbol {
            start: pos as u32,
            end: (pos + len) as u32,
            prev: index - 1,
            next: if pos + len < bytes.len() { index + 1 } else { -1 },
            id,
            freeze,
        });
        pos += len;
    }
    let mut rev_merge: HashMap<&str, (&str, &str)> = HashMap::new();
    // Queues the merge of `left` and `right` into piece `id`.
    let mut add_pair = |symbols: &[Symbol], agenda: &mut BinaryHeap<Pair>, left: usize, right: usize, id: u32| {
        let (l, r) = (&symbols[left], &symbols[right]);
        if model.is_unused(id) {
            rev_merge.insert(
                &text[l.start as usize..r.end as usize],
                (&text[l.start as usize..l.end as usize], &text[r.start as usize..r.end as usize]),
            );
        }
        agenda.push(Pair { score: model.score(id), left: left as u32, right: right as u32, size: r.end - l.start, id });
    };
    for i in 1..symbols.len() {
        if let Some(id) = pair_id(model, tables, text, &symbols[i - 1], &symbols[i]) {
            add_pair(symbols, agenda, i - 1, i, id);
        }
    }
    while let Some(top) = agenda.pop() {
        let (li, ri) = (top.left as usize, top.right as usize);
        let (l, r) = (symbols[li], symbols[ri]);
        if l.start == l.end || r.start == r.end || (l.end - l.start) + (r.end - r.start) != top.size || l.next != ri as i32 {
            continue;
        }
        symbols[li].end = r.end;
        symbols[li].next = r.next;
        symbols[li].id = top.id;
        if r.next >= 0 {
            symbols[r.next as usize].prev = li as i32;
        }
        symbols[ri].end = symbols[ri].start;
        let merged = symbols[li];
        if merged.prev >= 0 {
            let prev = merged.prev as usize;
            if let Some(id) = pair_id(model, tables, text, &symbols[prev], &merged) {
                add_pair(symbols, agenda, prev, li, id);
            }
        }
        if merged.next >= 0 {
            let next = merged.next as usize;
            if let Some(id) = pair_id(model, tables, text, &merged, &symbols[next]) {
                add_pair(symbols, agenda, li, next, id);
            }
        }
    }
    let mut index = 0i32;
    while index >= 0 {
        let s = symbols[index as usize];
        let id = if s.id == NONE { model.unk_id() } else { s.id };
        if model.is_unused(id) {
            resegment(model, text, s.start as usize, s.end as usize, base, &rev_merge, out);
        } else {
            out.push(((base as u32) + s.start, (base as u32) + s.end, id));
        }
        index = s.next;
    }
}

/// The piece the adjacent symbols `l` and `r` may merge into, if any (never for a frozen one).
#[inline(always)]
fn pair_id(model: &SentencePiece, tables: &BpeTables, text: &str, l: &Symbol, r: &Symbol) -> Option<u32> {
    if l.freeze || r.freeze {
        None
    } else if l.id != NONE && r.id != NONE {
        tables.pairs.get(&(u64::from(l.id) << 32 | u64::from(r.id))).copied()
    } else if !tables.orphan_chars {
        None
    } else {
        // A symbol that is no piece (a char outside the vocabulary): look the text up.
        model.mergeable_id(&text[l.start as usize..r.end as usize])
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
