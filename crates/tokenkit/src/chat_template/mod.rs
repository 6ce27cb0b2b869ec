//! Chat templates: Jinja templates that turn a conversation (a list of messages) into the
//! prompt text a chat model was trained on, rendered exactly as `transformers`'
//! `apply_chat_template(..., tokenize=False)` renders them.
//!
//! transformers renders with jinja2 (`trim_blocks`, `lstrip_blocks`, the loop controls
//! extension) in a sandbox that adds `raise_exception`, `strftime_now`, its own `tojson` filter
//! (`json.dumps` with `ensure_ascii=False`, key order kept) and a `{% generation %}` tag. Here
//! the template runs on `minijinja`, with Python's string/dict methods from
//! `minijinja-contrib`'s pycompat layer, and with values printed the way Python prints them
//! (`None`, `True`, `{'a': 1}`), so that the two renderers produce the same text.
//!
//! The context a template sees is the one transformers builds: the tokenizer's named special
//! tokens (`bos_token`, `eos_token`, ...), then the caller's extra keyword arguments (which win),
//! then `messages`, `tools`, `documents` and `add_generation_prompt`.
//!
//! A render is bounded in steps, output and memory ([`ChatLimits`]); running out of a budget is
//! an error that names it. Message content is data, never template code: `{{ ... }}` inside a
//! message is printed as it is.

mod limits;
mod pyjson;
mod strftime;

use minijinja::machinery::{self, Vm};
use minijinja::value::{Kwargs, Rest};
use minijinja::{Environment, ErrorKind, State, Value};
use serde_json::{Map, Value as Json};

use crate::{Error, Result};

pub use limits::{ChatLimits, OUTPUT_PER_INPUT_BYTE, STEPS_PER_INPUT_BYTE, TOTAL_FACTOR};
pub use pyjson::{py_repr, PyJsonOptions};

/// Name under which the template is registered in its environment.
const TEMPLATE_NAME: &str = "chat_template";

/// The fields a message's reasoning may be passed under, the standard one first (transformers'
/// `_REASONING_FIELDS`).
const REASONING_FIELDS: [&str; 3] = ["reasoning_content", "thinking", "reasoning"];

/// Marker appended to the message being continued (transformers' `continue_final_message` tag).
const CONTINUE_TAG: &str = "CONTINUE_FINAL_MESSAGE_TAG ";

/// What to render besides the messages: the other arguments of transformers'
/// `apply_chat_template`.
#[derive(Debug, Clone, Default)]
pub struct ChatOptions {
    /// Append the header that starts a new assistant turn.
    pub add_generation_prompt: bool,
    /// Continue the last message instead of closing it: `Some("content")` (or another field
    /// name, e.g. `"reasoning_content"`) cuts the rendering right after that field's text.
    /// Cannot be combined with `add_generation_prompt`.
    pub continue_final_message: Option<String>,
    /// Tool definitions (JSON schemas, usually `{"type": "function", "function": {...}}`).
    pub tools: Option<Vec<Json>>,
    /// Documents for retrieval-augmented templates (objects with `title` and `text`).
    pub documents: Option<Vec<Json>>,
    /// Extra template variables: the special tokens (`bos_token`, ...) and any keyword argument
    /// such as `enable_thinking` or `date_string`. Later entries win.
    pub kwargs: Map<String, Json>,
}

/// A compiled chat template.
pub struct ChatTemplate {
    env: Environment<'static>,
    source: String,
    limits: ChatLimits,
}

impl std::fmt::Debug for ChatTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatTemplate").field("source", &self.source).finish()
    }
}

impl ChatTemplate {
    /// Compiles a Jinja chat template (the `chat_template` string of a tokenizer_config.json)
    /// with the default [`ChatLimits`].
    pub fn new(source: impl Into<String>) -> Result<Self> {
        Self::with_limits(source, ChatLimits::default())
    }

