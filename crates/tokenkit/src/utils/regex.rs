//! The regex engine for patterns found in tokenizer.json. Every pattern is read with
//! Oniguruma semantics, the engine HF tokenizers uses; the well-known pre-tokenization
//! patterns are recognised and run by hand-written lexers that give the same matches
//! (see `utils::lexers`); the other patterns whose every construct both engines read alike
//! run on a finite automaton (`automata.rs`), any other pattern on Oniguruma itself.

mod automata;
mod onig;

use self::automata::AutomataRegex;
use self::onig::{OnigError, OnigRegex, Searcher};
use crate::utils::lexers::{
    CjkRuns, Cl100kLexer, DeepSeekLexer, DigitGroups, DigitRun, Gpt2Lexer, O200kLexer, DEEPSEEK_CJK_PATTERN, DEEPSEEK_DIGITS_PATTERN,
    DEEPSEEK_MAIN_PATTERN, O200K_PATTERN,
};
use crate::{Error, Result};

/// The GPT-2 pattern (HF ByteLevel's default).
pub const GPT2_PATTERN: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";
/// The Llama-3 pattern (cl100k with `\p{N}{1,3}`).
pub const LLAMA3_PATTERN: &str =
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// The Qwen2 pattern (also Qwen2.5 and Qwen3): cl100k with a single `\p{N}`.
pub const QWEN2_PATTERN: &str =
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// The cl100k pattern as tiktoken writes it (`\p{N}{1,3}+`).
pub const CL100K_PATTERN: &str =
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// tiktoken's r50k / p50k / gpt2 pattern.
pub const R50K_PATTERN: &str = r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";
/// tiktoken's cl100k pattern (`formats::tiktoken::CL100K_PATTERN`; `\p{N}{1,3}+` is possessive in tiktoken's regex engine).
pub const TIKTOKEN_CL100K_PATTERN: &str =
    r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";
/// The cl100k pattern as Oniguruma must be given it to split as tiktoken does: `{1,3}` for
/// the possessive `{1,3}+`, which Oniguruma would read as "one or more groups of 1 to 3".
pub const CL100K_ONIG_PATTERN: &str =
    r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fast {
    Gpt2,
    /// The cl100k family; `true` for tiktoken's form of the pattern (`\s++$` before
    /// `\s*[\r\n]`).
    Cl100k(DigitRun, bool),
    O200k,
    /// `\p{N}{1,3}` (DeepSeek's first split).
    DigitGroups,
    /// DeepSeek's CJK runs (its second split).
    Cjk,
    /// DeepSeek's third split.
    DeepSeek,
}

fn recognise(pattern: &str) -> Option<Fast> {
    match pattern {
        GPT2_PATTERN => Some(Fast::Gpt2),
        LLAMA3_PATTERN => Some(Fast::Cl100k(DigitRun::UpToThree, false)),
        // Oniguruma reads `{1,3}+` as a repeated group: digits are not limited to three.
        CL100K_PATTERN => Some(Fast::Cl100k(DigitRun::Unbounded, false)),
        CL100K_ONIG_PATTERN => Some(Fast::Cl100k(DigitRun::UpToThree, true)),
        R50K_PATTERN => Some(Fast::Gpt2),
        // tiktoken's exact cl100k string, read by Oniguruma (digits unbounded).
        TIKTOKEN_CL100K_PATTERN => Some(Fast::Cl100k(DigitRun::Unbounded, true)),
        O200K_PATTERN => Some(Fast::O200k),
        QWEN2_PATTERN => Some(Fast::Cl100k(DigitRun::One, false)),
        DEEPSEEK_DIGITS_PATTERN => Some(Fast::DigitGroups),
        DEEPSEEK_CJK_PATTERN => Some(Fast::Cjk),
        DEEPSEEK_MAIN_PATTERN => Some(Fast::DeepSeek),
        _ => None,
    }
}

/// A compiled regex with Oniguruma (Ruby syntax) semantics.
pub struct SysRegex {
    regex: OnigRegex,
    fast: Option<Fast>,
    /// The automaton, for a pattern no lexer knows that it reads as Oniguruma does.
    automata: Option<AutomataRegex>,
    /// Whether a match attempt can scan ahead without bound ([`scans_ahead`]): the matches
    /// are then found by trying one start position at a time, with the text's step budget
    /// looked at after each.
    scans_ahead: bool,
    pattern: String,
}

impl std::fmt::Debug for SysRegex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("SysRegex").field(&self.pattern).finish()
    }
}

