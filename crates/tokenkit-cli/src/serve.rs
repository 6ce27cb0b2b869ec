//! `tokenkit serve`: a local web playground (in the spirit of tiktokenizer). One static page,
//! embedded in the binary and working offline, asks this server to encode what is typed with
//! each loaded tokenizer and shows the tokens side by side (coloured runs drawn by
//! [`tokenkit::tools::visualizer`], the same renderer as `tokenkit viz`), with ids, counts and
//! compression; a chat view renders messages through each tokenizer's chat template first.
//!
//! The server listens on 127.0.0.1 only, reads request bodies of at most [`MAX_REQUEST_BYTES`],
//! encodes at most as many requests at once as there are cores (the others wait), renders chat
//! templates within the library's [`tokenkit::chat_template::ChatLimits`], and never writes a
//! file.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{anyhow, bail, Context, Result};
use axum::extract::rejection::JsonRejection;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse};
use axum::routing::{get, post};
use axum::{Json, Router};
use clap::Args;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokenkit::chat_template::ChatOptions;
use tokenkit::formats::pretrained::{self, ChatTemplates, PretrainedTokenizer, TokenizerConfig};
use tokenkit::tools::visualizer::{self, Markup};
use tokio::sync::Semaphore;

use crate::viz::{tiktoken_tokens, tokenizer_tokens, unpadded};
use crate::{Loaded, Source};

/// The largest request body the server reads (the text, or the chat messages, as JSON): 1 MiB.
/// A larger one is answered with 413 and not read.
pub const MAX_REQUEST_BYTES: usize = 1 << 20;

/// The page: HTML, style and script in one file, nothing fetched from elsewhere; the
/// visualiser's style sheet goes in at the `/*VISUALIZER_CSS*/` mark.
const PAGE: &str = include_str!("serve_page.html");

#[derive(Args)]
pub struct ServeArgs {
    /// A tokenizer file or pretrained directory (any format -t takes elsewhere); repeat it to
    /// compare several. A directory (or a tokenizer.json) with a tokenizer_config.json or
    /// chat_template.jinja beside it brings its chat templates to the chat view.
    #[arg(short, long = "tokenizer", value_name = "FILE")]
    tokenizers: Vec<PathBuf>,
    /// A named tiktoken encoding; repeat it to compare several.
    #[arg(short, long = "encoding", value_name = "NAME")]
    encodings: Vec<String>,
    /// The port on 127.0.0.1 (0: any free port; the address is printed on standard error).
    #[arg(long, default_value_t = 8000)]
    port: u16,
    /// A Jinja chat template for the chat view of the tokenizers that have none of their own.
    #[arg(long, value_name = "FILE", value_parser = crate::chat::chat_template_file)]
    chat_template: Option<String>,
}

/// One loaded tokenizer.
struct Entry {
    /// What the page calls it ([`short_name`]).
    name: String,
    /// The file or encoding name it was loaded from.
    path: String,
    tokenizer: Loaded,
    /// Its chat templates and the configuration whose special tokens they see (`tokenizer` is
    /// left `None`: encoding goes through [`Entry::tokenizer`]).
    chat: Option<PretrainedTokenizer>,
}

struct App {
    entries: Vec<Entry>,
    page: String,
    /// Encodes run on blocking threads, this many at once.
    permits: Semaphore,
}

/// Runs `tokenkit serve` until the process is stopped.
pub fn run(args: ServeArgs) -> Result<()> {
    if args.tokenizers.is_empty() && args.encodings.is_empty() {
        bail!("give at least one tokenizer: -t FILE or -e NAME (repeat them to compare several)");
    }
    let mut entries = Vec::new();
    let sources = args.tokenizers.iter().map(|p| Source::file(p.clone())).chain(args.encodings.iter().map(|e| Source::named(e.clone())));
    for source in sources {
        let path = source.display_name();
        let tokenizer = match source.load().with_context(|| format!("loading {path}"))? {
            // The page shows whole texts: padding and truncation are dropped once, here.
            Loaded::Tokenizer(tok) => Loaded::Tokenizer(Box::new(unpadded(&tok)?.into_owned())),
            tiktoken => tiktoken,
        };
        let name = source.tokenizer.as_deref().map_or_else(|| path.clone(), short_name);
        let own = match (&source.tokenizer, &tokenizer) {
            (Some(file), Loaded::Tokenizer(_)) => {
                own_chat_templates(file).with_context(|| format!("reading the chat templates of {path}"))?
            }
            _ => None,
        };
        let chat = own.or_else(|| {
            args.chat_template.as_ref().map(|t| PretrainedTokenizer {
                tokenizer: None,
                config: TokenizerConfig::new(),
                chat_templates: ChatTemplates::Single(t.clone()),
            })
        });
        entries.push(Entry { name, path, tokenizer, chat });
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let app = Arc::new(App { entries, page: PAGE.replace("/*VISUALIZER_CSS*/", visualizer::CSS), permits: Semaphore::new(cores) });
    let router = Router::new()
        .route("/", get(index))
        .route("/api/tokenizers", get(list))
        .route("/api/encode", post(encode))
        .route("/api/chat", post(chat))
        .layer(DefaultBodyLimit::max(MAX_REQUEST_BYTES))
        .with_state(Arc::clone(&app));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cores.min(4))
        .enable_io()
        .build()
        .context("starting the server's threads")?;
    runtime.block_on(async move {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, args.port));
        let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("cannot listen on {addr}"))?;
        let addr = listener.local_addr()?;
        eprintln!("tokenkit: serving {} tokenizer(s) at http://{addr}/ (Ctrl-C stops)", app.entries.len());
        axum::serve(listener, router).await.context("serving")
    })
}

