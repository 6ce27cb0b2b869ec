//! Deduplication: exact (a 128-bit hash of the text) and near (MinHash signatures over
//! shingles, banded into LSH buckets; documents that share a bucket in any band are one
//! cluster, transitively, as datatrove's and text-dedup's MinHash dedup do). The first
//! document of each cluster in input order is kept.
//!
//! Shingles: the text is lowercased and cut into words (maximal runs of alphanumeric
//! characters) or characters (whitespace runs become one space); a shingle is `n` consecutive
//! words or characters (a text with fewer has one shingle, all of them; a text with none is
//! its own shingle, so it only matches itself). Each shingle is hashed (xxh3-64) and each of
//! the `bands × rows` permutations is `(a·h + b) mod (2^61 − 1)` with `a`, `b` drawn from a
//! seeded generator, so signatures depend on the text and the options only.

use std::collections::HashMap;
use std::path::Path;

use crate::utils::sorted_runs::{HashSeq, KeyDoc, Sorted, SortedRuns};
use crate::{Error, Result};

/// The hash of a text for exact deduplication (xxh3-128).
pub fn text_hash(text: &str) -> u128 {
    twox_hash::XxHash3_128::oneshot(text.as_bytes())
}

/// A number in [0, 1) from the text and the seed.
pub fn unit_hash(text: &str, seed: u64) -> f64 {
    let h = text_hash(text);
    let x = (h as u64 ^ (h >> 64) as u64 ^ seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let x = x ^ (x >> 31);
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// Exact deduplication: for the hash of each unit (a document, line or paragraph) in input
/// order, whether it is the first of its kind, in bounded memory.
///
/// [`ExactDedup::in_memory`] keeps a set of the hashes seen (one pass) until it would grow past
/// its memory limit, and then stops ([`overflowed`](Self::overflowed)). Without that limit, in
/// two passes: [`ExactDedup::recording`] takes every unit's hash and number (sorted runs spilled
/// to disk past the limit), [`ExactDedup::replay`] sorts them by hash to find every number that
/// is not the first of its hash, and the second pass is answered from those numbers, read in
/// order. Both give the same answers.
#[derive(Debug)]
pub struct ExactDedup {
    state: State,
    /// Units asked about so far.
    units: u64,
    /// The first error (a spill that failed); answers after it are meaningless.
    failed: Option<Error>,
}

#[derive(Debug)]
enum State {
    Memory { seen: ahash::AHashSet<u128>, limit: u64, overflowed: bool },
    Recording { hashes: SortedRuns<HashSeq>, limit: u64, spill_dir: std::path::PathBuf },
    Replay { duplicates: Sorted<u64>, next: Option<u64>, recorded: u64 },
}

/// Bytes a hash set of `slots` usable slots takes (16 bytes and a control byte per bucket, 8
/// buckets for every 7 slots).
fn set_bytes(slots: usize) -> u64 {
    slots as u64 * 8 / 7 * 17
}

impl ExactDedup {
    /// One pass with the hashes in memory, up to about `limit` bytes.
    pub fn in_memory(limit: u64) -> Self {
        ExactDedup { state: State::Memory { seen: Default::default(), limit, overflowed: false }, units: 0, failed: None }
    }

    /// The first of two passes: records every hash (at most about `limit` bytes of them in
    /// memory, the rest in sorted runs in a temporary directory inside `spill_dir`).
    pub fn recording(limit: u64, spill_dir: &Path) -> Self {
        let hashes = SortedRuns::new(1, limit / 2, spill_dir);
        ExactDedup { state: State::Recording { hashes, limit, spill_dir: spill_dir.to_owned() }, units: 0, failed: None }
    }

    /// Whether the unit of `hash` (the next in input order) is the first of its kind. While
    /// recording, every unit is (the first pass writes nothing).
    pub fn first(&mut self, hash: u128) -> bool {
        let seq = self.units;
        self.units += 1;
        match &mut self.state {
            State::Memory { seen, limit, overflowed } => {
                // A full set doubles: stop before it would pass the limit.
                if seen.len() == seen.capacity() && set_bytes(seen.capacity().max(3) * 2) > *limit {
                    *overflowed = true;
                }
                *overflowed || seen.insert(hash)
            }
            State::Recording { hashes, .. } => {
                if self.failed.is_none() {
                    self.failed = hashes.push(0, HashSeq { hash, seq }).err();
                }
                true
            }
            State::Replay { duplicates, next, .. } => {
                if *next != Some(seq) {
                    return true;
                }
                *next = match duplicates.next().transpose() {
                    Ok(d) => d.map(|(_, seq)| seq),
                    Err(e) => {
                        self.failed.get_or_insert(e);
                        None
                    }
                };
                false
            }
        }
    }

    /// Whether the in-memory set would have passed its limit (its answers from then on are
    /// meaningless: start again with [`recording`](Self::recording)).
    pub fn overflowed(&self) -> bool {
        matches!(self.state, State::Memory { overflowed: true, .. })
    }

    /// Whether the pass should stop: the set overflowed, or a spill failed.
    pub fn stopped(&self) -> bool {
        self.overflowed() || self.failed.is_some()
    }

    /// Runs of hashes written to disk so far.
    pub fn runs(&self) -> usize {
        match &self.state {
            State::Recording { hashes, .. } => hashes.runs(),
            _ => 0,
        }
    }

    /// After the recording pass: the duplicates found, ready to answer the second pass.
    pub fn replay(self) -> Result<Self> {
        let State::Recording { hashes, limit, spill_dir } = self.state else {
            return Err(Error::invalid("only a recorded pass can be replayed"));
        };
        if let Some(e) = self.failed {
            return Err(e);
        }
        // Sorted by hash, then number: all but the first of a hash are duplicates.
        let mut duplicates = SortedRuns::new(1, limit / 2, &spill_dir);
        let mut last = None;
        for item in hashes.into_sorted() {
            let (_, HashSeq { hash, seq }) = item?;
            if last.replace(hash) == Some(hash) {
                duplicates.push(0, seq)?;
            }
        }
        let mut duplicates = duplicates.into_sorted();
        let next = duplicates.next().transpose()?.map(|(_, seq)| seq);
        Ok(ExactDedup { state: State::Replay { duplicates, next, recorded: self.units }, units: 0, failed: None })
    }

    /// The end of a pass: the first error, or (replaying) an input that changed since it was
    /// recorded.
    pub fn finish(self) -> Result<()> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        match self.state {
            State::Replay { recorded, .. } if recorded != self.units => Err(Error::invalid(format!(
                "the input changed between the two passes ({recorded} units to deduplicate, then {})",
                self.units
            ))),
            _ => Ok(()),
        }
    }
}

/// What exact deduplication compares: whole documents, or their lines or paragraphs across
/// the corpus.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    #[default]
    Document,
    /// A line (without its line ending, spaces around it trimmed): a line seen before anywhere
    /// in the corpus is removed with its line ending.
    Line,
    /// A paragraph: a run of lines that are not blank (spaces around it trimmed); one seen
    /// before is removed with the blank lines after it.
    Paragraph,
}

