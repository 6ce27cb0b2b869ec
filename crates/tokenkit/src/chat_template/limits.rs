//! Render budgets: a chat template is a program supplied with a model, and two nested
//! `range(100000)` loops or a string doubled forty times must end with an error, not run for
//! minutes or take the process down (jinja2 has neither bound; transformers runs out of
//! memory).
//!
//! Three budgets, all counted per render:
//! - steps: minijinja's fuel, one unit per executed instruction;
//! - output: the bytes the template emits (`{{ ... }}` and its literal text, including what a
//!   macro call or `{% set %}` block captures);
//! - values: every string the template builds (`+`, `~`, `*`, filters, methods) is at most the
//!   output budget long, a list at most that many items / 16, and all strings built add up to
//!   at most [`TOTAL_FACTOR`] times the output budget.
//!
//! The value budget needs to see each operation's result, and minijinja has no hook for that:
//! the compiled instructions are copied once per template with a check call after each
//! operation that can build a large value (and literal text turned into an emitted constant so
//! that the formatter counts it). Operations whose result can be far larger than their inputs
//! (`replace`, `indent`, `format`, `join`, `tojson`, printing) are checked before they run.

use std::cell::RefCell;
use std::collections::BTreeMap;

use minijinja::machinery::{Instruction, Instructions};
use minijinja::value::{Kwargs, Rest, StringInput, Value, ValueKind};
use minijinja::{ErrorKind, State};

/// How far the cumulative bytes of built strings may exceed the output budget.
pub const TOTAL_FACTOR: usize = 32;

/// Name of the check function called after each instrumented operation.
pub(super) const CHECK_FN: &str = "__tokenkit_budget_check";

/// Steps a render may take per byte of its input, whatever [`ChatLimits::max_steps`] says
/// (real templates take a few hundred steps per message of a few dozen bytes).
pub const STEPS_PER_INPUT_BYTE: u64 = 64;

/// Output bytes a render may produce per byte of its input, whatever
/// [`ChatLimits::max_output_bytes`] says.
pub const OUTPUT_PER_INPUT_BYTE: usize = 4;

/// Bounds on one render of a chat template (see the module docs for what each counts). Both
/// grow with the input (the conversation, tools, documents and variables as JSON), so that a
/// long conversation never hits them: see [`STEPS_PER_INPUT_BYTE`] and [`OUTPUT_PER_INPUT_BYTE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChatLimits {
    /// Template instructions one render may execute (a loop iteration costs a few).
    pub max_steps: u64,
    /// Bytes of rendered text, and of any single string built while rendering.
    pub max_output_bytes: usize,
}

impl Default for ChatLimits {
    /// 20 million steps (a few seconds at most) and 32 MiB of output.
    fn default() -> Self {
        ChatLimits { max_steps: 20_000_000, max_output_bytes: 32 << 20 }
    }
}

/// What is left of one render's budgets.
struct Budget {
    max_value: usize,
    output_left: usize,
    total_left: usize,
    /// The first budget that ran out, as the message the caller sees.
    exceeded: Option<String>,
}

thread_local! {
    /// The budget of the render running on this thread (minijinja renders on the calling thread).
    static BUDGET: RefCell<Option<Budget>> = const { RefCell::new(None) };
}

/// Installs a render's budget on this thread; dropping it restores the previous one (a render
/// started from inside a render, e.g. by a callback, keeps its own).
pub(super) struct BudgetGuard {
    previous: Option<Budget>,
}

impl BudgetGuard {
    /// Starts counting for a render with `max_output` bytes of output.
    pub(super) fn start(max_output: usize) -> Self {
        let budget =
            Budget { max_value: max_output, output_left: max_output, total_left: max_output.saturating_mul(TOTAL_FACTOR), exceeded: None };
        BudgetGuard { previous: BUDGET.with(|b| b.borrow_mut().replace(budget)) }
    }

    /// The message of the budget that ran out, if one did.
    pub(super) fn exceeded(&self) -> Option<String> {
        BUDGET.with(|b| b.borrow().as_ref().and_then(|b| b.exceeded.clone()))
    }
}

impl Drop for BudgetGuard {
    fn drop(&mut self) {
        let previous = self.previous.take();
        BUDGET.with(|b| *b.borrow_mut() = previous);
    }
}

/// What a charge is for.
#[derive(Clone, Copy)]
enum Charge {
    /// Text emitted into the output.
    Output,
    /// A string (or its upper bound, before it is built) the template builds.
    Value,
    /// The items of a list the template builds.
    Items,
}

