//! Tools for looking at tokenizers (as `tokenizers.tools`): the encoding visualiser, and the
//! vocabulary analysis of `tokenkit vocab`.

pub mod visualizer;
pub mod vocab;
