//! Small shared helpers.

pub mod byte_level;
pub mod regex;
