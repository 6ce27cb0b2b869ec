//! Cleaning: HTML, control and invisible characters, Unicode normalisation and whitespace,
//! then quality filters (the Gopher rules).
//!
//! The steps run in this order on each document, each optional:
//! 1. **HTML** (off by default): comments, `<script>`/`<style>` elements and tags are removed
//!    (block-level tags such as `<p>`, `<br>`, `<div>`, `<li>`, `<h1>`, `<tr>` leave a line
//!    break), then character references (`&amp;`, `&#233;`, `&eacute;`) are decoded. A `<` that
//!    does not start a tag (`a < b`) is text.
//! 2. **Controls**: C0/C1 control characters other than `\t`, `\n` and `\r` are removed, and the
//!    invisible format characters that carry no text: soft hyphen, zero-width space, word
//!    joiner and invisible operators, byte-order mark, bidirectional marks, embeddings and
//!    isolates, the Mongolian vowel separator and the interlinear annotation characters.
//!    Zero-width (non-)joiners and variation selectors are kept: scripts and emoji need them.
//! 3. **Normalisation**: NFC (default) or NFKC, or none.
//! 4. **Whitespace**: `\r\n`, `\r`, vertical tab, form feed, U+0085 and U+2028 become `\n`,
//!    U+2029 a blank line; every other Unicode space becomes `' '`; runs of spaces inside a line
//!    become one (a line's leading indentation is kept); spaces and tabs at line ends are
//!    removed; more than one blank line becomes one; the document is trimmed.
//!
//! A document left empty is removed (`empty`). The filters then see the cleaned text; the first
//! rule a document fails removes it, and the report counts removals per rule.
//!
//! **Words** for the filters are runs of non-space characters, as in the Gopher rules, except
//! that each character of a script written without spaces (Han, Hiragana, Katakana, Thai, Lao,
//! Khmer, Myanmar) is a word of its own, so Chinese and Japanese documents have word counts.
//! The stop-word rule is English (Gopher's list); set `min_stop_words` to 0 for other languages.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde::Deserialize;

use unicode_normalization_alignments::{is_nfkc_quick, IsNormalized, UnicodeNormalization};

use crate::utils::nfc;

/// The Unicode normalisation form of the cleaned text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Form {
    None,
    #[default]
    Nfc,
    Nfkc,
}

/// What cleaning does (see the module docs). In a pipeline file or from Python:
/// `{"html": false, "controls": true, "normalize": "nfc"|"nfkc"|"none", "whitespace": true,
/// "min_chars": N, "max_chars": N, "quality": true|{...}, "repetition": true|{...}}`, where the
/// quality and repetition objects override [`Quality`]'s and [`Repetition`]'s fields.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CleanOptions {
    pub html: bool,
    pub controls: bool,
    #[serde(rename = "normalize")]
    pub form: Form,
    pub whitespace: bool,
    #[serde(flatten)]
    pub filters: Filters,
}

impl Default for CleanOptions {
    fn default() -> Self {
        CleanOptions { html: false, controls: true, form: Form::Nfc, whitespace: true, filters: Filters::default() }
    }
}

/// Which documents are removed after cleaning. All off by default.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Filters {
    /// Fewer characters than this (after cleaning).
    pub min_chars: Option<usize>,
    /// More characters than this.
    pub max_chars: Option<usize>,
    #[serde(deserialize_with = "on_or_rules")]
    pub quality: Option<Quality>,
    #[serde(deserialize_with = "on_or_rules")]
    pub repetition: Option<Repetition>,
}

/// `true` (the defaults), `false`/`null` (off), or an object of fields overriding the defaults.
fn on_or_rules<'de, D: serde::Deserializer<'de>, T: Deserialize<'de> + Default>(d: D) -> Result<Option<T>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OnOr<T> {
        On(bool),
        Rules(T),
    }
    Ok(match Option::<OnOr<T>>::deserialize(d)? {
        None | Some(OnOr::On(false)) => None,
        Some(OnOr::On(true)) => Some(T::default()),
        Some(OnOr::Rules(t)) => Some(t),
    })
}

