//! SentencePiece's precompiled normalization rules (`precompiled_charsmap`).
//!
//! The charsmap is SentencePiece's binary blob: a little-endian `u32` giving the byte size of a
//! double-array trie, the trie itself (little-endian `u32` units, darts-clone layout) and a
//! blob of NUL-terminated replacement strings. A key of the trie is the UTF-8 of a char or
//! char sequence, its value the offset of the replacement in the strings blob.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use unicode_segmentation::UnicodeSegmentation;

use crate::base::{NormalizedString, Normalizer};
use crate::utils::char_memo::CharMemo;
use crate::utils::table_cache::Table;
use crate::{Error, Result};

/// Applies a SentencePiece `precompiled_charsmap` the way HF tokenizers does: the text is
/// cut into extended grapheme clusters; a cluster shorter than 6 bytes whose bytes start with
/// a key of the trie is replaced as a whole by that key's replacement (the shortest matching
/// key wins, as in HF); otherwise each char is replaced by its own replacement when it has
/// one. JSON `{"type":"Precompiled","precompiled_charsmap":"<base64>"}`.
#[derive(Clone, Deserialize)]
#[serde(try_from = "PrecompiledFields")]
pub struct Precompiled {
    /// The blob as read: a view of a `.model` file's bytes when it was read from one, which the
    /// model keeps anyway (the charsmap is most of a spec's bytes).
    blob: Table<u8>,
    /// The double-array trie units, in `blob`.
    trie: Units,
    /// Where the NUL-separated replacement strings start in `blob` (checked to be UTF-8).
    strings_at: usize,
    /// `ascii_mapped[b]`: the one-char string `b` has a replacement.
    ascii_mapped: [bool; 128],
    /// The grapheme `"\r\n"` has a replacement.
    crlf_mapped: bool,
    /// Which chars [`keeps_char`](Self::keeps_char) found left as is.
    kept: CharMemo,
}

/// The units of a charsmap's trie, read where they are in its blob (little-endian `u32`s after
/// the blob's size field, at any alignment).
#[derive(Clone)]
struct Units {
    blob: Table<u8>,
    /// How many units there are.
    n: usize,
}

impl Units {
    fn len(&self) -> usize {
        self.n
    }

    /// Unit `i`, if there is one.
    #[inline]
    fn get(&self, i: usize) -> Option<u32> {
        if i >= self.n {
            return None;
        }
        let b = self.blob.get(4 + 4 * i..8 + 4 * i)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    #[inline]
    fn first(&self) -> Option<u32> {
        self.get(0)
    }

    fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.blob[4..4 + 4 * self.n].chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

/// The serialized field of [`Precompiled`], validated by `TryFrom`.
#[derive(Deserialize)]
struct PrecompiledFields {
    precompiled_charsmap: String,
}

impl TryFrom<PrecompiledFields> for Precompiled {
    type Error = Error;

    fn try_from(f: PrecompiledFields) -> Result<Self> {
        let bytes = BASE64
            .decode(f.precompiled_charsmap.as_bytes())
            .map_err(|e| Error::invalid(format!("Precompiled: precompiled_charsmap is not valid base64: {e}")))?;
        Precompiled::from_bytes(bytes)
    }
}

impl Serialize for Precompiled {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("Precompiled", 2)?;
        s.serialize_field("type", "Precompiled")?;
        s.serialize_field("precompiled_charsmap", &BASE64.encode(&*self.blob))?;
        s.end()
    }
}

impl PartialEq for Precompiled {
    fn eq(&self, other: &Self) -> bool {
        self.blob == other.blob
    }
}

impl std::fmt::Debug for Precompiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Precompiled").field("trie_units", &self.trie.len()).field("normalized_bytes", &self.normalized().len()).finish()
    }
}

// Fields of a darts-clone unit.
fn has_leaf(unit: u32) -> bool {
    (unit >> 8) & 1 == 1
}

