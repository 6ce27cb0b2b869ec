//! Conversions the pure-Python layers need from the library's format readers.

use pyo3::prelude::*;

use crate::errors::{guard, value_err};

/// The tokenizer.json document of a SentencePiece `.model` file in the layout transformers'
/// converters write (see `tokenkit::formats::sentencepiece::convert`), as a JSON string.
#[pyfunction]
pub fn sentencepiece_to_json(py: Python<'_>, path: std::path::PathBuf) -> PyResult<String> {
    let doc = py.allow_threads(|| {
        guard(|| {
            let model = tokenkit::formats::sentencepiece::read_model(&path)?;
            tokenkit::formats::sentencepiece::convert::to_tokenizer_json(&model)
        })
    })?;
    serde_json::to_string(&doc).map_err(|e| value_err(e.to_string()))
}

/// The pieces of a SentencePiece `.model` file, in id order: `(piece, score, type)` with the
/// proto's type number (1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte).
#[pyfunction]
pub fn sentencepiece_pieces(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Vec<(String, f32, i32)>> {
    let model = py.allow_threads(|| guard(|| tokenkit::formats::sentencepiece::read_model(&path)))?;
    Ok(model.proto().pieces.iter().map(|p| (p.piece.clone().unwrap_or_default(), p.score.unwrap_or(0.0), p.kind() as i32)).collect())
}

/// The configuration of a pretrained directory as the library reads it
/// (`tokenkit::formats::pretrained::directory_config`: tokenizer_config.json,
/// special_tokens_map.json merged in as transformers does, the chat templates of
/// chat_template.jinja / additional_chat_templates/), as a JSON object string, for
/// `tokenkit.pretrained` (the one reader of these files).
#[pyfunction]
pub fn pretrained_config(py: Python<'_>, dir: std::path::PathBuf) -> PyResult<String> {
    let config = py.allow_threads(|| guard(|| tokenkit::formats::pretrained::directory_config(&dir)))?;
    serde_json::to_string(&config.fields).map_err(|e| value_err(e.to_string()))
}