/// A piece of a document for line or paragraph deduplication: its bytes (line endings and
/// the blank lines after a paragraph included) and the hash of the unit it holds (`None`: a
/// blank line, or a unit shorter than the minimum, which is always kept).
pub type Segment = (std::ops::Range<usize>, Option<u128>);

/// The segments of `text` (see [`Unit`]; they cover it, in order); units of fewer than
/// `min_chars` characters get no hash.
pub fn segments(text: &str, unit: Unit, min_chars: usize) -> Vec<Segment> {
    let hash = |s: &str| {
        let s = s.trim();
        // A char is 1 to 4 bytes: count them only when the byte length cannot tell.
        let long_enough = s.len() >= min_chars && (s.len() >= min_chars.saturating_mul(4) || s.chars().count() >= min_chars);
        (!s.is_empty() && long_enough).then(|| text_hash(s))
    };
    let mut out: Vec<Segment> = Vec::new();
    let mut at = 0;
    match unit {
        Unit::Document => out.push((0..text.len(), hash(text))),
        Unit::Line => {
            for line in text.split_inclusive('\n') {
                out.push((at..at + line.len(), hash(line)));
                at += line.len();
            }
        }
        Unit::Paragraph => {
            // A paragraph's lines, then the blank lines after it.
            let mut start = 0;
            let mut in_blank = false;
            for line in text.split_inclusive('\n') {
                let blank = line.trim().is_empty();
                if !blank && in_blank && at > start {
                    out.push((start..at, hash(&text[start..at])));
                    start = at;
                }
                in_blank = blank;
                at += line.len();
            }
            if at > start {
                out.push((start..at, hash(&text[start..at])));
            }
        }
    }
    out
}

