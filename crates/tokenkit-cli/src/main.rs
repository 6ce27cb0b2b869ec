//! The `tokenkit` command-line tool: a thin layer over the library.

use std::io::{BufRead, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Parser, Subcommand};
use serde::Serialize;
use serde_json::Value;
use tokenkit::{EncodeInput, Encoding, InputSequence, Tokenizer};

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
        /// beside it) or a directory holding one of these.
        #[arg(short, long)]
        tokenizer: PathBuf,
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
        /// Texts to encode (when not reading standard input).
        texts: Vec<String>,
    },
    /// Decode ids. Ids come from the arguments, or from standard input with --jsonl (one JSON
    /// array of ids per line, one JSON string out per line).
    Decode {
        /// The tokenizer (as for encode).
        #[arg(short, long)]
        tokenizer: PathBuf,
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
        #[arg(short, long)]
        tokenizer: PathBuf,
        /// Where to write tokenizer.json.
        #[arg(short, long)]
        output: PathBuf,
        /// Indent the JSON.
        #[arg(long)]
        pretty: bool,
    },
}

fn main() -> ExitCode {
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

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Encode { tokenizer, jsonl, no_special, full, pretokenized, batch_size, texts } => {
            let tok = load(&tokenizer)?;
            encode(&tok, jsonl, !no_special, full, pretokenized, batch_size.max(1), texts)
        }
        Command::Decode { tokenizer, jsonl, skip_special, stream, ids } => {
            let tok = load(&tokenizer)?;
            decode(&tok, jsonl, skip_special, stream, ids)
        }
        Command::Inspect { path } => {
            let tok = load(&path)?;
            print!("{}", tokenkit::formats::inspect(&tok));
            Ok(())
        }
        Command::Save { tokenizer, output, pretty } => {
            let tok = tokenkit::formats::load_for_save(&tokenizer).map_err(|e| anyhow!(e))?;
            tok.save(&output, pretty).map_err(|e| anyhow!(e))
        }
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
