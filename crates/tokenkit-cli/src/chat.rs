//! `tokenkit chat`: render a conversation with a tokenizer's chat template, as transformers'
//! `apply_chat_template` does. Renders are bounded in steps, output and memory
//! ([`tokenkit::chat_template::ChatLimits`]): a template that runs too long or builds too much
//! ends with an error naming the budget.

use std::io::{BufRead, BufWriter, Write};
use std::path::PathBuf;

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use serde_json::{json, Map, Value};
use tokenkit::chat_template::{ChatOptions, ChatTemplate};
use tokenkit::formats::pretrained::{self, PretrainedTokenizer};

/// Arguments of `tokenkit chat`.
#[derive(Args)]
pub struct ChatArgs {
    /// A pretrained tokenizer directory (tokenizer.json, tokenizer_config.json, ...) or a
    /// tokenizer_config.json file.
    #[arg(short, long)]
    tokenizer: PathBuf,
    /// JSON file with the conversation: an array of messages, or an object with "messages"
    /// (and optionally "tools" and "documents").
    #[arg(short, long, required_unless_present_any = ["jsonl", "write_minimind_config"])]
    messages: Option<PathBuf>,
    /// Append the header that starts the assistant's answer.
    #[arg(long)]
    add_generation_prompt: bool,
    /// Leave the last message open (continue it): optionally the field to continue.
    #[arg(long, num_args = 0..=1, default_missing_value = "content")]
    continue_final_message: Option<String>,
    /// JSON file with a list of tool definitions.
    #[arg(long)]
    tools: Option<PathBuf>,
    /// JSON file with a list of documents.
    #[arg(long)]
    documents: Option<PathBuf>,
    /// Extra template variables as a JSON object, e.g. '{"enable_thinking": false}'.
    #[arg(long)]
    kwargs: Option<String>,
    /// Template to use: the name of one of the tokenizer's templates, or a .jinja file.
    #[arg(long, conflicts_with = "chat_template")]
    template: Option<String>,
    /// A Jinja chat template file to render with instead of the tokenizer's own (with
    /// --write-minimind-config: the template the written tokenizer_config.json carries).
    #[arg(long, value_name = "FILE", value_parser = chat_template_file)]
    chat_template: Option<String>,
    /// Print the token ids (JSON array) of the rendered text instead of the text.
    #[arg(long)]
    ids: bool,
    /// Read requests from standard input, one JSON object per line ({"messages", "tools",
    /// "documents", "add_generation_prompt", "continue_final_message", "kwargs", "template"}),
    /// and write one JSON object per line: {"text": ..., "ids": [...]} or {"error": ...}.
    #[arg(long)]
    jsonl: bool,
    /// First write the Minimind tokenizer_config.json (with Minimind's chat template, or the
    /// --chat-template file) and special_tokens_map.json into the --tokenizer directory
    /// (checking its tokenizer.json, if any, has the special tokens at ids 0, 1, 2); then render
    /// if --messages or --jsonl is given.
    #[arg(long)]
    write_minimind_config: bool,
}

/// Reads a `--chat-template FILE` argument and checks that it compiles, so that a bad template
/// is reported before any work (training included) starts. Returns the template text.
pub fn chat_template_file(path: &str) -> std::result::Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    ChatTemplate::new(text.as_str()).map_err(|e| format!("{path}: {e}"))?;
    Ok(text)
}

fn read_json(path: &PathBuf) -> Result<Value> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{}: not valid JSON", path.display()))
}

fn list(v: Value, what: &str) -> Result<Vec<Value>> {
    match v {
        Value::Array(a) => Ok(a),
        _ => bail!("{what} must be a JSON array"),
    }
}

/// One rendering request.
struct Request {
    messages: Value,
    options: ChatOptions,
    template: Option<String>,
}

fn request_from_object(mut obj: Map<String, Value>) -> Result<Request> {
    let messages = obj.remove("messages").ok_or_else(|| anyhow!("the request has no \"messages\""))?;
    let mut options = ChatOptions::default();
    if let Some(t) = obj.remove("tools").filter(|v| !v.is_null()) {
        options.tools = Some(list(t, "tools")?);
    }
    if let Some(d) = obj.remove("documents").filter(|v| !v.is_null()) {
        options.documents = Some(list(d, "documents")?);
    }
    options.add_generation_prompt = obj.remove("add_generation_prompt").and_then(|v| v.as_bool()).unwrap_or(false);
    options.continue_final_message = match obj.remove("continue_final_message") {
        Some(Value::Bool(true)) => Some("content".into()),
        Some(Value::String(s)) => Some(s),
        _ => None,
    };
    if let Some(k) = obj.remove("kwargs") {
        match k {
            Value::Object(m) => options.kwargs = m,
            Value::Null => {}
            _ => bail!("\"kwargs\" must be a JSON object"),
        }
    }
    let template = obj.remove("template").and_then(|v| v.as_str().map(str::to_owned));
    Ok(Request { messages, options, template })
}

