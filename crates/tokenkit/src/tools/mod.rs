//! Tools for looking at tokenizers (as `tokenizers.tools`): the encoding visualiser.

pub mod visualizer;
