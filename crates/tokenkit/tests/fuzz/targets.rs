//! The fuzz targets (one per loader), their seeds taken from the real fixtures, and what a
//! target does with an input: load it as the CLI and the Python package do, then encode and
//! decode with the result.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tokenkit::formats;
use tokenkit::tiktoken::{Encoding as TiktokenEncoding, SpecialTokens};
use tokenkit::Tokenizer;

use crate::mutate::{self, Kind};

/// A loader under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// HF tokenizer.json, every component.
    TokenizerJson,
    /// SentencePiece `.model`.
    SentencePiece,
    /// tiktoken rank files with a named encoding's pattern and special tokens.
    Tiktoken,
    /// BERT vocab.txt.
    VocabTxt,
    /// GPT-2 vocab.json + merges.txt.
    Gpt2Files,
}

/// Every target, in the order the summary lists them.
pub const TARGETS: [Target; 5] = [Target::TokenizerJson, Target::SentencePiece, Target::Tiktoken, Target::VocabTxt, Target::Gpt2Files];

impl Target {
    /// The name used on the command line, in the summary and for the regression directories.
    pub fn name(self) -> &'static str {
        match self {
            Target::TokenizerJson => "tokenizer_json",
            Target::SentencePiece => "sentencepiece",
            Target::Tiktoken => "tiktoken",
            Target::VocabTxt => "vocab_txt",
            Target::Gpt2Files => "gpt2_files",
        }
    }

    /// The target named `name`.
    pub fn from_name(name: &str) -> Option<Target> {
        TARGETS.into_iter().find(|t| t.name() == name)
    }
}

/// A seed: the files of one input (one file, or GPT-2's two), each with its name in the case
/// directory (which may matter: a rank file's name picks its encoding).
#[derive(Clone, Debug)]
pub struct Seed {
    /// Where the seed came from, for the summary.
    pub origin: String,
    /// (file name, content).
    pub files: Vec<(String, Vec<u8>)>,
}

fn kind_of(file: &str) -> Kind {
    if file.ends_with(".json") {
        Kind::Json
    } else if file.ends_with(".model") {
        Kind::Proto
    } else {
        Kind::Lines
    }
}

/// Seeds are cut down from the fixtures so that a case loads in milliseconds: this many
/// vocabulary entries (ids below it), pieces or rank-file lines are kept.
const SEED_VOCAB: u64 = 2000;

/// The vocabulary of a tokenizer.json (or vocab.json) with ids below [`SEED_VOCAB`], and the
/// merges whose two parts and result (the second part without the continuing-subword
/// `prefix`) it still holds.
fn shrink_vocab_and_merges(vocab: &mut Value, merges: Option<&mut Value>, prefix: &str) {
    let Value::Object(map) = vocab else {
        if let Value::Array(a) = vocab {
            a.truncate(SEED_VOCAB as usize);
        }
        return;
    };
    // Tokens spelled like special tokens (`<|endoftext|>`) are kept whatever their id.
    map.retain(|t, id| id.as_u64().is_some_and(|i| i < SEED_VOCAB) || (t.starts_with("<|") && t.ends_with("|>")));
    let Some(Value::Array(merges)) = merges else { return };
    merges.retain(|m| {
        let (a, b) = match m {
            Value::String(s) => match s.split_once(' ') {
                Some((a, b)) => (a.to_owned(), b.to_owned()),
                None => return false,
            },
            Value::Array(p) if p.len() == 2 => match (p[0].as_str(), p[1].as_str()) {
                (Some(a), Some(b)) => (a.to_owned(), b.to_owned()),
                _ => return false,
            },
            _ => return false,
        };
        let merged = format!("{a}{}", b.strip_prefix(prefix).filter(|_| !prefix.is_empty()).unwrap_or(&b));
        map.contains_key(&a) && map.contains_key(&b) && map.contains_key(&merged)
    });
}

fn shrink_tokenizer_json(data: &[u8]) -> Option<Vec<u8>> {
    let mut doc: Value = serde_json::from_slice(data).ok()?;
    let model = doc.get_mut("model")?.as_object_mut()?;
    let mut merges = model.remove("merges");
    let prefix = model.get("continuing_subword_prefix").and_then(Value::as_str).unwrap_or("").to_owned();
    shrink_vocab_and_merges(model.get_mut("vocab")?, merges.as_mut(), &prefix);
    if let Some(m) = merges {
        model.insert("merges".into(), m);
    }
    serde_json::to_vec_pretty(&doc).ok()
}

