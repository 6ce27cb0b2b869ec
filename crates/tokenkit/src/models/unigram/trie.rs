//! A byte trie over the Unigram pieces, flattened into two arrays for cache-friendly prefix search.

/// "No piece ends here".
const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Node {
    /// Id of the piece ending at this node, or `NONE`.
    id: u32,
    /// This node's children are `edges[first..first + count]`, sorted by byte.
    first: u32,
    count: u32,
}

/// Pieces as a trie: finds every piece that is a prefix of a byte string.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Trie {
    nodes: Vec<Node>,
    edges: Vec<(u8, u32)>,
    /// The root's child for each first byte (`NONE` for none): the root has the most
    /// children, so its binary search would be the longest.
    root: Vec<u32>,
}

impl Trie {
    /// Builds the trie; a piece listed twice keeps its last id.
    pub fn new<'a>(pieces: impl IntoIterator<Item = (&'a str, u32)>) -> Self {
        // Build with per-node child lists, then flatten.
        let mut ids = vec![NONE];
        let mut children: Vec<Vec<(u8, u32)>> = vec![Vec::new()];
        for (piece, id) in pieces {
            let mut node = 0usize;
            for &b in piece.as_bytes() {
                node = match children[node].iter().find(|&&(c, _)| c == b) {
                    Some(&(_, next)) => next as usize,
                    None => {
                        let next = ids.len();
                        ids.push(NONE);
                        children.push(Vec::new());
                        children[node].push((b, next as u32));
                        next
                    }
                };
            }
            ids[node] = id;
        }
        let mut nodes = Vec::with_capacity(ids.len());
        let mut edges = Vec::with_capacity(ids.len());
        for (id, mut kids) in ids.into_iter().zip(children) {
            kids.sort_unstable_by_key(|&(b, _)| b);
            nodes.push(Node { id, first: edges.len() as u32, count: kids.len() as u32 });
            edges.extend(kids);
        }
        let mut root = vec![NONE; 256];
        if let Some(r) = nodes.first() {
            for &(b, child) in &edges[r.first as usize..(r.first + r.count) as usize] {
                root[b as usize] = child;
            }
        }
        Self { nodes, edges, root }
    }

    /// Whether some piece starts with byte `b`.
    pub fn has_child(&self, b: u8) -> bool {
        self.root.get(b as usize).is_some_and(|&c| c != NONE)
    }

    /// Calls `f(length, id)` for each piece that is a prefix of `bytes`, shortest first.
    #[inline]
    pub fn common_prefixes(&self, bytes: &[u8], mut f: impl FnMut(usize, u32)) {
        let Some((&first, rest)) = bytes.split_first() else {
            return;
        };
        let Some(&child) = self.root.get(first as usize).filter(|&&c| c != NONE) else {
            return;
        };
        let mut node = &self.nodes[child as usize];
        if node.id != NONE {
            f(1, node.id);
        }
        for (i, b) in rest.iter().enumerate().map(|(i, b)| (i + 1, b)) {
            let kids = &self.edges[node.first as usize..(node.first + node.count) as usize];
            match kids.binary_search_by_key(b, |&(c, _)| c) {
                Ok(k) => node = &self.nodes[kids[k].1 as usize],
                Err(_) => return,
            }
            if node.id != NONE {
                f(i + 1, node.id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes() {
        let t = Trie::new([("a", 0), ("ab", 1), ("abc", 2), ("b", 3), ("ab", 4)]);
        let mut found = vec![];
        t.common_prefixes(b"abcd", |n, id| found.push((n, id)));
        assert_eq!(found, vec![(1, 0), (2, 4), (3, 2)]);
        found.clear();
        t.common_prefixes(b"x", |n, id| found.push((n, id)));
        assert!(found.is_empty());
        Trie::default().common_prefixes(b"a", |_, _| panic!());
    }
}
