//! Mistral's Tekken tokenizer files (`tekken.json`), read as `mistral-common`'s `Tekkenizer`
//! reads them: a tiktoken-style byte-level BPE (the `config.pattern`, ranks from `vocab`)
//! whose ids are the ranks offset by the number of special tokens, which take ids
//! `0..default_num_special_tokens` (the file's `special_tokens`, or for files of version v7
//! and before without them, mistral-common's twenty historical control tokens; the rest are
//! `<SPECIAL_{id}>` fillers). Only the first `default_vocab_size - default_num_special_tokens`
//! ranks are used.
//!
//! The tokenizer is the tiktoken pipeline ([`super::tiktoken::build_tokenizer`]) with a
//! post-processor that adds `<s>` (mistral-common's `encode(s, bos=True, eos=False)`; no
//! special tokens: `bos=False`). mistral-common never matches special-token text in its input,
//! so the tokenizer encodes it as plain text (HF's `encode_special_tokens`; a tokenizer.json
//! cannot store that, so HF reading the saved file matches special-token text as special
//! tokens). Decoding keeps special tokens (mistral-common's `SpecialTokenPolicy.KEEP`), or
//! skips them (`IGNORE`, its default) with `skip_special_tokens`.

use std::path::Path;

use base64::Engine as _;
use serde::Deserialize;
use serde_json::json;

use super::tiktoken::{build_tokenizer, Ranks};
use crate::tokenizer::Tokenizer;
use crate::{Error, Result};

/// The versions mistral-common knows (`TokenizerVersion`), in order.
const VERSIONS: &[&str] = &["v1", "v2", "v3", "v7", "v11", "v13", "v15"];

/// mistral-common's control tokens of files (v7 and before) that do not list their own
/// (`Tekkenizer.DEPRECATED_SPECIAL_TOKENS`), at ids 0..20.
const DEPRECATED_SPECIAL_TOKENS: &[&str] = &[
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[IMG]",
    "<pad>",
    "[IMG_BREAK]",
    "[IMG_END]",
    "[PREFIX]",
    "[MIDDLE]",
    "[SUFFIX]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
];

#[derive(Deserialize)]
struct TekkenFile {
    config: Config,
    vocab: Vec<TokenInfo>,
    #[serde(default)]
    special_tokens: Option<Vec<SpecialTokenInfo>>,
}

#[derive(Deserialize)]
struct Config {
    pattern: String,
    default_vocab_size: usize,
    default_num_special_tokens: usize,
    version: Option<String>,
}

#[derive(Deserialize)]
struct TokenInfo {
    rank: usize,
    token_bytes: String,
}

#[derive(Deserialize)]
struct SpecialTokenInfo {
    rank: usize,
    token_str: String,
}

/// Whether `head` (the start of a JSON file) reads as a Tekken file: a tokenizer.json never
/// has these keys.
pub fn looks_like_tekken(head: &str) -> bool {
    head.trim_start().starts_with('{') && (head.contains("\"default_num_special_tokens\"") || head.contains("\"token_bytes\""))
}

/// The pieces of a Tekken file: the pattern, the ranks (ids below the number of special tokens
/// are holes) and the special tokens with their ids.
struct Tekken {
    pattern: String,
    ranks: Ranks,
    specials: Vec<(String, u32)>,
}

