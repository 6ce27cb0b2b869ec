//! ByteLevel as a post-processor: trims the offsets of tokens that start or end with spaces.
//!
//! The type is the pre-tokenizer's ([`crate::pre_tokenizers::ByteLevel`]), as in HF: the same
//! `{"type":"ByteLevel",...}` object is a pre-tokenizer, a post-processor and a decoder in
//! tokenizer.json, one struct with one serde form. The decoder side lives in
//! [`crate::decoders::byte_level`].

use crate::base::{process_by_parts, Encoding, PostProcessor};
pub use crate::pre_tokenizers::byte_level::ByteLevel;
use crate::Result;

/// A char counted as a space when trimming: `Ġ` (byte 0x20 in GPT-2's table) or real whitespace.
fn is_space(c: char) -> bool {
    c == 'Ġ' || c.is_whitespace()
}

/// Moves each token's offsets inward past the spaces its string starts and ends with, one
/// offset unit per space char (as HF does, in whatever unit the offsets are). The first token
/// keeps a single leading space when `add_prefix_space` (that space was added, not read).
pub fn trim_offsets(encoding: &mut Encoding, add_prefix_space: bool) {
    for (i, (token, offsets)) in encoding.tokens.iter(&encoding.ids).zip(encoding.offsets.iter_mut()).enumerate() {
        // Fast exit for the common token with no space at either end.
        let (Some(first), Some(last)) = (token.chars().next(), token.chars().next_back()) else { continue };
        if !is_space(first) && !is_space(last) {
            continue;
        }
        let mut leading = token.chars().take_while(|&c| is_space(c)).count();
        let trailing = token.chars().rev().take_while(|&c| is_space(c)).count();
        if leading > 0 {
            // Pre-tokenized input may start a later token at 0 too: it is "first" as well.
            let is_first = i == 0 || offsets.0 == 0;
            if is_first && add_prefix_space && leading == 1 {
                leading = 0;
            }
            offsets.0 = (offsets.0 + leading).min(offsets.1);
        }
        if trailing > 0 && offsets.1 >= trailing {
            offsets.1 = (offsets.1 - trailing).max(offsets.0);
        }
    }
}

impl PostProcessor for ByteLevel {
    fn added_tokens(&self, _is_pair: bool) -> usize {
        0
    }

    /// A single sequence is processed in place (what the general route gives, without making
    /// a list of one part); a pair takes the general route.
    fn process(&self, mut encoding: Encoding, pair: Option<Encoding>, add_special_tokens: bool) -> Result<Encoding> {
        if pair.is_some() {
            return process_by_parts(self, encoding, pair, add_special_tokens);
        }
        encoding.set_as_sequence(0, 0);
        for o in encoding.get_overflowing_mut() {
            o.set_sequence_id(0);
        }
        self.process_one(&mut encoding, 0);
        Ok(encoding)
    }

    fn process_encodings(&self, mut encodings: Vec<Encoding>, _add_special_tokens: bool) -> Result<Vec<Encoding>> {
        for (i, e) in encodings.iter_mut().enumerate() {
            self.process_one(e, i);
        }
        Ok(encodings)
    }
}

impl ByteLevel {
    /// Trims the offsets of `e` and of its overflowing parts (when `trim_offsets`) and makes
    /// it sequence `i`.
    fn process_one(&self, e: &mut Encoding, i: usize) {
        if self.trim_offsets {
            trim_offsets(e, self.add_prefix_space);
            for o in &mut e.overflowing {
                trim_offsets(o, self.add_prefix_space);
            }
        }
        e.set_sequence_id(i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::processors::PostProcessorWrapper;

    #[test]
    fn single_sequence_in_place_equals_processing_by_parts() {
        let encoding = |overflow: bool| {
            let mut e = Encoding::default();
            for (i, t) in ["Ġhello", "Ġ", "world", "ĠĠ!", "x"].iter().enumerate() {
                e.push_token(i as u32, (*t).into(), (i * 3, i * 3 + 3), Some(i as u32), 0);
            }
            if overflow {
                e.truncate(3, 1, crate::base::TruncationDirection::Right).unwrap();
            }
            e
        };
        for (trim, prefix, overflow) in [(true, true, false), (true, false, true), (false, true, true), (true, true, true)] {
            let p = ByteLevel::default().trim_offsets(trim).add_prefix_space(prefix);
            let direct = p.process(encoding(overflow), None, true).unwrap();
            let by_parts = process_by_parts(&p, encoding(overflow), None, true).unwrap();
            assert_eq!(direct, by_parts, "trim {trim}, prefix {prefix}, overflow {overflow}");
            assert_eq!(trim, direct.get_offsets() != encoding(overflow).get_offsets());
        }
    }

    #[test]
    fn serde_matches_hf() {
        // HF 0.23.3: processors.ByteLevel().__getstate__()
        let json = r#"{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true}"#;
        let p: PostProcessorWrapper = serde_json::from_str(json).unwrap();
        assert_eq!(p, PostProcessorWrapper::ByteLevel(ByteLevel::default()));
        assert_eq!(serde_json::to_string(&p).unwrap(), json);
        // HF 0.23.3 refuses a ByteLevel without add_prefix_space or trim_offsets, in every role.
        for json in [r#"{"type":"ByteLevel"}"#, r#"{"type":"ByteLevel","add_prefix_space":true}"#] {
            assert!(serde_json::from_str::<PostProcessorWrapper>(json).is_err(), "{json}");
            assert!(serde_json::from_str::<crate::decoders::DecoderWrapper>(json).is_err(), "{json}");
        }
        // gpt2's tokenizer.json has no use_regex; HF writes it back as true.
        let p: PostProcessorWrapper = serde_json::from_str(r#"{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":false}"#).unwrap();
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            r#"{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":false,"use_regex":true}"#
        );
    }

    fn enc(tokens: &[&str], offsets: &[(usize, usize)]) -> Encoding {
        let mut e = Encoding::default();
        for (t, o) in tokens.iter().zip(offsets) {
            e.push_token(0, (*t).into(), *o, None, 0);
        }
        e
    }

    #[test]
    fn trims_like_hf() {
        // The expected offsets are HF 0.23.3's (its own unit test on the same tokens).
        let tokens = ["Ġ", "ĠĠĠĠHelloĠĠ", "ĠĠHello", "HelloĠĠ", "ĠĠĠĠ"];
        let mut e = enc(&tokens, &[(0, 1), (0, 11), (11, 18), (18, 25), (25, 29)]);
        trim_offsets(&mut e, true);
        assert_eq!(e.get_offsets(), [(0, 0), (4, 9), (13, 18), (18, 23), (29, 29)]);
        let mut e = enc(&["Ġa", "Ġb"], &[(0, 2), (2, 4)]);
        trim_offsets(&mut e, false);
        assert_eq!(e.get_offsets(), [(1, 2), (3, 4)]);
    }
}