    /// Compiles a Jinja chat template whose renders are bounded by `limits`.
    pub fn with_limits(source: impl Into<String>, limits: ChatLimits) -> Result<Self> {
        let source = source.into();
        let mut env = Environment::new();
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_fuel(Some(limits.max_steps));
        env.set_unknown_method_callback(|state, value, method, args| {
            limits::precheck_method(value, method, args)?;
            minijinja_contrib::pycompat::unknown_method_callback(state, value, method, args)
        });
        env.set_formatter(|out, _state, value| {
            let write_err = |_| minijinja::Error::new(ErrorKind::WriteFailure, "write failed");
            if value.is_undefined() {
                return Ok(());
            }
            if let Some(text) = value.as_str() {
                limits::charge_output(text.len())?;
                return out.write_str(text).map_err(write_err);
            }
            limits::precheck_print(value)?;
            let text = pyjson::py_str(value);
            limits::charge_output(text.len())?;
            out.write_str(&text).map_err(write_err)
        });
        env.add_filter("tojson", tojson_filter);
        env.add_filter("string", |v: Value| -> std::result::Result<String, minijinja::Error> {
            limits::precheck_print(&v)?;
            Ok(pyjson::py_str(&v))
        });
        env.add_filter("trim", trim_filter);
        env.add_filter("join", join_filter);
        env.add_filter("replace", limits::replace_filter);
        env.add_filter("indent", limits::indent_filter);
        env.add_filter("format", limits::format_filter);
        env.add_function(limits::CHECK_FN, limits::check_value);
        env.add_function("raise_exception", raise_exception);
        env.add_function("strftime_now", |format: String| strftime::strftime_now(&format));
        env.add_template_owned(TEMPLATE_NAME, rewrite_generation_tags(&source))
            .map_err(|e| Error::invalid(format!("chat template does not compile: {}", describe(&e))))?;
        Ok(ChatTemplate { env, source, limits })
    }

    /// The bounds of each render.
    pub fn limits(&self) -> ChatLimits {
        self.limits
    }

