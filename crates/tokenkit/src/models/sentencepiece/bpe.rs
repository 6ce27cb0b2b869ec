//! SentencePiece's BPE (`bpe_model.cc`): start from chars (user-defined symbols whole and
//! frozen), repeatedly merge the adjacent pair whose concatenation is the highest-scoring
//! piece (leftmost on ties), then split back any unused piece into the pair it was made of.
//!
//! Most models have no unused piece and no mergeable piece with a char that is not a piece
//! by itself: their text is cut around the symbols that never merge and each part is merged
//! on ids by the [`Word`] loop of `models::bpe`, with merge ranks standing for the scores
//! (see [`merge_parts`]). Other models go through [`merge`], sentencepiece's loop on text.
//!
//! The tables ([`BpeTables`]) cost more to build than sentencepiece's whole load, so a model
//! builds them only once it has encoded some text ([`SentencePiece::bpe_tables`]): until then
//! [`merge`] runs on piece lookups alone, as sentencepiece does, with the same ids.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use rand::rngs::StdRng;

use super::model::{Segment, SentencePiece};
use crate::base::vocab::Vocab;
use crate::models::bpe::chars::for_each_part;
use crate::models::bpe::{MergeMap, MergeQueue, Word, SMALL_WORD};
use crate::models::cache::{Cache, MAX_CACHED_LENGTH};
use crate::normalizers::sentencepiece::utf8_len;
use crate::utils::table_cache::{self, Table};

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
/// `size` bytes; `rank` orders it by the piece's score ([`score_rank`]).
#[derive(Debug, Clone, Copy)]
struct Pair {
    rank: u32,
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
    /// `(left id, right id)` → `(rank, id)` of the mergeable piece `left + right`, its rank
    /// that of its score ([`score_rank`]).
    merges: MergeMap,
    /// Per BMP code point: the id of the piece that is that char (any type, as `PieceToId`),
    /// with [`FREE`] set when no pair has it on either side; `NONE` when it is no piece.
    bmp: Table<u32>,
    /// The same for chars beyond the BMP, by code point.
    astral: IdMap<u32>,
    /// Some mergeable piece contains a char that is not a piece by itself, so a symbol that
    /// is no piece may still merge (otherwise such symbols are skipped without a lookup).
    orphan_chars: bool,
    /// Text may be cut around symbols that never merge and merged on ids ([`merge_parts`]):
    /// no orphan chars and no unused piece (whose split back depends on the whole text).
    cut: bool,
    /// No two merge results share a rank, so a short part may be merged by scanning
    /// ([`Word::merge_small`] takes the lowest `(rank, id)`, not the leftmost lowest rank).
    scan_exact: bool,
}