fn first_lines(data: &[u8], n: usize) -> Vec<u8> {
    let end = data.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(n - 1).map_or(data.len(), |(i, _)| i + 1);
    data[..end].to_vec()
}

fn read(path: &Path) -> Option<Vec<u8>> {
    std::fs::read(path).ok()
}

/// The seeds of `target` from the fixture directory (each fixture cut down), then the inputs
/// of its committed regression cases.
pub fn seeds(target: Target, fixtures: &Path, regressions: &Path) -> Vec<Seed> {
    let mut out = Vec::new();
    let mut push = |origin: &Path, files: Vec<(String, Vec<u8>)>| {
        out.push(Seed { origin: origin.display().to_string(), files });
    };
    let fx = |rel: &str| fixtures.join(rel);
    match target {
        Target::TokenizerJson => {
            let mut paths: Vec<PathBuf> = glob(&fixtures.join("hub"), ".json");
            paths.extend(dirs(&fixtures.join("registry")).into_iter().map(|d| d.join("tokenizer.json")));
            for p in paths {
                if let Some(small) = read(&p).and_then(|d| shrink_tokenizer_json(&d)) {
                    push(&p, vec![("tokenizer.json".into(), small)]);
                }
            }
        }
        Target::SentencePiece => {
            let mut paths = glob(&fixtures.join("hub"), ".model");
            paths.extend(glob(&fx("registry/sentencepiece"), ".model"));
            paths.push(fx("registry/albert/spiece.model"));
            paths.push(fx("registry/mistral01/tokenizer.model"));
            for p in paths {
                if let Some(small) = read(&p).and_then(|d| mutate::proto_keep_pieces(&d, 4 * SEED_VOCAB as usize)) {
                    push(&p, vec![("tokenizer.model".into(), small)]);
                }
            }
        }
        Target::Tiktoken => {
            // r50k and p50k name their vocabulary size (tiktoken's explicit_n_vocab), so they
            // are used whole; cl100k, o200k and Llama-3's rank file are cut down.
            for (rel, name, whole) in [
                ("tiktoken/r50k_base.tiktoken", "r50k_base.tiktoken", true),
                ("tiktoken/cl100k_base.tiktoken", "cl100k_base.tiktoken", false),
                ("tiktoken/o200k_base.tiktoken", "o200k_base.tiktoken", false),
                ("registry/llama3/tokenizer.model", "llama3.tiktoken", false),
            ] {
                if let Some(d) = read(&fx(rel)) {
                    let d = if whole { d } else { first_lines(&d, SEED_VOCAB as usize) };
                    push(&fx(rel), vec![(name.into(), d)]);
                }
            }
        }
        Target::VocabTxt => {
            let p = fx("registry/bert_uncased/vocab.txt");
            if let Some(d) = read(&p) {
                push(&p, vec![("vocab.txt".into(), first_lines(&d, SEED_VOCAB as usize))]);
            }
        }
        Target::Gpt2Files => {
            let (v, m) = (fx("registry/gpt2/vocab.json"), fx("registry/gpt2/merges.txt"));
            if let (Some(vocab), Some(merges)) = (read(&v), read(&m)) {
                if let Some(files) = shrink_gpt2(&vocab, &merges) {
                    push(&v, files);
                }
            }
        }
    }
    for case in dirs(&regressions.join(target.name())) {
        let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&case)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| Some((e.file_name().to_str()?.to_owned(), std::fs::read(e.path()).ok()?)))
            .collect();
        files.sort();
        push(&case, files);
    }
    out
}

