//! Small shared helpers.

pub(crate) mod aho;
pub mod atomic_file;
pub mod byte_level;
pub(crate) mod char_memo;
pub mod parallel;
pub mod pattern;
pub mod lexers;
pub mod regex;
pub mod table_cache;
pub mod trie;
pub(crate) mod used_slots;
