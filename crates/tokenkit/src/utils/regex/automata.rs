//! A finite-automaton engine (regex-automata) for the tokenizer.json patterns no hand-written
//! lexer knows but whose every construct means the same to both engines: one Oniguruma search
//! per piece costs thousands of instructions (most of it the call's set-up), a lazy DFA walk a
//! few per byte.
//!
//! A pattern qualifies when it has no look-around, or none but the usual tail of the GPT-4
//! style patterns, `\s*[\r\n]+|\s+(?!\S)|\s+` as its last three top-level alternatives: the
//! rest (the head) then runs on the automaton as a first pattern and a whitespace char as a
//! second, and where the second wins (no alternative of the head matches there) the lexers'
//! own rule for that tail ([`whitespace_match`]) gives the match's end.
//!
//! The pattern is read with regex-syntax's parser and written again with only what the two
//! engines read alike (see [`Writer`]); anything else keeps the pattern on Oniguruma. The
//! Unicode classes (`\p{L}`, `\p{N}`, `\s`, ...) become the code point ranges Oniguruma gives
//! them (the lexers' table, generated from Oniguruma), not regex-syntax's own Unicode tables,
//! which follow another Unicode version.

use regex_automata::meta::Regex;
use regex_automata::util::syntax;
use regex_automata::{Anchored, Input, MatchKind};
use regex_syntax::ast::{
    self, Ast, ClassPerlKind, ClassSet, ClassSetItem, ClassUnicodeKind, Flag, FlagsItemKind, GroupKind, LiteralKind, RepetitionKind,
    RepetitionRange,
};

use crate::utils::lexers::class_table::{RANGES, WS};
use crate::utils::lexers::classes::{whitespace_match, L, LL, LM, LO, LT, LU, M, N, P, S};

/// The tail of the GPT-4 style patterns that [`whitespace_match`] runs, with the newline
/// escapes or (DeepSeek-V3) the chars themselves.
const WHITESPACE_TAILS: [&str; 2] = [r"|\s*[\r\n]+|\s+(?!\S)|\s+", "|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"];

/// A pattern compiled for the automaton (see the module docs).
pub(super) struct AutomataRegex {
    /// The head, and with the whitespace tail, a whitespace char as the second pattern.
    regex: Regex,
    tail: bool,
}

impl AutomataRegex {
    /// The automaton for `pattern`, `None` when the pattern uses anything the two engines may
    /// read differently.
    pub(super) fn new(pattern: &str) -> Option<Self> {
        let (head, tail) = match WHITESPACE_TAILS.iter().find_map(|t| pattern.strip_suffix(t)) {
            Some(head) => (head, true),
            None => (pattern, false),
        };
        let ast = ast::parse::ParserBuilder::new().nest_limit(64).build().parse(head).ok()?;
        let mut w = Writer::default();
        w.ast(&ast, false)?;
        let mut patterns = vec![w.out];
        if tail {
            patterns.push(format!("[{}]", ranges(WS)));
        }
        let regex = Regex::builder()
            .syntax(syntax::Config::new().unicode(true).utf8(true))
            .configure(Regex::config().match_kind(MatchKind::LeftmostFirst).utf8_empty(true))
            .build_many(&patterns)
            .ok()?;
        Some(Self { regex, tail })
    }

    /// The next match at or after `from`: where the leftmost alternative matches first.
    #[inline]
    pub(super) fn find_at(&self, text: &str, from: usize) -> Option<(usize, usize)> {
        // A match most often starts where the previous one ended: an anchored search there
        // finds it in one forward walk; the unanchored one also walks back to find the start.
        let input = Input::new(text).range(from..);
        let m = self.regex.search(&input.clone().anchored(Anchored::Yes)).or_else(|| self.regex.search(&input))?;
        if self.tail && m.pattern().as_usize() == 1 {
            return Some((m.start(), whitespace_match(text.as_bytes(), m.start()).0));
        }
        Some((m.start(), m.end()))
    }
}

