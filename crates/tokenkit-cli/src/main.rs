//! The `tokenkit` command-line tool: a thin layer over the library.

mod chat;
mod spm;

use std::io::{BufRead, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Parser, Subcommand};
use serde::Serialize;
use serde_json::Value;
use tokenkit::{EncodeInput, Encoding, InputSequence, Tokenizer};

mod train;

/// mimalloc: tokenization allocates many small strings (token values), and mimalloc takes
/// about a fifth fewer instructions than glibc's malloc there.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "tokenkit", version, about = "Load, encode, decode and inspect tokenizers (HF tokenizer.json, vocab.txt, vocab.json + merges.txt)")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Encode text. Texts come from the arguments, or from standard input (the whole input is
    /// one text; with --jsonl, each line is a JSON string or a [first, second] pair).
    Encode {
        /// The tokenizer: a tokenizer.json, a BERT vocab.txt, a GPT-2 vocab.json (merges.txt
        /// beside it), a `<encoding>.tiktoken` rank file or a directory holding one of these.
        #[arg(short, long, required_unless_present = "encoding")]
        tokenizer: Option<PathBuf>,
        #[command(flatten)]
        tiktoken: TiktokenArgs,
        /// Read JSON lines from standard input and write one JSON object per line.
        #[arg(long)]
        jsonl: bool,
        /// Do not add the post-processor's special tokens.
        #[arg(long)]
        no_special: bool,
        /// Output every Encoding field (type_ids, masks, word_ids, sequence_ids, overflowing).
        #[arg(long)]
        full: bool,
        /// Inputs are pre-tokenized: each line is a JSON array of words (or two such arrays).
        #[arg(long)]
        pretokenized: bool,
        /// Lines per batch (padding to the longest applies within a batch).
        #[arg(long, default_value_t = 1000)]
        batch_size: usize,
        #[command(flatten)]
        sp: spm::SpArgs,
        /// Texts to encode (when not reading standard input).
        texts: Vec<String>,
    },
    /// Decode ids. Ids come from the arguments, or from standard input with --jsonl (one JSON
    /// array of ids per line, one JSON string out per line).
    Decode {
        /// The tokenizer (as for encode).
        #[arg(short, long, required_unless_present = "encoding")]
        tokenizer: Option<PathBuf>,
        #[command(flatten)]
        tiktoken: TiktokenArgs,
        /// Read JSON arrays of ids from standard input, one per line.
        #[arg(long)]
        jsonl: bool,
        /// Leave out special tokens.
        #[arg(long)]
        skip_special: bool,
        /// Decode id by id with the streaming decoder; writes per line the array of chunks
        /// (null where a step produced no text).
        #[arg(long)]
        stream: bool,
        /// Ids to decode (when not reading standard input).
        ids: Vec<u32>,
    },
    /// Print the pipeline and a summary of the vocabulary.
    Inspect {
        /// The tokenizer (as for encode).
        path: PathBuf,
    },
    /// Save a tokenizer (any supported format) as tokenizer.json.
    Save {
        /// The tokenizer to read.
        #[arg(short, long, required_unless_present = "encoding")]
        tokenizer: Option<PathBuf>,
        /// A named tiktoken encoding to save instead (see encode --encoding).
        #[arg(short, long)]
        encoding: Option<String>,
        /// Where to write tokenizer.json (or, for a name ending in `.tiktoken`, a rank file).
        #[arg(short, long)]
        output: PathBuf,
        /// Indent the JSON.
        #[arg(long)]
        pretty: bool,
    },
    /// Render a conversation with the tokenizer's chat template (as transformers' apply_chat_template).
    Chat(chat::ChatArgs),
    /// Train a tokenizer (BPE, byte-level BPE, WordPiece, WordLevel, Unigram) on text or JSONL
    /// files and save it as tokenizer.json.
    Train(Box<train::TrainArgs>),
}

fn main() -> ExitCode {
    // Last resort: a bug still ends with one line and exit status 101, never a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let _ = writeln!(std::io::stderr(), "tokenkit: internal error (a bug; please report it): {info}");
    }));
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "tokenkit: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn load(path: &PathBuf) -> Result<Tokenizer> {
    tokenkit::formats::load(path).map_err(|e| anyhow!(e))
}

