//! Python's text forms of template values: `str()` (what `{{ x }}` prints in jinja2),
//! `repr()` (how containers print their items) and `json.dumps` (transformers' `tojson`).

use std::fmt::Write as _;

use minijinja::value::ValueKind;
use minijinja::{ErrorKind, Value};

type JResult<T> = std::result::Result<T, minijinja::Error>;

fn err(kind: ErrorKind, msg: impl Into<std::borrow::Cow<'static, str>>) -> minijinja::Error {
    minijinja::Error::new(kind, msg)
}

/// Options of Python's `json.dumps` that transformers' `tojson` filter exposes.
#[derive(Debug, Clone)]
pub struct PyJsonOptions {
    /// Escape every non-ASCII character as `\uXXXX` (transformers' default: false).
    pub ensure_ascii: bool,
    /// `None`: one line; `Some(s)`: one item per line, each level indented by `s`.
    pub indent: Option<String>,
    /// Between items and between a key and its value.
    pub item_separator: String,
    /// Between a key and its value.
    pub key_separator: String,
    /// Sort object keys.
    pub sort_keys: bool,
}

impl Default for PyJsonOptions {
    fn default() -> Self {
        PyJsonOptions { ensure_ascii: false, indent: None, item_separator: ", ".into(), key_separator: ": ".into(), sort_keys: false }
    }
}

impl PyJsonOptions {
    /// Builds the options from the filter's arguments (missing or `none` = Python's default).
    pub fn from_values(
        ensure_ascii: Option<Value>,
        indent: Option<Value>,
        separators: Option<Value>,
        sort_keys: Option<Value>,
    ) -> JResult<Self> {
        let present = |v: Option<Value>| v.filter(|v| !v.is_none() && !v.is_undefined());
        let indent = match present(indent) {
            None => None,
            Some(v) if v.kind() == ValueKind::String => Some(v.as_str().unwrap_or_default().to_owned()),
            Some(v) if v.is_integer() => {
                let n = v.as_i64().unwrap_or(0).max(0) as usize;
                super::limits::check_building(n)?;
                Some(" ".repeat(n))
            }
            Some(v) => return Err(err(ErrorKind::InvalidOperation, format!("tojson: indent must be an integer or a string, got {v}"))),
        };
        let (item_separator, key_separator) = match present(separators) {
            None if indent.is_some() => (",".to_owned(), ": ".to_owned()),
            None => (", ".to_owned(), ": ".to_owned()),
            Some(v) => {
                let parts: Vec<Value> = v.try_iter()?.collect();
                match parts.as_slice() {
                    [a, b] if a.as_str().is_some() && b.as_str().is_some() => {
                        (a.as_str().unwrap_or_default().to_owned(), b.as_str().unwrap_or_default().to_owned())
                    }
                    _ => return Err(err(ErrorKind::InvalidOperation, "tojson: separators must be a pair of strings")),
                }
            }
        };
        Ok(PyJsonOptions {
            ensure_ascii: present(ensure_ascii).is_some_and(|v| v.is_true()),
            indent,
            item_separator,
            key_separator,
            sort_keys: present(sort_keys).is_some_and(|v| v.is_true()),
        })
    }
}

/// Writes `value` as Python's `json.dumps` would with these options.
pub fn dumps(value: &Value, opts: &PyJsonOptions, out: &mut String) -> JResult<()> {
    dump_value(value, opts, 0, out)
}

fn newline_indent(opts: &PyJsonOptions, level: usize, out: &mut String) {
    if let Some(ind) = &opts.indent {
        out.push('\n');
        for _ in 0..level {
            out.push_str(ind);
        }
    }
}

fn dump_value(value: &Value, opts: &PyJsonOptions, level: usize, out: &mut String) -> JResult<()> {
    match value.kind() {
        ValueKind::None => out.push_str("null"),
        ValueKind::Bool => out.push_str(if value.is_true() { "true" } else { "false" }),
        ValueKind::Number => write_number(value, out),
        ValueKind::String => write_json_str(value.as_str().unwrap_or_default(), opts.ensure_ascii, out),
        ValueKind::Seq | ValueKind::Iterable => {
            let items: Vec<Value> = value.try_iter()?.collect();
            if items.is_empty() {
                out.push_str("[]");
                return Ok(());
            }
            out.push('[');
            newline_indent(opts, level + 1, out);
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(&opts.item_separator);
                    newline_indent(opts, level + 1, out);
                }
                dump_value(item, opts, level + 1, out)?;
                super::limits::check_building(out.len())?;
            }
            newline_indent(opts, level, out);
            out.push(']');
        }
        ValueKind::Map => {
            let mut entries = Vec::new();
            for key in value.try_iter()? {
                let v = value.get_item(&key)?;
                entries.push((json_key(&key)?, v));
            }
            if opts.sort_keys {
                entries.sort_by(|a, b| a.0.cmp(&b.0));
            }
            if entries.is_empty() {
                out.push_str("{}");
                return Ok(());
            }
            out.push('{');
            newline_indent(opts, level + 1, out);
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(&opts.item_separator);
                    newline_indent(opts, level + 1, out);
                }
                write_json_str(k, opts.ensure_ascii, out);
                out.push_str(&opts.key_separator);
                dump_value(v, opts, level + 1, out)?;
                super::limits::check_building(out.len())?;
            }
            newline_indent(opts, level, out);
            out.push('}');
        }
        ValueKind::Undefined => return Err(err(ErrorKind::InvalidOperation, "tojson: an undefined value is not JSON serializable")),
        other => return Err(err(ErrorKind::InvalidOperation, format!("tojson: a value of type {other} is not JSON serializable"))),
    }
    Ok(())
}