impl Clone for SysRegex {
    fn clone(&self) -> Self {
        SysRegex::new(&self.pattern).expect("a pattern that compiled once compiles again")
    }
}

impl PartialEq for SysRegex {
    fn eq(&self, other: &Self) -> bool {
        self.pattern == other.pattern
    }
}

impl SysRegex {
    /// Compiles `pattern`; a clear error if Oniguruma rejects it.
    pub fn new(pattern: &str) -> Result<Self> {
        let regex = OnigRegex::new(pattern).map_err(|message| Error::Regex { pattern: pattern.to_owned(), message })?;
        let fast = recognise(pattern);
        let automata = if fast.is_none() { AutomataRegex::new(pattern) } else { None };
        Ok(Self { regex, fast, automata, scans_ahead: scans_ahead(pattern), pattern: pattern.to_owned() })
    }

    /// Compiles `pattern` for Oniguruma alone, never a fast lexer or the automaton (the
    /// reference they are tested against).
    pub fn onig_only(pattern: &str) -> Result<Self> {
        let mut r = Self::new(pattern)?;
        r.fast = None;
        r.automata = None;
        Ok(r)
    }

    /// Whether the finite automaton runs this pattern (see `automata.rs`).
    pub fn is_automaton(&self) -> bool {
        self.automata.is_some()
    }

    /// Whether a hand-written lexer runs this pattern.
    pub fn is_fast(&self) -> bool {
        self.fast.is_some()
    }

    /// The source pattern.
    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// Calls `each(start, end)` with the byte ranges of the successive non-overlapping
    /// matches. An error naming the pattern, never a panic or a hang, when Oniguruma gives up
    /// on the text: a pattern that backtracks without bound exceeds the step budget of the
    /// text ([`text_retry_budget`]; `(a|aa)+$` on runs of `a`). The matches found are the
    /// same as HF's where it works.
    #[inline]
    pub fn try_for_each_match(&self, inside: &str, mut each: impl FnMut(usize, usize)) -> Result<()> {
        if self.fast.is_some() || self.automata.is_some() {
            self.find_iter(inside).for_each(|(s, e)| each(s, e));
            return Ok(());
        }
        let mut matches = OnigMatches::new(self, inside);
        (&mut matches).for_each(|(s, e)| each(s, e));
        match matches.error {
            None => Ok(()),
            Some(message) => Err(Error::invalid(format!(
                "regex too expensive on this input: {:?} gave up on a text of {} bytes ({message}); \
                 the pattern backtracks or scans ahead too much, rewrite it without nested or overlapping \
                 repeats or unbounded repeats in lookarounds",
                self.pattern,
                inside.len()
            ))),
        }
    }

    /// Byte ranges of the successive non-overlapping matches. When Oniguruma gives up on
    /// the text (see [`SysRegex::try_for_each_match`], which reports it), the iteration ends
    /// there: use this only where the pattern is known to be tame (a fast lexer never fails).
    pub fn find_iter<'r, 't>(&'r self, inside: &'t str) -> Matches<'r, 't> {
        match self.fast {
            Some(Fast::Gpt2) => Matches::Gpt2(Gpt2Lexer::new(inside)),
            Some(Fast::Cl100k(d, false)) => Matches::Cl100k(Cl100kLexer::new(inside, d)),
            Some(Fast::Cl100k(d, true)) => Matches::Cl100k(Cl100kLexer::new(inside, d).whitespace_run_to_end()),
            Some(Fast::O200k) => Matches::O200k(O200kLexer::new(inside)),
            Some(Fast::DigitGroups) => Matches::DigitGroups(DigitGroups::new(inside)),
            Some(Fast::Cjk) => Matches::Cjk(CjkRuns::new(inside)),
            Some(Fast::DeepSeek) => Matches::DeepSeek(DeepSeekLexer::new(inside)),
            None => match &self.automata {
                Some(a) => Matches::Automata(AutomataMatches { regex: a, text: inside, step: EmptyMatchRule::default() }),
                None => Matches::Onig(OnigMatches::new(self, inside)),
            },
        }
    }
}

