//! Readers and writers for the tokenizer file formats.
