//! transformers' pretrained tokenizer directories: `tokenizer.json` plus `tokenizer_config.json`
//! (special tokens, `model_max_length`, padding side, chat templates, ...), the legacy
//! `special_tokens_map.json`, and the chat templates transformers ≥ 4.50 saves as
//! `chat_template.jinja` and `additional_chat_templates/NAME.jinja`.
//!
//! [`TokenizerConfig`] keeps the whole JSON object, so fields tokenkit does not know are written
//! back unchanged; typed accessors read and set the ones it uses. [`PretrainedTokenizer`] is a
//! loaded directory, with [`PretrainedTokenizer::apply_chat_template`] doing what transformers'
//! `apply_chat_template` does.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

use crate::chat_template::{ChatOptions, ChatTemplate};
use crate::models::ModelWrapper;
use crate::tokenizer::{AddedToken, Tokenizer};
use crate::utils::atomic_file::{write_atomic, AtomicFiles};
use crate::{Error, Result};

/// File name of the tokenizer configuration.
pub const TOKENIZER_CONFIG_FILE: &str = "tokenizer_config.json";
/// File name of the legacy special-token map.
pub const SPECIAL_TOKENS_MAP_FILE: &str = "special_tokens_map.json";
/// File name of the default chat template saved as a Jinja file.
pub const CHAT_TEMPLATE_FILE: &str = "chat_template.jinja";
/// Directory of the named (non-default) chat templates saved as Jinja files.
pub const CHAT_TEMPLATE_DIR: &str = "additional_chat_templates";
/// File name of the HF tokenizer.
pub const TOKENIZER_FILE: &str = "tokenizer.json";

/// The named special tokens transformers passes to chat templates, in its order.
pub const SPECIAL_TOKEN_NAMES: [&str; 7] = ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"];

/// A special token as tokenizer_config.json and special_tokens_map.json write it: a plain
/// string, or an AddedToken object (`{"__type": "AddedToken", "content": ..., ...}` in older
/// configs, without `__type` in special_tokens_map.json).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SpecialToken {
    /// Just the token's text.
    Content(String),
    /// The token with its matching options.
    Added(AddedTokenDict),
}

impl SpecialToken {
    /// The token's text.
    pub fn content(&self) -> &str {
        match self {
            SpecialToken::Content(s) => s,
            SpecialToken::Added(d) => &d.content,
        }
    }
}

impl From<&str> for SpecialToken {
    fn from(s: &str) -> Self {
        SpecialToken::Content(s.to_owned())
    }
}

/// An AddedToken serialized as a JSON object (field names and order as transformers writes them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddedTokenDict {
    /// `"AddedToken"` in configs written by transformers 4.x before 4.34.
    #[serde(rename = "__type", default, skip_serializing_if = "Option::is_none")]
    pub type_name: Option<String>,
    /// The token's text.
    pub content: String,
    /// Swallow the whitespace on its left.
    #[serde(default)]
    pub lstrip: bool,
    /// Match against normalized text.
    #[serde(default = "yes")]
    pub normalized: bool,
    /// Swallow the whitespace on its right.
    #[serde(default)]
    pub rstrip: bool,
    /// Only match whole words.
    #[serde(default)]
    pub single_word: bool,
    /// Special (skipped when decoding with skip_special_tokens); absent in special_tokens_map.json.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub special: Option<bool>,
}

fn yes() -> bool {
    true
}

impl AddedTokenDict {
    /// The tokenizer's AddedToken with the same options (`special` defaults to false).
    pub fn to_added_token(&self) -> AddedToken {
        AddedToken {
            content: self.content.clone(),
            single_word: self.single_word,
            lstrip: self.lstrip,
            rstrip: self.rstrip,
            normalized: self.normalized,
            special: self.special.unwrap_or(false),
        }
    }

    /// The dict form transformers writes in `added_tokens_decoder` for `token`.
    pub fn from_added_token(token: &AddedToken) -> Self {
        AddedTokenDict {
            type_name: None,
            content: token.content.clone(),
            lstrip: token.lstrip,
            normalized: token.normalized,
            rstrip: token.rstrip,
            single_word: token.single_word,
            special: Some(token.special),
        }
    }
}

/// The chat templates of a tokenizer: none, one, or several by name (`default`, `tool_use`, ...).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ChatTemplates {
    /// No template.
    #[default]
    None,
    /// One template (the `chat_template` string).
    Single(String),
    /// Named templates, in file order (`[{"name": ..., "template": ...}, ...]` in the config).
    Named(Vec<(String, String)>),
}