fn value(unit: u32) -> u32 {
    unit & 0x7FFF_FFFF
}

fn label(unit: u32) -> u32 {
    unit & 0x8000_00FF
}

fn offset(unit: u32) -> usize {
    ((unit >> 10) << ((unit & (1 << 9)) >> 6)) as usize
}

impl Precompiled {
    /// Parses a raw (not base64) charsmap; an error if it is truncated, has an empty trie or
    /// its replacement strings are not UTF-8.
    pub fn from_bytes(charsmap: impl Into<Vec<u8>>) -> Result<Self> {
        Self::from_table(charsmap.into().into())
    }

    /// [`Self::from_bytes`] of a charsmap that stays where it is (a view of the `.model` file's
    /// bytes, shared, not copied).
    pub fn from_table(blob: Table<u8>) -> Result<Self> {
        let err = |msg: String| Error::invalid(format!("Precompiled: invalid precompiled_charsmap: {msg}"));
        let Some(size) = blob.get(..4) else {
            return Err(err(format!("{} bytes, too short to hold the trie size (4 bytes)", blob.len())));
        };
        let trie_bytes = u32::from_le_bytes([size[0], size[1], size[2], size[3]]) as usize;
        // As in HF, a size that is not a multiple of 4 is rounded down to whole units.
        let units = trie_bytes / 4;
        let trie_end = 4 + units * 4;
        if blob.len() < trie_end {
            return Err(err(format!("the trie is announced as {trie_bytes} bytes but only {} bytes follow", blob.len() - 4)));
        }
        if units == 0 {
            return Err(err("the trie is empty".into()));
        }
        // Whatever follows the whole units (a size that is no multiple of 4 leaves a few bytes)
        // is in the strings, so that the blob is theirs and the units' bytes after the size.
        if let Err(e) = std::str::from_utf8(&blob[trie_end..]) {
            return Err(err(format!("the replacement strings are not valid UTF-8 (byte {})", e.valid_up_to())));
        }
        let mut precompiled = Self {
            trie: Units { blob: blob.clone(), n: units },
            blob,
            strings_at: trie_end,
            ascii_mapped: [false; 128],
            crlf_mapped: false,
            kept: CharMemo::default(),
        };
        let mut buf = [0u8; 4];
        for b in 0..128u8 {
            precompiled.ascii_mapped[b as usize] = precompiled.transform((b as char).encode_utf8(&mut buf)).is_some();
        }
        precompiled.crlf_mapped = precompiled.transform("\r\n").is_some();
        Ok(precompiled)
    }

    /// The NUL-separated replacement strings.
    #[inline]
    fn normalized(&self) -> &str {
        let strings = self.blob.get(self.strings_at..).unwrap_or_default();
        // SAFETY: checked to be UTF-8 when the charsmap was read (`from_table`); the blob is a
        // read-only table, never written to.
        unsafe { std::str::from_utf8_unchecked(strings) }
    }

    /// [`Self::check_trie`], walked once per charsmap: a known charsmap ([`is_checked`]) passes
    /// without it, and another one that passed is remembered in the
    /// [`table_cache`](crate::utils::table_cache) under the hash of its bytes, so a further load
    /// (another process) skips the walk, most of a `.model`'s load otherwise (about 115M
    /// instructions for ALBERT's charsmap, against 4M for the hash). A charsmap that fails is
    /// not remembered: its error comes from the walk every time.
    pub fn check_trie_cached(&self) -> Result<()> {
        use crate::utils::table_cache;
        const PASSED: &[u8] = b"check_trie passed";
        let blob = &*self.blob;
        if is_checked(blob) {
            return Ok(());
        }
        let key = table_cache::Key::new("Precompiled::check_trie", &[blob]);
        let read =
            |p: &table_cache::Payload| if **p == *PASSED { Ok(()) } else { Err(Error::invalid("table cache: malformed check entry")) };
        table_cache::cached(&key, read, || self.check_trie(), |()| Some(PASSED.to_vec()))
    }

