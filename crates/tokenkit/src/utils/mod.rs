//! Small shared helpers.

pub mod byte_level;
pub mod pattern;
pub mod regex;