impl ChatTemplates {
    /// Picks the template as transformers' `get_chat_template` does: `name` if given (a
    /// template name, or else taken as the template text itself), otherwise `tool_use` when
    /// tools are passed and such a template exists, otherwise `default`.
    pub fn select<'a>(&'a self, name: Option<&'a str>, with_tools: bool) -> Result<&'a str> {
        match self {
            ChatTemplates::Named(list) => {
                let find = |n: &str| list.iter().find(|(k, _)| k == n).map(|(_, t)| t.as_str());
                match name {
                    Some(n) => Ok(find(n).unwrap_or(n)),
                    None => {
                        if with_tools {
                            if let Some(t) = find("tool_use") {
                                return Ok(t);
                            }
                        }
                        find("default").ok_or_else(|| {
                            let mut names: Vec<&str> = list.iter().map(|(k, _)| k.as_str()).collect();
                            names.sort_unstable();
                            Error::invalid(format!(
                                "this tokenizer has several chat templates and none is named \"default\"; choose one of {names:?}"
                            ))
                        })
                    }
                }
            }
            _ if name.is_some() => Ok(name.unwrap_or_default()),
            ChatTemplates::Single(t) => Ok(t),
            ChatTemplates::None => Err(Error::invalid(
                "the tokenizer has no chat template (no chat_template in tokenizer_config.json and no chat_template.jinja)",
            )),
        }
    }

    /// The JSON value of `chat_template` in tokenizer_config.json (`null` for none).
    pub fn to_json(&self) -> Json {
        match self {
            ChatTemplates::None => Json::Null,
            ChatTemplates::Single(t) => Json::String(t.clone()),
            ChatTemplates::Named(list) => Json::Array(
                list.iter()
                    .map(|(n, t)| {
                        let mut m = Map::new();
                        m.insert("name".into(), Json::String(n.clone()));
                        m.insert("template".into(), Json::String(t.clone()));
                        Json::Object(m)
                    })
                    .collect(),
            ),
        }
    }

    fn from_json(v: Option<&Json>, context: &str) -> Result<Self> {
        match v {
            None | Some(Json::Null) => Ok(ChatTemplates::None),
            Some(Json::String(s)) => Ok(ChatTemplates::Single(s.clone())),
            Some(Json::Array(items)) => items
                .iter()
                .map(|item| match (item.get("name").and_then(Json::as_str), item.get("template").and_then(Json::as_str)) {
                    (Some(n), Some(t)) => Ok((n.to_owned(), t.to_owned())),
                    _ => Err(Error::Json {
                        context: context.to_owned(),
                        message: "every entry of chat_template must be an object with string \"name\" and \"template\"".into(),
                    }),
                })
                .collect::<Result<Vec<_>>>()
                .map(ChatTemplates::Named),
            Some(Json::Object(map)) => map
                .iter()
                .map(|(n, t)| match t {
                    Json::String(t) => Ok((n.clone(), t.clone())),
                    _ => Err(Error::Json { context: context.to_owned(), message: format!("chat_template {n:?} must be a string") }),
                })
                .collect::<Result<Vec<_>>>()
                .map(ChatTemplates::Named),
            Some(other) => Err(Error::Json {
                context: context.to_owned(),
                message: format!("chat_template must be a string or a list of {{name, template}} objects, got {other}"),
            }),
        }
    }
}

/// A tokenizer_config.json. The whole object is kept (unknown fields survive a load/save);
/// the accessors read and write the fields transformers uses.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TokenizerConfig {
    /// Every field of the file, in file order.
    pub fields: Map<String, Json>,
    /// Where it was read from (for error messages).
    source: String,
}

fn read_text(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|source| Error::Io { path: path.to_owned(), source })
}

fn parse_object(text: &str, context: &str) -> Result<Map<String, Json>> {
    match serde_json::from_str::<Json>(text) {
        Ok(Json::Object(m)) => Ok(m),
        Ok(other) => Err(Error::Json { context: context.to_owned(), message: format!("expected a JSON object, got {other}") }),
        Err(e) => Err(Error::Json { context: context.to_owned(), message: e.to_string() }),
    }
}

