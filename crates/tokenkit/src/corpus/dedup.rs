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

/// The texts seen so far (their hashes).
#[derive(Debug, Default)]
pub struct ExactDedup {
    seen: std::collections::HashSet<u128>,
}

impl ExactDedup {
    /// Whether `hash` is new (and records it).
    pub fn insert(&mut self, hash: u128) -> bool {
        self.seen.insert(hash)
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

/// LSH buckets and the clusters they make (union-find over document numbers, the smallest
/// number of a cluster its root).
#[derive(Debug)]
pub struct Lsh {
    buckets: Vec<HashMap<u64, u32>>,
    parent: Vec<u32>,
}

impl Lsh {
    /// Empty buckets for the bands of `opts`.
    pub fn new(opts: &MinHashOptions) -> Self {
        Lsh { buckets: vec![HashMap::new(); opts.bands], parent: Vec::new() }
    }

    fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let p = self.parent[x as usize];
            self.parent[x as usize] = self.parent[p as usize];
            x = p;
        }
        x
    }

    /// Adds the next document (numbered in the order added) by its band keys.
    pub fn add(&mut self, keys: &[u64]) {
        let id = self.parent.len() as u32;
        self.parent.push(id);
        for (band, &key) in keys.iter().enumerate() {
            let other = *self.buckets[band].entry(key).or_insert(id);
            if other != id {
                let (x, y) = (self.find(id), self.find(other));
                let (lo, hi) = (x.min(y), x.max(y));
                self.parent[hi as usize] = lo;
            }
        }
    }

    /// For each document, whether it is the first of its cluster.
    pub fn first_of_clusters(&mut self) -> Vec<bool> {
        (0..self.parent.len() as u32).map(|k| self.find(k) == k).collect()
    }

    /// The cluster (its first document) of each document.
    pub fn cluster_ids(&mut self) -> Vec<u32> {
        (0..self.parent.len() as u32).map(|k| self.find(k)).collect()
    }

    /// Clusters of more than one document.
    pub fn clusters(&mut self) -> usize {
        let ids = self.cluster_ids();
        let mut sizes: HashMap<u32, u32> = HashMap::new();
        for id in ids {
            *sizes.entry(id).or_default() += 1;
        }
        sizes.values().filter(|&&s| s > 1).count()
    }
}

/// The cluster (the number of its first document) of each of `texts` under `opts`.
pub fn near_clusters(texts: &[&str], opts: &MinHashOptions) -> Result<Vec<u32>> {
    opts.check()?;
    let hasher = MinHasher::new(opts);
    let keys = crate::utils::parallel::try_map(texts, |t| t.len(), |t| Ok::<_, Error>(hasher.band_keys(t)))?;
    let mut lsh = Lsh::new(opts);
    for k in &keys {
        lsh.add(k);
    }
    Ok(lsh.cluster_ids())
}

/// The cluster (the number of its first document) of each of `texts` by exact text.
pub fn exact_clusters(texts: &[&str]) -> Vec<u32> {
    let mut first: HashMap<u128, u32> = HashMap::new();
    texts.iter().enumerate().map(|(k, t)| *first.entry(text_hash(t)).or_insert(k as u32)).collect()
}
