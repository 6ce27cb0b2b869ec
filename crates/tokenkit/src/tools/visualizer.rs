//! HTML pictures of how a tokenizer cuts a text: the markup of HF's `EncodingVisualizer`
//! (`tokenizers.tools`), and a self-contained page with ids and offsets on hover
//! (`tokenkit viz`, the playground).
//!
//! The text is cut into runs of characters that belong to the same first token and the same
//! annotation. A run becomes `<span class="token even-token|odd-token">` (tokens alternate),
//! with `multi-token` when more than one token covers its characters (a byte-level token that
//! holds part of a character shares it with the next), or `<span class="non-token">` for text
//! no token covers (whitespace a pre-tokenizer dropped). Annotations wrap their runs in
//! `<span class="annotation" data-label=...>`. As in HF, a token whose text contains `unk` or
//! `oov` is marked `special-token` with `data-stok`.
//!
//! The page form cuts runs also where the set of tokens covering the characters changes, adds,
//! per run, the ids and offsets of its tokens (`data-ids`, `title`), marks
//! byte-fallback tokens and special tokens matched in the text (`special-text`: `<|im_start|>`
//! in a rendered chat), and shows the special tokens that cover no text (BOS, EOS, `[CLS]`)
//! as `<span class="special-token" data-stoken=...>` where they fall.

use std::fmt::Write as _;

use html_escape::{encode_double_quoted_attribute as attr, encode_text};

/// A token as the visualiser needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VizToken {
    pub id: u32,
    /// The token's string (its vocabulary entry).
    pub token: String,
    /// The characters it covers in the text, `[start, end)`; `None` or an empty range for a
    /// token that covers none (special tokens a post-processor added).
    pub chars: Option<(usize, usize)>,
    /// A special (added) token.
    pub special: bool,
    /// A byte-fallback token (`<0x41>`).
    pub byte_fallback: bool,
}

/// A labelled character range `[start, end)` of the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Annotation {
    pub start: usize,
    pub end: usize,
    pub label: String,
}

/// Which markup to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Markup {
    /// HF's `EncodingVisualizer` markup, element for element.
    Hf,
    /// With ids and offsets on hover, byte-fallback and special tokens shown.
    Detailed,
}

/// The colour of each annotation label: hues from 10 in steps of `255 / labels` (at least 20),
/// over the labels in sorted order, as HF's `calculate_label_colors`.
pub fn label_colors(annotations: &[Annotation]) -> Vec<(String, String)> {
    let mut labels: Vec<&str> = annotations.iter().map(|a| a.label.as_str()).collect();
    labels.sort_unstable();
    labels.dedup();
    let step = (255 / labels.len().max(1)).max(20);
    labels.iter().enumerate().map(|(i, l)| (l.to_string(), format!("hsl({},32%,64%)", 10 + i * step))).collect()
}

/// Whether a token is marked as unknown in HF's markup: its text contains `unk` or `oov`, in
/// any case (HF's `unk_token_regex`).
fn looks_unknown(token: &str) -> bool {
    let lower = token.to_lowercase();
    lower.contains("unk") || lower.contains("oov")
}

/// What one character belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
struct CharState {
    /// The first token covering it.
    token: Option<usize>,
    /// More than one token covers it.
    multi: bool,
    annotation: Option<usize>,
}

impl CharState {
    fn key(&self) -> (Option<usize>, Option<usize>) {
        (self.token, self.annotation)
    }
}