impl BpeTables {
    /// Builds the tables from the vocabulary (piece `i` has id `i`) and the scores, given which
    /// pieces are mergeable (normal, user-defined, unused) and whether any piece is unused.
    ///
    /// On the calling thread only: the build runs inside an encode ([`SentencePiece::bpe_tables`]),
    /// which may be one of many on a thread pool whose other threads wait for these tables.
    pub(crate) fn new(vocab: &Vocab, scores: &[f32], mergeable: impl Fn(u32) -> bool, any_unused: bool) -> Self {
        let n = vocab.len();
        // The char entries, built in place before they become a table.
        let mut bmp = vec![NONE; 0x10000];
        let mut astral = IdMap::default();
        let set_entry = |bmp: &mut [u32], astral: &mut IdMap<u32>, c: char, entry: u32| match bmp.get_mut(c as usize) {
            Some(e) => *e = entry,
            None => {
                astral.insert(c as u32, entry);
            }
        };
        // Chars first (without flags), for the orphan test below.
        let single_chars: Vec<(char, u32)> = vocab
            .iter()
            .filter_map(|(p, id)| {
                let mut cs = p.chars();
                // Pieces are unique, so this is the id `PieceToId` gives.
                match (cs.next(), cs.next()) {
                    (Some(c), None) => Some((c, id)),
                    _ => None,
                }
            })
            .collect();
        for &(c, id) in &single_chars {
            set_entry(&mut bmp, &mut astral, c, id);
        }
        let entry = |bmp: &[u32], astral: &IdMap<u32>, c: char| match bmp.get(c as usize) {
            Some(&e) => e,
            None => astral.get(&(c as u32)).copied().unwrap_or(NONE),
        };
        let rank_of = |id: u32| score_rank(scores.get(id as usize).copied().unwrap_or(0.0));
        let mut orphan_chars = false;
        // Every split of a mergeable piece into two pieces, `(left, right, piece)` (a split
        // per char but the first; the right part is looked up only when the left one is a piece).
        let mut splits: Vec<[u32; 3]> = Vec::with_capacity(n * 2);
        for (p, id) in vocab.iter().filter(|&(_, id)| mergeable(id)) {
            orphan_chars |= p.chars().any(|c| entry(&bmp, &astral, c) == NONE);
            for (k, _) in p.char_indices().skip(1) {
                let Some(l) = vocab.id(&p[..k]) else { continue };
                let Some(r) = vocab.id(&p[k..]) else { continue };
                splits.push([l, r, id]);
            }
        }
        let mut t = Self { merges: MergeMap::with_capacity(splits.len()), orphan_chars, ..Default::default() };
        // Per piece id: whether it is the result of a merge, whether it takes part in one.
        let mut is_result = vec![false; n];
        let mut in_merge = vec![false; n];
        for &[l, r, id] in &splits {
            t.merges.insert((l, r), (rank_of(id), id));
            is_result[id as usize] = true;
            in_merge[l as usize] = true;
            in_merge[r as usize] = true;
        }
        for &(c, id) in &single_chars {
            set_entry(&mut bmp, &mut astral, c, if in_merge[id as usize] { id } else { id | FREE });
        }
        let mut result_ranks: Vec<u32> = (0..n as u32).filter(|&id| is_result[id as usize]).map(rank_of).collect();
        let n_results = result_ranks.len();
        result_ranks.sort_unstable();
        result_ranks.dedup();
        t.scan_exact = result_ranks.len() == n_results;
        // Ids must leave the `FREE` bit clear.
        t.cut = !t.orphan_chars && !any_unused && n < FREE as usize;
        t.bmp = bmp.into();
        t.astral = astral;
        t
    }

    /// The piece `l` and `r` merge into, by their ids: `(rank, id)`.
    #[inline]
    fn merge_of(&self, l: u32, r: u32) -> Option<(u32, u32)> {
        self.merges.get(&(l, r)).copied()
    }

    /// The char at `bytes[pos]` (a char boundary of UTF-8 text): its length in bytes and its
    /// entry (the id of the piece it is, with [`FREE`] when that never merges; `NONE`).
    #[inline]
    fn char_at(&self, bytes: &[u8], pos: usize) -> (usize, u32) {
        let b0 = bytes[pos];
        if b0 < 0x80 {
            return (1, self.bmp[b0 as usize]);
        }
        let len = utf8_len(b0).min(bytes.len() - pos);
        let cont = |k: usize| u32::from(bytes[pos + k] & 0x3F);
        let entry = match len {
            2 => self.bmp[(u32::from(b0 & 0x1F) << 6 | cont(1)) as usize],
            3 => self.bmp[(u32::from(b0 & 0x0F) << 12 | cont(1) << 6 | cont(2)) as usize],
            4 => {
                let c = u32::from(b0 & 0x07) << 18 | cont(1) << 12 | cont(2) << 6 | cont(3);
                self.astral.get(&c).copied().unwrap_or(NONE)
            }
            _ => NONE,
        };
        (len, entry)
    }
}

impl BpeTables {
    /// Writes the tables for [`Self::read_table`] (a part of the model's cache entry).
    pub(crate) fn write_table(&self, w: &mut table_cache::Writer) {
        self.merges.write_table(w);
        w.table(&self.bmp);
        let mut astral: Vec<[u32; 2]> = self.astral.iter().map(|(&c, &e)| [c, e]).collect();
        astral.sort_unstable();
        w.records(astral.into_iter());
        w.bool(self.orphan_chars);
        w.bool(self.cut);
        w.bool(self.scan_exact);
    }

