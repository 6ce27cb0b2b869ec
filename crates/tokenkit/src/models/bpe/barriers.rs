//! Chars whose initial symbol no merge ever touches ("barriers"), so that a word can be cut
//! around them and each part merged (and cached) on its own with the same result.
//!
//! Why cutting there is exact: a symbol that is in no merge pair (neither as left nor as
//! right side) is never merged, so no merge crosses it. The merges left of it and right of it
//! then never interact: each side's queue entries only involve its own symbols, and the
//! lowest-rank-leftmost order restricted to one side is the order that side has when merged
//! alone (positions shift by a constant). This holds for any merge table, stale entries
//! included, as long as there is no dropout (its random draws follow the global order).
//!
//! In SentencePiece-style vocabularies (Llama 2, Mistral) most single-char tokens are in no
//! merge: digits, most CJK ideographs and punctuation. Byte-fallback tokens `<0xNN>` are in
//! none either. A long CJK line without spaces, one piece under `Metaspace`, thus falls into
//! short parts that the cache and the scan merge handle, instead of one long heap merge.

use super::chars::CharIds;
use super::word::MergeMap;

/// What cutting a word around its barrier chars gives, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part<'a> {
    /// Text between barriers (no barrier char inside), to merge as a word of its own.
    Merge(&'a str),
    /// A token that is final as is: its id and the bytes it covers.
    Fixed(u32, u32),
}

/// Which symbols are never merged, for one BPE model (no affixes, no dropout).
#[derive(Debug, Clone)]
pub(crate) struct Barriers {
    /// One bit per token id: set when the id is on either side of some merge.
    in_merge: Vec<u64>,
    /// Byte tokens by byte, set when a char outside the vocabulary becomes its bytes
    /// (`byte_fallback` with all 256 byte tokens) and none of them is in a merge.
    bytes: Option<Box<[u32; 256]>>,
}

impl Barriers {
    /// The barriers of a model, or `None` when cutting would never help (no char token
    /// outside the merges and no byte fallback).
    ///
    /// `all_byte_ids` is the byte-fallback table when every byte has its token (then no char
    /// is ever unk, so fused unks never span a cut).
    pub(crate) fn new(merges: &MergeMap, chars: &CharIds, all_byte_ids: Option<&[u32; 256]>) -> Option<Self> {
        let mut in_merge: Vec<u64> = Vec::new();
        let mut set = |id: u32| {
            let (word, bit) = (id as usize / 64, id % 64);
            if word >= in_merge.len() {
                in_merge.resize(word + 1, 0);
            }
            in_merge[word] |= 1 << bit;
        };
        for ((a, b), _) in merges.iter() {
            set(a);
            set(b);
        }
        let mut this = Self { in_merge, bytes: None };
        if let Some(ids) = all_byte_ids {
            if ids.iter().all(|&id| this.is_free(id)) {
                this.bytes = Some(Box::new(*ids));
            }
        }
        (this.bytes.is_some() || chars.ids().any(|id| this.is_free(id))).then_some(this)
    }

    /// Whether no merge has `id` on either side.
    #[inline]
    pub(crate) fn is_free(&self, id: u32) -> bool {
        self.in_merge.get(id as usize / 64).is_none_or(|w| w & (1 << (id % 64)) == 0)
    }

    /// Cuts `w` around its barrier chars and calls `f` on each part in order; `chars` gives
    /// the ids of single-char tokens. Without a barrier, `f` gets `w` whole. A part of one
    /// char that is a token comes as [`Part::Fixed`]: a single symbol has nothing to merge.
    #[inline]
    pub(crate) fn for_each_part<'a, E>(&self, w: &'a str, chars: &CharIds, mut f: impl FnMut(Part<'a>) -> Result<(), E>) -> Result<(), E> {
        // The part being gathered: where it starts, and its only char's id while it has one.
        let mut start = 0;
        let mut single: Option<u32> = None;
        for (i, c) in w.char_indices() {
            let len = c.len_utf8();
            match chars.get(c) {
                Some(id) if self.is_free(id) => {
                    flush(w, start, i, single, &mut f)?;
                    f(Part::Fixed(id, len as u32))?;
                    start = i + len;
                    single = None;
                }
                None if self.bytes.is_some() => {
                    flush(w, start, i, single, &mut f)?;
                    let mut buf = [0u8; 4];
                    for &b in c.encode_utf8(&mut buf).as_bytes() {
                        f(Part::Fixed(self.bytes.as_ref().map_or(0, |t| t[b as usize]), 1))?;
                    }
                    start = i + len;
                    single = None;
                }
                // The first char of a part: remember its id in case it stays alone.
                id if i == start => single = id,
                _ => single = None,
            }
        }
        flush(w, start, w.len(), single, &mut f)
    }
}