    /// The template text as given.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Renders a conversation: `messages` is a JSON array of message objects (`role`, `content`,
    /// optionally `tool_calls`, `reasoning_content`, ...). Returns the prompt text.
    pub fn render(&self, messages: &Json, options: &ChatOptions) -> Result<String> {
        let Json::Array(list) = messages else {
            return Err(Error::invalid("chat messages must be a JSON array of message objects"));
        };
        if list.is_empty() {
            return Err(Error::invalid("cannot apply a chat template to an empty conversation"));
        }
        let mut chat = Vec::with_capacity(list.len());
        for (i, m) in list.iter().enumerate() {
            let Json::Object(m) = m else {
                return Err(Error::invalid(format!("chat message {i} must be a JSON object, got {m}")));
            };
            // transformers drops the fields whose value is None before rendering.
            let m: Map<String, Json> = m.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), v.clone())).collect();
            chat.push(alias_reasoning_fields(&m));
        }
        for (what, list) in [("tools", &options.tools), ("documents", &options.documents)] {
            if let Some(items) = list {
                if let Some(bad) = items.iter().find(|t| !t.is_object()) {
                    return Err(Error::invalid(format!("every entry of {what} must be a JSON object, got {bad}")));
                }
            }
        }
        let continued = match &options.continue_final_message {
            Some(field) => {
                if options.add_generation_prompt {
                    return Err(Error::invalid("continue_final_message and add_generation_prompt cannot be used together"));
                }
                Some(self.tag_final_message(&mut chat, field)?)
            }
            None => None,
        };

        let mut ctx: Map<String, Json> = options.kwargs.clone();
        ctx.insert("messages".into(), Json::Array(chat.into_iter().map(Json::Object).collect()));
        ctx.insert("tools".into(), options.tools.clone().map_or(Json::Null, Json::Array));
        ctx.insert("documents".into(), options.documents.clone().map_or(Json::Null, Json::Array));
        ctx.insert("add_generation_prompt".into(), Json::Bool(options.add_generation_prompt));
        let rendered = self.run(&ctx)?;
        match continued {
            Some(final_text) => cut_at_continue_tag(rendered, &final_text),
            None => Ok(rendered),
        }
    }

    /// Renders the template over `ctx` within the budgets (see [`ChatLimits`]): the compiled
    /// instructions are run through a copy that checks each value it builds.
    fn run(&self, ctx: &Map<String, Json>) -> Result<String> {
        let template = self.env.get_template(TEMPLATE_NAME).map_err(|e| Error::invalid(format!("chat template: {}", describe(&e))))?;
        let compiled = machinery::get_compiled_template(&template);
        let instructions = limits::instrument(&compiled.instructions);
        let blocks = limits::instrument_blocks(&compiled.blocks);
        let input_len = ctx.iter().map(|(k, v)| k.len() + limits::json_len(v)).sum::<usize>();
        let max_output = self.limits.max_output_bytes.max(input_len.saturating_mul(limits::OUTPUT_PER_INPUT_BYTE));
        let max_steps = self.limits.max_steps.max((input_len as u64).saturating_mul(limits::STEPS_PER_INPUT_BYTE));
        // minijinja reads the fuel from the environment: a larger input runs on a copy (the
        // compiled template is shared, not copied).
        let scaled;
        let env = if max_steps > self.limits.max_steps {
            let mut e = self.env.clone();
            e.set_fuel(Some(max_steps));
            scaled = e;
            &scaled
        } else {
            &self.env
        };
        let budget = limits::BudgetGuard::start(max_output);
        let mut rendered = String::with_capacity(compiled.buffer_size_hint);
        let result = {
            let mut out = machinery::make_string_output(&mut rendered);
            Vm::new(env).eval(&instructions, Value::from_serialize(ctx), &blocks, &mut out, compiled.initial_auto_escape).map(|_| ())
        };
        match result {
            Ok(()) => Ok(rendered),
            Err(e) if e.kind() == ErrorKind::OutOfFuel => Err(Error::invalid(with_line(
                format!(
                    "chat template stopped: it ran more than {max_steps} steps (the step budget), a loop or \
                     recursion too long to finish"
                ),
                e.line(),
            ))),
            Err(e) => Err(Error::invalid(match budget.exceeded() {
                Some(msg) => with_line(format!("chat template stopped: {msg}"), e.line()),
                None => format!("chat template failed: {}", describe(&e)),
            })),
        }
    }

    /// Appends the continue tag to the field being continued of the last message (as
    /// transformers does); returns that field's original text.
    fn tag_final_message(&self, chat: &mut [Map<String, Json>], field: &str) -> Result<String> {
        let Some(last) = chat.last_mut() else {
            return Err(Error::invalid("continue_final_message is set but the conversation is empty"));
        };
        let final_value = match last.get(field) {
            Some(v) if !v.is_null() => v.clone(),
            _ => return Err(Error::invalid(format!("continue_final_message is set but the final message has no {field:?} to continue"))),
        };
        let fields: Vec<String> = if REASONING_FIELDS.contains(&field) {
            REASONING_FIELDS.iter().filter(|f| last.get(**f) == Some(&final_value)).map(|f| f.to_string()).collect()
        } else {
            vec![field.to_owned()]
        };
        if !fields.iter().any(|f| self.source.contains(f.as_str())) {
            return Err(Error::invalid(format!("continue_final_message is set to {field:?} but the chat template never reads that field")));
        }
        match final_value {
            Json::Array(mut blocks) => {
                let Some((idx, text)) = blocks
                    .iter()
                    .enumerate()
                    .rev()
                    .find_map(|(i, b)| b.get("text").map(|t| (i, t.as_str().map(str::to_owned).unwrap_or_else(|| t.to_string()))))
                else {
                    return Err(Error::invalid("continue_final_message is set but the final message has no text block to continue"));
                };
                if let Some(Json::Object(block)) = blocks.get_mut(idx) {
                    block.insert("text".into(), Json::String(format!("{text}{CONTINUE_TAG}")));
                }
                last.insert(field.to_owned(), Json::Array(blocks));
                Ok(text)
            }
            Json::String(text) => {
                for f in &fields {
                    last.insert(f.clone(), Json::String(format!("{text}{CONTINUE_TAG}")));
                }
                Ok(text)
            }
            other => Err(Error::invalid(format!(
                "continue_final_message: the final message's {field:?} must be a string or a list of blocks, got {other}"
            ))),
        }
    }
}