/// Oniguruma's step budget for one text of `len` bytes: backtracking steps (retries) shared
/// by all the searches over it, a fixed allowance plus a few per byte. Oniguruma's own limits
/// are per match attempt (10^7) and per search, so a pattern that backtracks a little at every
/// start position (`(a|aa)+$` on runs of 25 `a`s), or a little in each of many searches, runs
/// in time quadratic in the text without an error; this bounds the whole text. Real tokenizer
/// patterns retry at most a few times per byte (their alternatives), far below the budget (the
/// `lexers_corpora` conformance tests search whole corpora with it).
fn text_retry_budget(len: usize) -> u64 {
    const BASE: u64 = 10_000_000;
    const PER_BYTE: u64 = 64;
    BASE.saturating_add(PER_BYTE.saturating_mul(len as u64))
}

/// The chars Oniguruma may step over for one text of `len` bytes, across all its searches
/// (see `onig.rs`: the steps a retry does not count, such as `.*` scanning to the end of the
/// text from every start position of `a(?=.*z)`). The tokenizer patterns on the general path
/// step over at most 13 chars per byte of text (every alternative tried at every position,
/// on the worst-case texts of `lexers::adversarial_texts`; a test keeps it under 32); a
/// pattern that scans to the end of the text from each position needs about `len` per byte.
fn text_step_budget(len: usize) -> u64 {
    const BASE: u64 = 10_000_000;
    const PER_BYTE: u64 = 128;
    BASE.saturating_add(PER_BYTE.saturating_mul(len as u64))
}