/// Hands the gathered part `w[start..end]` to `f`: fixed when it is one char of id `single`.
#[inline]
fn flush<'a, E>(w: &'a str, start: usize, end: usize, single: Option<u32>, f: &mut impl FnMut(Part<'a>) -> Result<(), E>) -> Result<(), E> {
    match single {
        Some(id) => f(Part::Fixed(id, (end - start) as u32)),
        None if start < end => f(Part::Merge(&w[start..end])),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::vocab::VocabMap;

    fn parts_of<'a>(barriers: &Barriers, w: &'a str, chars: &CharIds) -> Vec<Part<'a>> {
        let mut parts = Vec::new();
        barriers
            .for_each_part(w, chars, |p| {
                parts.push(p);
                Ok::<_, ()>(())
            })
            .unwrap();
        parts
    }

    #[test]
    fn cuts_around_free_chars_and_bytes() {
        let vocab: VocabMap = [("a", 0), ("b", 1), ("ab", 2), ("日", 3), ("c", 4)].iter().map(|&(t, i)| (t.to_string(), i)).collect();
        let chars = CharIds::new(&vocab, "");
        let merges: MergeMap = [((0, 1), (0, 2))].into_iter().collect();
        let mut bytes = [100u32; 256];
        for (b, id) in bytes.iter_mut().enumerate() {
            *id = 100 + b as u32;
        }
        let barriers = Barriers::new(&merges, &chars, Some(&bytes)).unwrap();
        assert!(barriers.is_free(3) && barriers.is_free(4) && !barriers.is_free(0));
        let parts = parts_of(&barriers, "ab日abcé", &chars);
        assert_eq!(
            parts,
            vec![
                Part::Merge("ab"),
                Part::Fixed(3, 3),
                Part::Merge("ab"),
                Part::Fixed(4, 1),
                Part::Fixed(100 + 0xC3, 1),
                Part::Fixed(100 + 0xA9, 1),
            ]
        );
        // Parts of one char come fixed; an unknown char (no byte fallback) stays to merge.
        let barriers = Barriers::new(&merges, &chars, None).unwrap();
        let parts = parts_of(&barriers, "a日bé日", &chars);
        assert_eq!(parts, vec![Part::Fixed(0, 1), Part::Fixed(3, 3), Part::Merge("bé"), Part::Fixed(3, 3)]);
        let barriers = Barriers::new(&merges, &chars, Some(&bytes)).unwrap();
        let parts = parts_of(&barriers, "ab日abcé", &chars);
        assert_eq!(
            parts,
            vec![
                Part::Merge("ab"),
                Part::Fixed(3, 3),
                Part::Merge("ab"),
                Part::Fixed(4, 1),
                Part::Fixed(100 + 0xC3, 1),
                Part::Fixed(100 + 0xA9, 1),
            ]
        );
        // A byte token in a merge: chars outside the vocabulary stay in the parts.
        let merges: MergeMap = [((0, 1), (0, 2)), ((100, 101), (1, 2))].into_iter().collect();
        let barriers = Barriers::new(&merges, &chars, Some(&bytes)).unwrap();
        let parts = parts_of(&barriers, "éa", &chars);
        assert_eq!(parts, vec![Part::Merge("éa")]);
    }

    /// On the real SentencePiece-style fixtures, tokens with barrier cuts (and the cache) equal
    /// those of the plain merge loop on whole pieces, over every corpus line.
    #[test]
    fn fixtures_same_as_merge_loop() {
        use crate::base::Model;
        use crate::models::ModelWrapper;
        let fixtures = crate::test_fixtures::dir();
        // The Hub files where ../shared is there; the registry's Mistral v0.1 file always.
        let files: Vec<_> = ["hub/llama2.json", "hub/mistral03.json", "registry/mistral01/tokenizer.json"]
            .into_iter()
            .filter_map(crate::test_fixtures::get)
            .collect();
        assert!(!files.is_empty());
        // The shared corpora, or the built-in sample's files without ../shared.
        let corpora = [
            "ja/wagahai.txt",
            "zh/manpages-zh_CN.txt",
            "mixed/mixed_input.txt",
            "code/cpython-3.11-stdlib.py.txt",
            "builtin/ja/sample.txt",
            "builtin/zh/sample.txt",
            "builtin/mixed/sample.txt",
            "builtin/code/sample.py.txt",
        ];
        for file in &files {
            let tok = crate::Tokenizer::from_file(file).unwrap();
            let ModelWrapper::BPE(bpe) = tok.get_model() else { panic!("BPE") };
            assert!(bpe.barriers.is_some());
            let mut checked = 0;
            for corpus in corpora {
                let Ok(text) = std::fs::read_to_string(fixtures.join("corpora").join(corpus)) else { continue };
                for line in text.lines().take(400) {
                    // Both Metaspace forms: the whole line is one piece, `▁` for spaces.
                    let piece = format!("▁{}", line.replace(' ', "▁"));
                    let mut fast = Vec::new();
                    bpe.tokenize_ids(&piece, &mut fast).unwrap();
                    assert_eq!(fast, bpe.merge_loop_ids(&piece).unwrap(), "{line:?}");
                    let offsets: Vec<_> = bpe.tokenize(&piece).unwrap().into_iter().map(|t| t.offsets.1).collect();
                    assert_eq!(offsets.last().copied().unwrap_or(0), piece.len());
                    checked += 1;
                }
            }
            assert!(checked > 100, "{file:?}: {checked}");
        }
    }
}