/// What a shingle is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Shingle {
    Word,
    Char,
}

/// The parameters of near deduplication.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MinHashOptions {
    /// Words or characters.
    pub shingle: Shingle,
    /// Words (characters) per shingle.
    pub n: usize,
    /// LSH bands and rows per band (`bands × rows` permutations).
    pub bands: usize,
    pub rows: usize,
    /// The seed of the permutations.
    pub seed: u64,
}

use serde::Serialize;

/// The Mersenne prime 2^61 − 1 of the permutations.
const PRIME: u64 = (1 << 61) - 1;

impl Default for MinHashOptions {
    /// datatrove's defaults: 5-word shingles, 14 bands of 8 rows (112 permutations; two
    /// documents become candidates with probability 1/2 at a Jaccard similarity near 0.72).
    fn default() -> Self {
        MinHashOptions { shingle: Shingle::Word, n: 5, bands: 14, rows: 8, seed: 1 }
    }
}

impl MinHashOptions {
    /// The bands and rows (at most `num_perm` permutations) that minimise the sum of the
    /// false-positive and false-negative probability mass around `threshold` (datasketch's
    /// rule): pairs of similarity above the threshold are found, those below mostly not.
    pub fn for_threshold(threshold: f64, num_perm: usize) -> Result<Self> {
        if !(threshold > 0.0 && threshold < 1.0) {
            return Err(Error::invalid(format!("the threshold must be in (0, 1), not {threshold}")));
        }
        let integrate = |f: &dyn Fn(f64) -> f64, a: f64, b: f64| {
            let steps = 200;
            let h = (b - a) / steps as f64;
            (0..steps).map(|k| f(a + (k as f64 + 0.5) * h) * h).sum::<f64>()
        };
        let mut best = (f64::INFINITY, 1, 1);
        for bands in 1..=num_perm {
            for rows in 1..=num_perm / bands {
                let p = |s: f64| 1.0 - (1.0 - s.powi(rows as i32)).powi(bands as i32);
                let error = integrate(&p, 0.0, threshold) + integrate(&|s| 1.0 - p(s), threshold, 1.0);
                if error < best.0 {
                    best = (error, bands, rows);
                }
            }
        }
        Ok(MinHashOptions { bands: best.1, rows: best.2, ..Default::default() })
    }

    /// The options of the CLI's and Python's parameters: `threshold` chooses bands and rows
    /// ([`for_threshold`](Self::for_threshold), at most `num_perm` permutations), else
    /// datatrove's 14 × 8; `bands`/`rows` override; `shingle` is `word` or `char`.
    pub fn from_params(
        threshold: Option<f64>,
        num_perm: usize,
        bands: Option<usize>,
        rows: Option<usize>,
        shingle: &str,
        n: usize,
        seed: u64,
    ) -> Result<Self> {
        let mut o = match threshold {
            Some(t) => Self::for_threshold(t, num_perm)?,
            None => Self::default(),
        };
        o.bands = bands.unwrap_or(o.bands);
        o.rows = rows.unwrap_or(o.rows);
        o.shingle = match shingle {
            "word" => Shingle::Word,
            "char" => Shingle::Char,
            other => return Err(Error::invalid(format!("shingles are \"word\" or \"char\", not {other:?}"))),
        };
        o.n = n;
        o.seed = seed;
        o.check()?;
        Ok(o)
    }

    /// An error for options that cannot work.
    pub fn check(&self) -> Result<()> {
        if self.n == 0 || self.bands == 0 || self.rows == 0 {
            return Err(Error::invalid("the shingle size, bands and rows must be at least 1"));
        }
        if self.bands * self.rows > 4096 {
            return Err(Error::invalid(format!("{} permutations (bands × rows): at most 4096", self.bands * self.rows)));
        }
        Ok(())
    }
}