/// Sorts object keys recursively, as Python's `json.dumps(..., sort_keys=True)`.
fn sorted(v: &Json) -> Json {
    match v {
        Json::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            Json::Object(keys.into_iter().map(|k| (k.clone(), sorted(&m[k]))).collect())
        }
        Json::Array(a) => Json::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// transformers' layout for its JSON files: two-space indent, sorted keys, a final newline.
fn to_hf_json(fields: &Map<String, Json>) -> Result<String> {
    let mut s = serde_json::to_string_pretty(&sorted(&Json::Object(fields.clone())))
        .map_err(|e| Error::Json { context: "tokenizer_config.json".into(), message: e.to_string() })?;
    s.push('\n');
    Ok(s)
}

impl TokenizerConfig {
    /// An empty configuration.
    pub fn new() -> Self {
        TokenizerConfig::default()
    }

    /// Parses tokenizer_config.json text; `context` names it in errors.
    pub fn from_json_str(text: &str, context: &str) -> Result<Self> {
        let fields = parse_object(text, context)?;
        let cfg = TokenizerConfig { fields, source: context.to_owned() };
        // Validate the typed fields now, so a bad file fails at load time with its name.
        cfg.chat_templates()?;
        cfg.added_tokens_decoder()?;
        for name in cfg.special_token_names() {
            cfg.special_token(&name)?;
        }
        Ok(cfg)
    }

    /// Reads a tokenizer_config.json.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        Self::from_json_str(&read_text(path)?, &path.display().to_string())
    }

    /// The JSON text transformers would write (indent 2, sorted keys, final newline).
    pub fn to_json_string(&self) -> Result<String> {
        to_hf_json(&self.fields)
    }

    /// Writes the configuration to `path` (atomically, see [`crate::utils::atomic_file`]).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        write_atomic(path, self.to_json_string()?.as_bytes())
    }

    /// A raw field.
    pub fn get(&self, key: &str) -> Option<&Json> {
        self.fields.get(key)
    }

    /// Sets a raw field (kept in place if it exists, appended otherwise).
    pub fn set(&mut self, key: &str, value: Json) {
        self.fields.insert(key.to_owned(), value);
    }

    fn bad(&self, field: &str, expected: &str) -> Error {
        let found = self.fields.get(field).map_or_else(|| "nothing".to_owned(), |v| v.to_string());
        Error::Json { context: self.source.clone(), message: format!("field {field:?}: expected {expected}, got {found}") }
    }

    /// The names of the special-token fields present: the standard ones (`bos_token`, ...) then
    /// any other `*_token` field holding a token (e.g. Gemma 3's `image_token`), in file order.
    pub fn special_token_names(&self) -> Vec<String> {
        let mut names: Vec<String> = SPECIAL_TOKEN_NAMES.iter().filter(|n| self.fields.contains_key(**n)).map(|n| n.to_string()).collect();
        for (k, v) in &self.fields {
            if k.ends_with("_token") && !SPECIAL_TOKEN_NAMES.contains(&k.as_str()) && (v.is_string() || v.get("content").is_some()) {
                names.push(k.clone());
            }
        }
        names
    }

    /// The special token stored under `name` (`bos_token`, ...); `None` when absent or null.
    pub fn special_token(&self, name: &str) -> Result<Option<SpecialToken>> {
        match self.fields.get(name) {
            None | Some(Json::Null) => Ok(None),
            Some(v) => {
                serde_json::from_value(v.clone()).map(Some).map_err(|_| self.bad(name, "a string or an AddedToken object with \"content\""))
            }
        }
    }

    /// Sets (or with `None`, nulls) the special token `name`.
    pub fn set_special_token(&mut self, name: &str, token: Option<SpecialToken>) {
        let v = token.map_or(Json::Null, |t| serde_json::to_value(t).unwrap_or(Json::Null));
        self.set(name, v);
    }

    /// The flat name → text map of the special tokens that transformers passes to chat
    /// templates (its `special_tokens_map`): standard names first, then model-specific ones.
    pub fn special_tokens_map(&self) -> Map<String, Json> {
        let mut out = Map::new();
        for name in self.special_token_names() {
            if let Ok(Some(t)) = self.special_token(&name) {
                out.insert(name, Json::String(t.content().to_owned()));
            }
        }
        out
    }

    /// `added_tokens_decoder`: id → token, sorted by id.
    pub fn added_tokens_decoder(&self) -> Result<Vec<(u32, AddedTokenDict)>> {
        let Some(v) = self.fields.get("added_tokens_decoder") else { return Ok(Vec::new()) };
        let Json::Object(map) = v else { return Err(self.bad("added_tokens_decoder", "an object of id → token")) };
        let mut out = Vec::with_capacity(map.len());
        for (id, tok) in map {
            let id: u32 = id.parse().map_err(|_| self.bad("added_tokens_decoder", "integer ids as keys"))?;
            let tok: AddedTokenDict = serde_json::from_value(tok.clone())
                .map_err(|e| Error::Json { context: self.source.clone(), message: format!("added_tokens_decoder[{id}]: {e}") })?;
            out.push((id, tok));
        }
        out.sort_by_key(|(id, _)| *id);
        Ok(out)
    }

    /// Sets `added_tokens_decoder` from (id, token) pairs.
    pub fn set_added_tokens_decoder(&mut self, tokens: &[(u32, AddedTokenDict)]) {
        let map: Map<String, Json> = tokens.iter().map(|(id, t)| (id.to_string(), serde_json::to_value(t).unwrap_or(Json::Null))).collect();
        self.set("added_tokens_decoder", Json::Object(map));
    }

    /// The chat template(s) stored in the configuration.
    pub fn chat_templates(&self) -> Result<ChatTemplates> {
        ChatTemplates::from_json(self.fields.get("chat_template"), &self.source)
    }

    /// Stores chat templates in the configuration (removes the field for `None`).
    pub fn set_chat_templates(&mut self, templates: &ChatTemplates) {
        match templates {
            ChatTemplates::None => {
                self.fields.shift_remove("chat_template");
            }
            t => self.set("chat_template", t.to_json()),
        }
    }

    /// `model_max_length` in tokens; transformers' "no limit" (1e30) and other values past u64
    /// read as `u64::MAX`.
    pub fn model_max_length(&self) -> Option<u64> {
        let v = self.fields.get("model_max_length")?;
        v.as_u64().or_else(|| v.as_f64().filter(|f| *f >= 0.0).map(|f| if f >= u64::MAX as f64 { u64::MAX } else { f as u64 }))
    }

    /// A string field such as `padding_side`, `truncation_side` or `tokenizer_class`.
    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.fields.get(key).and_then(Json::as_str)
    }

    /// A boolean field such as `add_bos_token`, `add_eos_token` or `clean_up_tokenization_spaces`.
    pub fn get_bool(&self, key: &str) -> Option<bool> {
        self.fields.get(key).and_then(Json::as_bool)
    }
}