/// Whether a match attempt of `pattern` may scan ahead of where it ends without bound, so
/// that a search from every position costs time quadratic in the text: an unbounded repeat
/// (`*`, `+`, `{n,}`) inside a lookaround, or followed by anything else in its top-level
/// alternative (`a.*z`; `\s+(?!\S)` too, whose searches all succeed), a repeated group, a
/// back-reference or subroutine call, or extended syntax. Conservative: `false` only for
/// patterns whose every unbounded repeat ends its alternative outside any lookaround (such a
/// repeat succeeds wherever it starts, so no attempt scans further than the match it makes).
fn scans_ahead(pattern: &str) -> bool {
    let b = pattern.as_bytes();
    let mut i = 0;
    // Open groups: whether each is a lookaround.
    let mut groups: Vec<bool> = Vec::new();
    // An unbounded repeat was seen in the current top-level alternative.
    let mut pending = false;
    // The previous item was a group that closed (a repeat after it repeats a group).
    let mut closed_group = false;
    while i < b.len() {
        let c = b[i];
        let was_group = std::mem::replace(&mut closed_group, false);
        // A repeat of the previous item.
        let repeat = match c {
            b'*' | b'+' => Some((true, 1)),
            b'?' => Some((false, 1)),
            b'{' => {
                let close = b[i..].iter().position(|&x| x == b'}').map(|n| i + n);
                match close.map(|e| (e, &pattern[i + 1..e])) {
                    Some((e, body)) if !body.is_empty() && body.bytes().all(|x| x.is_ascii_digit() || x == b',') => {
                        Some((body.ends_with(','), e + 1 - i))
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some((unbounded, len)) = repeat {
            if was_group {
                return true;
            }
            if unbounded {
                if groups.iter().any(|&look| look) {
                    return true;
                }
                pending = true;
            }
            i += len;
            match b.get(i) {
                // Lazy; possessive after `*`, `+`, `?`.
                Some(b'?') => i += 1,
                Some(b'+') if c != b'{' => i += 1,
                // After an interval, `+` repeats it (Ruby syntax): `\p{N}{1,3}+` is unbounded.
                Some(b'+') => {
                    if groups.iter().any(|&look| look) {
                        return true;
                    }
                    pending = true;
                    i += 1;
                }
                _ => {}
            }
            continue;
        }
        match c {
            b'|' if groups.is_empty() => {
                pending = false;
                i += 1;
                continue;
            }
            b'|' => {
                i += 1;
                continue;
            }
            b')' => {
                groups.pop();
                closed_group = true;
                i += 1;
                continue;
            }
            _ => {}
        }
        // Anything else matches or asserts something after a pending repeat.
        if pending {
            return true;
        }
        match c {
            b'\\' => {
                let Some(&e) = b.get(i + 1) else { return true };
                if e.is_ascii_digit() && e != b'0' || e == b'k' || e == b'g' {
                    return true;
                }
                i += 2;
                // `\p{..}`, `\x{..}`, `\u{..}`, `\o{..}`.
                if b.get(i) == Some(&b'{') {
                    i += b[i..].iter().position(|&x| x == b'}').map_or(b.len() - i, |n| n + 1);
                }
            }
            b'[' => {
                // A class, nested classes and escapes included; `]` first is a literal.
                let mut depth = 0;
                let mut j = i;
                loop {
                    match b.get(j) {
                        None => return true,
                        Some(b'\\') => j += 2,
                        Some(b'[') => {
                            depth += 1;
                            j += 1;
                            if b.get(j) == Some(&b'^') {
                                j += 1;
                            }
                            if b.get(j) == Some(&b']') {
                                j += 1;
                            }
                        }
                        Some(b']') => {
                            depth -= 1;
                            j += 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        Some(_) => j += 1,
                    }
                }
                i = j;
            }
            b'(' => {
                let rest = &pattern[i + 1..];
                if rest.starts_with("?#") {
                    i += rest.find(')').map_or(b.len() - i, |n| n + 2);
                    continue;
                }
                // Option settings: `x` allows whitespace and comments.
                if rest.starts_with('?') && rest[1..].bytes().take_while(|x| x.is_ascii_alphabetic() || *x == b'-').any(|x| x == b'x') {
                    return true;
                }
                let look = ["?=", "?!", "?<=", "?<!"].iter().any(|p| rest.starts_with(p));
                groups.push(look);
                // The group's prefix: a lookaround, atomic, options (`?i:`, `?-i)`), a name.
                let prefix = if let Some(p) = ["?<=", "?<!", "?=", "?!", "?>"].iter().find(|p| rest.starts_with(**p)) {
                    p.len()
                } else if let Some(opts) = rest.strip_prefix('?') {
                    let n = opts.bytes().take_while(|x| x.is_ascii_alphabetic() || *x == b'-').count();
                    match opts.as_bytes().get(n) {
                        Some(b':') => n + 2,
                        Some(b')') => n + 1,
                        // `?<name>`, `?'name'`, `?P<name>`: to the name's end.
                        _ => opts.find(['>', '\'']).map_or(1, |e| e + 2),
                    }
                } else {
                    0
                };
                i += 1 + prefix;
            }
            _ => i += pattern[i..].chars().next().map_or(1, char::len_utf8),
        }
    }
    false
}

/// The retry limit a search starts with; multiplied by [`SEARCH_LIMIT_GROWTH`] while the
/// search runs out of it and the text's budget has more (each attempt starts the search
/// again: the attempts before the last cost at most a third of it). Oniguruma does not say how many retries a search that succeeds
/// used, so the budget is charged what is known: the whole limit of an attempt that ran out,
/// and for the attempt that then succeeds, the limit of the one before it (which it exceeded).
/// Searches that succeed within this first limit are not charged: they cost at most this
/// many retries each, and a text has at most two searches per char.
const FIRST_SEARCH_LIMIT: u64 = 256;

/// See [`FIRST_SEARCH_LIMIT`].
const SEARCH_LIMIT_GROWTH: u64 = 4;

/// The matches of an Oniguruma regex, with `onig`'s own rule for empty matches (none right
/// after the previous match), but keeping the search's error (in `error`, ending the
/// iteration) where `onig`'s iterator panics, and with one retry budget and one step budget
/// for the whole text ([`text_retry_budget`], [`text_step_budget`]).
pub struct OnigMatches<'r, 't> {
    searcher: Searcher<'r>,
    /// Try one start position at a time ([`SysRegex::scans_ahead`]).
    one_at_a_time: bool,
    text: &'t str,
    step: EmptyMatchRule,
    /// Retries left of the text's budget.
    budget: u64,
    /// The step count ([`onig::steps`]) past which the text's step budget is spent.
    steps_until: u64,
    error: Option<String>,
}

impl<'r, 't> OnigMatches<'r, 't> {
    fn new(regex: &'r SysRegex, text: &'t str) -> Self {
        Self {
            searcher: Searcher::new(&regex.regex),
            one_at_a_time: regex.scans_ahead,
            text,
            step: EmptyMatchRule::default(),
            budget: text_retry_budget(text.len()),
            steps_until: onig::steps().saturating_add(text_step_budget(text.len())),
            error: None,
        }
    }

    /// The next match (the searcher holds it), `Ok(false)` when there is none; an error when
    /// the search needs more retries or steps than the text's budgets have left.
    fn search(&mut self, from: usize) -> Result<bool, String> {
        if !self.one_at_a_time {
            let found = self.with_retry_budget(|s, text, limit| s.search(text, from, limit))?;
            self.check_steps()?;
            return Ok(found);
        }
        // A search tries each start position in turn; trying them one call each lets the
        // step budget stop a pattern that scans ahead from every one.
        let mut at = from;
        loop {
            let begin = at == from;
            let found = self.with_retry_budget(|s, text, limit| s.match_at(text, at, begin, limit))?;
            self.check_steps()?;
            if found {
                return Ok(true);
            }
            match self.text[at..].chars().next() {
                Some(c) => at += c.len_utf8(),
                None => return Ok(false),
            }
        }
    }

    fn check_steps(&self) -> Result<(), String> {
        if onig::steps() > self.steps_until {
            return Err(format!("scans too far ahead: more than {} chars stepped over", text_step_budget(self.text.len())));
        }
        Ok(())
    }

    /// Runs `call` with a retry limit, growing the limit while the call runs out of it and
    /// the text's retry budget has more (see [`FIRST_SEARCH_LIMIT`]).
    fn with_retry_budget(&mut self, mut call: impl FnMut(&mut Searcher<'r>, &str, u64) -> Result<bool, OnigError>) -> Result<bool, String> {
        let mut limit = FIRST_SEARCH_LIMIT.min(self.budget);
        let mut exceeded = 0;
        loop {
            match call(&mut self.searcher, self.text, limit) {
                Err(e) if e.code == onig_sys::ONIGERR_RETRY_LIMIT_IN_SEARCH_OVER && limit < self.budget => {
                    self.budget -= limit;
                    exceeded = limit;
                    limit = limit.saturating_mul(SEARCH_LIMIT_GROWTH).min(self.budget);
                }
                Err(e) => {
                    self.budget = 0;
                    return Err(e.message);
                }
                Ok(found) => {
                    self.budget = self.budget.saturating_sub(exceeded);
                    return Ok(found);
                }
            }
        }
    }
}

impl Iterator for OnigMatches<'_, '_> {
    type Item = (usize, usize);

    fn next(&mut self) -> Option<(usize, usize)> {
        if self.error.is_some() {
            return None;
        }
        let mut step = std::mem::take(&mut self.step);
        let text = self.text;
        let found = step.next(text, |from| match self.search(from) {
            Ok(true) => self.searcher.span(),
            Ok(false) => None,
            Err(e) => {
                self.error = Some(e);
                None
            }
        });
        self.step = step;
        found
    }
}

/// Where the next search of a text starts, with `onig`'s rule for empty matches (none right
/// after the previous match: the search steps over a char), for every engine's iterator.
#[derive(Default)]
struct EmptyMatchRule {
    last_end: usize,
    last_match_end: Option<usize>,
}

impl EmptyMatchRule {
    /// The next match of `text`, `search(from)` giving the leftmost match at or after `from`.
    #[inline]
    fn next(&mut self, text: &str, mut search: impl FnMut(usize) -> Option<(usize, usize)>) -> Option<(usize, usize)> {
        loop {
            if self.last_end > text.len() {
                return None;
            }
            let (s, e) = search(self.last_end)?;
            if e == s && self.last_match_end == Some(e) {
                self.last_end += text[self.last_end..].chars().next().map_or(1, char::len_utf8);
                continue;
            }
            self.last_end = e;
            self.last_match_end = Some(e);
            return Some((s, e));
        }
    }
}

/// The matches of a pattern on the automaton.
pub struct AutomataMatches<'r, 't> {
    regex: &'r AutomataRegex,
    text: &'t str,
    step: EmptyMatchRule,
}

impl Iterator for AutomataMatches<'_, '_> {
    type Item = (usize, usize);

    #[inline]
    fn next(&mut self) -> Option<(usize, usize)> {
        let (regex, text) = (self.regex, self.text);
        self.step.next(text, |from| regex.find_at(text, from))
    }
}

/// Iterator over the matches of a [`SysRegex`].
pub enum Matches<'r, 't> {
    Gpt2(Gpt2Lexer<'t>),
    Cl100k(Cl100kLexer<'t>),
    O200k(O200kLexer<'t>),
    DigitGroups(DigitGroups<'t>),
    Cjk(CjkRuns<'t>),
    DeepSeek(DeepSeekLexer<'t>),
    Automata(AutomataMatches<'r, 't>),
    Onig(OnigMatches<'r, 't>),
}

impl Iterator for Matches<'_, '_> {
    type Item = (usize, usize);

    #[inline]
    fn next(&mut self) -> Option<(usize, usize)> {
        match self {
            Matches::Gpt2(l) => l.next(),
            Matches::Cl100k(l) => l.next(),
            Matches::O200k(l) => l.next(),
            Matches::DigitGroups(l) => l.next(),
            Matches::Cjk(l) => l.next(),
            Matches::DeepSeek(l) => l.next(),
            Matches::Automata(m) => m.next(),
            Matches::Onig(m) => m.next(),
        }
    }

    /// One dispatch for the whole walk (`for_each` comes here), not one per match.
    #[inline]
    fn fold<B, F: FnMut(B, (usize, usize)) -> B>(self, init: B, f: F) -> B {
        match self {
            Matches::Gpt2(l) => l.fold(init, f),
            Matches::Cl100k(l) => l.fold(init, f),
            Matches::O200k(l) => l.fold(init, f),
            Matches::DigitGroups(l) => l.fold(init, f),
            Matches::Cjk(l) => l.fold(init, f),
            Matches::DeepSeek(l) => l.fold(init, f),
            Matches::Automata(m) => m.fold(init, f),
            Matches::Onig(m) => m.fold(init, f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pattern that backtracks without bound is an error naming it, not a panic; on texts
    /// where Oniguruma finishes it gives Oniguruma's matches.
    #[test]
    fn a_backtracking_pattern_is_an_error_not_a_panic() {
        let re = SysRegex::new("(a|aa)+$").unwrap();
        let mut got = Vec::new();
        re.try_for_each_match("xaaab", |s, e| got.push((s, e))).unwrap();
        assert!(got.is_empty());
        re.try_for_each_match("xaaa", |s, e| got.push((s, e))).unwrap();
        assert_eq!(got, [(1, 4)]);
        let text = format!("{}b", "a".repeat(100));
        let err = re.try_for_each_match(&text, |_, _| {}).unwrap_err().to_string();
        assert!(err.contains("regex too expensive on this input") && err.contains("(a|aa)+$"), "{err}");
    }

    /// Each start position stays under Oniguruma's per-match limit (runs of 25 `a`s cost
    /// about 10^5 steps each), so only the text's step budget stops it: about 10^9 steps
    /// (a minute in a debug build) without it; an error after about 3 x 10^7 with it (the
    /// budget and the attempts of the last search), counted in this thread's CPU time so that
    /// a loaded machine does not count.
    #[test]
    fn a_search_that_backtracks_at_every_position_is_stopped_by_its_budget() {
        let re = SysRegex::new("(a|aa)+$").unwrap();
        let text = format!("{}b", "a".repeat(25)).repeat(8_000);
        let start = crate::pre_tokenizers::lexers::adversarial::thread_cpu_seconds();
        let err = re.try_for_each_match(&text, |_, _| {}).unwrap_err().to_string();
        let secs = crate::pre_tokenizers::lexers::adversarial::thread_cpu_seconds() - start;
        assert!(err.contains("regex too expensive on this input") && err.contains("(a|aa)+$"), "{err}");
        assert!(err.contains("retry-limit-in-search"), "{err}");
        assert!(secs < 5.0, "{secs} s");
    }

    /// Each search succeeds well within Oniguruma's per-search limits (about 3 x 10^4
    /// retries for the run of `a`s before each `b`), but there is one search per unit: the
    /// text's budget (64 retries per byte) is what stops it, a whole text costing far more per
    /// byte than any tokenizer pattern; a few units pass, with Oniguruma's matches.
    #[test]
    fn many_searches_share_the_texts_budget() {
        // On the automaton (the pattern reads the same to both) the text has its matches.
        let unit = format!("{}b", "a".repeat(20));
        let automaton = SysRegex::new("(a|aa)+c|b").unwrap();
        assert!(automaton.is_automaton());
        let mut n = 0;
        automaton.try_for_each_match(&unit.repeat(5_000), |_, _| n += 1).unwrap();
        assert_eq!(n, 5_000);
        let re = SysRegex::onig_only("(a|aa)+c|b").unwrap();
        let mut got = Vec::new();
        re.try_for_each_match(&unit.repeat(3), |s, e| got.push((s, e))).unwrap();
        assert_eq!(got, [(20, 21), (41, 42), (62, 63)]);
        let err = re.try_for_each_match(&unit.repeat(5_000), |_, _| {}).unwrap_err().to_string();
        assert!(err.contains("regex too expensive on this input") && err.contains("retry-limit-in-search"), "{err}");
    }

    /// A tokenizer pattern on the general path searches a text with matches far apart (a
    /// long run with no newline) without running out: the retries of one long search raise
    /// its limit, not the error.
    #[test]
    fn sparse_matches_are_within_the_budget() {
        let re = SysRegex::new(r"\s*[\r\n]+").unwrap();
        let text = format!("{}\n", "word ".repeat(200_000));
        let mut got = Vec::new();
        re.try_for_each_match(&text, |s, e| got.push((s, e))).unwrap();
        assert_eq!(got, [(text.len() - 2, text.len())]);
    }

    /// Patterns that scan to the end of the text from every start position (quadratic time,
    /// with few or no retries for Oniguruma's counters: `.*` before a literal pushes nothing)
    /// get the error in bounded time; with a shorter text, Oniguruma's matches.
    #[test]
    fn patterns_that_scan_ahead_are_stopped_by_the_step_budget() {
        let text = "a".repeat(200_000);
        for pattern in ["a(?=.*z)", "a.*z", "a(?!.*z)", "a[^z]*+z", r"a(?=\w*z)"] {
            // `a.*z` reads the same to the automaton, which runs it in linear time.
            if SysRegex::new(pattern).unwrap().is_automaton() {
                assert_eq!(pattern, "a.*z");
                SysRegex::new(pattern).unwrap().try_for_each_match(&text, |_, _| {}).unwrap();
            }
            let re = SysRegex::onig_only(pattern).unwrap();
            assert!(re.scans_ahead, "{pattern}");
            let mut got = Vec::new();
            re.try_for_each_match("aaz ba", |s, e| got.push((s, e))).unwrap();
            let want: Vec<_> = ::onig::Regex::new(pattern).unwrap().find_iter("aaz ba").collect();
            assert_eq!(got, want, "{pattern}");
            let start = crate::pre_tokenizers::lexers::adversarial::thread_cpu_seconds();
            let err = re.try_for_each_match(&text, |_, _| {}).unwrap_err().to_string();
            let secs = crate::pre_tokenizers::lexers::adversarial::thread_cpu_seconds() - start;
            assert!(err.contains("regex too expensive on this input") && err.contains("scans too far ahead"), "{pattern}: {err}");
            // About 0.1 s in a release build; a debug build's Oniguruma is slower.
            assert!(secs < 10.0, "{pattern}: {secs} s");
        }
    }

    /// The tokenizer patterns of the general path step over a few chars per byte on every
    /// worst-case text, far below the text's step budget (which stops `a(?=.*z)` above).
    #[test]
    fn tokenizer_patterns_stay_far_below_the_step_budget() {
        let texts = crate::utils::lexers::adversarial_texts(16 << 10);
        let mut checked = 0;
        for pattern in crate::utils::lexers::reference_tests::ONIG_READINGS {
            let re = SysRegex::onig_only(pattern).unwrap();
            for (name, text) in &texts {
                let before = onig::steps();
                re.try_for_each_match(text, |_, _| {}).unwrap();
                let per_byte = (onig::steps() - before) as f64 / text.len() as f64;
                assert!(per_byte < 32.0, "{pattern} on {name}: {per_byte} steps per byte");
                checked += 1;
            }
        }
        assert!(checked > 500, "{checked}");
    }

    /// Which patterns are searched one start position at a time.
    #[test]
    fn patterns_that_may_scan_ahead_are_recognised() {
        for p in [
            "a(?=.*z)",
            "a(?=b+)",
            "(?<=a+)b",
            "a.*z",
            r"\s+(?!\S)",
            r"\p{N}{1,3}+x",
            r"\p{N}{2,}x",
            "(?:ab)+",
            "(a|b)*",
            r"(a)\1",
            r"(?<n>a)\k<n>",
            "(?x) a+ b",
            "(?:a+|b)c",
            GPT2_PATTERN,
            LLAMA3_PATTERN,
        ] {
            assert!(scans_ahead(p), "{p}");
        }
        for p in [
            "",
            "abc",
            r"\p{N}{1,3}",
            r"[\p{N}]{1,3}",
            r"\s+",
            "a+|b+",
            "(?:ab)",
            "(?i:'s|'t)|x+",
            r"[a-z\]+*]+",
            r"[^\r\n\p{L}\p{N}]?\p{L}+",
            "a(?=b)c+",
            "a{2}b*",
            "a{,3}b",
            "x{y}z+",
            "(?#comment (a+))b",
        ] {
            assert!(!scans_ahead(p), "{p}");
        }
    }

    /// Patterns run on the automaton (the lexers' patterns forced onto it, and others no lexer
    /// knows), against Oniguruma on every adversarial text, random strings over the lexers'
    /// corner-case alphabet and the corpora: the same matches, counted.
    #[test]
    fn automaton_matches_oniguruma() {
        let llama3_onig = LLAMA3_PATTERN.replace(r"\p{N}{1,3}", r"[\p{N}]{1,3}");
        let qwen_onig = QWEN2_PATTERN.replace(r"|\p{N}|", r"|[\p{N}]|");
        let patterns = [
            LLAMA3_PATTERN,
            QWEN2_PATTERN,
            &llama3_onig,
            &qwen_onig,
            crate::utils::lexers::O200K_PATTERN,
            crate::utils::lexers::DEEPSEEK_MAIN_PATTERN,
            crate::utils::lexers::DEEPSEEK_DIGITS_PATTERN,
            crate::utils::lexers::DEEPSEEK_CJK_PATTERN,
            r"\p{L}+|\p{N}+",
            r"\S+|\s+",
            r" {2,}",
            r"[0-9]",
            r"[^\s\p{P}]+?\p{P}?|\p{Lu}\p{Ll}*|\P{L}|\p{M}+|\p{S}|.",
            r"(?i:'s|'t|'re|'ve|'m|'ll|'d|k)|(?<w>\p{Lt}|\p{Lm})+|\p{Lo}{2}|a*",
            "",
        ];
        let mut texts: Vec<String> = crate::utils::lexers::adversarial_texts(4000).into_iter().map(|(_, t)| t).collect();
        texts.extend(crate::utils::lexers::random_strings(crate::utils::lexers::reference_tests::ALPHABET, 0xA170_3A7A, 5000));
        texts.extend(crate::utils::lexers::reference_tests::corpus_texts());
        let mut matches = 0;
        for pattern in patterns {
            let automaton = AutomataRegex::new(pattern).unwrap_or_else(|| panic!("{pattern}: not on the automaton"));
            let onig = SysRegex::onig_only(pattern).unwrap();
            for t in &texts {
                let got: Vec<_> = AutomataMatches { regex: &automaton, text: t, step: EmptyMatchRule::default() }.collect();
                let want: Vec<_> = onig.find_iter(t).collect();
                if got != want {
                    let i = got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
                    let at = want.get(i).or(got.get(i)).map_or(0, |m| m.0);
                    let ctx: String = t[at..].chars().take(20).collect();
                    panic!("{pattern} at byte {at} ({ctx:?}): automaton {:?}, Oniguruma {:?}", got.get(i), want.get(i));
                }
                matches += got.len();
            }
        }
        eprintln!("{matches} matches of {} patterns on {} texts identical to Oniguruma", patterns.len(), texts.len());
        assert!(matches > 1_000_000, "{matches}");
    }

    /// What stays on Oniguruma: look-around other than the whitespace tail, anchors, classes
    /// and flags the engines may read differently, case folding that Oniguruma widens.
    #[test]
    fn patterns_the_engines_may_read_differently_stay_on_oniguruma() {
        for p in [
            GPT2_PATTERN,
            R50K_PATTERN,
            CL100K_PATTERN,
            r"a(?=b)",
            r"^a",
            r"a$",
            r"\ba",
            r"\d+",
            r"\w+",
            r"[[:alpha:]]",
            r"\p{Han}",
            r"(?i)the",
            r"(?i:ss)",
            r"(?i:é)",
            r"(?i:a+)",
            r"a{2}?",
            r"[a-z&&[^x]]",
            r"(a)\1",
            r"a++",
            r"a{1,3}+",
            r"a*+",
        ] {
            let re = SysRegex::new(p).unwrap();
            assert!(!re.is_automaton(), "{p}");
        }
        let llama3_onig = LLAMA3_PATTERN.replace(r"\p{N}{1,3}", r"[\p{N}]{1,3}");
        assert!(SysRegex::new(&llama3_onig).unwrap().is_automaton());
        assert!(!SysRegex::new(LLAMA3_PATTERN).unwrap().is_automaton(), "a lexer runs it");
    }

    #[test]
    fn empty_matches_follow_onig() {
        let re = SysRegex::new("a*").unwrap();
        let mut got = Vec::new();
        re.try_for_each_match("baab", |s, e| got.push((s, e))).unwrap();
        let want: Vec<_> = ::onig::Regex::new("a*").unwrap().find_iter("baab").collect();
        assert_eq!(got, want);
    }
}