/// The code point ranges of the chars with one of the classes `mask`, Oniguruma's reading
/// (the lexers' table), written for a bracketed class.
fn ranges(mask: u16) -> String {
    let mut out = String::new();
    let mut run: Option<(u32, u32)> = None;
    for &(a, b, _) in RANGES.iter().filter(|r| r.2 & mask != 0) {
        run = match run {
            Some((s, e)) if e + 1 == a => Some((s, b)),
            Some((s, e)) => {
                out.push_str(&format!("\\x{{{s:X}}}-\\x{{{e:X}}}"));
                Some((a, b))
            }
            None => Some((a, b)),
        };
    }
    if let Some((s, e)) = run {
        out.push_str(&format!("\\x{{{s:X}}}-\\x{{{e:X}}}"));
    }
    out
}

/// The classes of a Unicode class name, as the lexers' table holds them.
fn unicode_class(kind: &ClassUnicodeKind) -> Option<u16> {
    let name = match kind {
        ClassUnicodeKind::OneLetter(c) => c.to_string(),
        ClassUnicodeKind::Named(n) => n.clone(),
        ClassUnicodeKind::NamedValue { .. } => return None,
    };
    Some(match name.as_str() {
        "L" => L,
        "Lu" => LU,
        "Ll" => LL,
        "Lt" => LT,
        "Lm" => LM,
        "Lo" => LO,
        "M" => M,
        "N" => N,
        "P" => P,
        "S" => S,
        _ => return None,
    })
}

/// Writes a pattern again from its syntax tree with only the constructs Oniguruma (Ruby
/// syntax) and regex-syntax read alike, the classes as code point ranges; `None` at anything
/// else: look-around and anchors, `\d`, `\w`, POSIX classes, other Unicode properties, class
/// set operations, inline flags, lazy intervals (`{n}?` is optional in Ruby syntax), a repeat
/// of a repeat (possessive in Ruby syntax), and case
/// folding of anything but ASCII literals with no pair that folds to one char (`ss` is `ß`
/// to Oniguruma).
#[derive(Default)]
struct Writer {
    out: String,
}

impl Writer {
    fn ast(&mut self, ast: &Ast, fold: bool) -> Option<()> {
        match ast {
            Ast::Empty(_) => {}
            Ast::Literal(l) => self.literal(l, fold)?,
            Ast::Dot(_) if !fold => self.out.push('.'),
            Ast::ClassUnicode(c) if !fold => {
                let mask = unicode_class(&c.kind)?;
                self.out.push_str(&format!("[{}{}]", if c.negated { "^" } else { "" }, ranges(mask)));
            }
            Ast::ClassPerl(c) if !fold && c.kind == ClassPerlKind::Space => {
                self.out.push_str(&format!("[{}{}]", if c.negated { "^" } else { "" }, ranges(WS)));
            }
            Ast::ClassBracketed(c) if !fold => self.bracketed(c)?,
            // A repeat of a repeat is possessive to Oniguruma (`a++`, `a*+`, `a?+`).
            Ast::Repetition(r) if !fold && !matches!(*r.ast, Ast::Repetition(_)) => {
                self.group(&r.ast, fold)?;
                let lazy = !r.greedy;
                match &r.op.kind {
                    RepetitionKind::ZeroOrOne => self.out.push('?'),
                    RepetitionKind::ZeroOrMore => self.out.push('*'),
                    RepetitionKind::OneOrMore => self.out.push('+'),
                    RepetitionKind::Range(_) if lazy => return None,
                    RepetitionKind::Range(RepetitionRange::Exactly(n)) => self.out.push_str(&format!("{{{n}}}")),
                    RepetitionKind::Range(RepetitionRange::AtLeast(n)) => self.out.push_str(&format!("{{{n},}}")),
                    RepetitionKind::Range(RepetitionRange::Bounded(a, b)) => self.out.push_str(&format!("{{{a},{b}}}")),
                }
                if lazy {
                    self.out.push('?');
                }
            }
            Ast::Group(g) => {
                // Under case folding only literals (see `folds_to_one`): no group in it.
                let fold = match &g.kind {
                    _ if fold => return None,
                    // `(?P<name>...)` is not a group to Oniguruma's Ruby syntax.
                    GroupKind::CaptureName { starts_with_p: true, .. } => return None,
                    GroupKind::CaptureIndex(_) | GroupKind::CaptureName { .. } => false,
                    GroupKind::NonCapturing(flags) => match flags.items.as_slice() {
                        [] => false,
                        [item] if item.kind == FlagsItemKind::Flag(Flag::CaseInsensitive) => true,
                        _ => return None,
                    },
                };
                self.out.push_str(if fold { "(?i:" } else { "(?:" });
                self.ast(&g.ast, fold)?;
                self.out.push(')');
            }
            Ast::Alternation(a) => {
                for (i, x) in a.asts.iter().enumerate() {
                    if i > 0 {
                        self.out.push('|');
                    }
                    self.ast(x, fold)?;
                }
            }
            Ast::Concat(c) => {
                if fold && c.asts.windows(2).any(|w| matches!(w, [Ast::Literal(a), Ast::Literal(b)] if folds_to_one(a.c, b.c))) {
                    return None;
                }
                for x in &c.asts {
                    self.ast(x, fold)?;
                }
            }
            _ => return None,
        }
        Some(())
    }

