//! `tokenkit.tools.EncodingVisualizer`'s markup (the library's `tokenkit::tools::visualizer`).

use pyo3::prelude::*;
use tokenkit::tools::visualizer::{self, Annotation, Markup, VizToken};

/// A token from Python: `(id, token, chars or None, special, byte_fallback)`.
type TokenTuple = (u32, String, Option<(usize, usize)>, bool, bool);

/// The HTML document of `text` cut into `tokens` (`(id, token, chars or None, special,
/// byte_fallback)`), with `annotations` (`(start, end, label)`): HF's markup, or with ids and
/// offsets when `detailed`; the whole page with `title` when one is given.
#[pyfunction]
#[pyo3(signature = (text, tokens, annotations, *, detailed = false, title = None, summary = ""))]
pub fn render_tokens_html(
    text: &str,
    tokens: Vec<TokenTuple>,
    annotations: Vec<(usize, usize, String)>,
    detailed: bool,
    title: Option<&str>,
    summary: &str,
) -> String {
    let tokens: Vec<VizToken> = tokens
        .into_iter()
        .map(|(id, token, chars, special, byte_fallback)| VizToken { id, token, chars, special, byte_fallback })
        .collect();
    let annotations: Vec<Annotation> = annotations.into_iter().map(|(start, end, label)| Annotation { start, end, label }).collect();
    let body = visualizer::render(text, &tokens, &annotations, if detailed { Markup::Detailed } else { Markup::Hf });
    match title {
        Some(t) => visualizer::page(t, summary, &body),
        None => visualizer::document(&body),
    }
}

/// The colour of each annotation label, as `EncodingVisualizer.calculate_label_colors`.
#[pyfunction]
pub fn label_colors(labels: Vec<String>) -> Vec<(String, String)> {
    let annotations: Vec<Annotation> = labels.into_iter().map(|label| Annotation { start: 0, end: 0, label }).collect();
    visualizer::label_colors(&annotations)
}