fn shrink_gpt2(vocab: &[u8], merges: &[u8]) -> Option<Vec<(String, Vec<u8>)>> {
    let mut v: Value = serde_json::from_slice(vocab).ok()?;
    let text = std::str::from_utf8(merges).ok()?;
    let mut lines: Value = text.lines().skip(1).filter(|l| !l.is_empty()).map(|l| Value::String(l.to_owned())).collect();
    shrink_vocab_and_merges(&mut v, Some(&mut lines), "");
    let mut m = String::from("#version: 0.2\n");
    for l in lines.as_array()? {
        m.push_str(l.as_str()?);
        m.push('\n');
    }
    Some(vec![("vocab.json".into(), serde_json::to_vec(&v).ok()?), ("merges.txt".into(), m.into_bytes())])
}

fn glob(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_str().is_some_and(|s| s.ends_with(ext)))
        .collect();
    v.sort();
    v
}

fn dirs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir).into_iter().flatten().flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    v.sort();
    v
}

/// Mutates one file of `seed` (the others are kept), giving the files of a case.
pub fn mutate_seed(rng: &mut rand::rngs::StdRng, seed: &Seed, donors: &[&Value]) -> Vec<(String, Vec<u8>)> {
    use rand::Rng;
    let mut files = seed.files.clone();
    let i = rng.gen_range(0..files.len());
    let (name, data) = &files[i];
    files[i].1 = mutate::mutate(rng, data, kind_of(name), donors);
    files
}

/// Texts every loaded tokenizer encodes: prose, digits, CJK, emoji, whitespace runs, NUL and
/// the special-token spellings of the fixtures.
pub const TEXTS: &[&str] = &[
    "Hello, world! The year 2024: naïve café, ÀÉÎ ß.",
    "日本語のテキスト 中文 한국어 👍🏽 \u{200d}\t\n  x",
    "<|endoftext|> [CLS] <s> </s> <unk> [MASK] <|begin_of_text|> ▁a ##b",
    "1234567890 3.14159 \0 \r\n a\u{301}",
    "",
];

/// Loads the files in `dir` as `target`, then encodes [`TEXTS`] and decodes the result and
/// a few ids past the vocabulary: `Ok` with the ids of the texts when the files load, `Err`
/// with the message of a clean error when they do not.
pub fn run(target: Target, dir: &Path, files: &[(String, Vec<u8>)]) -> Result<Vec<Vec<u32>>, String> {
    let path = dir.join(&files[0].0);
    let s = |e: tokenkit::Error| e.to_string();
    match target {
        Target::Tiktoken => {
            let name = files[0].0.strip_suffix(".tiktoken").unwrap_or("cl100k_base");
            let enc = TiktokenEncoding::from_file(&path, Some(name)).map_err(s)?;
            let mut out = Vec::new();
            for t in TEXTS {
                let ids = enc.encode(t, &SpecialTokens::All, &SpecialTokens::none()).map_err(s)?;
                let _ = enc.decode_bytes(&ids);
                let _ = enc.encode_ordinary(t);
                out.push(ids);
            }
            let top = enc.max_token_value();
            let _ = enc.decode_bytes(&[0, top, top.saturating_add(1), u32::MAX]);
            Ok(out)
        }
        _ => {
            let tok = match target {
                Target::TokenizerJson => Tokenizer::from_file(&path),
                Target::SentencePiece => formats::sentencepiece::from_model_file(&path),
                Target::VocabTxt => formats::vocab_txt::from_vocab_txt(&path),
                Target::Gpt2Files => formats::gpt2_files::from_vocab_merges(&dir.join("vocab.json"), &dir.join("merges.txt")),
                Target::Tiktoken => unreachable!(),
            }
            .map_err(s)?;
            exercise(&tok)
        }
    }
}

fn exercise(tok: &Tokenizer) -> Result<Vec<Vec<u32>>, String> {
    let mut out = Vec::new();
    for (i, t) in TEXTS.iter().enumerate() {
        // Encoding errors (a missing unk token, say) are answers too, not crashes.
        let ids = match tok.encode(*t, true) {
            Ok(e) => e.get_ids().to_vec(),
            Err(_) => Vec::new(),
        };
        let _ = tok.decode(&ids, i % 2 == 0);
        let _ = tok.encode((*t, TEXTS[(i + 1) % TEXTS.len()]), true);
        out.push(ids);
    }
    let n = tok.get_vocab_size(true) as u32;
    let _ = tok.decode(&[0, n.saturating_sub(1), n, u32::MAX], false);
    let _ = tok.to_json(false);
    Ok(out)
}
