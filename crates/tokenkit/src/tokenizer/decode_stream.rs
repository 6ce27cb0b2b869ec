//! Streaming decoding: ids in one at a time, text out only once it is complete UTF-8,
//! the same chunks as HF's `DecodeStream`.

use crate::tokenizer::Tokenizer;
use crate::{Error, Result};

/// Incremental decoder over a tokenizer.
pub struct DecodeStream<'t> {
    tokenizer: &'t Tokenizer,
    skip_special_tokens: bool,
    /// The ids still needed to decode the next chunk (the last emitted ones give context).
    ids: Vec<u32>,
    /// The text `ids[..prefix_index]` decode to.
    prefix: String,
    prefix_index: usize,
}

impl<'t> DecodeStream<'t> {
    /// A new stream.
    pub fn new(tokenizer: &'t Tokenizer, skip_special_tokens: bool) -> Self {
        Self { tokenizer, skip_special_tokens, ids: Vec::new(), prefix: String::new(), prefix_index: 0 }
    }

    /// Feeds one id; returns the new text when it forms complete characters.
    pub fn step(&mut self, id: u32) -> Result<Option<String>> {
        self.ids.push(id);
        let text = self.tokenizer.decode(&self.ids, self.skip_special_tokens)?;
        if text.len() > self.prefix.len() && !text.ends_with('\u{FFFD}') {
            if !text.starts_with(&self.prefix) {
                return Err(Error::invalid("decode stream: the decoded text no longer starts with the previous prefix"));
            }
            let new_text = text[self.prefix.len()..].to_owned();
            let new_prefix_index = self.ids.len() - self.prefix_index;
            self.ids.drain(..self.prefix_index);
            self.prefix = self.tokenizer.decode(&self.ids, self.skip_special_tokens)?;
            self.prefix_index = new_prefix_index;
            Ok(Some(new_text))
        } else {
            Ok(None)
        }
    }
}