    /// Checks the trie as sentencepiece does before it uses one (its "precompiled_charsmap is
    /// invalid"): the children of every unit lie inside the array, and every key reachable from
    /// the root ends in a value unit whose offset is inside the replacement strings. HF reads a
    /// tokenizer.json `Precompiled` without this check, so only the `.model` loader calls it.
    pub fn check_trie(&self) -> Result<()> {
        let err = |msg: String| Error::invalid(format!("Precompiled: invalid precompiled_charsmap: {msg}"));
        let n = self.trie.len();
        const VALUE_UNIT: u32 = 0x8000_0000;
        for (i, unit) in self.trie.iter().enumerate() {
            if unit & VALUE_UNIT == 0 && ((i ^ offset(unit)) | 0xFF) >= n {
                return Err(err(format!("unit {i} has children past the {n} units of the trie")));
            }
        }
        let strings = self.normalized().len();
        let mut seen = vec![false; n];
        let mut stack = vec![0usize];
        while let Some(i) = stack.pop() {
            if std::mem::replace(&mut seen[i], true) {
                continue;
            }
            let Some(unit) = self.trie.get(i) else { continue };
            let base = i ^ offset(unit);
            if has_leaf(unit) {
                match self.trie.get(base) {
                    Some(v) if v & VALUE_UNIT != 0 && (value(v) as usize) < strings => {}
                    _ => return Err(err(format!("the key ending at unit {i} has no valid replacement"))),
                }
            }
            // The children lie in the 256 units of `base`'s block.
            for c in 1..=255u32 {
                let j = base ^ c as usize;
                if self.trie.get(j).is_some_and(|u| label(u) == c) {
                    stack.push(j);
                }
            }
        }
        Ok(())
    }

    /// The raw charsmap blob (a copy).
    pub fn charsmap(&self) -> Vec<u8> {
        self.blob.to_vec()
    }

    /// The value of the shortest key of the trie that is a prefix of `key` (stopping at a NUL
    /// byte), as HF's `common_prefix_search(..)[0]`. A malformed trie gives `None`, not a panic.
    fn shortest_prefix_value(&self, key: &[u8]) -> Option<u32> {
        let mut pos = offset(self.trie.first()?);
        for &b in key {
            if b == 0 {
                break;
            }
            pos ^= b as usize;
            let unit = self.trie.get(pos)?;
            if label(unit) != b as u32 {
                return None;
            }
            pos ^= offset(unit);
            if has_leaf(unit) {
                return Some(value(self.trie.get(pos)?));
            }
        }
        None
    }

    /// The longest key of the trie that is a prefix of `key` among the first 32 matches
    /// (SentencePiece's `Normalizer::NormalizePrefix`, which keeps 32 results): its length in
    /// bytes and its replacement. Unlike [`transform`](Self::transform), a NUL byte does not end
    /// the key. A malformed trie gives `None`, not a panic.
    pub fn longest_prefix(&self, key: &[u8]) -> Option<(usize, &str)> {
        const MAX_RESULTS: usize = 32;
        let mut pos = offset(self.trie.first()?);
        let mut found = None;
        let mut n_results = 0;
        for (i, &b) in key.iter().enumerate() {
            pos ^= b as usize;
            let Some(unit) = self.trie.get(pos) else { break };
            if label(unit) != b as u32 {
                break;
            }
            pos ^= offset(unit);
            if has_leaf(unit) {
                if n_results < MAX_RESULTS {
                    if let Some(leaf) = self.trie.get(pos) {
                        found = Some((i + 1, value(leaf)));
                    }
                }
                n_results += 1;
            }
        }
        let (len, start) = found?;
        let start = start as usize;
        let normalized = self.normalized();
        let rest = normalized.as_bytes().get(start..)?;
        let end = start + rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        Some((len, normalized.get(start..end)?))
    }