fn parse(data: &[u8], origin: &str) -> Result<Tekken> {
    let bad = |what: String| Error::invalid(format!("{origin}: {what}"));
    let file: TekkenFile =
        serde_json::from_slice(data).map_err(|e| Error::Json { context: origin.to_owned(), message: format!("not a Tekken file: {e}") })?;
    let config = file.config;
    let version = config.version.as_deref().unwrap_or("none");
    let Some(version_index) = VERSIONS.iter().position(|v| *v == version) else {
        return Err(bad(format!("config.version {version:?} is not one mistral-common knows ({})", VERSIONS.join(", "))));
    };
    let n_special = config.default_num_special_tokens;
    let listed: Vec<(usize, String)> = match file.special_tokens {
        Some(list) => list.into_iter().map(|t| (t.rank, t.token_str)).collect(),
        None if version_index <= VERSIONS.iter().position(|v| *v == "v7").unwrap_or(0) => {
            DEPRECATED_SPECIAL_TOKENS.iter().enumerate().map(|(i, s)| (i, (*s).to_owned())).collect()
        }
        None => return Err(bad(format!("no special_tokens, which a version {version} file must list"))),
    };
    if listed.len() > n_special {
        return Err(bad(format!("{} special tokens listed, more than config.default_num_special_tokens ({n_special})", listed.len())));
    }
    let mut seen = ahash::AHashSet::new();
    for (i, (rank, content)) in listed.iter().enumerate() {
        if *rank != i {
            return Err(bad(format!("special token {content:?} has rank {rank}, expected {i} (its position)")));
        }
        if !seen.insert(content.as_str()) {
            return Err(bad(format!("special token {content:?} is listed twice")));
        }
    }
    let fillers = (listed.len()..n_special).map(|i| format!("<SPECIAL_{i}>"));
    let specials: Vec<(String, u32)> = listed.into_iter().map(|(_, c)| c).chain(fillers).zip(0u32..).collect();
    if specials.iter().map(|(c, _)| c).collect::<ahash::AHashSet<_>>().len() != n_special {
        return Err(bad("a listed special token has the name of a <SPECIAL_n> filler".into()));
    }

    let inner = config.default_vocab_size.checked_sub(n_special).ok_or_else(|| {
        bad(format!("config.default_vocab_size ({}) is below default_num_special_tokens ({n_special})", config.default_vocab_size))
    })?;
    if file.vocab.len() < inner {
        return Err(bad(format!(
            "{} vocab entries, fewer than default_vocab_size - default_num_special_tokens = {inner}",
            file.vocab.len()
        )));
    }
    let engine = base64::engine::general_purpose::STANDARD;
    let mut ranks: Vec<Option<Vec<u8>>> = vec![None; n_special];
    ranks.reserve(inner);
    for (i, t) in file.vocab.iter().take(inner).enumerate() {
        if t.rank != i {
            return Err(bad(format!("vocab entry {i} has rank {}, expected {i}", t.rank)));
        }
        let bytes =
            engine.decode(&t.token_bytes).map_err(|e| bad(format!("vocab entry {i}: malformed base64 {:?}: {e}", t.token_bytes)))?;
        if i < 256 && bytes != [i as u8] {
            return Err(bad(format!("vocab entry {i} must be the single byte {i}")));
        }
        ranks.push(Some(bytes));
    }
    Ok(Tekken { pattern: config.pattern, ranks: ranks.into(), specials })
}

/// Reads a Tekken `tekken.json` as mistral-common does (see the module documentation).
pub fn from_tekken_file(path: &Path) -> Result<Tokenizer> {
    let data = std::fs::read(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
    from_tekken_bytes(&data, &path.display().to_string())
}

/// [`from_tekken_file`] on the file's bytes; errors name `origin`.
pub fn from_tekken_bytes(data: &[u8], origin: &str) -> Result<Tokenizer> {
    Tokenizer::cached("tekken.json", data, || build(data, origin))
}

/// [`from_tekken_bytes`] without the table cache.
pub(crate) fn build(data: &[u8], origin: &str) -> Result<Tokenizer> {
    let Tekken { pattern, ranks, specials } = parse(data, origin)?;
    let (mut tok, rank_of) = build_tokenizer(&ranks, &pattern, &specials).map_err(|e| Error::invalid(format!("{origin}: {e}")))?;
    // `parse` requires ranks 0..n after the special ids and every single byte, so the model's
    // ids are the ranks themselves.
    if rank_of.is_some() {
        return Err(Error::invalid(format!("{origin}: the vocabulary's ranks are not dense")));
    }
    let bos = specials.iter().find(|(c, _)| c == "<s>").map(|(_, id)| *id);
    if let Some(bos) = bos {
        let processor = json!({
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [
                {"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": "<s>", "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}
            ],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [bos], "tokens": ["<s>"]}}
        });
        let processor =
            serde_json::from_value(processor).map_err(|e| Error::Json { context: origin.to_owned(), message: e.to_string() })?;
        tok.with_post_processor(Some(processor));
    }
    tok.set_encode_special_tokens(true);
    Ok(tok)
}