/// Counts `n` against the running render's budget; the error names the budget that ran out.
fn charge(what: Charge, n: usize) -> Result<(), minijinja::Error> {
    BUDGET.with(|b| {
        let mut b = b.borrow_mut();
        let Some(b) = b.as_mut() else { return Ok(()) };
        let msg = match what {
            Charge::Output if n > b.output_left => Some(format!(
                "the chat template produced more than {} bytes of output (the output budget); \
                 it renders far more text than its input",
                b.max_value
            )),
            Charge::Output => {
                b.output_left -= n;
                None
            }
            Charge::Value if n > b.max_value => {
                Some(format!("the chat template built a string of {n} bytes, more than the {} allowed (the output budget)", b.max_value))
            }
            Charge::Value if n > b.total_left => Some(format!(
                "the chat template built more than {} bytes of strings in total ({TOTAL_FACTOR} times the output budget)",
                b.max_value.saturating_mul(TOTAL_FACTOR)
            )),
            Charge::Value => {
                b.total_left -= n;
                None
            }
            Charge::Items if n > b.max_value / 16 => {
                Some(format!("the chat template built a list of {n} items, more than the {} allowed", b.max_value / 16))
            }
            Charge::Items => None,
        };
        match msg {
            Some(msg) => {
                b.exceeded.get_or_insert_with(|| msg.clone());
                Err(minijinja::Error::new(ErrorKind::InvalidOperation, msg))
            }
            None => Ok(()),
        }
    })
}

/// Counts text about to be emitted.
pub(super) fn charge_output(n: usize) -> Result<(), minijinja::Error> {
    charge(Charge::Output, n)
}

/// Counts a string of (at most) `n` bytes before it is built.
pub(super) fn charge_value(n: usize) -> Result<(), minijinja::Error> {
    charge(Charge::Value, n)
}

/// An upper bound of the bytes printing `value` takes, walking at most until `limit` is passed
/// (so a lazily repeated list of a billion items costs no more than `limit` to size).
pub(super) fn approx_len(value: &Value, limit: usize) -> usize {
    fn walk(v: &Value, limit: usize, depth: usize, acc: &mut usize) {
        if *acc > limit {
            return;
        }
        if let Some(s) = v.as_str() {
            // quotes and escapes: a character prints as at most 6 bytes (`\u00e9`) per byte
            *acc = acc.saturating_add(s.len() + 2);
            return;
        }
        match v.kind() {
            ValueKind::Seq | ValueKind::Iterable | ValueKind::Map if depth < 64 => {
                let is_map = v.kind() == ValueKind::Map;
                if let Ok(iter) = v.try_iter() {
                    for item in iter {
                        *acc = acc.saturating_add(2);
                        if is_map {
                            if let Ok(inner) = v.get_item(&item) {
                                walk(&inner, limit, depth + 1, acc);
                            }
                        }
                        walk(&item, limit, depth + 1, acc);
                        if *acc > limit {
                            return;
                        }
                    }
                }
            }
            _ => *acc = acc.saturating_add(24),
        }
    }
    let mut acc = 0;
    walk(value, limit, 0, &mut acc);
    acc
}

/// About the length of `value` as JSON text (strings and keys by their bytes), without writing it.
pub(super) fn json_len(value: &serde_json::Value) -> usize {
    use serde_json::Value as J;
    match value {
        J::String(s) => s.len() + 2,
        J::Array(items) => items.iter().map(|v| json_len(v) + 1).sum::<usize>() + 2,
        J::Object(map) => map.iter().map(|(k, v)| k.len() + 4 + json_len(v)).sum::<usize>() + 2,
        _ => 8,
    }
}

/// Checks that printing `value` (as text or JSON) stays within the single-value budget.
pub(super) fn precheck_print(value: &Value) -> Result<(), minijinja::Error> {
    check_building(approx_len(value, value_limit()))
}

/// Fails when a string being built has grown past the single-value budget (no charge otherwise:
/// the finished string is counted once it is done).
pub(super) fn check_building(len: usize) -> Result<(), minijinja::Error> {
    if len > value_limit() {
        charge_value(len)
    } else {
        Ok(())
    }
}

/// The check called after every instrumented operation: counts the string or list it built.
pub(super) fn check_value(value: Value) -> Result<Value, minijinja::Error> {
    if let Some(s) = value.as_str() {
        charge(Charge::Value, s.len())?;
    } else if matches!(value.kind(), ValueKind::Seq | ValueKind::Iterable) {
        if let Some(n) = value.len() {
            charge(Charge::Items, n)?;
        }
    }
    Ok(value)
}

/// Bound of `value | replace(old, new)` / `value.replace(old, new)`.
pub(super) fn replace_len(value: &str, old: &str, new: &str) -> usize {
    if new.len() <= old.len() {
        return value.len();
    }
    let count = if old.is_empty() { value.chars().count() + 1 } else { value.matches(old).count() };
    value.len().saturating_add(count.saturating_mul(new.len() - old.len()))
}

/// Bound of a `format` call: each placeholder prints at most all arguments.
pub(super) fn format_len(fmt: &str, args: &[Value], limit: usize) -> usize {
    let placeholders = fmt.bytes().filter(|b| matches!(b, b'{' | b'%')).count();
    let args_len = args.iter().fold(0usize, |acc, a| acc.saturating_add(approx_len(a, limit)));
    fmt.len().saturating_add(placeholders.saturating_mul(args_len))
}

/// The single-value limit of the running render, if one runs.
pub(super) fn value_limit() -> usize {
    BUDGET.with(|b| b.borrow().as_ref().map_or(usize::MAX, |b| b.max_value))
}