/// Cuts the rendered chat right before the continue tag, as transformers does.
fn cut_at_continue_tag(rendered: String, final_text: &str) -> Result<String> {
    let tag = CONTINUE_TAG.trim();
    if !rendered.contains(final_text.trim()) || !rendered.contains(tag) {
        return Err(Error::invalid(
            "continue_final_message is set but the final message does not appear in the rendered chat \
             (the template changes or drops it)",
        ));
    }
    let loc = rendered.rfind(tag).unwrap_or(rendered.len());
    if rendered[loc..].starts_with(CONTINUE_TAG) {
        Ok(rendered[..loc].to_owned())
    } else {
        Ok(rendered[..loc].trim_end().to_owned())
    }
}

/// transformers copies a message's reasoning under every name templates read: `thinking` first,
/// then the message's own fields, then `reasoning_content` (Python's
/// `{"thinking": r, **message, "reasoning_content": r}`, whose key order we keep).
fn alias_reasoning_fields(message: &Map<String, Json>) -> Map<String, Json> {
    let reasoning = REASONING_FIELDS.iter().find_map(|f| message.get(*f).filter(|v| !v.is_null()));
    let Some(reasoning) = reasoning else { return message.clone() };
    let mut out = Map::with_capacity(message.len() + 2);
    out.insert("thinking".into(), reasoning.clone());
    for (k, v) in message {
        out.insert(k.clone(), v.clone());
    }
    out.insert("reasoning_content".into(), reasoning.clone());
    out
}

/// transformers' `{% generation %}...{% endgeneration %}` tag only records where the assistant's
/// text is; its output is its body. It becomes an always-true `if` block, which keeps the
/// whitespace-control markers and trim_blocks/lstrip_blocks behaviour of the original tags.
fn rewrite_generation_tags(source: &str) -> String {
    if !source.contains("generation") {
        return source.to_owned();
    }
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(start) = rest.find("{%") {
        out.push_str(&rest[..start]);
        let tag = &rest[start..];
        let Some(end) = tag.find("%}") else {
            out.push_str(tag);
            return out;
        };
        let body = &tag[2..end];
        let (lead, inner) = split_marker_front(body);
        let (inner, trail) = split_marker_back(inner);
        match inner.trim() {
            "generation" => out.push_str(&format!("{{%{lead} if true {trail}%}}")),
            "endgeneration" => out.push_str(&format!("{{%{lead} endif {trail}%}}")),
            _ => out.push_str(&tag[..end + 2]),
        }
        rest = &tag[end + 2..];
    }
    out.push_str(rest);
    out
}

fn split_marker_front(s: &str) -> (&str, &str) {
    match s.as_bytes().first() {
        Some(b'-' | b'+') => (&s[..1], &s[1..]),
        _ => ("", s),
    }
}

fn split_marker_back(s: &str) -> (&str, &str) {
    match s.as_bytes().last() {
        Some(b'-' | b'+') => (&s[..s.len() - 1], &s[s.len() - 1..]),
        _ => (s, ""),
    }
}

/// The `raise_exception(message)` global: stops rendering with the template's message.
fn raise_exception(message: Value) -> std::result::Result<Value, minijinja::Error> {
    let text = pyjson::py_str(&message);
    Err(minijinja::Error::new(ErrorKind::InvalidOperation, format!("raise_exception: {text}")))
}