/// Reads a special_tokens_map.json: name → token (string or AddedToken object), plus any list
/// fields such as `additional_special_tokens`, kept as raw JSON.
pub fn read_special_tokens_map(path: impl AsRef<Path>) -> Result<Map<String, Json>> {
    let path = path.as_ref();
    parse_object(&read_text(path)?, &path.display().to_string())
}

/// Writes a special_tokens_map.json (see [`special_tokens_map_json`]) atomically.
pub fn write_special_tokens_map(config: &TokenizerConfig, tokenizer: Option<&Tokenizer>, path: impl AsRef<Path>) -> Result<()> {
    write_atomic(path, special_tokens_map_json(config, tokenizer)?.as_bytes())
}

/// The text of a special_tokens_map.json with the named special tokens of `config` (each as the
/// AddedToken object transformers writes: content, lstrip, normalized, rstrip, single_word) and
/// its `additional_special_tokens`/`extra_special_tokens` list if any.
pub fn special_tokens_map_json(config: &TokenizerConfig, tokenizer: Option<&Tokenizer>) -> Result<String> {
    let mut map = Map::new();
    let added = config.added_tokens_decoder()?;
    for name in config.special_token_names() {
        let Some(tok) = config.special_token(&name)? else { continue };
        let content = tok.content();
        let from_decoder = added.iter().find(|(_, t)| t.content == content).map(|(_, t)| t.clone());
        let from_tokenizer = tokenizer.and_then(|tk| {
            tk.get_added_vocabulary()
                .sorted_with_ids()
                .into_iter()
                .find(|t| t.token.content == content)
                .map(|t| AddedTokenDict::from_added_token(&t.token))
        });
        let mut dict = match (tok, from_decoder.or(from_tokenizer)) {
            (SpecialToken::Added(d), _) => d,
            (_, Some(d)) => d,
            (SpecialToken::Content(c), None) => AddedTokenDict {
                type_name: None,
                content: c,
                lstrip: false,
                normalized: false,
                rstrip: false,
                single_word: false,
                special: None,
            },
        };
        dict.type_name = None;
        dict.special = None;
        map.insert(name, serde_json::to_value(dict).unwrap_or(Json::Null));
    }
    for key in ["additional_special_tokens", "extra_special_tokens"] {
        if let Some(v @ Json::Array(a)) = config.get(key) {
            if !a.is_empty() {
                map.insert(key.to_owned(), v.clone());
            }
        }
    }
    to_hf_json(&map)
}

/// The configuration of a pretrained directory as transformers reads it: `config_path` (its
/// tokenizer_config.json, when there is one), special_tokens_map.json merged in when the
/// configuration has no `added_tokens_decoder`, and the chat templates (`chat_template.jinja`
/// and `additional_chat_templates/*.jinja` when present, which win over the configuration's
/// `chat_template`, else the configuration's). The one reader of these files: the CLI and the
/// Python package (`AutoTokenizer.from_pretrained`, through [`directory_config`]) use it.
pub fn read_config(dir: &Path, config_path: Option<&Path>) -> Result<(TokenizerConfig, ChatTemplates)> {
    let mut config = match config_path {
        Some(p) => TokenizerConfig::from_file(p)?,
        None => TokenizerConfig::new(),
    };
    // transformers reads special_tokens_map.json only for configs without added_tokens_decoder.
    let stm = dir.join(SPECIAL_TOKENS_MAP_FILE);
    if stm.is_file() && config.get("added_tokens_decoder").is_none() {
        for (k, v) in read_special_tokens_map(&stm)? {
            config.set(&k, v);
        }
    }
    let chat_templates = read_chat_templates(dir, &config)?;
    Ok((config, chat_templates))
}

/// [`read_config`] of a directory (its tokenizer_config.json if any) as one configuration:
/// the chat templates it found are its `chat_template` field (a string, or a list of
/// `{"name", "template"}` objects), as transformers' `from_pretrained` passes them on.
pub fn directory_config(dir: &Path) -> Result<TokenizerConfig> {
    let config_path = dir.join(TOKENIZER_CONFIG_FILE);
    let (mut config, templates) = read_config(dir, config_path.is_file().then_some(config_path.as_path()))?;
    config.set_chat_templates(&templates);
    Ok(config)
}

/// Jinja template files override the configuration's `chat_template`.
fn read_chat_templates(dir: &Path, config: &TokenizerConfig) -> Result<ChatTemplates> {
    let mut named = Vec::new();
    let default = dir.join(CHAT_TEMPLATE_FILE);
    if default.is_file() {
        named.push(("default".to_owned(), read_text(&default)?));
    }
    let extra = dir.join(CHAT_TEMPLATE_DIR);
    if extra.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&extra)
            .map_err(|source| Error::Io { path: extra.clone(), source })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "jinja"))
            .collect();
        files.sort();
        for f in files {
            let name = f.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            named.push((name, read_text(&f)?));
        }
    }
    Ok(match named.len() {
        0 => config.chat_templates()?,
        1 if named[0].0 == "default" => ChatTemplates::Single(named.remove(0).1),
        _ => ChatTemplates::Named(named),
    })
}

