//! Byte tries over a WordPiece vocabulary, for the longest vocabulary token at a position in
//! one walk instead of one hash lookup (of a freshly built `##` string) per candidate length.

use crate::base::vocab::VocabMap;
use crate::utils::trie::{lay_out, sorted_keys};

/// "No token ends here" / "no child".
const NONE: u32 = u32::MAX;

/// One cell of a [`Trie`]: a node when `parent` is not [`NONE`].
#[derive(Debug, Clone, Copy)]
struct Cell {
    /// The child of this node by byte `b` is cell `base + b` (when that cell's parent is this
    /// node).
    base: u32,
    /// The cell of the parent node; [`NONE`] for a free cell and the root.
    parent: u32,
    /// The id of the token ending here, or [`NONE`].
    id: u32,
}

const FREE: Cell = Cell { base: 0, parent: NONE, id: NONE };

/// A byte trie of token strings as a double array: a step is one addition and one check,
/// whatever the number of children. The root is cell 0.
#[derive(Debug, Clone)]
pub(crate) struct Trie {
    cells: Vec<Cell>,
}

impl Trie {
    /// The trie of the tokens of `vocab` that start with `prefix`, without the prefix (empty
    /// rests are left out); `None` when an id equals the internal marker.
    pub(crate) fn new(vocab: &VocabMap, prefix: &str) -> Option<Self> {
        if vocab.values().any(|&id| id == NONE) {
            return None;
        }
        let keys: Vec<(&[u8], u32)> =
            vocab.iter().filter_map(|(token, &id)| Some((token.strip_prefix(prefix).filter(|r| !r.is_empty())?.as_bytes(), id))).collect();
        let keys = sorted_keys(keys, |k| k.0);
        let mut cells = vec![FREE];
        let mut fits = true;
        lay_out(
            &keys,
            |k| k.0,
            |s| {
                fits &= u32::try_from(s.children_end).is_ok();
                if !fits {
                    return;
                }
                let id = s.ends.last().map_or(NONE, |k| keys[k].1);
                cells[s.slot] = Cell { base: s.base as u32, parent: s.parent, id };
                if cells.len() < s.children_end {
                    cells.resize(s.children_end, FREE);
                }
            },
        );
        // Grown as the layout went: held as long as the model.
        cells.shrink_to_fit();
        fits.then_some(Self { cells })
    }

    /// The id and byte length of the longest token that `s` starts with.
    #[inline]
    pub(crate) fn longest(&self, s: &[u8]) -> Option<(u32, usize)> {
        let mut node = 0;
        let mut best = None;
        for (i, &b) in s.iter().enumerate() {
            let t = self.cells[node].base as usize + usize::from(b);
            match self.cells.get(t) {
                Some(cell) if cell.parent as usize == node => {
                    node = t;
                    if cell.id != NONE {
                        best = Some((cell.id, i + 1));
                    }
                }
                _ => break,
            }
        }
        best
    }
}

impl Trie {
    /// Writes the cells, for [`crate::utils::table_cache`].
    pub(crate) fn write_table(&self, w: &mut crate::utils::table_cache::Writer) {
        w.records(self.cells.iter().map(|c| [c.base, c.parent, c.id]));
    }

    /// Reads what [`Trie::write_table`] wrote. Any cells are safe to walk ([`Trie::longest`]
    /// bounds-checks every step); a trie without its root is an error.
    pub(crate) fn read_table(r: &mut crate::utils::table_cache::Reader<'_>) -> crate::Result<Self> {
        let cells: Vec<Cell> = r.records::<3>()?.into_iter().map(|[base, parent, id]| Cell { base, parent, id }).collect();
        if cells.is_empty() {
            return Err(crate::Error::invalid("table cache: malformed trie"));
        }
        Ok(Self { cells })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_match() {
        let vocab: VocabMap =
            [("a", 0), ("ab", 1), ("abcd", 2), ("##b", 3), ("##", 4), ("日本", 5)].iter().map(|&(t, i)| (t.to_string(), i)).collect();
        let t = Trie::new(&vocab, "").unwrap();
        assert_eq!(t.longest(b"abc"), Some((1, 2)));
        assert_eq!(t.longest(b"abcde"), Some((2, 4)));
        assert_eq!(t.longest(b"b"), None);
        assert_eq!(t.longest(b""), None);
        assert_eq!(t.longest("日本語".as_bytes()), Some((5, 6)));
        assert_eq!(t.longest("日".as_bytes()), None);
        let p = Trie::new(&vocab, "##").unwrap();
        assert_eq!(p.longest(b"bb"), Some((3, 1)));
        assert_eq!(p.longest(b"a"), None);
    }
}
