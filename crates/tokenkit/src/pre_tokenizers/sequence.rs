//! `Sequence`: several pre-tokenizers, one after the other.

use serde::{Deserialize, Serialize};

use super::PreTokenizerWrapper;
use crate::base::{PreTokenizedString, PreTokenizer};
use crate::Result;

/// Runs each pre-tokenizer in turn on the pieces the previous ones produced.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sequence {
    /// The pre-tokenizers, in order.
    pub pretokenizers: Vec<PreTokenizerWrapper>,
}

impl Sequence {
    /// A sequence of `pretokenizers`.
    pub fn new(pretokenizers: Vec<PreTokenizerWrapper>) -> Self {
        Self { pretokenizers }
    }
}

impl PreTokenizer for Sequence {
    fn pre_tokenize(&self, p: &mut PreTokenizedString) -> Result<()> {
        self.pretokenizers.iter().try_for_each(|pt| pt.pre_tokenize(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pre_tokenizers::test_utils::{expected, pre_tokenize_str};
    use crate::pre_tokenizers::{Metaspace, PrependScheme, WhitespaceSplit};

    #[test]
    fn runs_in_order() {
        // HF 0.23.3 Sequence([WhitespaceSplit(), Metaspace(prepend_scheme="first")])
        //   .pre_tokenize_str("  hello world  x")
        let pt = Sequence::new(vec![WhitespaceSplit.into(), Metaspace::new('▁', PrependScheme::First, true).into()]);
        assert_eq!(pre_tokenize_str(&pt, "  hello world  x"), expected(&[("hello", 2, 7), ("world", 8, 13), ("x", 15, 16)]));
    }
}