    /// Reads what [`Self::write_table`] wrote, checking that the per-piece tables have
    /// `n_pieces` entries and that every char entry is one of the pieces (the encoder indexes
    /// with them). The merges are not walked (a tenth of a millisecond per load, most of what
    /// is left of one): the ids they give are only ever values, looked up with a check (an
    /// id that is no piece has no text, rank or type), never indices, and the entry's bytes are
    /// those written ([`table_cache`] checks its length and checksum).
    pub(crate) fn read_table(r: &mut table_cache::Reader<'_>, n_pieces: usize) -> crate::Result<Self> {
        let merges = MergeMap::read_table(r)?;
        let bmp: Table<u32> = r.table()?;
        let astral: IdMap<u32> = r.records::<2>()?.into_iter().map(|[c, e]| (c, e)).collect();
        let (orphan_chars, cut, scan_exact) = (r.bool()?, r.bool()?, r.bool()?);
        // Without branches, so that the check of the 65536 BMP entries is vectorized.
        let entries_ok =
            |es: &mut dyn Iterator<Item = u32>| es.fold(true, |ok, e| ok & ((e == NONE) | (((e & !FREE) as usize) < n_pieces)));
        let ok = bmp.len() == 0x10000
            && bmp.iter().fold(true, |ok, &e| ok & ((e == NONE) | (((e & !FREE) as usize) < n_pieces)))
            && entries_ok(&mut astral.values().copied());
        if !ok {
            return Err(crate::Error::invalid("table cache: malformed SentencePiece BPE tables"));
        }
        Ok(Self { merges, bmp, astral, orphan_chars, cut, scan_exact })
    }
}

/// Flag of a char entry in [`BpeTables`]: the char's piece is on neither side of any pair,
/// so its symbol never merges. `NONE` has it too.
const FREE: u32 = 1 << 31;

/// The rank of a mergeable piece's score: lower for a higher score, equal for equal scores,
/// so that merging the lowest rank first, leftmost on ties, is merging the highest score first,
/// leftmost on ties, as sentencepiece does. Scores compare as its `<` does (`-0.0` equals
/// `0.0`), NaNs as [`f32::total_cmp`] places them; no table is needed, the rank is the score's
/// bits in reverse order.
#[inline]
pub(crate) fn score_rank(score: f32) -> u32 {
    let bits = (score + 0.0).to_bits();
    // `total_cmp`'s order as an unsigned one: negative scores (sign bit set) below the others,
    // in reverse order of their magnitudes.
    let ordered = if bits >> 31 == 1 { !bits } else { bits | 1 << 31 };
    !ordered
}

/// Buffers reused between calls on this thread: [`merge`]'s symbols and agenda, and the
/// part, queue and pair list of [`merge_parts`].
#[derive(Default)]
struct Scratch {
    symbols: Vec<Symbol>,
    agenda: BinaryHeap<Pair>,
    word: Word,
    queue: MergeQueue,
    pairs: Vec<u64>,
}

/// Scratch buffers larger than this many entries are released after use.
const SCRATCH_KEEP: usize = 1 << 16;

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
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
    /// The max-heap pops the lowest rank (highest score) first, then the leftmost pair.
    fn cmp(&self, o: &Self) -> Ordering {
        o.rank.cmp(&self.rank).then_with(|| o.left.cmp(&self.left))
    }
}

/// Encodes the normalized `text` into `(start, end, id)` byte ranges, in order.
///
/// When no piece has a `▁` after its first non-`▁` char (the usual `split_by_whitespace`
/// training), no merge can cross the start of a word (`▁` after a non-`▁` char), so the words
/// are encoded one by one, each result cached: the same ids, without a heap over the whole text.
pub(crate) fn encode(model: &SentencePiece, text: &str, out: &mut Vec<Segment>) {
    out.clear();
    let tables = model.bpe_tables(text.len());
    let Some(cache) = model.bpe_word_cache() else {
        encode_span(model, tables, text, 0, out);
        return;
    };
    let mut start = 0;
    // Words start at a `▁` (`SPACE_SYMBOL`) after another char; the callback cannot fail.
    let _ = for_each_part(text, '\u{2581}', |word| {
        encode_word(cache, model, tables, word, start, out);
        start += word.len();
        Ok(())
    });
}

fn encode_word(
    cache: &Cache<Box<[Segment]>>,
    model: &SentencePiece,
    tables: Option<&BpeTables>,
    word: &str,
    base: usize,
    out: &mut Vec<Segment>,
) {
    let base32 = base as u32;
    let cacheable = word.len() < MAX_CACHED_LENGTH;
    if cacheable && cache.with(word, |segs| out.extend(segs.iter().map(|&(s, e, id)| (s + base32, e + base32, id)))).is_some() {
        return;
    }
    let before = out.len();
    encode_span(model, tables, word, base, out);
    if cacheable {
        cache.insert(word, out[before..].iter().map(|&(s, e, id)| (s - base32, e - base32, id)).collect());
    }
}