/// The `<div class="tokenized-text">` of `text` cut into `tokens`.
pub fn render(text: &str, tokens: &[VizToken], annotations: &[Annotation], markup: Markup) -> String {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let n = chars.len();
    let mut states = vec![CharState { token: None, multi: false, annotation: None }; n];
    let mut covering = vec![Vec::new(); if markup == Markup::Detailed { n } else { 0 }];
    for (ix, t) in tokens.iter().enumerate() {
        let Some((start, end)) = t.chars else { continue };
        let range = start.min(n)..end.min(n);
        for s in &mut states[range.clone()] {
            s.multi |= s.token.is_some();
            s.token.get_or_insert(ix);
        }
        if let Some(lists) = covering.get_mut(range) {
            lists.iter_mut().for_each(|l| l.push(ix));
        }
    }
    for (ix, a) in annotations.iter().enumerate() {
        for s in states.iter_mut().take(a.end.min(n)).skip(a.start) {
            s.annotation = Some(ix);
        }
    }
    let colors = label_colors(annotations);
    let color_of = |label: &str| colors.iter().find(|(l, _)| l == label).map_or("", |(_, c)| c.as_str());
    // Special tokens that cover no text, at the character before which they stand.
    let mut pending: Vec<(usize, usize)> = Vec::new();
    if markup == Markup::Detailed {
        let mut next_start = n;
        for (ix, t) in tokens.iter().enumerate().rev() {
            match t.chars {
                Some((s, e)) if e > s => next_start = s.min(n),
                _ => pending.push((next_start, ix)),
            }
        }
    }
    let text_of = |first: usize, last: usize| {
        let start = chars[first].0;
        let end = chars.get(last + 1).map_or(text.len(), |c| c.0);
        &text[start..end]
    };
    let mut out = String::from("<div class=\"tokenized-text\" dir=auto>");
    let mut emit_specials = |out: &mut String, before: usize| {
        while let Some(&(at, ix)) = pending.last() {
            if at > before {
                break;
            }
            pending.pop();
            let t = &tokens[ix];
            let _ = write!(
                out,
                "<span class=\"special-token\" data-stoken=\"{}\" data-ids=\"{}\" title=\"{}\"></span>",
                attr(&t.token),
                t.id,
                attr(&format!("id {} {:?} (no text)", t.id, t.token))
            );
        }
    };
    let mut group = |out: &mut String, first: usize, last: usize| {
        emit_specials(out, first);
        let s = states[first];
        let body = encode_text(text_of(first, last));
        let Some(tok) = s.token else {
            let _ = write!(out, "<span class=\"non-token\" >{body}</span>");
            return;
        };
        let t = &tokens[tok];
        let mut class = String::from("token");
        if s.multi {
            class.push_str(" multi-token");
        }
        class.push_str(if tok % 2 == 1 { " odd-token" } else { " even-token" });
        let mut data = String::new();
        if looks_unknown(&t.token) {
            class.push_str(" special-token");
            let _ = write!(data, " data-stok=\"{}\"", attr(&t.token));
        }
        if markup == Markup::Detailed {
            let ixs = &covering[first];
            if ixs.iter().any(|&i| tokens[i].byte_fallback) {
                class.push_str(" byte-fallback");
            }
            if ixs.iter().any(|&i| tokens[i].special) {
                class.push_str(" special-text");
            }
            let ids: Vec<String> = ixs.iter().map(|&i| tokens[i].id.to_string()).collect();
            let title: Vec<String> = ixs
                .iter()
                .map(|&i| {
                    let t = &tokens[i];
                    let (a, b) = t.chars.unwrap_or((0, 0));
                    format!("id {} {:?} chars {a}..{b}", t.id, t.token)
                })
                .collect();
            let _ = write!(data, " data-ids=\"{}\" title=\"{}\"", ids.join(" "), attr(&title.join("\n")));
        }
        let _ = write!(out, "<span class=\"{class}\"{data} >{body}</span>");
    };
    if n > 0 {
        let mut first = 0;
        let mut last = 0;
        let mut prev_annotation = states[0].annotation;
        if let Some(a) = prev_annotation {
            open_annotation(&mut out, &annotations[a].label, color_of(&annotations[a].label));
        }
        for c in 1..n {
            let annotation = states[c].annotation;
            if annotation != prev_annotation {
                group(&mut out, first, last);
                first = c;
                if prev_annotation.is_some() {
                    out.push_str("</span>");
                }
                if let Some(a) = annotation {
                    open_annotation(&mut out, &annotations[a].label, color_of(&annotations[a].label));
                }
            }
            prev_annotation = annotation;
            // The detailed page also cuts where the set of tokens changes (a character a token
            // shares with the next), so that every run lists exactly the tokens of its characters.
            if states[c].key() != states[first].key() || covering.get(c) != covering.get(first) {
                group(&mut out, first, last);
                first = c;
            }
            last = c;
        }
        group(&mut out, first, last);
        if prev_annotation.is_some() {
            out.push_str("</span>");
        }
    }
    emit_specials(&mut out, usize::MAX);
    out.push_str("</div>");
    out
}

fn open_annotation(out: &mut String, label: &str, color: &str) {
    let _ = write!(out, "<span class=\"annotation\" style=\"color:{color}\" data-label=\"{}\">", attr(label));
}

/// The style sheet of the markup (tokens alternate two background colours; a character shared
/// by tokens is underlined; special tokens are shown by their text in a dark chip; an
/// annotation underlines its runs in its colour and shows its label).
pub const CSS: &str = r#"
.tokenized-text { width: 100%; padding: 2rem; max-height: 400px; overflow-y: auto; box-sizing: border-box;
  line-height: 3.6rem; font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 1rem;
  white-space: pre-wrap; word-break: break-word; }
.annotation { white-space: nowrap; border-bottom: 4px solid currentColor; padding-bottom: 3px; position: relative; }
.annotation::before { content: attr(data-label); position: absolute; top: -2.2rem; left: 0; font-size: 0.75rem;
  color: white; background: currentColor; padding: 0 4px; border-radius: 3px; line-height: 1.2rem; }