/// What `tokenkit inspect` says about a Tekken file besides the pipeline.
pub fn summary(path: &Path) -> Result<String> {
    let data = std::fs::read(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
    #[derive(Deserialize)]
    struct Head {
        config: serde_json::Value,
    }
    let head: Head =
        serde_json::from_slice(&data).map_err(|e| Error::Json { context: path.display().to_string(), message: e.to_string() })?;
    let c = &head.config;
    Ok(format!(
        "tekken:         version {}, {} special tokens (ids 0..{}), ranks offset by them, vocabulary size {} \
         ({} ranks in the file); special-token text is encoded as text, as mistral-common does\n",
        c["version"].as_str().unwrap_or("?"),
        c["default_num_special_tokens"],
        c["default_num_special_tokens"],
        c["default_vocab_size"],
        c["num_vocab_tokens"],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(specials: Option<&str>, version: &str, n_special: usize, vocab_size: usize) -> String {
        let vocab: Vec<String> = (0..=255u8)
            .map(|b| {
                format!(r#"{{"rank": {b}, "token_bytes": "{}", "token_str": null}}"#, base64::engine::general_purpose::STANDARD.encode([b]))
            })
            .chain([format!(
                r#"{{"rank": 256, "token_bytes": "{}", "token_str": "ab"}}"#,
                base64::engine::general_purpose::STANDARD.encode(b"ab")
            )])
            .collect();
        let specials = specials.map_or(String::new(), |s| format!(r#", "special_tokens": {s}"#));
        format!(
            r#"{{"config": {{"pattern": "[a-z]+|[^a-z]", "num_vocab_tokens": 257, "default_vocab_size": {vocab_size},
               "default_num_special_tokens": {n_special}, "version": "{version}"}}, "vocab": [{}]{specials}}}"#,
            vocab.join(",")
        )
    }

    #[test]
    fn ids_are_offset_by_the_special_tokens_and_bos_is_added() {
        let tok = from_tekken_bytes(file(None, "v3", 25, 25 + 257).as_bytes(), "t").unwrap();
        let enc = tok.encode("ab a", true).unwrap();
        assert_eq!(enc.get_ids(), &[1, 25 + 256, 25 + 32, 25 + 97]);
        // Special-token text is plain text, as in mistral-common (a piece that is exactly a
        // special token's text would still be found in the vocabulary: no real pattern makes one).
        let enc = tok.encode("<s>", false).unwrap();
        assert_eq!(enc.get_ids(), &[25 + 60, 25 + 115, 25 + 62]);
        assert_eq!(tok.id_to_token(24), Some("<SPECIAL_24>"));
        assert_eq!(tok.decode(&[1, 25 + 256], false).unwrap(), "<s>ab");
        assert_eq!(tok.decode(&[1, 25 + 256], true).unwrap(), "ab");
    }

    #[test]
    fn the_vocabulary_is_cut_to_the_default_size() {
        let tok = from_tekken_bytes(file(None, "v3", 20, 20 + 256).as_bytes(), "t").unwrap();
        assert_eq!(tok.encode("ab", false).unwrap().get_ids(), &[20 + 97, 20 + 98]);
    }

    #[test]
    fn bad_files_are_clear_errors() {
        let err = |s: String| from_tekken_bytes(s.as_bytes(), "t.json").unwrap_err().to_string();
        assert!(err(file(None, "v9", 20, 276)).contains("config.version \"v9\""));
        assert!(err(file(None, "v11", 20, 276)).contains("no special_tokens"));
        assert!(err(file(None, "v3", 10, 266)).contains("more than config.default_num_special_tokens"));
        assert!(err(file(None, "v3", 20, 300)).contains("fewer than"));
        let twice = r#"[{"rank": 0, "token_str": "<s>", "is_control": true}, {"rank": 1, "token_str": "<s>", "is_control": true}]"#;
        assert!(err(file(Some(twice), "v11", 20, 276)).contains("listed twice"));
        assert!(err("{\"config\": 1}".into()).contains("not a Tekken file"));
    }
}