/// The Gopher quality rules (Rae et al. 2021, appendix A; the defaults are the paper's): a
/// document is removed when any holds.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Quality {
    /// Fewer words than this, or more than `max_words` (words that are not all punctuation).
    pub min_words: usize,
    pub max_words: usize,
    /// Mean word length (characters) outside `[min_mean_word_len, max_mean_word_len]`.
    pub min_mean_word_len: f64,
    pub max_mean_word_len: f64,
    /// `#`, `...` or `…` occurring more often than this per word (each symbol on its own).
    pub max_symbol_word_ratio: f64,
    /// More than this fraction of lines starting with a bullet (`•`, `-`).
    pub max_bullet_lines: f64,
    /// More than this fraction of lines ending with an ellipsis (`...`, `…`).
    pub max_ellipsis_lines: f64,
    /// Less than this fraction of words containing a letter.
    pub min_alpha_words: f64,
    /// Fewer than this many of the words `the be to of and that have with`.
    pub min_stop_words: usize,
}

impl Default for Quality {
    fn default() -> Self {
        Quality {
            min_words: 50,
            max_words: 100_000,
            min_mean_word_len: 3.0,
            max_mean_word_len: 10.0,
            max_symbol_word_ratio: 0.1,
            max_bullet_lines: 0.9,
            max_ellipsis_lines: 0.3,
            min_alpha_words: 0.8,
            min_stop_words: 2,
        }
    }
}

/// The Gopher repetition rules (the paper's defaults): a document is removed when more than the
/// given fraction of its lines or paragraphs repeat an earlier one (by count, and by characters
/// out of the document's), when its most frequent word n-gram covers more than the given
/// fraction of its characters (n = 2, 3, 4), or when its repeated word n-grams cover more than
/// the given fraction (n = 5..=10).
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Repetition {
    pub dup_lines: f64,
    pub dup_paragraphs: f64,
    pub dup_line_chars: f64,
    pub dup_paragraph_chars: f64,
    pub top_ngrams: Vec<(usize, f64)>,
    pub dup_ngrams: Vec<(usize, f64)>,
}

impl Default for Repetition {
    fn default() -> Self {
        Repetition {
            dup_lines: 0.3,
            dup_paragraphs: 0.3,
            dup_line_chars: 0.2,
            dup_paragraph_chars: 0.2,
            top_ngrams: vec![(2, 0.20), (3, 0.18), (4, 0.16)],
            dup_ngrams: vec![(5, 0.15), (6, 0.14), (7, 0.13), (8, 0.12), (9, 0.11), (10, 0.10)],
        }
    }
}

/// What cleaning changed in a document, by step (report counts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Changes {
    pub html: bool,
    pub controls: bool,
    pub normalized: bool,
    pub whitespace: bool,
}

