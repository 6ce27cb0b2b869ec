//! The `tokenkit._tokenkit` extension module: the Rust side of the `tokenkit` Python package.
//!
//! The Python surface is HF tokenizers' (`Tokenizer`, `Encoding`, `AddedToken`,
//! `decoders.DecodeStream`, ...). Pipeline components (normalizers, pre-tokenizers, models,
//! post-processors, decoders) are plain Python classes holding the component's tokenizer.json
//! object (see `tokenkit/_base.py`); this module turns that JSON into the library's `*Wrapper`
//! enums when a component is attached to a tokenizer or used on its own ([`component`]).
//!
//! Rules kept everywhere: every call into the library runs under [`guard`] so a Rust panic
//! becomes a Python exception instead of aborting the interpreter; encode/decode release the GIL;
//! parallel work runs on a rayon pool that belongs to the current process ([`pool`]), so a
//! `fork()`ed child never waits on the parent's (non-existent) worker threads.

mod added_token;
mod chat;
mod component;
mod convert;
mod corpus;
mod counts;
mod data;
mod decode_stream;
mod encoding;
mod errors;
mod ids;
mod numpy;
mod pool;
mod sentencepiece;
mod spm_train;
mod text;
mod tiktoken;
mod tokenizer;
mod train;
mod visualizer;

use pyo3::prelude::*;

/// mimalloc for the extension's own allocations: tokenization allocates many small strings
/// (token values), and mimalloc takes about a fifth fewer instructions than glibc's malloc there.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The extension module.
#[pymodule]
fn _tokenkit(m: &Bound<'_, PyModule>) -> PyResult<()> {
    pool::init();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<tokenizer::PyTokenizer>()?;
    m.add_class::<encoding::PyEncoding>()?;
    m.add_class::<counts::PyWordCounts>()?;
    m.add_class::<added_token::PyAddedToken>()?;
    m.add_class::<decode_stream::PyDecodeStream>()?;
    m.add_class::<component::PyComponent>()?;
    m.add_class::<chat::PyChatTemplate>()?;
    m.add_class::<tiktoken::PyTiktokenCore>()?;
    m.add_class::<sentencepiece::PySentencePieceCore>()?;
    m.add_class::<sentencepiece::PySentencePieceNormalizerCore>()?;
    m.add_function(wrap_pyfunction!(sentencepiece::sentencepiece_set_random_seed, m)?)?;
    m.add_function(wrap_pyfunction!(spm_train::train_sentencepiece, m)?)?;
    m.add_function(wrap_pyfunction!(component::template_processing_json, m)?)?;
    m.add_function(wrap_pyfunction!(component::byte_level_alphabet, m)?)?;
    m.add_function(wrap_pyfunction!(tiktoken::parse_rank_file, m)?)?;
    m.add_function(wrap_pyfunction!(convert::sentencepiece_to_json, m)?)?;
    m.add_function(wrap_pyfunction!(convert::sentencepiece_pieces, m)?)?;
    m.add_function(wrap_pyfunction!(convert::pretrained_config, m)?)?;
    m.add_function(wrap_pyfunction!(tiktoken::tiktoken_data_dirs, m)?)?;
    m.add_function(wrap_pyfunction!(tiktoken::tiktoken_encoding_names, m)?)?;
    m.add_function(wrap_pyfunction!(write_files, m)?)?;
    m.add_function(wrap_pyfunction!(data::tokenize_files, m)?)?;
    m.add_function(wrap_pyfunction!(data::stats_files, m)?)?;
    m.add_function(wrap_pyfunction!(visualizer::render_tokens_html, m)?)?;
    m.add_function(wrap_pyfunction!(visualizer::label_colors, m)?)?;
    m.add_class::<data::PyDocumentEncoder>()?;
    m.add_function(wrap_pyfunction!(corpus::corpus_pii, m)?)?;
    m.add_function(wrap_pyfunction!(corpus::corpus_find_pii, m)?)?;
    m.add_function(wrap_pyfunction!(corpus::corpus_band_keys, m)?)?;
    m.add_function(wrap_pyfunction!(corpus::corpus_clusters, m)?)?;
    m.add_function(wrap_pyfunction!(corpus::corpus_files, m)?)?;
    m.add_function(wrap_pyfunction!(corpus::corpus_clean, m)?)?;
    m.add_function(wrap_pyfunction!(corpus::corpus_detect_lang, m)?)?;
    m.add_function(wrap_pyfunction!(corpus::corpus_split_of, m)?)?;
    Ok(())
}

/// Writes `(path, data)` files as one set with the library's atomic writer: each goes to a
/// temporary name beside its path, and all are renamed into place once every one is complete,
/// so a failure leaves the previous files as they were (the Python models' `save` uses it).
#[pyfunction]
fn write_files(files: Vec<(std::path::PathBuf, Vec<u8>)>) -> PyResult<()> {
    errors::guard(|| {
        let mut set = tokenkit::utils::atomic_file::AtomicFiles::new();
        for (path, data) in &files {
            set.write(path, data)?;
        }
        set.commit()
    })
}