/// BPE over the whole of `text`, appending `(start + base, end + base, id)` to `out` (on the
/// model's `tables` when it has them).
fn encode_span(model: &SentencePiece, tables: Option<&BpeTables>, text: &str, base: usize, out: &mut Vec<Segment>) {
    if text.is_empty() {
        return;
    }
    SCRATCH.with(|cell| {
        let mut guard = cell.try_borrow_mut();
        let mut local = Scratch::default();
        let scratch = match guard.as_deref_mut() {
            Ok(s) => s,
            Err(_) => &mut local,
        };
        match tables {
            Some(tables) if tables.cut => merge_parts(model, tables, text, base, scratch, out),
            tables => merge(model, tables, text, base, &mut scratch.symbols, &mut scratch.agenda, out),
        }
        if scratch.symbols.capacity() > SCRATCH_KEEP || scratch.word.capacity() > SCRATCH_KEEP || scratch.queue.capacity() > SCRATCH_KEEP {
            *scratch = Scratch::default();
        }
    })
}

/// The user-defined piece `bytes` starts with (the longest): `(byte length, id)`.
#[inline]
pub(super) fn user_defined_prefix(model: &SentencePiece, bytes: &[u8]) -> Option<(usize, u32)> {
    let mut found = None;
    if let Some(t) = model.user_defined_trie() {
        t.common_prefixes(bytes, |l, i| found = Some((l, i)));
    }
    found
}

/// [`merge`]'s result (without unused pieces or orphan chars), appended to `out`, computed in
/// parts: the text is cut around every symbol that never merges (a user-defined piece, frozen;
/// a char that is no piece; a char no pair has on either side), which is then a token as it
/// is. No merge crosses such a symbol, so the merges on each side never interact, and the
/// highest-score-leftmost order restricted to one part is the order that part has when
/// merged alone (as in `models::bpe::barriers`). Each part is merged on ids by [`Word`],
/// lowest rank first, leftmost on ties (stale queue entries only ever repeat a merge at the
/// same rank and position, which sentencepiece's size check skips to the same effect).
fn merge_parts(model: &SentencePiece, tables: &BpeTables, text: &str, base: usize, scratch: &mut Scratch, out: &mut Vec<Segment>) {
    let bytes = text.as_bytes();
    let Scratch { word, queue, pairs, .. } = scratch;
    word.clear();
    let user_defined = model.user_defined_trie().is_some();
    let unk = model.unk_id();
    // Where the symbols gathered in `word` start.
    let mut part = 0;
    let mut pos = 0;
    while pos < bytes.len() {
        let (len, entry) = match user_defined.then(|| user_defined_prefix(model, &bytes[pos..])).flatten() {
            Some((len, id)) => (len, id | FREE),
            None => tables.char_at(bytes, pos),
        };
        if entry & FREE != 0 {
            merge_part(tables, word, queue, pairs, base + part, out);
            let start = (base + pos) as u32;
            out.push((start, start + len as u32, if entry == NONE { unk } else { entry & !FREE }));
            part = pos + len;
        } else {
            word.add(entry, len as u32);
        }
        pos += len;
    }
    merge_part(tables, word, queue, pairs, base + part, out);
}

/// Merges the symbols of `word` (which start at byte `start`), appends them to `out` and
/// empties `word`.
#[inline]
fn merge_part(tables: &BpeTables, word: &mut Word, queue: &mut MergeQueue, pairs: &mut Vec<u64>, start: usize, out: &mut Vec<Segment>) {
    match word.len() {
        0 => return,
        1 => {}
        n if tables.scan_exact && n <= SMALL_WORD => word.merge_small(&tables.merges, pairs),
        _ => word.merge_all::<StdRng>(&tables.merges, queue, None),
    }
    let start = start as u32;
    out.extend(word.tokens().map(|(id, (s, e))| (start + s as u32, start + e as u32, id)));
    word.clear();
}