/// `(a·h + b) mod (2^61 − 1)` for `a`, `b`, `h` below the prime, without a 128-bit division:
/// 2^61 ≡ 1, so the high bits fold onto the low ones.
#[inline]
fn permute(a: u64, b: u64, h: u64) -> u64 {
    let x = u128::from(a) * u128::from(h) + u128::from(b);
    let folded = (x as u64 & PRIME) + (x >> 61) as u64;
    let folded = (folded & PRIME) + (folded >> 61);
    if folded >= PRIME {
        folded - PRIME
    } else {
        folded
    }
}

/// Computes signatures.
#[derive(Debug, Clone)]
pub struct MinHasher {
    opts: MinHashOptions,
    a: Vec<u64>,
    b: Vec<u64>,
}

impl MinHasher {
    /// The permutations of `opts`.
    pub fn new(opts: &MinHashOptions) -> Self {
        // splitmix64 from the seed: fixed for a seed on every platform.
        let mut state = opts.seed;
        let mut next = || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        let perms = opts.bands * opts.rows;
        let (mut a, mut b) = (Vec::with_capacity(perms), Vec::with_capacity(perms));
        for _ in 0..perms {
            a.push(next() % (PRIME - 1) + 1);
            b.push(next() % PRIME);
        }
        MinHasher { opts: opts.clone(), a, b }
    }

    /// The hashes of the shingles of `text`.
    pub fn shingles(&self, text: &str) -> Vec<u64> {
        let lower = text.to_lowercase();
        let units: Vec<&str> = match self.opts.shingle {
            Shingle::Word => lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect(),
            Shingle::Char => {
                let mut units = Vec::new();
                let mut last_space = true;
                for (i, c) in lower.char_indices() {
                    let space = c.is_whitespace();
                    if !(space && last_space) {
                        units.push(if space { " " } else { &lower[i..i + c.len_utf8()] });
                    }
                    last_space = space;
                }
                if units.last() == Some(&" ") {
                    units.pop();
                }
                units
            }
        };
        let hash = |s: &[&str]| {
            let mut h = twox_hash::XxHash3_64::with_seed(0);
            for u in s {
                h.write(u.as_bytes());
                h.write(&[0xff]);
            }
            std::hash::Hasher::finish(&h)
        };
        if units.is_empty() {
            // No words: the text itself, so that it matches only the same text.
            return vec![twox_hash::XxHash3_64::oneshot(text.as_bytes()) ^ 0x5555_5555_5555_5555];
        }
        let n = self.opts.n.min(units.len());
        units.windows(n).map(hash).collect()
    }

    /// The MinHash signature of `text` (`bands × rows` values).
    pub fn signature(&self, text: &str) -> Vec<u64> {
        let shingles: Vec<u64> = self.shingles(text).into_iter().map(|h| h % PRIME).collect();
        self.a.iter().zip(&self.b).map(|(&a, &b)| shingles.iter().map(|&h| permute(a, b, h)).min().unwrap_or(u64::MAX)).collect()
    }

    /// The LSH key of each band of the signature of `text`.
    pub fn band_keys(&self, text: &str) -> Vec<u64> {
        self.signature(text)
            .chunks(self.opts.rows)
            .map(|band| {
                let bytes: Vec<u8> = band.iter().flat_map(|v| v.to_le_bytes()).collect();
                twox_hash::XxHash3_64::oneshot(&bytes)
            })
            .collect()
    }
}

use std::hash::Hasher as _;

#[cfg(test)]
#[test]
fn permute_is_the_modular_formula() {
    let reference = |a: u64, b: u64, h: u64| ((u128::from(a) * u128::from(h) + u128::from(b)) % u128::from(PRIME)) as u64;
    let mut x = 12345u64;
    for _ in 0..100_000 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let (a, b, h) = (x % PRIME, (x >> 7) % PRIME, x.rotate_left(17) % PRIME);
        assert_eq!(permute(a, b, h), reference(a, b, h));
    }
    for v in [0, 1, PRIME - 2, PRIME - 1] {
        assert_eq!(permute(v, v, v), reference(v, v, v));
    }
}

/// The fraction of equal values of two signatures: an estimate of the Jaccard similarity.
pub fn estimated_jaccard(a: &[u64], b: &[u64]) -> f64 {
    a.iter().zip(b).filter(|(x, y)| x == y).count() as f64 / a.len().max(1) as f64
}

