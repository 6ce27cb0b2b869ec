//! Hand-written lexers for the well-known pre-tokenization regexes. Each one gives exactly
//! the matches Oniguruma gives for its pattern (checked against `SysRegex` in the tests on
//! the corpora and on random strings), at a fraction of the cost.

pub mod class_table;
pub mod cl100k;
pub mod classes;
pub mod gpt2;

pub use cl100k::{Cl100kLexer, DigitRun};
pub use gpt2::Gpt2Lexer;