/// tiktoken mode: a named encoding or a `.tiktoken` file, with tiktoken's semantics.
#[derive(clap::Args)]
struct TiktokenArgs {
    /// A tiktoken encoding by name (gpt2, r50k_base, p50k_base, p50k_edit, cl100k_base,
    /// o200k_base, o200k_harmony; rank files from $TOKENKIT_TIKTOKEN_DIR, ~/.cache/tokenkit/tiktoken
    /// or .fixtures/tiktoken). With -t FILE.tiktoken, names the encoding of that file. In this
    /// mode encode writes {"ids": [...]} per input with tiktoken's special-token rules.
    #[arg(short, long)]
    encoding: Option<String>,
    /// Special tokens encoded as such: "all", "none" or a comma-separated list (tiktoken mode).
    #[arg(long, default_value = "none")]
    allowed_special: String,
    /// Special tokens whose text is an error: "all" (those not allowed), "none" or a list.
    #[arg(long, default_value = "all")]
    disallowed_special: String,
    /// Write {"count": n} instead of the ids (tiktoken mode).
    #[arg(long)]
    count: bool,
    /// Decoding of invalid UTF-8: "replace" (U+FFFD) or "strict" (an error) (tiktoken mode).
    #[arg(long, default_value = "replace")]
    errors: String,
}

impl TiktokenArgs {
    /// The tiktoken encoding, when in tiktoken mode (a name, or a .tiktoken file).
    fn load(&self, path: Option<&PathBuf>) -> Result<Option<tokenkit::tiktoken::Encoding>> {
        use tokenkit::tiktoken::Encoding;
        let is_rank_file = path.is_some_and(|p| p.extension().is_some_and(|e| e == "tiktoken"));
        Ok(match (path, &self.encoding) {
            // A named encoding with a file: that file holds its ranks, whatever its name
            // (Llama-3's `tokenizer.model`).
            (Some(p), Some(name)) => Some(Encoding::from_file(p, Some(name))?),
            (Some(p), None) if is_rank_file => Some(Encoding::from_file(p, None)?),
            (None, Some(name)) => Some(Encoding::get(name)?),
            _ => None,
        })
    }

    fn special_set(spec: &str) -> tokenkit::tiktoken::SpecialTokens {
        use tokenkit::tiktoken::SpecialTokens;
        match spec {
            "all" => SpecialTokens::All,
            "none" | "" => SpecialTokens::none(),
            list => SpecialTokens::of(list.split(',').map(str::trim).filter(|s| !s.is_empty())),
        }
    }
}

/// Plain texts to encode: JSON strings per line with `jsonl`, else the arguments, else all of
/// standard input as one text.
fn read_texts(jsonl: bool, texts: Vec<String>) -> Result<Vec<String>> {
    Ok(if jsonl {
        read_stdin_lines()?
            .iter()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| serde_json::from_str(l).with_context(|| format!("line {}: expected a JSON string", i + 1)))
            .collect::<Result<_>>()?
    } else if texts.is_empty() {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s).context("reading standard input (not valid UTF-8?)")?;
        vec![s]
    } else {
        texts
    })
}

