//! The one error type of the library.

use std::path::PathBuf;

/// Every failure tokenkit reports. Messages name the file, the field and what was expected.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// JSON that does not parse, or does not have the shape of a tokenizer.json.
    #[error("{context}: {message}")]
    Json { context: String, message: String },
    /// A component or a field whose value is not valid.
    #[error("{0}")]
    Invalid(String),
    /// An id that is not in the vocabulary.
    #[error("id {id} is out of range (vocabulary size {vocab_size})")]
    IdOutOfRange { id: u32, vocab_size: usize },
    /// A regular expression that does not compile.
    #[error("invalid regex {pattern:?}: {message}")]
    Regex { pattern: String, message: String },
    /// A token the model needs (unk, pad, ...) is missing from the vocabulary.
    #[error("{0}")]
    MissingToken(String),
    /// The text holds a special token that the caller did not allow (tiktoken's
    /// `disallowed_special`); the message is tiktoken's (it names Python's arguments, so the
    /// CLI words its own from `token`).
    #[error("{message}")]
    DisallowedSpecialToken { token: String, message: String },
    /// A batch stopped by its interrupt check (Ctrl-C in Python; see
    /// [`crate::utils::parallel::with_interrupt_check`]).
    #[error("interrupted")]
    Interrupted,
}

/// `Result` with tokenkit's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Shorthand for [`Error::Invalid`].
    pub fn invalid(msg: impl Into<String>) -> Self {
        Error::Invalid(msg.into())
    }
}