/// Python's json converts str, int, float, bool and None keys to strings; others are an error.
fn json_key(key: &Value) -> JResult<String> {
    Ok(match key.kind() {
        ValueKind::String => key.as_str().unwrap_or_default().to_owned(),
        ValueKind::None => "null".into(),
        ValueKind::Bool => (if key.is_true() { "true" } else { "false" }).into(),
        ValueKind::Number => {
            let mut s = String::new();
            write_number(key, &mut s);
            s
        }
        other => return Err(err(ErrorKind::InvalidOperation, format!("tojson: keys must be str, int, float, bool or None, not {other}"))),
    })
}

fn write_number(value: &Value, out: &mut String) {
    if value.is_integer() {
        match i128::try_from(value.clone()) {
            Ok(i) => {
                let _ = write!(out, "{i}");
            }
            Err(_) => {
                let _ = write!(out, "{value}");
            }
        }
    } else {
        let f = f64::try_from(value.clone()).unwrap_or(f64::NAN);
        if f.is_nan() {
            out.push_str("NaN");
        } else if f.is_infinite() {
            out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" });
        } else {
            out.push_str(&py_float_repr(f));
        }
    }
}

/// A JSON string literal as Python's json module writes it.
fn write_json_str(s: &str, ensure_ascii: bool, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if ensure_ascii && !c.is_ascii() => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Python's `repr(float)`: the shortest digits that round-trip, positional when the decimal
/// exponent is in -4..16, otherwise scientific with a signed two-digit (at least) exponent.
pub(crate) fn py_float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0".into() } else { "0.0".into() };
    }
    // `{:e}` gives the shortest round-trip digits: "-1.2345e-7".
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if (-4..16).contains(&exp) {
        let n = digits.len() as i32;
        let point = exp + 1; // digits before the decimal point
        let body = if point <= 0 {
            format!("0.{}{}", "0".repeat((-point) as usize), digits)
        } else if point >= n {
            format!("{}{}.0", digits, "0".repeat((point - n) as usize))
        } else {
            format!("{}.{}", &digits[..point as usize], &digits[point as usize..])
        };
        format!("{sign}{body}")
    } else {
        let m = if digits.len() > 1 { format!("{}.{}", &digits[..1], &digits[1..]) } else { digits };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{m}e{esign}{:02}", exp.abs())
    }
}

/// Python's `str(x)` of a template value: strings as they are, everything else as `repr`.
pub(crate) fn py_str(value: &Value) -> String {
    match value.kind() {
        ValueKind::String => value.as_str().unwrap_or_default().to_owned(),
        ValueKind::Undefined => String::new(),
        _ => {
            let mut out = String::new();
            py_repr(value, &mut out);
            out
        }
    }
}

/// Python's `repr(x)` of a template value (`None`, `True`, `'text'`, `[1, 'a']`, `{'k': 1.5}`);
/// values with no Python counterpart (functions, namespaces) print as minijinja prints them.
pub fn py_repr(value: &Value, out: &mut String) {
    match value.kind() {
        ValueKind::None => out.push_str("None"),
        ValueKind::Undefined => out.push_str("Undefined"),
        ValueKind::Bool => out.push_str(if value.is_true() { "True" } else { "False" }),
        ValueKind::Number => {
            if value.is_integer() {
                write_number(value, out)
            } else {
                out.push_str(&py_float_repr(f64::try_from(value.clone()).unwrap_or(f64::NAN)))
            }
        }
        ValueKind::String => py_str_repr(value.as_str().unwrap_or_default(), out),
        ValueKind::Seq | ValueKind::Iterable => {
            out.push('[');
            if let Ok(iter) = value.try_iter() {
                for (i, item) in iter.enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    py_repr(&item, out);
                }
            }
            out.push(']');
        }
        ValueKind::Map => {
            out.push('{');
            if let Ok(iter) = value.try_iter() {
                for (i, key) in iter.enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    py_repr(&key, out);
                    out.push_str(": ");
                    py_repr(&value.get_item(&key).unwrap_or_default(), out);
                }
            }
            out.push('}');
        }
        _ => {
            let _ = write!(out, "{value}");
        }
    }
}

/// Python's `repr(str)`: single quotes unless the text has a single quote and no double quote;
/// backslash escapes for the quote, `\\`, `\n`, `\r`, `\t` and non-printable characters.
fn py_str_repr(s: &str, out: &mut String) {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if !is_py_printable(c) => {
                let n = c as u32;
                let _ = if n < 0x100 {
                    write!(out, "\\x{n:02x}")
                } else if n < 0x10000 {
                    write!(out, "\\u{n:04x}")
                } else {
                    write!(out, "\\U{n:08x}")
                };
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

/// Python's `str.isprintable` for one character, approximated: control characters, the
/// non-ASCII spaces, format characters, line/paragraph separators, surrogates and
/// private-use characters are not printable.
fn is_py_printable(c: char) -> bool {
    let n = c as u32;
    if c == ' ' {
        return true;
    }
    !(n < 0x20
        || (0x7f..=0xa0).contains(&n)
        || n == 0xad
        || n == 0x1680
        || (0x2000..=0x200f).contains(&n)
        || (0x2028..=0x202f).contains(&n)
        || (0x205f..=0x2064).contains(&n)
        || (0x2066..=0x206f).contains(&n)
        || n == 0x3000
        || n == 0xfeff
        || (0xfff9..=0xfffb).contains(&n)
        || (0xe000..=0xf8ff).contains(&n)
        || (0xf0000..=0x10ffff).contains(&n)
        || n == 0x061c
        || n == 0x180e)
}

/// Python's `str.isspace` for one character (what `str.strip()` removes): Unicode White_Space
/// plus the ASCII information separators U+001C..U+001F.
pub(crate) fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}