/// A transformers pretrained tokenizer: the tokenizer (when a tokenizer.json is there), its
/// configuration, and its chat templates.
#[derive(Debug)]
pub struct PretrainedTokenizer {
    /// The tokenizer from tokenizer.json (`None` when only a configuration was given).
    pub tokenizer: Option<Tokenizer>,
    /// tokenizer_config.json (special_tokens_map.json merged in as transformers does).
    pub config: TokenizerConfig,
    /// The chat templates (from chat_template.jinja / additional_chat_templates/ when present,
    /// else from the configuration).
    pub chat_templates: ChatTemplates,
}

impl PretrainedTokenizer {
    /// Loads a directory (tokenizer.json, tokenizer_config.json, special_tokens_map.json,
    /// chat_template.jinja, additional_chat_templates/), or a tokenizer_config.json file path
    /// (its directory is searched for the others). At least one of tokenizer.json and
    /// tokenizer_config.json must exist.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let (dir, config_path): (PathBuf, PathBuf) = if path.is_dir() {
            (path.to_owned(), path.join(TOKENIZER_CONFIG_FILE))
        } else if path.is_file() {
            (path.parent().unwrap_or(Path::new(".")).to_owned(), path.to_owned())
        } else {
            return Err(Error::Io { path: path.to_owned(), source: std::io::Error::from(std::io::ErrorKind::NotFound) });
        };
        let tokenizer_path = dir.join(TOKENIZER_FILE);
        let has_tokenizer = tokenizer_path.is_file() && config_path != tokenizer_path;
        let has_config = config_path.is_file() && config_path != tokenizer_path;
        if !has_tokenizer && !has_config {
            return Err(Error::invalid(format!("{}: neither {TOKENIZER_FILE} nor {TOKENIZER_CONFIG_FILE} found", dir.display())));
        }
        let (config, chat_templates) = read_config(&dir, has_config.then_some(config_path.as_path()))?;
        let tokenizer = if has_tokenizer { Some(Tokenizer::from_file(&tokenizer_path)?) } else { None };
        Ok(PretrainedTokenizer { tokenizer, config, chat_templates })
    }

    /// The variables transformers adds to every chat rendering: the special tokens.
    pub fn special_tokens_map(&self) -> Map<String, Json> {
        self.config.special_tokens_map()
    }

    /// Renders `messages` with the tokenizer's chat template (or `template`, a name or a
    /// template text), like transformers' `apply_chat_template(..., tokenize=False)`: the special
    /// tokens are template variables, overridden by `options.kwargs`.
    pub fn apply_chat_template(&self, messages: &Json, options: &ChatOptions, template: Option<&str>) -> Result<String> {
        let source = self.chat_templates.select(template, options.tools.is_some())?;
        let compiled = ChatTemplate::new(source)?;
        let mut opts = options.clone();
        let mut kwargs = self.special_tokens_map();
        kwargs.extend(options.kwargs.clone());
        opts.kwargs = kwargs;
        compiled.render(messages, &opts)
    }

    /// Renders then encodes without adding special tokens (transformers' `tokenize=True`).
    pub fn encode_chat(&self, messages: &Json, options: &ChatOptions, template: Option<&str>) -> Result<Vec<u32>> {
        let text = self.apply_chat_template(messages, options, template)?;
        let tok = self.tokenizer.as_ref().ok_or_else(|| Error::invalid("cannot encode the chat: no tokenizer.json was loaded"))?;
        Ok(tok.encode(text.as_str(), false)?.get_ids().to_vec())
    }
}

/// The Minimind chat template, byte for byte as the Minimind project (jingyaogong/minimind,
/// Apache-2.0) publishes it in its tokenizer_config.json: Minimind models are trained on its
/// exact output, so it is embedded verbatim (no comment can be added inside it without changing
/// the `chat_template` string). ChatML (`<|im_start|>role\n...<|im_end|>\n`); a conversation
/// without a system message gets the default system turn `You are a helpful assistant`; tools
/// are listed in the system turn with Minimind's preamble; assistant tool calls are
/// `<tool_call>` JSON blocks; tool results are `<tool_response>` blocks inside a user turn; with
/// `enable_thinking` false the generation prompt ends with an empty `<think>\n\n</think>\n\n`.
/// Its sha256 is [`MINIMIND_CHAT_TEMPLATE_SHA256`]; origin and licence: LICENSES/minimind-chat-template.txt.
pub const MINIMIND_CHAT_TEMPLATE: &str = include_str!("minimind_chat_template.jinja");

/// sha256 (hex) of Minimind's published chat template, [`MINIMIND_CHAT_TEMPLATE`].
pub const MINIMIND_CHAT_TEMPLATE_SHA256: &str = "4f57494cd38c0e4e50e27f4632fb6907414a68cc48d0bbc48da5449c596c69fa";

