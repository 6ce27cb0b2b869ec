//! Byte tries over a WordPiece vocabulary, for the longest vocabulary token at a position in
//! one walk instead of one hash lookup (of a freshly built `##` string) per candidate length.

use crate::models::vocab::VocabMap;

/// "No token ends here" / "no child".
const NONE: u32 = u32::MAX;

/// A byte trie of token strings in compressed-row form.
#[derive(Debug, Clone)]
pub(crate) struct Trie {
    /// Child of the root for each first byte.
    root: Box<[u32; 256]>,
    /// Per node: `(first edge, number of edges, id of the token ending here or NONE)`.
    nodes: Vec<(u32, u32, u32)>,
    /// Edges, sorted by byte within each node: `(byte, child)`.
    edges: Vec<(u8, u32)>,
}

impl Trie {
    /// The trie of the tokens of `vocab` that start with `prefix`, without the prefix (empty
    /// rests are left out); `None` when an id equals the internal marker.
    pub(crate) fn new(vocab: &VocabMap, prefix: &str) -> Option<Self> {
        // Build with child lists first, then lay the nodes out in compressed rows.
        let mut children: Vec<Vec<(u8, u32)>> = vec![Vec::new()];
        let mut ids: Vec<u32> = vec![NONE];
        for (token, &id) in vocab {
            if id == NONE {
                return None;
            }
            let Some(rest) = token.strip_prefix(prefix).filter(|r| !r.is_empty()) else { continue };
            let mut node = 0usize;
            for &b in rest.as_bytes() {
                node = match children[node].iter().find(|&&(c, _)| c == b) {
                    Some(&(_, child)) => child as usize,
                    None => {
                        let child = children.len();
                        children.push(Vec::new());
                        ids.push(NONE);
                        children[node].push((b, child as u32));
                        child
                    }
                };
            }
            ids[node] = id;
        }
        let mut root = Box::new([NONE; 256]);
        for &(b, child) in &children[0] {
            root[b as usize] = child;
        }
        let mut nodes = Vec::with_capacity(children.len());
        let mut edges = Vec::new();
        for (list, id) in children.iter_mut().zip(ids) {
            list.sort_unstable();
            nodes.push((edges.len() as u32, list.len() as u32, id));
            edges.extend_from_slice(list);
        }
        Some(Self { root, nodes, edges })
    }

    /// The id and byte length of the longest token that `s` starts with.
    #[inline]
    pub(crate) fn longest(&self, s: &[u8]) -> Option<(u32, usize)> {
        let mut node = self.root[*s.first()? as usize];
        if node == NONE {
            return None;
        }
        let mut best = None;
        let mut i = 1;
        loop {
            let (start, len, id) = self.nodes[node as usize];
            if id != NONE {
                best = Some((id, i));
            }
            let Some(&b) = s.get(i) else { break };
            let row = &self.edges[start as usize..(start + len) as usize];
            match row.binary_search_by_key(&b, |&(c, _)| c) {
                Ok(k) => node = row[k].1,
                Err(_) => break,
            }
            i += 1;
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_match() {
        let vocab: VocabMap = [("a", 0), ("ab", 1), ("abcd", 2), ("##b", 3), ("##", 4), ("日本", 5)]
            .iter()
            .map(|&(t, i)| (t.to_string(), i))
            .collect();
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
