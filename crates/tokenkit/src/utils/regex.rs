//! The regex engine for patterns found in tokenizer.json. Every pattern is read with
//! Oniguruma semantics, the engine HF tokenizers uses; the well-known pre-tokenization
//! patterns are recognised and run by hand-written lexers that give the same matches
//! (see `pre_tokenizers::lexers`), any other pattern runs on Oniguruma itself.

use onig::Regex;

use crate::formats::tiktoken::{CL100K_ONIG_PATTERN, R50K_PATTERN, CL100K_PATTERN as TIKTOKEN_CL100K_PATTERN};
use crate::pre_tokenizers::lexers::{
    CjkRuns, Cl100kLexer, DeepSeekLexer, DigitGroups, DigitRun, Gpt2Lexer, O200kLexer, DEEPSEEK_CJK_PATTERN,
    DEEPSEEK_DIGITS_PATTERN, DEEPSEEK_MAIN_PATTERN, O200K_PATTERN,
};
use crate::{Error, Result};

/// The GPT-2 pattern (HF ByteLevel's default).
pub const GPT2_PATTERN: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";
/// The Llama-3 pattern (cl100k with `\p{N}{1,3}`).
pub const LLAMA3_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// The Qwen2 pattern (also Qwen2.5 and Qwen3): cl100k with a single `\p{N}`.
pub const QWEN2_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// The cl100k pattern as tiktoken writes it (`\p{N}{1,3}+`).
pub const CL100K_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

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
    regex: Regex,
    fast: Option<Fast>,
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
        let regex = Regex::new(pattern)
            .map_err(|e| Error::Regex { pattern: pattern.to_owned(), message: e.to_string() })?;
        Ok(Self { regex, fast: recognise(pattern), pattern: pattern.to_owned() })
    }

    /// Compiles `pattern` for Oniguruma alone, never a fast lexer (the reference the lexers
    /// are tested against).
    pub fn onig_only(pattern: &str) -> Result<Self> {
        let mut r = Self::new(pattern)?;
        r.fast = None;
        Ok(r)
    }

    /// Whether a hand-written lexer runs this pattern.
    pub fn is_fast(&self) -> bool {
        self.fast.is_some()
    }

    /// The source pattern.
    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// Byte ranges of the successive non-overlapping matches.
    pub fn find_iter<'r, 't>(&'r self, inside: &'t str) -> Matches<'r, 't> {
        match self.fast {
            Some(Fast::Gpt2) => Matches::Gpt2(Gpt2Lexer::new(inside)),
            Some(Fast::Cl100k(d, false)) => Matches::Cl100k(Cl100kLexer::new(inside, d)),
            Some(Fast::Cl100k(d, true)) => Matches::Cl100k(Cl100kLexer::new(inside, d).whitespace_run_to_end()),
            Some(Fast::O200k) => Matches::O200k(O200kLexer::new(inside)),
            Some(Fast::DigitGroups) => Matches::DigitGroups(DigitGroups::new(inside)),
            Some(Fast::Cjk) => Matches::Cjk(CjkRuns::new(inside)),
            Some(Fast::DeepSeek) => Matches::DeepSeek(DeepSeekLexer::new(inside)),
            None => Matches::Onig(self.regex.find_iter(inside)),
        }
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
    Onig(onig::FindMatches<'r, 't>),
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
            Matches::Onig(m) => m.fold(init, f),
        }
    }
}