/// LSH buckets and the clusters they make. Each document's band keys are kept as
/// `(key, document)` records, one group per band, in memory up to a byte budget and in sorted
/// runs on disk beyond it ([`SortedRuns`]); at the end each band's records are read in key
/// order and the documents of a bucket joined (union-find over document numbers, the smallest
/// number of a cluster its root). The clusters do not depend on the budget.
#[derive(Debug)]
pub struct Lsh {
    keys: SortedRuns<KeyDoc>,
    docs: u32,
}

/// Memory for LSH records when no limit is given: 12 bytes per band and document, so 1 GiB
/// holds about 6 million documents at 14 bands before a run goes to disk.
pub const LSH_MEMORY: u64 = 1 << 30;

impl Lsh {
    /// Empty buckets for the bands of `opts`, holding at most about `memory` bytes of keys in
    /// memory and spilling the rest into a temporary directory inside `spill_dir`.
    pub fn new(opts: &MinHashOptions, memory: u64, spill_dir: &Path) -> Self {
        Lsh { keys: SortedRuns::new(opts.bands, memory, spill_dir), docs: 0 }
    }

    /// Adds the next document (numbered in the order added) by its band keys.
    pub fn add(&mut self, keys: &[u64]) -> Result<()> {
        let doc = self.docs;
        self.docs = doc.checked_add(1).ok_or_else(|| Error::invalid("near deduplication takes at most 2^32 - 1 documents"))?;
        for (band, &key) in keys.iter().enumerate() {
            self.keys.push(band, KeyDoc { key, doc })?;
        }
        Ok(())
    }

    /// Runs of keys written to disk so far.
    pub fn runs(&self) -> usize {
        self.keys.runs()
    }

    /// The cluster (its first document) of each document.
    pub fn cluster_ids(self) -> Result<Vec<u32>> {
        let mut parent: Vec<u32> = (0..self.docs).collect();
        fn find(parent: &mut [u32], mut x: u32) -> u32 {
            while parent[x as usize] != x {
                let p = parent[x as usize];
                parent[x as usize] = parent[p as usize];
                x = p;
            }
            x
        }
        // Records come sorted by band, then key, then document: the first of a bucket is its
        // smallest document, and every other joins it.
        let mut bucket: Option<(usize, u64, u32)> = None;
        self.keys.for_each_sorted(|band, KeyDoc { key, doc }| {
            match bucket {
                Some((b, k, first)) if b == band && k == key => {
                    let (x, y) = (find(&mut parent, doc), find(&mut parent, first));
                    let (lo, hi) = (x.min(y), x.max(y));
                    parent[hi as usize] = lo;
                }
                _ => bucket = Some((band, key, doc)),
            }
            Ok(())
        })?;
        Ok((0..self.docs).map(|k| find(&mut parent, k)).collect())
    }
}

/// Clusters of more than one document among `cluster_ids` (each document's first).
pub fn clusters_of_several(cluster_ids: &[u32]) -> usize {
    let mut several = vec![false; cluster_ids.len()];
    let mut count = 0;
    for (k, &first) in cluster_ids.iter().enumerate() {
        if first as usize != k && !std::mem::replace(&mut several[first as usize], true) {
            count += 1;
        }
    }
    count
}

/// The cluster (the number of its first document) of each of `texts` under `opts`, in memory.
pub fn near_clusters(texts: &[&str], opts: &MinHashOptions) -> Result<Vec<u32>> {
    opts.check()?;
    let hasher = MinHasher::new(opts);
    let keys = crate::utils::parallel::try_map(texts, |t| t.len(), |t| Ok::<_, Error>(hasher.band_keys(t)))?;
    let mut lsh = Lsh::new(opts, u64::MAX, Path::new("."));
    for k in &keys {
        lsh.add(k)?;
    }
    lsh.cluster_ids()
}

/// The cluster (the number of its first document) of each of `texts` by exact text.
pub fn exact_clusters(texts: &[&str]) -> Vec<u32> {
    let mut first: HashMap<u128, u32> = HashMap::new();
    texts.iter().enumerate().map(|(k, t)| *first.entry(text_hash(t)).or_insert(k as u32)).collect()
}
