//! `tokenkit._tokenkit.ChatTemplate`: a compiled Jinja chat template, rendered as transformers'
//! `apply_chat_template(..., tokenize=False)` renders it. Conversations and options cross the
//! boundary as JSON text (the Python side serializes them with `json.dumps`).

use pyo3::prelude::*;
use serde_json::{Map, Value as Json};
use tokenkit::chat_template::{ChatOptions, ChatTemplate};

use crate::errors::{guard, value_err};

fn parse<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> PyResult<T> {
    serde_json::from_str(text).map_err(|e| value_err(format!("chat template {what}: not valid JSON ({e})")))
}

/// A compiled chat template.
#[pyclass(module = "tokenkit", name = "ChatTemplate", frozen)]
pub struct PyChatTemplate {
    template: ChatTemplate,
}

#[pymethods]
impl PyChatTemplate {
    /// Compiles `source` (the `chat_template` string of a tokenizer_config.json).
    #[new]
    fn new(source: String) -> PyResult<Self> {
        Ok(Self { template: guard(|| ChatTemplate::new(source))? })
    }

    /// The template text.
    #[getter]
    fn source(&self) -> &str {
        self.template.source()
    }

    /// Renders one conversation. `messages_json` is a JSON array of messages; `tools_json` and
    /// `documents_json` JSON arrays or None; `kwargs_json` a JSON object of template variables
    /// (special tokens first, then the caller's keyword arguments).
    #[allow(clippy::too_many_arguments)] // the keyword arguments of transformers' apply_chat_template
    #[pyo3(signature = (messages_json, add_generation_prompt = false, continue_final_message = None, tools_json = None, documents_json = None, kwargs_json = None))]
    fn render(
        &self,
        py: Python<'_>,
        messages_json: &str,
        add_generation_prompt: bool,
        continue_final_message: Option<String>,
        tools_json: Option<&str>,
        documents_json: Option<&str>,
        kwargs_json: Option<&str>,
    ) -> PyResult<String> {
        let messages: Json = parse("messages", messages_json)?;
        let options = ChatOptions {
            add_generation_prompt,
            continue_final_message,
            tools: tools_json.map(|t| parse("tools", t)).transpose()?,
            documents: documents_json.map(|d| parse("documents", d)).transpose()?,
            kwargs: kwargs_json.map(|k| parse::<Map<String, Json>>("kwargs", k)).transpose()?.unwrap_or_default(),
        };
        py.allow_threads(|| guard(|| self.template.render(&messages, &options)))
    }
}
