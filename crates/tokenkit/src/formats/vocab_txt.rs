//! BERT `vocab.txt`: one WordPiece token per line, the line number is the id. Loaded into the
//! standard BERT-uncased pipeline (the one transformers' `BertTokenizerFast` builds).

use std::path::Path;

use serde_json::{json, Map, Value};

use crate::formats::{from_value, read};
use crate::tokenizer::Tokenizer;
use crate::{Error, Result};

/// Reads a vocab.txt into a token → id map (ids are line numbers; trailing whitespace is
/// trimmed; a repeated token keeps its last line, as HF does).
pub fn read_vocab(path: &Path) -> Result<Map<String, Value>> {
    let text = read(path)?;
    let mut vocab = Map::new();
    for (i, line) in text.lines().enumerate() {
        vocab.insert(line.trim_end().to_owned(), Value::from(i as u64));
    }
    if vocab.is_empty() {
        return Err(Error::invalid(format!("{}: the vocabulary is empty", path.display())));
    }
    Ok(vocab)
}

/// The BERT-uncased pipeline over the vocabulary in `path`: BertNormalizer (lowercase, strip
/// accents), BertPreTokenizer, WordPiece (`##`, `[UNK]`), `[CLS] $A [SEP] $B:1 [SEP]:1`.
pub fn from_vocab_txt(path: &Path) -> Result<Tokenizer> {
    let vocab = read_vocab(path)?;
    let id = |t: &str| vocab.get(t).and_then(Value::as_u64);
    let (Some(cls), Some(sep)) = (id("[CLS]"), id("[SEP]")) else {
        return Err(Error::MissingToken(format!("{}: a BERT vocab.txt needs [CLS] and [SEP]", path.display())));
    };
    if id("[UNK]").is_none() {
        return Err(Error::MissingToken(format!("{}: a BERT vocab.txt needs [UNK]", path.display())));
    }
    let added: Vec<Value> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        .iter()
        .filter_map(|t| {
            id(t).map(|i| {
                json!({"id": i, "content": t, "single_word": false, "lstrip": false, "rstrip": false,
                       "normalized": false, "special": true})
            })
        })
        .collect();
    let special = |t: &str, type_id: u32| json!({"SpecialToken": {"id": t, "type_id": type_id}});
    let seq = |s: &str, type_id: u32| json!({"Sequence": {"id": s, "type_id": type_id}});
    let doc = json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": added,
        "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
                       "strip_accents": null, "lowercase": true},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [special("[CLS]", 0), seq("A", 0), special("[SEP]", 0)],
            "pair": [special("[CLS]", 0), seq("A", 0), special("[SEP]", 0), seq("B", 1), special("[SEP]", 1)],
            "special_tokens": {
                "[CLS]": {"id": "[CLS]", "ids": [cls], "tokens": ["[CLS]"]},
                "[SEP]": {"id": "[SEP]", "ids": [sep], "tokens": ["[SEP]"]}
            }
        },
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": vocab}
    });
    from_value(doc, &path.display().to_string())
}