    /// `ast` as one item, for a repetition to apply to.
    fn group(&mut self, ast: &Ast, fold: bool) -> Option<()> {
        self.out.push_str("(?:");
        self.ast(ast, fold)?;
        self.out.push(')');
        Some(())
    }

    fn literal(&mut self, l: &ast::Literal, fold: bool) -> Option<()> {
        // Octal escapes (off in regex-syntax) and `\cX`-like forms would not parse; what does
        // is the same char to Oniguruma. Under case folding only ASCII: Oniguruma folds some
        // chars to several.
        if matches!(l.kind, LiteralKind::Octal) || fold && !l.c.is_ascii() {
            return None;
        }
        self.out.push_str(&format!("\\x{{{:X}}}", u32::from(l.c)));
        Some(())
    }

    fn bracketed(&mut self, c: &ast::ClassBracketed) -> Option<()> {
        self.out.push('[');
        if c.negated {
            self.out.push('^');
        }
        match &c.kind {
            ClassSet::Item(item) => self.item(item)?,
            ClassSet::BinaryOp(_) => return None,
        }
        self.out.push(']');
        Some(())
    }

    fn item(&mut self, item: &ClassSetItem) -> Option<()> {
        match item {
            ClassSetItem::Empty(_) => {}
            ClassSetItem::Literal(l) => self.literal(l, false)?,
            ClassSetItem::Range(r) => {
                self.literal(&r.start, false)?;
                self.out.push('-');
                self.literal(&r.end, false)?;
            }
            ClassSetItem::Unicode(u) => {
                let body = ranges(unicode_class(&u.kind)?);
                if u.negated {
                    self.out.push_str(&format!("[^{body}]"));
                } else {
                    self.out.push_str(&body);
                }
            }
            ClassSetItem::Perl(p) if p.kind == ClassPerlKind::Space => {
                let body = ranges(WS);
                if p.negated {
                    self.out.push_str(&format!("[^{body}]"));
                } else {
                    self.out.push_str(&body);
                }
            }
            ClassSetItem::Bracketed(b) => self.bracketed(b)?,
            ClassSetItem::Union(u) => {
                for x in &u.items {
                    self.item(x)?;
                }
            }
            _ => return None,
        }
        Some(())
    }
}

/// Whether two ASCII chars read case-insensitively are the full case folding of one char
/// (`ß` is `ss`, the ligatures `ﬀ ﬁ ﬂ ﬅ ﬆ` are `ff fi fl st st`): Oniguruma matches that char
/// for them, regex-syntax does not.
fn folds_to_one(a: char, b: char) -> bool {
    matches!((a.to_ascii_lowercase(), b.to_ascii_lowercase()), ('s', 's') | ('f', 'f') | ('f', 'i') | ('f', 'l') | ('s', 't'))
}