/// The tokenizer_config.json of the Minimind recipe for a tokenizer whose added tokens are
/// `<|endoftext|>`=0, `<|im_start|>`=1, `<|im_end|>`=2: bos `<|im_start|>`, eos `<|im_end|>`,
/// pad and unk `<|endoftext|>`, model_max_length 32768, PreTrainedTokenizerFast, and
/// `chat_template` (by default [`MINIMIND_CHAT_TEMPLATE`]; another one is compiled first, so a
/// template that does not compile is an error here, not at the first render).
pub fn minimind_tokenizer_config(chat_template: Option<&str>) -> Result<TokenizerConfig> {
    let template = chat_template.unwrap_or(MINIMIND_CHAT_TEMPLATE);
    if chat_template.is_some() {
        ChatTemplate::new(template)?;
    }
    let special = |content: &str| AddedTokenDict {
        type_name: None,
        content: content.to_owned(),
        lstrip: false,
        normalized: false,
        rstrip: false,
        single_word: false,
        special: Some(true),
    };
    let mut cfg = TokenizerConfig::new();
    cfg.set("add_bos_token", Json::Bool(false));
    cfg.set("add_eos_token", Json::Bool(false));
    cfg.set("add_prefix_space", Json::Bool(false));
    cfg.set_added_tokens_decoder(&[(0, special("<|endoftext|>")), (1, special("<|im_start|>")), (2, special("<|im_end|>"))]);
    cfg.set("additional_special_tokens", Json::Array(Vec::new()));
    cfg.set_special_token("bos_token", Some("<|im_start|>".into()));
    cfg.set("clean_up_tokenization_spaces", Json::Bool(false));
    cfg.set_special_token("eos_token", Some("<|im_end|>".into()));
    cfg.set("legacy", Json::Bool(true));
    cfg.set("model_max_length", Json::from(32768u64));
    cfg.set_special_token("pad_token", Some("<|endoftext|>".into()));
    cfg.set("sp_model_kwargs", Json::Object(Map::new()));
    cfg.set("spaces_between_special_tokens", Json::Bool(false));
    cfg.set("tokenizer_class", Json::String("PreTrainedTokenizerFast".into()));
    cfg.set_special_token("unk_token", Some("<|endoftext|>".into()));
    cfg.set_chat_templates(&ChatTemplates::Single(template.to_owned()));
    Ok(cfg)
}

/// Writes the Minimind tokenizer_config.json and special_tokens_map.json into `dir` (beside its
/// tokenizer.json), both or neither. Checks that `tokenizer`, when given, has the three special
/// tokens at ids 0, 1, 2. `chat_template` replaces the Minimind template (see
/// [`minimind_tokenizer_config`]).
pub fn write_minimind_config(dir: impl AsRef<Path>, tokenizer: Option<&Tokenizer>, chat_template: Option<&str>) -> Result<()> {
    let mut files = AtomicFiles::new();
    minimind_config_files(dir.as_ref(), tokenizer, chat_template, &mut files)?;
    files.commit()
}

/// Writes a trained Minimind tokenizer directory: tokenizer.json, vocab.json, merges.txt,
/// tokenizer_config.json and special_tokens_map.json, creating `dir` if needed. The files are
/// renamed into place only once all five are written, so a failed run leaves the previous
/// run's files as they were. `chat_template` replaces the Minimind template. Returns the
/// tokenizer.json path.
pub fn write_minimind_dir(dir: impl AsRef<Path>, tokenizer: &Tokenizer, chat_template: Option<&str>) -> Result<PathBuf> {
    let dir = dir.as_ref();
    let ModelWrapper::BPE(bpe) = tokenizer.get_model() else {
        return Err(Error::invalid("the Minimind tokenizer directory needs a BPE model"));
    };
    std::fs::create_dir_all(dir).map_err(|source| Error::Io { path: dir.to_owned(), source })?;
    let mut files = AtomicFiles::new();
    let path = dir.join(TOKENIZER_FILE);
    files.write(&path, tokenizer.to_json(true)?.as_bytes())?;
    crate::formats::gpt2_files::vocab_merges_files(bpe, dir, None, &mut files)?;
    minimind_config_files(dir, Some(tokenizer), chat_template, &mut files)?;
    files.commit()?;
    Ok(path)
}