fn tiktoken_encode(enc: &tokenkit::tiktoken::Encoding, args: &TiktokenArgs, jsonl: bool, texts: Vec<String>) -> Result<()> {
    let (allowed, disallowed) =
        (TiktokenArgs::special_set(&args.allowed_special), TiktokenArgs::special_set(&args.disallowed_special));
    let texts = read_texts(jsonl, texts)?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    for chunk in texts.chunks(1000) {
        let results: Vec<tokenkit::Result<serde_json::Value>> = {
            use rayon::prelude::*;
            chunk
                .par_iter()
                .map(|t| {
                    Ok(if args.count {
                        serde_json::json!({"count": enc.count(t, &allowed, &disallowed)?})
                    } else {
                        serde_json::json!({"ids": enc.encode(t, &allowed, &disallowed)?})
                    })
                })
                .collect()
        };
        for r in results {
            serde_json::to_writer(&mut out, &r.map_err(|e| anyhow!(e))?)?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    Ok(())
}

fn tiktoken_decode(enc: &tokenkit::tiktoken::Encoding, args: &TiktokenArgs, jsonl: bool, ids: Vec<u32>) -> Result<()> {
    let sequences: Vec<Vec<u32>> = if jsonl {
        read_stdin_lines()?
            .iter()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| serde_json::from_str(l).with_context(|| format!("line {}: expected a JSON array of token ids", i + 1)))
            .collect::<Result<_>>()?
    } else {
        vec![ids]
    };
    let mut out = BufWriter::new(std::io::stdout().lock());
    for (i, ids) in sequences.iter().enumerate() {
        let text = match args.errors.as_str() {
            "strict" => enc.decode_strict(ids),
            "replace" => enc.decode(ids),
            other => bail!("--errors must be replace or strict, got {other:?}"),
        }
        .map_err(|e| anyhow!("line {}: {e}", i + 1))?;
        if jsonl {
            serde_json::to_writer(&mut out, &text)?;
            out.write_all(b"\n")?;
        } else {
            writeln!(out, "{text}")?;
        }
    }
    out.flush()?;
    Ok(())
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Encode { tokenizer, tiktoken, jsonl, no_special, full, pretokenized, batch_size, sp, texts } => {
            if let Some(enc) = tiktoken.load(tokenizer.as_ref())? {
                return tiktoken_encode(&enc, &tiktoken, jsonl, texts);
            }
            let tok = load(&tokenizer.unwrap_or_default())?;
            if sp.active() {
                return spm::encode(&tok, &sp, &read_texts(jsonl, texts)?);
            }
            encode(&tok, jsonl, !no_special, full, pretokenized, batch_size.max(1), texts)
        }
        Command::Decode { tokenizer, tiktoken, jsonl, skip_special, stream, ids } => {
            if let Some(enc) = tiktoken.load(tokenizer.as_ref())? {
                return tiktoken_decode(&enc, &tiktoken, jsonl, ids);
            }
            let tok = load(&tokenizer.unwrap_or_default())?;
            decode(&tok, jsonl, skip_special, stream, ids)
        }
        Command::Inspect { path } => {
            let tok = load(&path)?;
            print!("{}", tokenkit::formats::inspect(&tok));
            Ok(())
        }
        Command::Chat(args) => chat::run(args),
        Command::Save { tokenizer, encoding, output, pretty } => {
            let tok = match (&tokenizer, encoding) {
                (None, Some(name)) => tokenkit::tiktoken::Encoding::get(&name)?.tokenizer().clone(),
                (Some(p), name) if p.extension().is_some_and(|e| e == "tiktoken") => {
                    tokenkit::tiktoken::Encoding::from_file(p, name.as_deref())?.tokenizer().clone()
                }
                _ => tokenkit::formats::load_for_save(tokenizer.unwrap_or_default()).map_err(|e| anyhow!(e))?,
            };
            if output.extension().is_some_and(|e| e == "tiktoken") {
                let ranks = tokenkit::formats::tiktoken::ranks_from_tokenizer(&tok)?;
                let text = tokenkit::formats::tiktoken::write_rank_file(&ranks);
                return std::fs::write(&output, text).with_context(|| format!("writing {}", output.display()));
            }
            tok.save(&output, pretty).map_err(|e| anyhow!(e))
        }
        Command::Train(args) => train::run(*args),
    }
}

/// An Encoding as the CLI prints it (offsets in chars).
#[derive(Serialize)]
struct EncodingOut<'a> {
    ids: &'a [u32],
    tokens: &'a [String],
    offsets: &'a [(usize, usize)],
    #[serde(skip_serializing_if = "Option::is_none")]
    type_ids: Option<&'a [u32]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    attention_mask: Option<&'a [u32]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    special_tokens_mask: Option<&'a [u32]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    word_ids: Option<&'a [Option<u32>]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sequence_ids: Option<Vec<Option<usize>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    overflowing: Option<Vec<EncodingOut<'a>>>,
}

fn encoding_out(e: &Encoding, full: bool, nested: bool) -> EncodingOut<'_> {
    EncodingOut {
        ids: e.get_ids(),
        tokens: e.get_tokens(),
        offsets: e.get_offsets(),
        type_ids: full.then(|| e.get_type_ids()),
        attention_mask: full.then(|| e.get_attention_mask()),
        special_tokens_mask: full.then(|| e.get_special_tokens_mask()),
        word_ids: full.then(|| e.get_word_ids()),
        sequence_ids: full.then(|| e.get_sequence_ids()),
        overflowing: (full && !nested)
            .then(|| e.get_overflowing().iter().map(|o| encoding_out(o, full, true)).collect()),
    }
}

