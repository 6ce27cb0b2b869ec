//! Strip: removes a given char from the start and end of each token.

use serde::{Deserialize, Serialize};

use crate::base::Decoder;
use crate::Result;

/// Removes up to `start` leading and up to `stop` trailing `content` chars from each token.
/// Serializes as `{"type":"Strip","content":" ","start":1,"stop":0}`.
///
/// Where HF panics (more chars to strip than the token has, or both ends overlapping), the
/// token becomes empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Strip {
    /// The char to remove.
    pub content: char,
    /// How many leading occurrences at most.
    pub start: usize,
    /// How many trailing occurrences at most.
    pub stop: usize,
}

impl Strip {
    /// A decoder stripping `content` up to `start` times in front and `stop` times at the end.
    pub fn new(content: char, start: usize, stop: usize) -> Self {
        Self { content, start, stop }
    }

    fn strip(&self, token: &mut String) {
        let width = self.content.len_utf8();
        let n_start = token.chars().take(self.start).take_while(|&c| c == self.content).count();
        let n_stop = token.chars().rev().take(self.stop).take_while(|&c| c == self.content).count();
        let (from, to) = (n_start * width, token.len() - n_stop * width);
        if from >= to {
            token.clear();
            return;
        }
        token.truncate(to);
        token.drain(..from);
    }
}

impl Decoder for Strip {
    fn decode_chain(&self, mut tokens: Vec<String>) -> Result<Vec<String>> {
        tokens.iter_mut().for_each(|t| self.strip(t));
        Ok(tokens)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decoders::DecoderWrapper;

    #[test]
    fn strips_like_hf() {
        // HF 0.23.3: decoders.Strip(content=..., left=..., right=...).decode(...)
        let d = Strip::new(' ', 1, 0);
        assert_eq!(d.decode_chain(["  a ", "b", ""].map(String::from).to_vec()).unwrap(), [" a ", "b", ""]);
        let d = Strip::new('▁', 2, 1);
        assert_eq!(d.decode_chain(["▁▁▁x▁▁"].map(String::from).to_vec()).unwrap(), ["▁x▁"]);
        // HF panics on these two; we give empty tokens.
        assert_eq!(Strip::new('a', 1, 1).decode_chain(vec!["a".into()]).unwrap(), [""]);
        assert_eq!(Strip::new('a', 0, 5).decode_chain(["aa", "b", "aba"].map(String::from).to_vec()).unwrap(), ["", "b", "ab"]);
        let json = r#"{"type":"Strip","content":" ","start":1,"stop":0}"#;
        let d: DecoderWrapper = serde_json::from_str(json).unwrap();
        assert_eq!(serde_json::to_string(&d).unwrap(), json);
    }
}