/// Resolves `--template`: a readable file is a template text, anything else a template name.
fn template_arg(t: Option<String>) -> Result<Option<String>> {
    match t {
        Some(t) if std::path::Path::new(&t).is_file() => Ok(Some(std::fs::read_to_string(&t).with_context(|| format!("reading {t}"))?)),
        other => Ok(other),
    }
}

fn render(tok: &PretrainedTokenizer, req: &Request, ids: bool) -> Result<(String, Option<Vec<u32>>)> {
    let text = tok.apply_chat_template(&req.messages, &req.options, req.template.as_deref()).map_err(|e| anyhow!(e))?;
    let ids = if ids {
        let t = tok.tokenizer.as_ref().ok_or_else(|| anyhow!("--ids needs a tokenizer.json beside the configuration"))?;
        Some(t.encode(text.as_str(), false).map_err(|e| anyhow!(e))?.get_ids().to_vec())
    } else {
        None
    };
    Ok((text, ids))
}

/// Runs `tokenkit chat`.
pub fn run(args: ChatArgs) -> Result<()> {
    if args.write_minimind_config {
        let dir = &args.tokenizer;
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let json = dir.join(pretrained::TOKENIZER_FILE);
        let tok = if json.is_file() { Some(tokenkit::Tokenizer::from_file(&json).map_err(|e| anyhow!(e))?) } else { None };
        pretrained::write_minimind_config(dir, tok.as_ref(), args.chat_template.as_deref()).map_err(|e| anyhow!(e))?;
        if args.messages.is_none() && !args.jsonl {
            return Ok(());
        }
    }
    let tok = PretrainedTokenizer::from_path(&args.tokenizer).map_err(|e| anyhow!(e))?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    if args.jsonl {
        for (i, line) in std::io::stdin().lock().lines().enumerate() {
            let line = line.context("reading standard input")?;
            if line.trim().is_empty() {
                continue;
            }
            let value: Value = serde_json::from_str(&line).with_context(|| format!("line {}: not valid JSON", i + 1))?;
            let Value::Object(obj) = value else { bail!("line {}: expected a JSON object", i + 1) };
            let result = request_from_object(obj).and_then(|mut req| {
                req.template = template_arg(req.template)?.or_else(|| args.chat_template.clone());
                render(&tok, &req, tok.tokenizer.is_some() || args.ids)
            });
            let v = match result {
                Ok((text, Some(ids))) => json!({"text": text, "ids": ids}),
                Ok((text, None)) => json!({"text": text}),
                Err(e) => json!({"error": format!("{e:#}")}),
            };
            serde_json::to_writer(&mut out, &v)?;
            out.write_all(b"\n")?;
        }
        out.flush()?;
        return Ok(());
    }
    let path = args.messages.as_ref().ok_or_else(|| anyhow!("--messages is required without --jsonl"))?;
    let mut req = match read_json(path)? {
        Value::Object(obj) => request_from_object(obj).with_context(|| path.display().to_string())?,
        messages => Request { messages, options: ChatOptions::default(), template: None },
    };
    req.options.add_generation_prompt |= args.add_generation_prompt;
    if args.continue_final_message.is_some() {
        req.options.continue_final_message = args.continue_final_message;
    }
    if let Some(t) = &args.tools {
        req.options.tools = Some(list(read_json(t)?, "--tools")?);
    }
    if let Some(d) = &args.documents {
        req.options.documents = Some(list(read_json(d)?, "--documents")?);
    }
    if let Some(k) = &args.kwargs {
        match serde_json::from_str(k).context("--kwargs: not valid JSON")? {
            Value::Object(m) => req.options.kwargs.extend(m),
            _ => bail!("--kwargs must be a JSON object"),
        }
    }
    req.template = match &args.chat_template {
        Some(text) => Some(text.clone()),
        None => template_arg(args.template.or(req.template))?,
    };
    let (text, ids) = render(&tok, &req, args.ids)?;
    match ids {
        Some(ids) => writeln!(out, "{}", serde_json::to_string(&ids)?)?,
        None => out.write_all(text.as_bytes())?,
    }
    out.flush()?;
    Ok(())
}