impl Changes {
    /// `(count name, changed)` per step.
    pub fn iter(&self) -> [(&'static str, bool); 4] {
        [("html", self.html), ("controls", self.controls), ("normalized", self.normalized), ("whitespace", self.whitespace)]
    }
}

/// A document after cleaning.
#[derive(Debug, Clone, PartialEq)]
pub enum Cleaned {
    /// Kept: the new text when cleaning changed it.
    Kept(Option<String>, Changes),
    /// Removed by this rule (`empty`, `min_chars`, `gopher_min_words`, `gopher_dup_lines`, ...).
    Removed(&'static str, Changes),
}

/// Cleans one document (see the module docs).
pub fn clean(text: &str, opts: &CleanOptions) -> Cleaned {
    let mut changes = Changes::default();
    let mut s = Cow::Borrowed(text);
    if opts.html {
        if let Some(t) = strip_html(&s) {
            s = Cow::Owned(t);
            changes.html = true;
        }
    }
    if opts.controls {
        if let Some(t) = remove_controls(&s) {
            s = Cow::Owned(t);
            changes.controls = true;
        }
    }
    if let Some(t) = normalize(&s, opts.form) {
        s = Cow::Owned(t);
        changes.normalized = true;
    }
    if opts.whitespace {
        if let Some(t) = normalize_whitespace(&s) {
            s = Cow::Owned(t);
            changes.whitespace = true;
        }
    }
    if s.is_empty() {
        return Cleaned::Removed("empty", changes);
    }
    if let Some(rule) = failed_filter(&s, &opts.filters) {
        return Cleaned::Removed(rule, changes);
    }
    Cleaned::Kept(matches!(s, Cow::Owned(_)).then(|| s.into_owned()), changes)
}

/// Elements whose content is not text.
const RAW_ELEMENTS: [&str; 2] = ["script", "style"];
/// Elements that start or end a line of text.
const BLOCK_ELEMENTS: [&str; 30] = [
    "address",
    "article",
    "aside",
    "blockquote",
    "br",
    "dd",
    "div",
    "dl",
    "dt",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "tr",
];

/// The text of an HTML document or fragment; `None` when it has no tag, comment or character
/// reference.
pub fn strip_html(s: &str) -> Option<String> {
    if !s.contains(['<', '&']) {
        return None;
    }
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut at = 0;
    let mut text_from = 0;
    while let Some(off) = memchr::memchr(b'<', &b[at..]) {
        let lt = at + off;
        let rest = &s[lt + 1..];
        let tag_end = if rest.starts_with("!--") {
            Some(rest.find("-->").map_or(s.len(), |e| lt + 1 + e + 3))
        } else if rest.starts_with(|c: char| c.is_ascii_alphabetic() || c == '/' || c == '!' || c == '?') {
            rest.find('>').map(|e| lt + 1 + e + 1)
        } else {
            None
        };
        let Some(mut end) = tag_end else {
            at = lt + 1;
            continue;
        };
        out.push_str(&s[text_from..lt]);
        let name: String =
            rest.trim_start_matches('/').chars().take_while(|c| c.is_ascii_alphanumeric()).collect::<String>().to_ascii_lowercase();
        if !rest.starts_with('/') && RAW_ELEMENTS.contains(&name.as_str()) {
            // Up to the element's end tag (or the end of the text).
            let close = format!("</{name}");
            end =
                find_ascii_ci(&s[end..], &close).map_or(s.len(), |c| end + c + s[end + c..].find('>').map_or(s.len() - end - c, |e| e + 1));
        } else if BLOCK_ELEMENTS.contains(&name.as_str()) && !out.ends_with('\n') && !out.is_empty() {
            out.push('\n');
        }
        at = end;
        text_from = end;
    }
    out.push_str(&s[text_from..]);
    let decoded = html_escape::decode_html_entities(&out);
    if let Cow::Owned(d) = decoded {
        return Some(d);
    }
    (out != s).then_some(out)
}

/// The first place of `needle` (ASCII) in `hay`, ignoring ASCII case.
fn find_ascii_ci(hay: &str, needle: &str) -> Option<usize> {
    hay.as_bytes().windows(needle.len()).position(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

/// Whether cleaning removes `c` as a control or invisible character.
pub fn is_removed_control(c: char) -> bool {
    match c {
        '\t' | '\n' | '\r' => false,
        '\0'..='\x1f' | '\x7f'..='\u{9f}' => true,
        '\u{ad}' | '\u{61c}' | '\u{180e}' | '\u{200b}' | '\u{200e}' | '\u{200f}' | '\u{feff}' => true,
        '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}' | '\u{fff9}'..='\u{fffb}' => true,
        _ => false,
    }
}

/// `s` without the characters [`is_removed_control`] names; `None` when it has none.
pub fn remove_controls(s: &str) -> Option<String> {
    let first = s.char_indices().find(|&(_, c)| is_removed_control(c))?.0;
    let mut out = String::with_capacity(s.len());
    out.push_str(&s[..first]);
    out.extend(s[first..].chars().filter(|&c| !is_removed_control(c)));
    Some(out)
}

/// `s` in the normalisation form; `None` when it already is.
pub fn normalize(s: &str, form: Form) -> Option<String> {
    let out: String = match form {
        Form::None => return None,
        Form::Nfc if nfc::is_nfc(s) => return None,
        Form::Nfc => s.nfc().map(|(c, _)| c).collect(),
        Form::Nfkc if s.is_ascii() || is_nfkc_quick(s.chars()) == IsNormalized::Yes => return None,
        Form::Nfkc => s.nfkc().map(|(c, _)| c).collect(),
    };
    (out != s).then_some(out)
}

/// `s` with its whitespace normalised (see the module docs); `None` when nothing changes.
pub fn normalize_whitespace(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    // Spaces and tabs not yet written (written before the next other char on the line), and
    // line breaks not yet written (at most two, written before the next other char).
    let mut pending_space = String::new();
    let mut breaks = 0usize;
    let mut line_start = true;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        let brk = match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                1
            }
            '\n' | '\x0b' | '\x0c' | '\u{85}' | '\u{2028}' => 1,
            '\u{2029}' => 2,
            _ => 0,
        };
        if brk > 0 {
            pending_space.clear();
            breaks += brk;
            line_start = true;
            continue;
        }
        if c == '\t' || c.is_whitespace() {
            let c = if c == '\t' { '\t' } else { ' ' };
            // Runs of spaces become one, except a line's leading indentation.
            if line_start || c == '\t' || !pending_space.ends_with(' ') {
                pending_space.push(c);
            }
            continue;
        }
        // The document's leading whitespace (its first line's indentation included) is trimmed.
        if !out.is_empty() {
            for _ in 0..breaks.min(2) {
                out.push('\n');
            }
            out.push_str(&pending_space);
        }
        pending_space.clear();
        breaks = 0;
        line_start = false;
        out.push(c);
    }
    (out != s).then_some(out)
}

/// Whether each char of `c`'s script is a word of its own (scripts written without spaces).
pub(crate) fn is_unspaced_script(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF          // Thai, Lao
        | 0x1000..=0x109F        // Myanmar
        | 0x1780..=0x17FF        // Khmer
        | 0x3040..=0x30FF        // Hiragana, Katakana
        | 0x3400..=0x4DBF        // CJK extension A
        | 0x4E00..=0x9FFF        // CJK unified ideographs
        | 0xF900..=0xFAFF        // CJK compatibility ideographs
        | 0x20000..=0x3134F) // CJK extensions B..G
}