    /// Whether some key of the trie starts with the bytes `prefix`.
    pub fn has_key_with_prefix(&self, prefix: &[u8]) -> bool {
        let Some(root) = self.trie.first() else { return false };
        let mut pos = offset(root);
        for &b in prefix {
            pos ^= b as usize;
            match self.trie.get(pos) {
                Some(unit) if label(unit) == b as u32 => pos ^= offset(unit),
                _ => return false,
            }
        }
        true
    }

    /// The root node of the trie, to walk it with [`step`](Self::step).
    pub(crate) fn root(&self) -> Option<usize> {
        self.trie.first().map(offset)
    }

    /// The node reached from `node` by byte `b`, if some key continues that way, and whether
    /// a key ends there.
    pub(crate) fn step(&self, node: usize, b: u8) -> Option<(usize, bool)> {
        let pos = node ^ b as usize;
        match self.trie.get(pos) {
            Some(unit) if label(unit) == b as u32 => Some((pos ^ offset(unit), has_leaf(unit))),
            _ => None,
        }
    }

    /// Whether some key of the trie starts with byte `b` (when not, text starting with `b` is
    /// left as is by [`longest_prefix`](Self::longest_prefix)).
    pub fn has_key_starting_with(&self, b: u8) -> bool {
        let Some(root) = self.trie.first() else { return false };
        let pos = offset(root) ^ b as usize;
        self.trie.get(pos).is_some_and(|unit| label(unit) == b as u32)
    }

    /// The replacement of the shortest key that prefixes `chunk`, if any.
    pub fn transform(&self, chunk: &str) -> Option<&str> {
        let start = self.shortest_prefix_value(chunk.as_bytes())? as usize;
        let normalized = self.normalized();
        let rest = normalized.as_bytes().get(start..)?;
        let end = start + rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        normalized.get(start..end)
    }
}

/// Pushes the changes replacing `old_count` chars by `replacement`, as HF 0.23 does: the new
/// chars replace the old ones one for one; extra new chars at the end are insertions, and
/// missing ones are removed by the last change pushed so far (which may belong to an earlier
/// char when `replacement` is empty, and does nothing at the very start).
fn push_replacement(out: &mut Vec<(char, isize)>, replacement: &str, old_count: usize) {
    let before = out.len();
    out.extend(replacement.chars().map(|c| (c, 0)));
    let new_count = out.len() - before;
    if new_count > old_count {
        for item in &mut out[before + new_count - (new_count - old_count)..] {
            item.1 = 1;
        }
    } else if new_count < old_count {
        if let Some(last) = out.last_mut() {
            last.1 -= (old_count - new_count) as isize;
        }
    }
}

/// On the first change, records the unchanged `prefix` before it.
fn start_changes(out: &mut Vec<(char, isize)>, modified: &mut bool, prefix: &str) {
    if !*modified {
        *modified = true;
        out.reserve(prefix.len() * 2 + 16);
        out.extend(prefix.chars().map(|c| (c, 0)));
    }
}

impl Precompiled {
    /// Whether `s` is ASCII text the charsmap leaves as is (every ASCII char is its own
    /// grapheme except `"\r\n"`), so normalization can skip the grapheme walk.
    fn ascii_unchanged(&self, s: &str) -> bool {
        s.is_ascii() && !s.bytes().any(|b| self.ascii_mapped[b as usize]) && !(self.crlf_mapped && s.contains("\r\n"))
    }
}

impl Normalizer for Precompiled {
    fn normalize(&self, n: &mut NormalizedString) -> Result<()> {
        if let Some(transformations) = self.changes(n.get()) {
            n.transform(transformations, 0);
        }
        Ok(())
    }
}