fn parse_sequence(v: Value, pretokenized: bool, line_no: usize) -> Result<InputSequence<'static>> {
    if pretokenized {
        let Value::Array(words) = v else { bail!("line {line_no}: expected a JSON array of words") };
        let words = words
            .into_iter()
            .map(|w| match w {
                Value::String(s) => Ok(s),
                _ => Err(anyhow!("line {line_no}: every word must be a JSON string")),
            })
            .collect::<Result<Vec<String>>>()?;
        Ok(InputSequence::from(words))
    } else {
        match v {
            Value::String(s) => Ok(InputSequence::from(s)),
            _ => bail!("line {line_no}: expected a JSON string"),
        }
    }
}

fn parse_input(line: &str, pretokenized: bool, line_no: usize) -> Result<EncodeInput<'static>> {
    let v: Value = serde_json::from_str(line).with_context(|| format!("line {line_no}: not valid JSON"))?;
    let is_pair = match &v {
        Value::Array(items) if items.len() == 2 => {
            if pretokenized {
                items.iter().all(Value::is_array)
            } else {
                items.iter().all(Value::is_string)
            }
        }
        _ => false,
    };
    if is_pair {
        let Value::Array(mut items) = v else { unreachable!() };
        let second = items.pop().unwrap_or_default();
        let first = items.pop().unwrap_or_default();
        Ok(EncodeInput::Dual(parse_sequence(first, pretokenized, line_no)?, parse_sequence(second, pretokenized, line_no)?))
    } else {
        Ok(EncodeInput::Single(parse_sequence(v, pretokenized, line_no)?))
    }
}

fn read_stdin_lines() -> Result<Vec<String>> {
    let stdin = std::io::stdin();
    let mut lines = Vec::new();
    for (i, line) in stdin.lock().split(b'\n').enumerate() {
        let mut bytes = line.context("reading standard input")?;
        if bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        let s = String::from_utf8(bytes).map_err(|e| {
            anyhow!("line {}: input is not valid UTF-8 (invalid byte at offset {})", i + 1, e.utf8_error().valid_up_to())
        })?;
        lines.push(s);
    }
    Ok(lines)
}

fn encode(tok: &Tokenizer, jsonl: bool, add_special: bool, full: bool, pretokenized: bool, batch_size: usize, texts: Vec<String>) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let inputs: Vec<EncodeInput<'static>> = if jsonl {
        read_stdin_lines()?
            .iter()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| parse_input(l, pretokenized, i + 1))
            .collect::<Result<_>>()?
    } else if texts.is_empty() {
        let mut bytes = Vec::new();
        std::io::stdin().read_to_end(&mut bytes).context("reading standard input")?;
        let s = String::from_utf8(bytes).map_err(|e| {
            anyhow!("input is not valid UTF-8 (invalid byte at offset {})", e.utf8_error().valid_up_to())
        })?;
        vec![EncodeInput::from(s)]
    } else {
        texts.into_iter().map(EncodeInput::from).collect()
    };
    let mut inputs = inputs.into_iter().peekable();
    while inputs.peek().is_some() {
        let batch: Vec<EncodeInput<'static>> = inputs.by_ref().take(batch_size).collect();
        let encodings = tok.encode_batch_char_offsets(batch, add_special).map_err(|e| anyhow!(e))?;
        for e in &encodings {
            serde_json::to_writer(&mut out, &encoding_out(e, full, false))?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    Ok(())
}

fn decode(tok: &Tokenizer, jsonl: bool, skip_special: bool, stream: bool, ids: Vec<u32>) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let sequences: Vec<Vec<u32>> = if jsonl {
        read_stdin_lines()?
            .iter()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| serde_json::from_str(l).with_context(|| format!("line {}: expected a JSON array of token ids", i + 1)))
            .collect::<Result<_>>()?
    } else {
        vec![ids]
    };
    for (i, ids) in sequences.iter().enumerate() {
        let line = i + 1;
        if stream {
            let mut s = tok.decode_stream(skip_special);
            let chunks = ids
                .iter()
                .map(|&id| s.step(id))
                .collect::<tokenkit::Result<Vec<Option<String>>>>()
                .map_err(|e| anyhow!("line {line}: {e}"))?;
            serde_json::to_writer(&mut out, &chunks)?;
            out.write_all(b"\n")?;
        } else {
            let text = tok.decode(ids, skip_special).map_err(|e| anyhow!("line {line}: {e}"))?;
            if jsonl {
                serde_json::to_writer(&mut out, &text)?;
                out.write_all(b"\n")?;
            } else {
                writeln!(out, "{text}")?;
            }
        }
    }
    out.flush()?;
    Ok(())
}