.annotation::before { color: #222; background: none; }
.token { color: #111; border-radius: 3px; padding: 2px 0; }
.even-token { background: #d6e7fb; }
.odd-token { background: #fbe3c5; }
.multi-token { text-decoration: underline dashed #b03030 2px; text-underline-offset: 6px; }
.byte-fallback { outline: 1px dotted #b03030; }
.special-text { outline: 2px solid #3a3a55; outline-offset: -1px; font-weight: 600; }
.non-token { color: #777; }
.special-token { background: #3a3a55; color: #fff; border-radius: 3px; padding: 2px 4px; margin: 0 2px; }
.special-token[data-stoken]::before { content: attr(data-stoken); font-size: 0.8rem; }
.special-token[data-stok] { background: #7a2a2a; }
.token[title]:hover { outline: 2px solid #333; }
"#;

/// The HTML document HF's `EncodingVisualizer` returns: the style sheet and the markup, no more.
pub fn document(body: &str) -> String {
    format!("<html>\n<head>\n<style>{CSS}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n")
}

/// A whole HTML page: the style sheet and the `body` markup, with a heading.
pub fn page(title: &str, summary: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>{t}</title>\n<style>{CSS}\nbody {{ font-family: sans-serif; margin: 1.5rem; }}\n.summary {{ color: #444; }}\n</style>\n</head>\n<body>\n<h1>{t}</h1>\n<p class=\"summary\">{s}</p>\n{body}\n</body>\n</html>\n",
        t = encode_text(title),
        s = encode_text(summary)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tok(id: u32, token: &str, chars: (usize, usize)) -> VizToken {
        VizToken { id, token: token.into(), chars: Some(chars), special: false, byte_fallback: false }
    }

    #[test]
    fn runs_alternate_and_share_characters() {
        // "a é": "a" one token, " " no token, "é" split over two byte tokens.
        let toks = [tok(1, "a", (0, 1)), tok(2, "Ã", (2, 3)), tok(3, "©", (2, 3))];
        let html = render("a é", &toks, &[], Markup::Hf);
        assert_eq!(
            html,
            "<div class=\"tokenized-text\" dir=auto><span class=\"token even-token\" >a</span>\
             <span class=\"non-token\" > </span><span class=\"token multi-token odd-token\" >é</span></div>"
        );
    }

    #[test]
    fn annotations_wrap_runs_and_specials_show_in_detail() {
        let mut cls = tok(101, "[CLS]", (0, 0));
        cls.special = true;
        cls.chars = None;
        let toks = [cls, tok(7, "hi", (0, 2)), tok(0, "[UNK]", (3, 4))];
        let ann = [Annotation { start: 0, end: 2, label: "greet".into() }];
        let html = render("hi ☃", &toks, &ann, Markup::Hf);
        assert!(html.starts_with("<div class=\"tokenized-text\" dir=auto><span class=\"annotation\" style=\"color:hsl(10,32%,64%)\" data-label=\"greet\"><span class=\"token odd-token\" >hi</span></span>"), "{html}");
        assert!(html.contains("<span class=\"token even-token special-token\" data-stok=\"[UNK]\" >☃</span>"), "{html}");
        assert!(!html.contains("[CLS]"));
        let detailed = render("hi ☃", &toks, &ann, Markup::Detailed);
        assert!(detailed.contains("<span class=\"special-token\" data-stoken=\"[CLS]\" data-ids=\"101\""), "{detailed}");
        assert!(detailed.contains("data-ids=\"7\" title=\"id 7 &quot;hi&quot; chars 0..2\""), "{detailed}");
    }

    #[test]
    fn special_tokens_in_the_text_are_marked_in_detail() {
        let mut im = tok(5, "<|im_start|>", (0, 12));
        im.special = true;
        let toks = [im, tok(6, "user", (12, 16))];
        let html = render("<|im_start|>user", &toks, &[], Markup::Detailed);
        assert!(html.contains("<span class=\"token even-token special-text\" data-ids=\"5\""), "{html}");
        assert!(html.contains("<span class=\"token odd-token\" data-ids=\"6\""), "{html}");
        assert!(!render("<|im_start|>user", &toks, &[], Markup::Hf).contains("special-text"));
    }

    #[test]
    fn empty_text_is_an_empty_div() {
        assert_eq!(render("", &[], &[], Markup::Hf), "<div class=\"tokenized-text\" dir=auto></div>");
    }

    #[test]
    fn label_colours_as_hf() {
        let a = |l: &str| Annotation { start: 0, end: 1, label: l.into() };
        assert_eq!(label_colors(&[a("b"), a("a")]), [("a".into(), "hsl(10,32%,64%)".into()), ("b".into(), "hsl(137,32%,64%)".into())]);
    }
}