/// Adds the Minimind tokenizer_config.json and special_tokens_map.json to `files`.
fn minimind_config_files(dir: &Path, tokenizer: Option<&Tokenizer>, chat_template: Option<&str>, files: &mut AtomicFiles) -> Result<()> {
    let cfg = minimind_tokenizer_config(chat_template)?;
    if let Some(tok) = tokenizer {
        for (id, t) in cfg.added_tokens_decoder()? {
            if tok.token_to_id(&t.content) != Some(id) {
                return Err(Error::invalid(format!(
                    "the Minimind config needs {:?} at id {id}, but the tokenizer has it at {:?}",
                    t.content,
                    tok.token_to_id(&t.content)
                )));
            }
        }
    }
    files.write(dir.join(TOKENIZER_CONFIG_FILE), cfg.to_json_string()?.as_bytes())?;
    files.write(dir.join(SPECIAL_TOKENS_MAP_FILE), special_tokens_map_json(&cfg, tokenizer)?.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Shaped like DeepSeek-V3's tokenizer_config.json: `__type` AddedToken forms, a huge
    /// model_max_length, unknown fields, a null unk_token.
    const DEEPSEEK_LIKE: &str = r#"{
      "add_bos_token": true,
      "bos_token": {"__type": "AddedToken", "content": "<｜begin▁of▁sentence｜>", "lstrip": false, "normalized": true, "rstrip": false, "single_word": false},
      "eos_token": "<｜end▁of▁sentence｜>",
      "unk_token": null,
      "image_token": "<image>",
      "legacy": true,
      "model_max_length": 1000000000000000019884624838656,
      "padding_side": "left",
      "added_tokens_decoder": {"10": {"content": "<b>", "lstrip": false, "normalized": false, "rstrip": false, "single_word": false, "special": true},
                               "2": {"content": "<a>", "special": false}},
      "custom_field": {"keep": [1, 2]},
      "chat_template": [{"name": "default", "template": "D{{ bos_token }}"}, {"name": "tool_use", "template": "T"}]
    }"#;

    #[test]
    fn reads_typed_fields_and_keeps_unknown_ones() {
        let cfg = TokenizerConfig::from_json_str(DEEPSEEK_LIKE, "test").unwrap();
        let bos = cfg.special_token("bos_token").unwrap().unwrap();
        assert_eq!(bos.content(), "<｜begin▁of▁sentence｜>");
        assert!(matches!(bos, SpecialToken::Added(AddedTokenDict { normalized: true, .. })));
        assert_eq!(cfg.special_token("unk_token").unwrap(), None);
        assert_eq!(cfg.model_max_length(), Some(u64::MAX));
        assert_eq!(cfg.get_str("padding_side"), Some("left"));
        assert_eq!(cfg.get_bool("add_bos_token"), Some(true));
        let map = cfg.special_tokens_map();
        assert_eq!(
            Json::Object(map),
            json!({"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>", "image_token": "<image>"})
        );
        let added = cfg.added_tokens_decoder().unwrap();
        assert_eq!(added.iter().map(|(i, t)| (*i, t.content.as_str())).collect::<Vec<_>>(), [(2, "<a>"), (10, "<b>")]);
        assert!(added[0].1.normalized && added[1].1.special == Some(true));
        let t = cfg.chat_templates().unwrap();
        assert_eq!(t.select(None, false).unwrap(), "D{{ bos_token }}");
        assert_eq!(t.select(None, true).unwrap(), "T");
        assert_eq!(t.select(Some("tool_use"), false).unwrap(), "T");
        assert_eq!(t.select(Some("{{ x }}"), false).unwrap(), "{{ x }}");

        // Save and reload: same fields (unknown ones included), keys sorted as transformers writes them.
        let text = cfg.to_json_string().unwrap();
        assert!(text.starts_with("{\n  \"add_bos_token\": true,\n  \"added_tokens_decoder\""));
        assert!(text.ends_with("}\n"));
        let back = TokenizerConfig::from_json_str(&text, "saved").unwrap();
        assert_eq!(back.get("custom_field"), Some(&json!({"keep": [1, 2]})));
        assert_eq!(back.special_token("bos_token").unwrap(), Some(bos));
        assert_eq!(back.chat_templates().unwrap(), t);
    }

    #[test]
    fn bad_configs_name_the_field() {
        let e = TokenizerConfig::from_json_str(r#"{"bos_token": 3}"#, "cfg.json").unwrap_err().to_string();
        assert!(e.contains("cfg.json") && e.contains("bos_token"), "{e}");
        let e = TokenizerConfig::from_json_str(r#"{"chat_template": 3}"#, "cfg.json").unwrap_err().to_string();
        assert!(e.contains("chat_template"), "{e}");
        let e = TokenizerConfig::from_json_str(r#"{"added_tokens_decoder": {"x": {}}}"#, "cfg.json").unwrap_err().to_string();
        assert!(e.contains("added_tokens_decoder"), "{e}");
        assert!(TokenizerConfig::from_json_str("[1]", "cfg.json").is_err());
        assert!(TokenizerConfig::from_json_str("{", "cfg.json").is_err());
        let none = ChatTemplates::None.select(None, false).unwrap_err().to_string();
        assert!(none.contains("no chat template"), "{none}");
        let named = ChatTemplates::Named(vec![("b".into(), "x".into())]).select(None, false).unwrap_err().to_string();
        assert!(named.contains("[\"b\"]"), "{named}");
    }

    #[test]
    fn minimind_config_and_template() {
        let cfg = minimind_tokenizer_config(None).unwrap();
        assert_eq!(
            Json::Object(cfg.special_tokens_map()),
            json!({"bos_token": "<|im_start|>", "eos_token": "<|im_end|>", "unk_token": "<|endoftext|>", "pad_token": "<|endoftext|>"})
        );
        assert_eq!(cfg.model_max_length(), Some(32768));
        assert_eq!(cfg.get_str("tokenizer_class"), Some("PreTrainedTokenizerFast"));
        let ids: Vec<(u32, String)> = cfg.added_tokens_decoder().unwrap().into_iter().map(|(i, t)| (i, t.content)).collect();
        assert_eq!(ids, [(0, "<|endoftext|>".into()), (1, "<|im_start|>".into()), (2, "<|im_end|>".into())]);

        let dir = std::env::temp_dir().join(format!("tokenkit-minimind-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        write_minimind_config(&dir, None, None).unwrap();
        let loaded = PretrainedTokenizer::from_path(&dir).unwrap();
        assert!(loaded.tokenizer.is_none());
        assert_eq!(loaded.config.fields, cfg.fields);
        let stm = read_special_tokens_map(dir.join(SPECIAL_TOKENS_MAP_FILE)).unwrap();
        assert_eq!(
            stm["bos_token"],
            json!({"content": "<|im_start|>", "lstrip": false, "normalized": false, "rstrip": false, "single_word": false})
        );

        // Expected strings: transformers 5.23.0 render_jinja_template with this template.
        let tools = vec![json!({"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}})];
        let msgs = json!([{"role": "system", "content": "S"}, {"role": "user", "content": "1+2?"},
            {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "add", "arguments": {"a": 1, "b": 2}}}]},
            {"role": "tool", "content": "3"}, {"role": "assistant", "content": "3", "reasoning_content": "easy"}]);
        let mut opts = ChatOptions { add_generation_prompt: true, tools: Some(tools), ..ChatOptions::default() };
        opts.kwargs.insert("enable_thinking".into(), Json::Bool(false));
        let got = loaded.apply_chat_template(&msgs, &opts, None).unwrap();
        assert_eq!(got, "<|im_start|>system\nS\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"add\", \"parameters\": {\"type\": \"object\"}}}\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n<|im_start|>user\n1+2?<|im_end|>\n<|im_start|>assistant\n<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n3\n</tool_response><|im_end|>\n<|im_start|>assistant\n3<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
        let plain = loaded
            .apply_chat_template(
                &json!(msgs.as_array().unwrap()[..2]),
                &ChatOptions { add_generation_prompt: true, ..ChatOptions::default() },
                None,
            )
            .unwrap();
        assert_eq!(plain, "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\n1+2?<|im_end|>\n<|im_start|>assistant\n");
        // No system message: Minimind's default system turn.
        let plain = loaded
            .apply_chat_template(
                &json!(msgs.as_array().unwrap()[1..2]),
                &ChatOptions { add_generation_prompt: true, ..ChatOptions::default() },
                None,
            )
            .unwrap();
        assert_eq!(
            plain,
            "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\n1+2?<|im_end|>\n<|im_start|>assistant\n"
        );
        // The embedded template is Minimind's published one, byte for byte.
        use sha2::{Digest, Sha256};
        let sha: String = Sha256::digest(MINIMIND_CHAT_TEMPLATE.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(sha, MINIMIND_CHAT_TEMPLATE_SHA256);
        // A user's template replaces it; one that does not compile is refused before writing.
        let custom = minimind_tokenizer_config(Some("{{ messages[0].content }}")).unwrap();
        assert_eq!(custom.chat_templates().unwrap().select(None, false).unwrap(), "{{ messages[0].content }}");
        let e = write_minimind_config(&dir, None, Some("{% for %}")).unwrap_err().to_string();
        assert!(e.contains("does not compile"), "{e}");
        assert!(loaded.encode_chat(&msgs, &opts, None).is_err());

        // A chat_template.jinja beside the config overrides the config's template.
        std::fs::write(dir.join(CHAT_TEMPLATE_FILE), "J{{ eos_token }}").unwrap();
        let loaded = PretrainedTokenizer::from_path(dir.join(TOKENIZER_CONFIG_FILE)).unwrap();
        assert_eq!(loaded.apply_chat_template(&msgs, &ChatOptions::default(), None).unwrap(), "J<|im_end|>");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn legacy_special_tokens_map_is_merged_without_added_tokens_decoder() {
        let dir = std::env::temp_dir().join(format!("tokenkit-stm-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(TOKENIZER_CONFIG_FILE), r#"{"bos_token": "<old>", "chat_template": "{{ bos_token }}|{{ pad_token }}"}"#)
            .unwrap();
        std::fs::write(dir.join(SPECIAL_TOKENS_MAP_FILE), r#"{"bos_token": {"content": "<s>", "lstrip": false, "normalized": false, "rstrip": false, "single_word": false}, "pad_token": "<pad>"}"#).unwrap();
        let loaded = PretrainedTokenizer::from_path(&dir).unwrap();
        let msgs = json!([{"role": "user", "content": "x"}]);
        assert_eq!(loaded.apply_chat_template(&msgs, &ChatOptions::default(), None).unwrap(), "<s>|<pad>");
        let mut opts = ChatOptions::default();
        opts.kwargs.insert("pad_token".into(), json!("P"));
        assert_eq!(loaded.apply_chat_template(&msgs, &opts, None).unwrap(), "<s>|P");
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(PretrainedTokenizer::from_path(&dir).is_err());
    }
}