/// minijinja's `replace` filter, checked first.
pub(super) fn replace_filter(
    state: &State,
    value: StringInput<'_>,
    old: StringInput<'_>,
    new: StringInput<'_>,
) -> Result<Value, minijinja::Error> {
    charge_value(replace_len(value.as_str(), old.as_str(), new.as_str()))?;
    minijinja::filters::replace(state, value, old, new)
}

/// minijinja's `indent` filter, checked first (the width is a caller's number).
pub(super) fn indent_filter(
    value: StringInput<'_>,
    width: Option<usize>,
    first: Option<bool>,
    blank: Option<bool>,
    kwargs: Kwargs,
) -> Result<Value, minijinja::Error> {
    let text = value.as_str();
    let lines = text.bytes().filter(|b| *b == b'\n').count() + 1;
    charge_value(text.len().saturating_add(lines.saturating_mul(width.unwrap_or(4))))?;
    minijinja::filters::indent(value, width, first, blank, kwargs)
}

/// minijinja's `format` filter (printf style), checked first.
pub(super) fn format_filter(state: &State, fmt: Value, args: Rest<Value>) -> Result<Value, minijinja::Error> {
    if let Some(f) = fmt.as_str() {
        charge_value(format_len(f, &args, value_limit()))?;
    }
    minijinja::filters::format(state, &fmt, args)
}

/// Checks a Python string method whose result can be far larger than the string
/// (`replace`, `format`, `join`) before minijinja-contrib runs it.
pub(super) fn precheck_method(value: &Value, method: &str, args: &[Value]) -> Result<(), minijinja::Error> {
    let Some(s) = value.as_str() else { return Ok(()) };
    let limit = value_limit();
    match (method, args) {
        ("replace", [old, new, ..]) => {
            if let (Some(o), Some(n)) = (old.as_str(), new.as_str()) {
                charge_value(replace_len(s, o, n))?;
            }
        }
        ("format", _) => charge_value(format_len(s, args, limit))?,
        ("join", [items]) => {
            let n = items.len().unwrap_or(0).saturating_mul(s.len()).saturating_add(approx_len(items, limit));
            charge_value(n)?;
        }
        _ => {}
    }
    Ok(())
}

/// Whether the result of `instr` is checked: the operations that build a string or list.
fn checked(instr: &Instruction<'_>) -> bool {
    matches!(
        instr,
        Instruction::Add | Instruction::StringConcat | Instruction::Mul | Instruction::ApplyFilter(..) | Instruction::CallMethod(..)
    )
}

/// A copy of `src` with a call of [`CHECK_FN`] after each checked operation and each literal
/// text turned into an emitted constant (so the formatter counts it); jump targets and source
/// locations are carried over.
pub(super) fn instrument<'s>(src: &Instructions<'s>) -> Instructions<'s> {
    let n = src.len();
    let mut at = Vec::with_capacity(n + 1);
    let mut next = 0u32;
    for i in 0..n as u32 {
        at.push(next);
        next += match src.get(i) {
            Some(Instruction::EmitRaw(_)) => 2,
            Some(instr) if checked(instr) => 2,
            _ => 1,
        };
    }
    at.push(next);
    let target = |t: &u32| at.get(*t as usize).copied().unwrap_or(*t);
    let mut out = Instructions::new(src.name(), src.source());
    for i in 0..n as u32 {
        let Some(instr) = src.get(i) else { continue };
        let mapped = match instr {
            Instruction::Jump(t) => Instruction::Jump(target(t)),
            Instruction::JumpIfFalse(t) => Instruction::JumpIfFalse(target(t)),
            Instruction::JumpIfFalseOrPop(t) => Instruction::JumpIfFalseOrPop(target(t)),
            Instruction::JumpIfTrueOrPop(t) => Instruction::JumpIfTrueOrPop(target(t)),
            Instruction::Iterate(t) => Instruction::Iterate(target(t)),
            Instruction::BuildMacro(name, t, flags) => Instruction::BuildMacro(name, target(t), *flags),
            Instruction::EmitRaw(text) => Instruction::LoadConst(Value::from(*text)),
            other => other.clone(),
        };
        let extra = match instr {
            Instruction::EmitRaw(_) => Some(Instruction::Emit),
            instr if checked(instr) => Some(Instruction::CallFunction(CHECK_FN, Some(1))),
            _ => None,
        };
        for instr in std::iter::once(mapped).chain(extra) {
            match (src.get_span(i), src.get_line(i)) {
                (Some(span), _) => out.add_with_span(instr, span),
                (None, Some(line)) => out.add_with_line(instr, line.min(u16::MAX as usize) as u16),
                (None, None) => out.add(instr),
            };
        }
    }
    out
}

/// [`instrument`] for each block of a template.
pub(super) fn instrument_blocks<'s>(blocks: &BTreeMap<&'s str, Instructions<'s>>) -> BTreeMap<&'s str, Instructions<'s>> {
    blocks.iter().map(|(name, instrs)| (*name, instrument(instrs))).collect()
}