/// The words of `s` (see the module docs), in order.
pub fn words(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for w in s.split_whitespace() {
        if !w.chars().any(is_unspaced_script) {
            out.push(w);
            continue;
        }
        let mut from = 0;
        for (i, c) in w.char_indices() {
            if is_unspaced_script(c) {
                if from < i {
                    out.push(&w[from..i]);
                }
                out.push(&w[i..i + c.len_utf8()]);
                from = i + c.len_utf8();
            }
        }
        if from < w.len() {
            out.push(&w[from..]);
        }
    }
    out
}

/// The first filter `s` fails.
pub fn failed_filter(s: &str, f: &Filters) -> Option<&'static str> {
    if f.min_chars.is_some() || f.max_chars.is_some() {
        let n = s.chars().count();
        if f.min_chars.is_some_and(|m| n < m) {
            return Some("min_chars");
        }
        if f.max_chars.is_some_and(|m| n > m) {
            return Some("max_chars");
        }
    }
    let words = if f.quality.is_some() || f.repetition.is_some() { words(s) } else { Vec::new() };
    if let Some(q) = &f.quality {
        if let Some(rule) = failed_quality(s, &words, q) {
            return Some(rule);
        }
    }
    if let Some(r) = &f.repetition {
        if let Some(rule) = failed_repetition(s, &words, r) {
            return Some(rule);
        }
    }
    None
}

const STOP_WORDS: [&str; 8] = ["the", "be", "to", "of", "and", "that", "have", "with"];

fn failed_quality(s: &str, words: &[&str], q: &Quality) -> Option<&'static str> {
    let content: Vec<&str> = words.iter().copied().filter(|w| !w.chars().all(|c| c.is_ascii_punctuation() || is_punctuation(c))).collect();
    let n = content.len();
    if n < q.min_words {
        return Some("gopher_min_words");
    }
    if n > q.max_words {
        return Some("gopher_max_words");
    }
    let mean = content.iter().map(|w| w.chars().count()).sum::<usize>() as f64 / n.max(1) as f64;
    if mean < q.min_mean_word_len {
        return Some("gopher_min_mean_word_len");
    }
    if mean > q.max_mean_word_len {
        return Some("gopher_max_mean_word_len");
    }
    let n_words = words.len().max(1) as f64;
    for symbol in ["#", "...", "…"] {
        if s.matches(symbol).count() as f64 / n_words > q.max_symbol_word_ratio {
            return Some("gopher_symbol_word_ratio");
        }
    }
    let lines: Vec<&str> = s.lines().collect();
    let n_lines = lines.len().max(1) as f64;
    let bullets = lines.iter().filter(|l| l.trim_start().starts_with(['•', '-'])).count();
    if bullets as f64 / n_lines > q.max_bullet_lines {
        return Some("gopher_bullet_lines");
    }
    let ellipsis = lines.iter().filter(|l| l.trim_end().ends_with("...") || l.trim_end().ends_with('…')).count();
    if ellipsis as f64 / n_lines > q.max_ellipsis_lines {
        return Some("gopher_ellipsis_lines");
    }
    let alpha = words.iter().filter(|w| w.chars().any(char::is_alphabetic)).count();
    if (alpha as f64) / n_words < q.min_alpha_words {
        return Some("gopher_alpha_words");
    }
    if q.min_stop_words > 0 {
        let stop = words.iter().filter(|w| STOP_WORDS.iter().any(|s| w.eq_ignore_ascii_case(s))).count();
        if stop < q.min_stop_words {
            return Some("gopher_stop_words");
        }
    }
    None
}