impl Precompiled {
    /// The changes normalizing `s` makes, as [`NormalizedString::transform`] takes them;
    /// `None` when `s` is left as is.
    pub(crate) fn changes(&self, s: &str) -> Option<Vec<(char, isize)>> {
        if self.ascii_unchanged(s) {
            return None;
        }
        // Filled from the first grapheme that changes; until then nothing is allocated.
        let mut transformations: Vec<(char, isize)> = Vec::new();
        let mut modified = false;
        let bytes = s.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            // Between two ASCII chars (other than CR LF) there is always a grapheme boundary:
            // an ASCII char followed by an ASCII char is a grapheme of its own.
            let b = bytes[i];
            let next = bytes.get(i + 1).copied();
            if b.is_ascii() && next.is_none_or(|n| n.is_ascii() && !(b == b'\r' && n == b'\n')) {
                let c = b as char;
                match self.ascii_mapped[b as usize].then(|| self.transform(&s[i..i + 1])).flatten() {
                    Some(norm) => {
                        start_changes(&mut transformations, &mut modified, &s[..i]);
                        push_replacement(&mut transformations, norm, 1);
                    }
                    None if modified => transformations.push((c, 0)),
                    None => {}
                }
                i += 1;
                continue;
            }
            // Up to the next boundary between two ASCII chars: segmenting that stretch alone
            // gives the graphemes of the whole string (it starts after an ASCII char or at 0).
            let mut end = i + 1;
            while end < bytes.len()
                && !(bytes[end - 1].is_ascii() && bytes[end].is_ascii() && !(bytes[end - 1] == b'\r' && bytes[end] == b'\n'))
            {
                end += 1;
            }
            self.normalize_graphemes(s, i, end, &mut transformations, &mut modified);
            i = end;
        }
        modified.then_some(transformations)
    }

    /// Whether the char `c`, as a grapheme of its own, is left as is (no key of the trie is
    /// a prefix of it). Remembered per char of the Basic Multilingual Plane.
    pub(crate) fn keeps_char(&self, c: char) -> bool {
        if c.is_ascii() {
            return !self.ascii_mapped[c as usize];
        }
        self.kept.get_or_compute(c, |c| u8::from(self.transform(c.encode_utf8(&mut [0u8; 4])).is_none())) != 0
    }
}

impl Precompiled {
    /// Normalizes the graphemes of `s[from..to]` (a stretch starting and ending on grapheme
    /// boundaries), appending their changes once a first change was seen.
    fn normalize_graphemes(&self, s: &str, from: usize, to: usize, transformations: &mut Vec<(char, isize)>, modified: &mut bool) {
        let mut byte = from;
        for grapheme in s[from..to].graphemes(true) {
            let start = byte;
            byte += grapheme.len();
            let mut chars = grapheme.chars();
            let single = chars.next().filter(|_| chars.as_str().is_empty());
            if grapheme.len() < 6 {
                if let Some(norm) = self.transform(grapheme) {
                    start_changes(transformations, modified, &s[..start]);
                    push_replacement(transformations, norm, grapheme.chars().count());
                    continue;
                }
                if let Some(c) = single {
                    // The per-char lookup below would repeat the one that just failed.
                    if *modified {
                        transformations.push((c, 0));
                    }
                    continue;
                }
            }
            for (i, c) in grapheme.char_indices() {
                match self.transform(&grapheme[i..i + c.len_utf8()]) {
                    Some(norm) => {
                        start_changes(transformations, modified, &s[..start + i]);
                        push_replacement(transformations, norm, 1);
                    }
                    None if *modified => transformations.push((c, 0)),
                    None => {}
                }
            }
        }
    }
}