/// transformers' `tojson` filter: `json.dumps(x, ensure_ascii=False, indent=None,
/// separators=None, sort_keys=False)`, arguments positional or by keyword.
fn tojson_filter(_state: &State, value: Value, args: Rest<Value>, kwargs: Kwargs) -> std::result::Result<Value, minijinja::Error> {
    const NAMES: [&str; 4] = ["ensure_ascii", "indent", "separators", "sort_keys"];
    if args.len() > NAMES.len() {
        return Err(minijinja::Error::new(ErrorKind::TooManyArguments, "tojson takes at most 4 arguments"));
    }
    let mut slots: [Option<Value>; 4] = Default::default();
    for (slot, v) in slots.iter_mut().zip(args.0) {
        *slot = Some(v);
    }
    for (slot, name) in slots.iter_mut().zip(NAMES) {
        if kwargs.has(name) {
            *slot = Some(kwargs.get::<Value>(name)?);
        }
    }
    kwargs.assert_all_used()?;
    limits::precheck_print(&value)?;
    let [ensure_ascii, indent, separators, sort_keys] = slots;
    let opts = PyJsonOptions::from_values(ensure_ascii, indent, separators, sort_keys)?;
    let mut out = String::new();
    pyjson::dumps(&value, &opts, &mut out)?;
    Ok(Value::from(out))
}

/// jinja2's `trim`: Python's `str(value).strip(chars)`.
fn trim_filter(value: Value, chars: Option<String>) -> std::result::Result<String, minijinja::Error> {
    limits::precheck_print(&value)?;
    let text = pyjson::py_str(&value);
    Ok(match chars {
        Some(chars) => text.trim_matches(|c| chars.contains(c)).to_owned(),
        None => text.trim_matches(pyjson::is_py_space).to_owned(),
    })
}

/// jinja2's `join(d='', attribute=None)`: items (or an attribute of each) as Python's `str`.
fn join_filter(state: &State, value: Value, sep: Option<String>, kwargs: Kwargs) -> std::result::Result<String, minijinja::Error> {
    let attribute: Option<Value> = kwargs.get("attribute")?;
    kwargs.assert_all_used()?;
    if value.is_undefined() || value.is_none() {
        return Ok(String::new());
    }
    limits::check_building(
        value
            .len()
            .unwrap_or(0)
            .saturating_mul(sep.as_deref().map_or(0, str::len))
            .saturating_add(limits::approx_len(&value, limits::value_limit())),
    )?;
    if let Some(s) = value.as_str() {
        // Joining a string joins its characters.
        return Ok(s.chars().map(String::from).collect::<Vec<_>>().join(sep.as_deref().unwrap_or("")));
    }
    let _ = state;
    let mut parts = Vec::new();
    for item in value.try_iter()? {
        let item = match &attribute {
            Some(a) => match a.as_str() {
                Some(path) => path.split('.').try_fold(item, |v, p| v.get_attr(p))?,
                None => item.get_item(a)?,
            },
            None => item,
        };
        parts.push(pyjson::py_str(&item));
    }
    Ok(parts.join(sep.as_deref().unwrap_or("")))
}

/// One line describing a minijinja error: what went wrong and where.
fn describe(e: &minijinja::Error) -> String {
    let what = match e.detail() {
        Some(d) => match d.strip_prefix("raise_exception: ") {
            Some(msg) => return with_line(format!("the template raised an exception: {msg}"), e.line()),
            None => format!("{}: {d}", e.kind()),
        },
        None => e.kind().to_string(),
    };
    with_line(what, e.line())
}

fn with_line(msg: String, line: Option<usize>) -> String {
    match line {
        Some(l) => format!("{msg} (template line {l})"),
        None => msg,
    }
}

#[cfg(test)]
mod tests;