/// Unicode punctuation (general categories P*).
fn is_punctuation(c: char) -> bool {
    unicode_categories::UnicodeCategories::is_punctuation(c)
}

/// `(repeated elements, their characters)`: elements equal to an earlier one.
fn duplicates<'a>(elements: impl Iterator<Item = &'a str>) -> (usize, usize, usize) {
    let mut seen = HashSet::new();
    let (mut n, mut dup, mut dup_chars) = (0, 0, 0);
    for e in elements {
        n += 1;
        if !seen.insert(e) {
            dup += 1;
            dup_chars += e.chars().count();
        }
    }
    (n, dup, dup_chars)
}

fn failed_repetition(s: &str, words: &[&str], r: &Repetition) -> Option<&'static str> {
    let total = s.chars().count().max(1) as f64;
    let paragraphs = s.split("\n\n").map(str::trim).filter(|p| !p.is_empty());
    let (n, dup, chars) = duplicates(paragraphs);
    if dup as f64 / n.max(1) as f64 > r.dup_paragraphs {
        return Some("gopher_dup_paragraphs");
    }
    if chars as f64 / total > r.dup_paragraph_chars {
        return Some("gopher_dup_paragraph_chars");
    }
    let (n, dup, chars) = duplicates(s.lines().filter(|l| !l.is_empty()));
    if dup as f64 / n.max(1) as f64 > r.dup_lines {
        return Some("gopher_dup_lines");
    }
    if chars as f64 / total > r.dup_line_chars {
        return Some("gopher_dup_line_chars");
    }
    let lens: Vec<usize> = words.iter().map(|w| w.chars().count()).collect();
    // The characters of n words, joined by spaces.
    let span = |i: usize, n: usize| lens[i..i + n].iter().sum::<usize>() + n - 1;
    for &(n, max) in &r.top_ngrams {
        if words.len() < n {
            continue;
        }
        let mut counts: HashMap<&[&str], usize> = HashMap::new();
        for g in words.windows(n) {
            *counts.entry(g).or_default() += 1;
        }
        // The most frequent n-gram; of those, the first met (a deterministic choice).
        let mut best: Option<(usize, usize)> = None; // (count, first index)
        let mut first: HashMap<&[&str], usize> = HashMap::new();
        for (i, g) in words.windows(n).enumerate() {
            first.entry(g).or_insert(i);
        }
        for (g, &c) in &counts {
            let i = first[g];
            if best.is_none_or(|(bc, bi)| c > bc || (c == bc && i < bi)) {
                best = Some((c, i));
            }
        }
        if let Some((c, i)) = best {
            if c > 1 && (c * span(i, n)) as f64 / total > max {
                return Some(match n {
                    2 => "gopher_top_2gram",
                    3 => "gopher_top_3gram",
                    4 => "gopher_top_4gram",
                    _ => "gopher_top_ngram",
                });
            }
        }
    }
    for &(n, max) in &r.dup_ngrams {
        if words.len() < n {
            continue;
        }
        // Words in an n-gram seen before count once, however many repeated n-grams hold them.
        let mut seen: HashSet<&[&str]> = HashSet::new();
        let mut covered = vec![false; words.len()];
        for (i, g) in words.windows(n).enumerate() {
            if !seen.insert(g) {
                covered[i..i + n].iter_mut().for_each(|c| *c = true);
            }
        }
        let chars: usize = covered.iter().zip(&lens).filter(|(c, _)| **c).map(|(_, l)| l).sum();
        if chars as f64 / total > max {
            return Some(match n {
                5 => "gopher_dup_5gram",
                6 => "gopher_dup_6gram",
                7 => "gopher_dup_7gram",
                8 => "gopher_dup_8gram",
                9 => "gopher_dup_9gram",
                10 => "gopher_dup_10gram",
                _ => "gopher_dup_ngram",
            });
        }
    }
    None
}
