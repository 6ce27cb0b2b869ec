//! The leftmost-longest Aho-Corasick automaton that added tokens and tiktoken's special
//! tokens are cut out with, built in time linear in the patterns' total length.

use aho_corasick::{AhoCorasick, AhoCorasickKind, BuildError, MatchKind};

/// Patterns at most this long (and at most 100 of them) get aho-corasick's own choice, a
/// DFA for so few patterns. The DFA's construction follows failure links without memo, so
/// its time grows with a pattern's length times its self-overlap: 16,000 × `a` took 9.6 s
/// and a megabyte hung, where a contiguous NFA takes under a millisecond. At this bound the
/// worst case is about 10^8 steps, and real special tokens are all shorter.
const DFA_MAX_PATTERN_BYTES: usize = 64;

/// A leftmost-longest automaton over `patterns` (pattern `i` reports as `i`): a DFA when the
/// patterns are few and short, otherwise a contiguous NFA (a non-contiguous one if that is
/// too large), so that building is linear in the patterns' total length.
pub(crate) fn leftmost_longest<P: AsRef<[u8]>>(patterns: &[P]) -> Result<AhoCorasick, BuildError> {
    let builder = |kind| AhoCorasick::builder().match_kind(MatchKind::LeftmostLongest).kind(kind).build(patterns);
    if patterns.len() <= 100 && patterns.iter().all(|p| p.as_ref().len() <= DFA_MAX_PATTERN_BYTES) {
        return builder(None);
    }
    builder(Some(AhoCorasickKind::ContiguousNFA)).or_else(|_| builder(Some(AhoCorasickKind::NoncontiguousNFA)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::utils::lexers::adversarial::assert_linear;

    #[test]
    fn long_patterns_build_in_linear_time_and_match() {
        let make = |n: usize| vec!["a".repeat(n), "ab".repeat(n / 2), "<|x|>".to_owned()];
        assert_linear("building over long patterns", &make(4096), &make(65536), |p| {
            std::hint::black_box(leftmost_longest(p).unwrap());
        });
        let ac = leftmost_longest(&make(100_000)).unwrap();
        let text = format!("x{}a<|x|>", "a".repeat(100_000));
        let found: Vec<_> = ac.find_iter(&text).map(|m| (m.pattern().as_usize(), m.start(), m.end())).collect();
        assert_eq!(found, [(0, 1, 100_001), (2, 100_002, 100_007)]);
    }

    #[test]
    fn short_patterns_keep_the_dfa() {
        assert_eq!(leftmost_longest(&["<|endoftext|>", "<|fim_prefix|>"]).unwrap().kind(), AhoCorasickKind::DFA);
        assert_eq!(leftmost_longest(&["a".repeat(65)]).unwrap().kind(), AhoCorasickKind::ContiguousNFA);
    }
}
