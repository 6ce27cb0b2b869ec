//! Tables derived from a BPE vocabulary and its merges that speed up encoding without
//! changing its result: single-char token ids by code point, and where a piece can be cut
//! into words that merges never cross.

use ahash::AHashMap;

use super::word::MergeMap;
use crate::base::vocab::{Vocab, VocabMap};

/// Code points below this are looked up in a dense table.
const DENSE: usize = 0x800;

/// "No token" in the dense table.
const NO_ID: u32 = u32::MAX;

/// The ids of the tokens made of one char and a fixed prefix (possibly empty): `c` →
/// id of `prefix + c`, without building the string.
#[derive(Debug, Clone, Default)]
pub struct CharIds {
    dense: Vec<u32>,
    sparse: AHashMap<char, u32>,
}

impl CharIds {
    /// The table of `prefix + c` tokens of `vocab`.
    pub fn new(vocab: &VocabMap, prefix: &str) -> Self {
        let mut t = Self { dense: vec![NO_ID; DENSE], sparse: AHashMap::new() };
        for (token, &id) in vocab {
            let Some(rest) = token.strip_prefix(prefix) else {
                continue;
            };
            let mut chars = rest.chars();
            let (Some(c), None) = (chars.next(), chars.next()) else {
                continue;
            };
            // Ids equal to the marker are left to the slow path.
            if (c as usize) < DENSE && id != NO_ID {
                t.dense[c as usize] = id;
            } else {
                t.sparse.insert(c, id);
            }
        }
        t
    }

    /// The ids in the table, in no particular order.
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.dense.iter().copied().filter(|&id| id != NO_ID).chain(self.sparse.values().copied())
    }

    /// The id of `prefix + c`, when the vocabulary has it.
    #[inline]
    pub fn get(&self, c: char) -> Option<u32> {
        match self.dense.get(c as usize) {
            Some(&id) if id != NO_ID => Some(id),
            Some(_) => None,
            None => self.sparse.get(&c).copied(),
        }
    }
}

/// A char before which a piece can be cut (when the char before it is a different one)
/// without changing the BPE result: each part can then be merged, and cached, on its own.
///
/// Cutting before `c` is exact when `c` is a token (so it is its own initial symbol, never
/// unk or bytes) and no merge joins a left side that does not end with `c` to a right side
/// that starts with `c`: the symbols on both sides of such a cut can never merge, so merges
/// on one side never interact with the other, and the lowest-rank-leftmost order restricted
/// to each part is that part's own order. The unk token must not end with `c` either (it
/// may stand left of a cut), and no char may vanish (no unk token and no byte fallback),
/// which would put another symbol left of the cut. Only without affixes, which change the
/// strings of the symbols.
pub fn safe_cut_char(vocab: &Vocab, merges: &MergeMap, unk_token: Option<&str>, all_bytes: bool, affixes: bool) -> Option<char> {
    if affixes || (unk_token.is_none() && !all_bytes) {
        return None;
    }
    let token = |id| vocab.token(id).unwrap_or_default();
    ['\u{2581}', ' '].into_iter().find(|&c| {
        let mut buf = [0u8; 4];
        vocab.id(c.encode_utf8(&mut buf)).is_some()
            && !unk_token.is_some_and(|u| u.ends_with(c))
            && merges.iter().all(|((a, b), _)| !token(b).starts_with(c) || token(a).ends_with(c))
    })
}

/// Splits `s` before every `c` that follows another char, calling `f` on each part in order.
///
/// The candidates, `c`'s first byte (which only starts chars), come from `memchr`'s
/// iterator: one vectorized scan, cheap per match even where `c` comes every few bytes (it
/// stands for the space) and much cheaper than a loop over the bytes where it does not (CJK).
#[inline]
pub fn for_each_part<'s>(s: &'s str, c: char, mut f: impl FnMut(&'s str) -> crate::Result<()>) -> crate::Result<()> {
    let mut utf8 = [0u8; 4];
    let pat = c.encode_utf8(&mut utf8).as_bytes();
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut prev_end = 0;
    for i in memchr::memchr_iter(pat[0], bytes) {
        if !bytes[i..].starts_with(pat) {
            continue;
        }
        // `i != prev_end`: the char before this `c` is not a `c`.
        if i > start && i != prev_end {
            f(&s[start..i])?;
            start = i;
        }
        prev_end = i + pat.len();
    }
    f(&s[start..])
}

impl CharIds {
    /// Writes the table, for [`crate::utils::table_cache`].
    pub(crate) fn write_table(&self, w: &mut crate::utils::table_cache::Writer) {
        w.u32s(&self.dense);
        let mut sparse: Vec<(char, u32)> = self.sparse.iter().map(|(&c, &id)| (c, id)).collect();
        sparse.sort_unstable();
        w.len(sparse.len());
        for (c, id) in sparse {
            w.u32(c as u32);
            w.u32(id);
        }
    }

    /// Reads what [`CharIds::write_table`] wrote.
    pub(crate) fn read_table(r: &mut crate::utils::table_cache::Reader<'_>) -> crate::Result<Self> {
        let dense = r.u32s()?;
        if dense.len() != DENSE {
            return Err(crate::Error::invalid("table cache: malformed char table"));
        }
        let n = r.len(8)?;
        let mut sparse = AHashMap::with_capacity(n);
        for _ in 0..n {
            let c = char::from_u32(r.u32()?).ok_or_else(|| crate::Error::invalid("table cache: malformed char table"))?;
            sparse.insert(c, r.u32()?);
        }
        Ok(Self { dense, sparse })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(s: &str) -> Vec<&str> {
        let mut out = Vec::new();
        for_each_part(s, '▁', |p| {
            out.push(p);
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn cuts_before_a_run() {
        assert_eq!(parts("▁a▁▁b▁c"), vec!["▁a", "▁▁b", "▁c"]);
        assert_eq!(parts("ab"), vec!["ab"]);
        assert_eq!(parts(""), vec![""]);
        assert_eq!(parts("▁▁"), vec!["▁▁"]);
        assert_eq!(parts("x▁"), vec!["x", "▁"]);
        assert_eq!(parts("é▁é▁"), vec!["é", "▁é", "▁"]);
    }

    #[test]
    fn char_ids() {
        let vocab: VocabMap = [("a", 0), ("##a", 1), ("é", 2), ("日", 3), ("ab", 4)].iter().map(|&(t, i)| (t.to_string(), i)).collect();
        let plain = CharIds::new(&vocab, "");
        assert_eq!((plain.get('a'), plain.get('é'), plain.get('日'), plain.get('b')), (Some(0), Some(2), Some(3), None));
        let prefixed = CharIds::new(&vocab, "##");
        assert_eq!((prefixed.get('a'), prefixed.get('é')), (Some(1), None));
    }
}