/// A tokenizer file's name on the page: a directory's name, or the file name with its
/// directory's name when the file name says nothing (`qwen3/tokenizer.json`).
fn short_name(path: &Path) -> String {
    let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    let file = name(path).unwrap_or_else(|| path.display().to_string());
    const GENERIC: [&str; 6] = ["tokenizer.json", "tokenizer.model", "vocab.txt", "vocab.json", "spiece.model", "tekken.json"];
    match path.parent().and_then(name) {
        Some(dir) if GENERIC.contains(&file.as_str()) => format!("{dir}/{file}"),
        _ => file,
    }
}

/// The chat templates of a pretrained directory (or of the directory of a `tokenizer.json`),
/// read as transformers does; `None` when it has none.
fn own_chat_templates(path: &Path) -> Result<Option<PretrainedTokenizer>> {
    let dir = if path.is_dir() {
        path
    } else if path.file_name().is_some_and(|n| n == pretrained::TOKENIZER_FILE) {
        path.parent().unwrap_or(Path::new("."))
    } else {
        return Ok(None);
    };
    let config_path = dir.join(pretrained::TOKENIZER_CONFIG_FILE);
    let (config, chat_templates) = pretrained::read_config(dir, config_path.is_file().then_some(config_path.as_path()))?;
    Ok((chat_templates != ChatTemplates::None).then_some(PretrainedTokenizer { tokenizer: None, config, chat_templates }))
}

async fn index(State(app): State<Arc<App>>) -> impl IntoResponse {
    ([(header::CACHE_CONTROL, "no-store")], Html(app.page.clone()))
}

/// What the page lists for each tokenizer.
#[derive(Serialize)]
struct Listed {
    name: String,
    /// The file or encoding name given on the command line.
    path: String,
    /// `"tiktoken"` (encoded as tiktoken's `encode_ordinary`) or `"tokenizer"`.
    kind: &'static str,
    vocab_size: usize,
    chat_template: bool,
}

async fn list(State(app): State<Arc<App>>) -> Json<Vec<Listed>> {
    Json(
        app.entries
            .iter()
            .map(|e| {
                let (kind, vocab_size) = match &e.tokenizer {
                    Loaded::Tiktoken(enc) => ("tiktoken", enc.n_vocab()),
                    Loaded::Tokenizer(tok) => ("tokenizer", tok.get_vocab_size(true)),
                };
                Listed { name: e.name.clone(), path: e.path.clone(), kind, vocab_size, chat_template: e.chat.is_some() }
            })
            .collect(),
    )
}

/// A request of the text view.
#[derive(Deserialize)]
struct EncodeRequest {
    text: String,
    /// Indices into the tokenizer list (default: all).
    #[serde(default)]
    tokenizers: Option<Vec<usize>>,
    /// Add the post-processor's special tokens (HF's add_special_tokens; tiktoken encodings
    /// always encode with encode_ordinary).
    #[serde(default = "yes")]
    add_special_tokens: bool,
}

/// A request of the chat view.
#[derive(Deserialize)]
struct ChatRequest {
    messages: Value,
    #[serde(default)]
    tokenizers: Option<Vec<usize>>,
    #[serde(default)]
    add_generation_prompt: bool,
    /// Extra template variables (`enable_thinking`, ...).
    #[serde(default)]
    kwargs: Map<String, Value>,
}

fn yes() -> bool {
    true
}