/// The name, sha256, XXH3-128 and length of each built-in rule's charsmap, as sentencepiece
/// 0.2.3 writes it (`scripts/extract_spm_charsmaps.py`; the charsmaps themselves are in
/// `formats/sentencepiece/charsmaps/`).
pub(crate) const SHA256: &[(&str, &str, u128, usize)] = &[
    ("nmt_nfkc", "1e2c7b43d3ee9755ceaa2ac335e253d8703604e0249ee1e81156c92b46423844", 0xd1ed9960154e54cbedf7915188a2f2a0, 240007),
    ("nfkc", "7e46d9e08af4b6a37991b04fb8388644c1595a0abcd0f26d6a5d575e2a3663ea", 0xcb73ad37afce8e32acd06df6534a537f, 240008),
    ("nmt_nfkc_cf", "2c03512e62f9ed965ec90d85314211b63b5b8aa0395311ea2147eec9ff738907", 0x28676bb9f186d0c498dcc712f112634c, 247164),
    ("nfkc_cf", "d8dfef3d6db0eef0742f8b55a73aee7fce6c1e21d26a09b8d3d4b52c42a791cb", 0x27739ff62abd7102ef21918d2007efee, 247165),
];

/// Charsmaps that earlier sentencepiece versions wrote for the same rules, which many
/// published models carry: where each is found (a fixture), its sha256, XXH3-128 and length.
pub(crate) const EARLIER: &[(&str, &str, u128, usize)] = &[
    // nmt_nfkc (ALBERT, XLNet, T5 and others).
    (
        "registry/albert/spiece.model",
        "0942789e0111452f1cc446f70036e26d24458c3c7858c53cc12ca4d87531279b",
        0xa462d5d7d75ae42c8eb5dee8b66cc882,
        237539,
    ),
    // nfkc (sentencepiece's own Japanese test model).
    (
        "registry/sentencepiece/kyoto_ja_unigram_8000.model",
        "ec4a65fa10ad2a465f4f30ac3ee83a4ba4e9f507a4b092e07ff790c1c7c318af",
        0x1b1dca8318db99f5ab80f1229773fd11,
        237484,
    ),
];

/// Whether `charsmap` is a built-in rule's or one of the [`EARLIER`] ones (by its length, then
/// its XXH3-128): one that passes [`Precompiled::check_trie`] (the tests check each), so a
/// model that carries it (most do) skips that walk, most of an uncached load. XXH3 rather than
/// the sha256 (which identifies the charsmaps where they come from): it runs at the speed of
/// memory, where a sha256 of 240 KB costs a quarter of an uncached Unigram load (12M
/// instructions without SHA extensions). A charsmap made to collide with a known one only
/// skips a check that guards conformance, not memory safety: lookups in a malformed trie give
/// no match, never a panic.
pub(crate) fn is_checked(charsmap: &[u8]) -> bool {
    let known = || SHA256.iter().chain(EARLIER).filter(|&&(.., len)| len == charsmap.len());
    known().next().is_some() && {
        let hash = twox_hash::XxHash3_128::oneshot(charsmap);
        known().any(|&(_, _, h, _)| h == hash)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The blob put back together is the one read, byte for byte (also when the trie's size is
    /// no multiple of 4, the extra bytes read as strings), and serializes as it did.
    #[test]
    fn charsmap_is_given_back_as_read() {
        let blob = crate::formats::sentencepiece::charsmaps::charsmap("nmt_nfkc").unwrap();
        let m = Precompiled::from_bytes(blob.clone()).unwrap();
        assert_eq!(m.charsmap(), blob);
        let json = serde_json::to_value(&m).unwrap();
        assert_eq!(json["precompiled_charsmap"], BASE64.encode(&blob));
        let back: Precompiled = serde_json::from_value(json).unwrap();
        assert!(back == m);
        // One byte more announced than the units hold: it belongs to the strings.
        let mut odd = blob.clone();
        let size = u32::from_le_bytes([odd[0], odd[1], odd[2], odd[3]]) + 1;
        odd[..4].copy_from_slice(&size.to_le_bytes());
        let m2 = Precompiled::from_bytes(odd.clone()).unwrap();
        assert_eq!(m2.charsmap(), odd);
        assert!(m2 != m);
    }
}