/// sentencepiece's merge loop over `text`, appending `(start + base, end + base, id)` to `out`:
/// with the `tables`, pieces are found by their ids; without them (before they are built),
/// by their text, as sentencepiece finds them.
fn merge(
    model: &SentencePiece,
    tables: Option<&BpeTables>,
    text: &str,
    base: usize,
    symbols: &mut Vec<Symbol>,
    agenda: &mut BinaryHeap<Pair>,
    out: &mut Vec<Segment>,
) {
    let bytes = text.as_bytes();
    symbols.clear();
    agenda.clear();
    let mut pos = 0;
    while pos < bytes.len() {
        let (len, id, freeze) = match user_defined_prefix(model, &bytes[pos..]) {
            Some((len, id)) => (len, id, true),
            None => match tables {
                Some(t) => {
                    let (len, entry) = t.char_at(bytes, pos);
                    (len, if entry == NONE { NONE } else { entry & !FREE }, false)
                }
                None => {
                    // `PieceToId` of the char (any type; `NONE` when it is no piece).
                    let len = utf8_len(bytes[pos]).min(bytes.len() - pos);
                    (len, model.piece_id(&text[pos..pos + len]).unwrap_or(NONE), false)
                }
            },
        };
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
    let mut add_pair = |symbols: &[Symbol], agenda: &mut BinaryHeap<Pair>, left: usize, right: usize, (rank, id): (u32, u32)| {
        let (l, r) = (&symbols[left], &symbols[right]);
        if model.is_unused(id) {
            rev_merge.insert(
                &text[l.start as usize..r.end as usize],
                (&text[l.start as usize..l.end as usize], &text[r.start as usize..r.end as usize]),
            );
        }
        agenda.push(Pair { rank, left: left as u32, right: right as u32, size: r.end - l.start, id });
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

/// The piece the adjacent symbols `l` and `r` may merge into, `(rank, id)`, if any (never for
/// a frozen one): by their ids in the `tables`, else by their text (sentencepiece's lookup,
/// which the tables hold the result of for every pair of pieces).
#[inline(always)]
fn pair_id(model: &SentencePiece, tables: Option<&BpeTables>, text: &str, l: &Symbol, r: &Symbol) -> Option<(u32, u32)> {
    if l.freeze || r.freeze {
        return None;
    }
    if let Some(t) = tables {
        if l.id != NONE && r.id != NONE {
            return t.merge_of(l.id, r.id);
        }
        if !t.orphan_chars {
            return None;
        }
    }
    // Before the tables, or a symbol that is no piece (a char outside the vocabulary).
    let id = model.mergeable_id(&text[l.start as usize..r.end as usize])?;
    Some((score_rank(model.score(id).unwrap_or(0.0)), id))
}

/// sentencepiece's merge loop alone over the whole of `text` (no words, no parts): the
/// reference the other paths are tested against; on the model's tables (built first) when
/// `tables`, else on piece lookups (as before the tables are built).
#[cfg(test)]
pub(crate) fn merge_loop(model: &SentencePiece, text: &str, tables: bool) -> Vec<Segment> {
    let (mut scratch, mut out) = (Scratch::default(), Vec::new());
    if text.is_empty() {
        return out;
    }
    let tables = tables.then(|| model.built_bpe_tables());
    merge(model, tables, text, 0, &mut scratch.symbols, &mut scratch.agenda, &mut out);
    out
}

/// Whether `text` is cut into parts ([`merge_parts`]) for this model (its tables built first).
#[cfg(test)]
pub(crate) fn cuts(model: &SentencePiece) -> bool {
    model.built_bpe_tables().cut
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::Model as _;

    /// The cached form of a BPE model's tables reads back to tables that write the same bytes
    /// (every field is written), and any cut of it is an error.
    #[test]
    fn cached_tables_read_back_and_cuts_are_errors() {
        let Some(path) = crate::test_fixtures::get("hub/llama2.model") else { return };
        let model = crate::formats::sentencepiece::read_model(&path).unwrap();
        let tables = model.built_bpe_tables();
        let n = model.get_vocab_size();
        let payload = {
            let mut w = table_cache::Writer::default();
            tables.write_table(&mut w);
            w.buf
        };
        let read = |bytes: &[u8], n: usize| {
            let mut r = table_cache::Reader::new(bytes);
            let t = BpeTables::read_table(&mut r, n)?;
            r.finish().map(|()| t)
        };
        let back = read(&payload, n).unwrap();
        let mut again = table_cache::Writer::default();
        back.write_table(&mut again);
        assert_eq!(again.buf, payload);
        assert!(back.merges.len() > 10_000, "{} merges", back.merges.len());
        assert!(read(&payload, n - 1).is_err(), "a table for another piece count");
        for cut in (0..payload.len()).step_by(payload.len() / 40 + 1) {
            assert!(read(&payload[..cut], n).is_err(), "cut at {cut}");
        }
    }
}