/// One tokenizer's answer.
#[derive(Serialize, Default)]
struct Shown {
    /// The tokenizer's index in the list.
    index: usize,
    name: String,
    /// The rendered chat (chat view only).
    #[serde(skip_serializing_if = "Option::is_none")]
    rendered: Option<String>,
    tokens: usize,
    /// UTF-8 bytes and characters of the encoded text.
    bytes: usize,
    chars: usize,
    bytes_per_token: Option<f64>,
    chars_per_token: Option<f64>,
    ids: Vec<u32>,
    /// The visualiser's markup of the tokens.
    html: String,
    /// Why this tokenizer could not encode the request (the other fields are empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

type ApiResult = std::result::Result<Json<Vec<Shown>>, (StatusCode, Json<Value>)>;

fn bad_request(status: StatusCode, message: String) -> (StatusCode, Json<Value>) {
    (status, Json(serde_json::json!({ "error": message })))
}

/// Which tokenizers a request names, checked.
fn selected(app: &App, wanted: Option<Vec<usize>>) -> std::result::Result<Vec<usize>, (StatusCode, Json<Value>)> {
    let all = app.entries.len();
    let ixs = wanted.unwrap_or_else(|| (0..all).collect());
    match ixs.iter().find(|&&i| i >= all) {
        Some(i) => Err(bad_request(StatusCode::BAD_REQUEST, format!("no tokenizer {i}: there are {all}"))),
        None => Ok(ixs),
    }
}

/// Runs `work` on a blocking thread once a permit is free.
async fn on_worker<T: Send + 'static>(
    app: &Arc<App>,
    work: impl FnOnce(&App) -> T + Send + 'static,
) -> std::result::Result<T, (StatusCode, Json<Value>)> {
    let _permit = app.permits.acquire().await.map_err(|e| bad_request(StatusCode::SERVICE_UNAVAILABLE, e.to_string()))?;
    let app = Arc::clone(app);
    tokio::task::spawn_blocking(move || work(&app))
        .await
        .map_err(|e| bad_request(StatusCode::INTERNAL_SERVER_ERROR, format!("the encoder failed: {e}")))
}

async fn encode(State(app): State<Arc<App>>, body: std::result::Result<Json<EncodeRequest>, JsonRejection>) -> ApiResult {
    let Json(req) = body.map_err(|e| bad_request(e.status(), e.body_text()))?;
    let ixs = selected(&app, req.tokenizers)?;
    let shown =
        on_worker(&app, move |app| ixs.into_iter().map(|i| show(i, &app.entries[i], &req.text, None, req.add_special_tokens)).collect())
            .await?;
    Ok(Json(shown))
}

async fn chat(State(app): State<Arc<App>>, body: std::result::Result<Json<ChatRequest>, JsonRejection>) -> ApiResult {
    let Json(req) = body.map_err(|e| bad_request(e.status(), e.body_text()))?;
    if !req.messages.is_array() {
        return Err(bad_request(StatusCode::BAD_REQUEST, "\"messages\" must be an array of {\"role\", \"content\"} objects".into()));
    }
    let ixs = selected(&app, req.tokenizers)?;
    let options = ChatOptions { add_generation_prompt: req.add_generation_prompt, kwargs: req.kwargs, ..ChatOptions::default() };
    let messages = req.messages;
    let shown = on_worker(&app, move |app| {
        ixs.into_iter()
            .map(|i| {
                let entry = &app.entries[i];
                let rendered = match &entry.chat {
                    None => Err(anyhow!("no chat template: give a pretrained directory (with tokenizer_config.json or chat_template.jinja), or --chat-template FILE")),
                    Some(p) => p.apply_chat_template(&messages, &options, None).map_err(|e| anyhow!(e)),
                };
                match rendered {
                    // transformers' apply_chat_template(tokenize=True): no post-processor tokens.
                    Ok(text) => show(i, entry, &text, Some(text.clone()), false),
                    Err(e) => Shown { index: i, name: entry.name.clone(), error: Some(format!("{e:#}")), ..Shown::default() },
                }
            })
            .collect()
    })
    .await?;
    Ok(Json(shown))
}

/// One tokenizer's answer for `text`. A rendered chat (`rendered` given) may hold special
/// tokens: tiktoken encodes them as such.
fn show(index: usize, entry: &Entry, text: &str, rendered: Option<String>, add_special_tokens: bool) -> Shown {
    let tokens = match &entry.tokenizer {
        Loaded::Tiktoken(enc) => tiktoken_tokens(enc, text, rendered.is_some()),
        Loaded::Tokenizer(tok) => tokenizer_tokens(tok, text, add_special_tokens).map(|t| (text.to_owned(), t)),
    };
    match tokens {
        Ok((cut, tokens)) => {
            let n = tokens.len();
            let chars = text.chars().count();
            let per_token = |x: usize| (n > 0).then(|| x as f64 / n as f64);
            Shown {
                index,
                name: entry.name.clone(),
                rendered,
                tokens: n,
                bytes: text.len(),
                chars,
                bytes_per_token: per_token(text.len()),
                chars_per_token: per_token(chars),
                ids: tokens.iter().map(|t| t.id).collect(),
                html: visualizer::render(&cut, &tokens, &[], Markup::Detailed),
                error: None,
            }
        }
        Err(e) => Shown { index, name: entry.name.clone(), rendered, error: Some(format!("{e:#}")), ..Shown::default() },
    }
}
