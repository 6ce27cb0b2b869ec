//! De-identification: personal data found in a text and replaced by typed placeholders.
//!
//! Candidates come from regular expressions and are verified in code:
//! - `[URL]`: a URL with credentials (`scheme://user:password@host...`), the whole URL;
//! - `[EMAIL]`: `local@domain.tld` (no leading, trailing or doubled dot in the local part);
//! - `[IBAN]`: two letters, two check digits and the account, grouped by 4 or not; the length
//!   is the country's and the mod-97 check must hold;
//! - `[ID]`: a mainland-China resident ID (18 characters: a region code starting 1–8, a birth
//!   date that exists between 1900 and today's century, a sequence number, and the ISO 7064
//!   MOD 11-2 check character);
//! - `[CARD]`: 13–19 digits, in one run or groups split by one kind of separator (space or
//!   `-`), with a card network's prefix (Visa, Mastercard, Amex, Discover, JCB, UnionPay,
//!   Diners, Maestro) and a valid Luhn check digit;
//! - `[PHONE]`: an international number (`+` country code, 8–15 digits in all, separators
//!   allowed), a mainland-China mobile number (`1[3-9]` and 9 more digits, optionally `+86` /
//!   `86`, in one run or 3-4-4 groups), a mainland-China landline (`0AA-NNNNNNNN`), a North
//!   American number with separators (`(555) 123-4567`, `555-123-4567`, `555.123.4567`), or a
//!   national number with a trunk `0` and two groups (`020 7946 0958`); not a group of a longer
//!   run of digit groups; an international number without separators has at least 11 digits;
//! - `[IP]`: an IPv4 address (four numbers 0–255 without leading zeros; four-part version or
//!   section numbers such as `2.7.2.2` look the same and are taken) or an IPv6 address (as
//!   `std::net::Ipv6Addr` parses it, with at least three groups written, or `::1`).
//!
//! A card candidate right after a label of another kind of number (`order no.`, `invoice #`,
//! `tracking number`, `订单号`, `运单号`, ...) is not taken: a random 16-digit order number with
//! a network prefix passes the Luhn check one time in ten. Numbers inside an IBAN-shaped string
//! whose check fails are no phone or card numbers either.
//!
//! User-supplied entries come after these (see [`PiiOptions`]): terms of dictionaries (names,
//! places; matched as whole words, optionally whatever their ASCII case, not inside a
//! longer word of a spaced script) and regular expressions, each replaced by its `[LABEL]`.
//!
//! A number must not touch other ASCII letters or digits (or a `.`/`-` followed by a digit),
//! so that parts of longer numbers, versions (`v1.2.3.4`), ISBNs and order numbers are not
//! taken. Where candidates overlap, the first type of the list above wins, then the longer.

use std::collections::BTreeMap;
use std::net::Ipv6Addr;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex::Regex;
use serde::Deserialize;

use crate::{Error, Result};

/// The types of personal data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PiiKind {
    Url,
    Email,
    Iban,
    Id,
    Card,
    Phone,
    Ip,
    /// A user-supplied entry: the index of its label in [`Redactor::labels`].
    Custom(u16),
}

impl PiiKind {
    /// Every type, in order of precedence.
    pub const ALL: [PiiKind; 7] = [PiiKind::Url, PiiKind::Email, PiiKind::Iban, PiiKind::Id, PiiKind::Card, PiiKind::Phone, PiiKind::Ip];

    /// The placeholder of a built-in type (`None` for a user-supplied one: see
    /// [`Redactor::placeholder`]).
    pub fn builtin_placeholder(self) -> Option<&'static str> {
        Some(match self {
            PiiKind::Url => "[URL]",
            PiiKind::Email => "[EMAIL]",
            PiiKind::Iban => "[IBAN]",
            PiiKind::Id => "[ID]",
            PiiKind::Card => "[CARD]",
            PiiKind::Phone => "[PHONE]",
            PiiKind::Ip => "[IP]",
            PiiKind::Custom(_) => return None,
        })
    }

    /// Its index in [`Counts`]: the built-in types, then the user-supplied labels.
    fn index(self) -> usize {
        match self {
            PiiKind::Custom(k) => Self::ALL.len() + usize::from(k),
            _ => Self::ALL.iter().position(|&b| b == self).unwrap_or(0),
        }
    }
}

/// Counts of replacements per type.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts(Vec<u64>);

impl Counts {
    /// `(type, count)` of the types found, built-in types first.
    pub fn iter(&self) -> impl Iterator<Item = (PiiKind, u64)> + '_ {
        self.0.iter().enumerate().filter(|(_, n)| **n > 0).map(|(k, &n)| {
            let kind = PiiKind::ALL.get(k).copied().unwrap_or_else(|| PiiKind::Custom((k - PiiKind::ALL.len()) as u16));
            (kind, n)
        })
    }

    /// The count of `kind`.
    pub fn get(&self, kind: PiiKind) -> u64 {
        self.0.get(kind.index()).copied().unwrap_or(0)
    }

    fn add(&mut self, kind: PiiKind) {
        let k = kind.index();
        if self.0.len() <= k {
            self.0.resize(k + 1, 0);
        }
        self.0[k] += 1;
    }
}

/// User-supplied personal data, each kind replaced by `[LABEL]`: the options of the `pii` step.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PiiOptions {
    /// `LABEL` → a UTF-8 file of terms (names, places, ...), one per line; blank lines are
    /// skipped and spaces around a term trimmed.
    pub dictionaries: BTreeMap<String, PathBuf>,
    /// `LABEL` → a regular expression (the `regex` crate's syntax: linear time, no look-around
    /// or back-references).
    pub patterns: BTreeMap<String, String>,
    /// Dictionary terms match whatever their ASCII case.
    pub ignore_case: bool,
}

/// Most user labels (a [`PiiKind::Custom`] index is 16 bits).
const MAX_LABELS: usize = 1 << 12;
/// Most bytes of one user pattern's compiled program.
const PATTERN_SIZE_LIMIT: usize = 32 << 20;

/// Finds and replaces personal data: the built-in types and the user-supplied entries of a
/// [`PiiOptions`].
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// `[LABEL]` of each user label, in the order of [`PiiKind::Custom`] indexes.
    labels: Vec<String>,
    /// The dictionary terms, and the label of each.
    terms: Option<(AhoCorasick, Vec<u16>)>,
    /// The user patterns and their labels.
    patterns: Vec<(Regex, u16)>,
}

impl Redactor {
    /// The built-in types and the entries of `opts`; an unreadable or empty dictionary, a bad
    /// label or an invalid pattern is an error.
    pub fn new(opts: &PiiOptions) -> Result<Self> {
        let mut labels: Vec<String> = Vec::new();
        let mut label_of = |label: &str| -> Result<u16> {
            if label.is_empty() || !label.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-') {
                return Err(Error::invalid(format!(
                    "PII label {label:?}: use letters, digits, `_` and `-` (it becomes the placeholder [{label}])"
                )));
            }
            let placeholder = format!("[{label}]");
            let k = labels.iter().position(|l| *l == placeholder).unwrap_or_else(|| {
                labels.push(placeholder);
                labels.len() - 1
            });
            if labels.len() > MAX_LABELS {
                return Err(Error::invalid(format!("more than {MAX_LABELS} PII labels")));
            }
            Ok(k as u16)
        };
        let mut patterns = Vec::new();
        for (label, pattern) in &opts.patterns {
            let k = label_of(label)?;
            let re = regex::RegexBuilder::new(pattern)
                .size_limit(PATTERN_SIZE_LIMIT)
                .build()
                .map_err(|e| Error::invalid(format!("PII pattern {label}: {e}")))?;
            if re.is_match("") {
                return Err(Error::invalid(format!("PII pattern {label} matches the empty string")));
            }
            patterns.push((re, k));
        }
        let mut words: Vec<String> = Vec::new();
        let mut word_labels: Vec<u16> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (label, path) in &opts.dictionaries {
            let k = label_of(label)?;
            let text = std::fs::read_to_string(path)
                .map_err(|e| Error::invalid(format!("PII dictionary {label}: cannot read {}: {e}", path.display())))?;
            let before = words.len();
            for term in text.lines().map(str::trim).filter(|t| !t.is_empty()) {
                let key = if opts.ignore_case { term.to_ascii_lowercase() } else { term.to_owned() };
                // The first label of a term wins.
                if seen.insert(key) {
                    words.push(term.to_owned());
                    word_labels.push(k);
                }
            }
            if words.len() == before && !text.lines().any(|t| !t.trim().is_empty()) {
                return Err(Error::invalid(format!("PII dictionary {label}: {} has no terms", path.display())));
            }
        }
        let terms = if words.is_empty() {
            None
        } else {
            let ac = AhoCorasickBuilder::new()
                .match_kind(MatchKind::Standard)
                .ascii_case_insensitive(opts.ignore_case)
                .build(&words)
                .map_err(|e| Error::invalid(format!("PII dictionaries: {e}")))?;
            Some((ac, word_labels))
        };
        Ok(Redactor { labels, terms, patterns })
    }

    /// The placeholder of `kind`.
    pub fn placeholder(&self, kind: PiiKind) -> &str {
        match kind {
            PiiKind::Custom(k) => self.labels.get(usize::from(k)).map_or("[PII]", String::as_str),
            _ => kind.builtin_placeholder().unwrap_or("[PII]"),
        }
    }

    /// The personal data in `text`, in text order, without overlaps (see the module docs).
    pub fn find(&self, text: &str) -> Vec<Found> {
        let mut found = find_builtin(text);
        for (re, k) in &self.patterns {
            found.extend(re.find_iter(text).map(|m| Found { kind: PiiKind::Custom(*k), span: m.range() }));
        }
        if let Some((ac, labels)) = &self.terms {
            // Every occurrence, overlapping: one that is not a whole word must not hide another.
            for m in ac.find_overlapping_iter(text) {
                if whole_term(text, m.start(), m.end()) {
                    found.push(Found { kind: PiiKind::Custom(labels[m.pattern().as_usize()]), span: m.start()..m.end() });
                }
            }
        }
        without_overlaps(found)
    }

    /// `text` with its personal data replaced by placeholders (`None` when there is none), and
    /// the counts per type.
    pub fn redact(&self, text: &str) -> (Option<String>, Counts) {
        let found = self.find(text);
        let mut counts = Counts::default();
        if found.is_empty() {
            return (None, counts);
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for f in &found {
            out.push_str(&text[at..f.span.start]);
            out.push_str(self.placeholder(f.kind));
            counts.add(f.kind);
            at = f.span.end;
        }
        out.push_str(&text[at..]);
        (Some(out), counts)
    }
}

/// Whether a dictionary match `start..end` of `text` is a whole term: not joined to a letter
/// or digit of a spaced script on either side (in Chinese or Japanese text, where words are not
/// spaced, any match is taken).
fn whole_term(text: &str, start: usize, end: usize) -> bool {
    let joined = |a: Option<char>, b: Option<char>| match (a, b) {
        (Some(a), Some(b)) => {
            a.is_alphanumeric() && b.is_alphanumeric() && !super::clean::is_unspaced_script(a) && !super::clean::is_unspaced_script(b)
        }
        _ => false,
    };
    !joined(text[..start].chars().next_back(), text[start..end].chars().next())
        && !joined(text[..end].chars().next_back(), text[end..].chars().next())
}

/// One piece of personal data found: where, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub kind: PiiKind,
    pub span: Range<usize>,
}

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a valid pattern")
}

static URL: LazyLock<Regex> =
    LazyLock::new(|| re(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:]+:[^\s/?#@]*@[^\s<>\x22'()\[\]{}\x{80}-\x{10FFFF}]+"));
static EMAIL: LazyLock<Regex> =
    LazyLock::new(|| re(r"[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}"));
static IBAN: LazyLock<Regex> = LazyLock::new(|| re(r"[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{1,4}){3,8}"));
static ID: LazyLock<Regex> = LazyLock::new(|| re(r"[1-8][0-9]{16}[0-9Xx]"));
static CARD: LazyLock<Regex> = LazyLock::new(|| re(r"[0-9](?:[ -]?[0-9]){12,18}"));
static PHONE: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"\+[1-9][0-9]{0,2}(?:[ .-]?\(?[0-9]{1,4}\)?)(?:[ .-]?[0-9]{2,4}){1,5}",
        r"|(?:\+?86[ -]?)?1[3-9][0-9](?:[0-9]{8}|[ -][0-9]{4}[ -][0-9]{4})",
        r"|0[0-9]{2,3}-[0-9]{7,8}",
        r"|\([0-9]{3}\) ?[0-9]{3}[-.][0-9]{4}|[0-9]{3}([-.])[0-9]{3}[-.][0-9]{4}",
        r"|0[0-9]{1,4}[ -][0-9]{3,4}[ -][0-9]{3,4}",
    ))
});
/// A label that says the number after it is an order, invoice, tracking or reference number
/// (the text before a card candidate ends with it).
static NOT_A_CARD: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(?:(?:order|invoice|tracking|reference|ref|account|acct|isbn|issn)\s*(?:no\.?|number|num|#|id)\s*[:：]?\s*|(?:订单|运单|快递单?|发票|账户|帐户|流水)(?:号|编号|号码)\s*[:：]?\s*)$",
    )
});
static IPV4: LazyLock<Regex> = LazyLock::new(|| re(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}"));
static IPV6: LazyLock<Regex> = LazyLock::new(|| re(r"[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?:(?:\.[0-9]{1,3}){3})?"));

/// Whether the match `span` of `text` stands alone: no ASCII letter or digit right before or
/// after it, nor a `.`, `-` or `+` joined to a digit (a longer number, a version).
fn isolated(text: &str, span: &Range<usize>) -> bool {
    let b = text.as_bytes();
    let before = span.start.checked_sub(1).map(|i| b[i]);
    let after = b.get(span.end).copied();
    let alnum = |c: Option<u8>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    if alnum(before) || alnum(after) {
        return false;
    }
    let joined_before =
        matches!(before, Some(b'.' | b'-' | b'+' | b'/' | b':')) && span.start >= 2 && b[span.start - 2].is_ascii_alphanumeric();
    let joined_after = matches!(after, Some(b'.' | b'-' | b'/' | b':')) && b.get(span.end + 1).is_some_and(|c| c.is_ascii_digit());
    !(joined_before || joined_after)
}

/// The last `n` bytes (or a few more, to a character boundary) of `text[..end]`.
fn tail(text: &str, end: usize, n: usize) -> &str {
    let mut start = end.saturating_sub(n);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    &text[start..end]
}

fn digits(s: &str) -> Vec<u8> {
    s.bytes().filter(u8::is_ascii_digit).map(|c| c - b'0').collect()
}

/// The Luhn check of a digit string.
pub fn luhn(digits: &[u8]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(k, &d)| {
            let d = u32::from(d);
            if k % 2 == 1 {
                let x = d * 2;
                if x > 9 {
                    x - 9
                } else {
                    x
                }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// Whether `d` starts with a card network's prefix and has one of its lengths.
fn card_network(d: &[u8]) -> bool {
    let n = d.len();
    let p = |k: usize| d[..k].iter().fold(0u32, |a, &x| a * 10 + u32::from(x));
    match d[0] {
        4 => matches!(n, 13 | 16 | 19),                                                             // Visa
        5 if (51..=55).contains(&p(2)) => n == 16,                                                  // Mastercard
        2 if (2221..=2720).contains(&p(4)) => n == 16,                                              // Mastercard
        3 if matches!(p(2), 34 | 37) => n == 15,                                                    // Amex
        3 if (3528..=3589).contains(&p(4)) => (16..=19).contains(&n),                               // JCB
        3 if matches!(p(2), 36 | 38 | 39) || (300..=305).contains(&p(3)) => (14..=19).contains(&n), // Diners
        6 if p(4) == 6011 || p(2) == 65 || (644..=649).contains(&p(3)) => (16..=19).contains(&n),   // Discover
        6 if p(2) == 62 => (16..=19).contains(&n),                                                  // UnionPay
        5 | 6 if matches!(p(2), 50 | 56..=69) => (13..=19).contains(&n),                            // Maestro
        _ => false,
    }
}

fn is_card(s: &str) -> bool {
    let d = digits(s);
    if !(13..=19).contains(&d.len()) || !card_network(&d) || !luhn(&d) {
        return false;
    }
    // One kind of separator, between groups of 3 to 6 digits.
    let seps: Vec<char> = s.chars().filter(|c| !c.is_ascii_digit()).collect();
    if seps.is_empty() {
        return true;
    }
    seps.iter().all(|&c| c == seps[0]) && s.split(seps[0]).all(|g| (3..=6).contains(&g.len()))
}

/// The ISO 7064 MOD 11-2 check character of the first 17 digits of a resident ID.
fn id_check(d: &[u8]) -> u8 {
    const W: [u32; 17] = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2];
    let sum: u32 = d.iter().zip(W).map(|(&x, w)| u32::from(x) * w).sum();
    b"10X98765432"[(sum % 11) as usize]
}

fn valid_date(y: u32, m: u32, d: u32) -> bool {
    let leap = (y.is_multiple_of(4) && !y.is_multiple_of(100)) || y.is_multiple_of(400);
    let days = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    (1900..=2099).contains(&y) && (1..=12).contains(&m) && d >= 1 && d <= days[m as usize - 1]
}

fn is_cn_id(s: &str) -> bool {
    let b = s.as_bytes();
    let d: Vec<u8> = b[..17].iter().map(|c| c - b'0').collect();
    let num = |r: Range<usize>| d[r].iter().fold(0u32, |a, &x| a * 10 + u32::from(x));
    valid_date(num(6..10), num(10..12), num(12..14)) && id_check(&d) == b[17].to_ascii_uppercase()
}

/// IBAN lengths by country (the SWIFT registry).
fn iban_length(country: &str) -> Option<usize> {
    Some(match country {
        "NO" => 15,
        "BE" => 16,
        "DK" | "FI" | "FO" | "GL" | "NL" => 18,
        "MK" | "SI" => 19,
        "AT" | "BA" | "EE" | "KZ" | "LT" | "LU" | "XK" => 20,
        "CH" | "CR" | "HR" | "LI" | "LV" => 21,
        "BG" | "BH" | "DE" | "GB" | "GE" | "IE" | "ME" | "RS" => 22,
        "AE" | "GI" | "IL" | "TL" => 23,
        "AD" | "CZ" | "ES" | "MD" | "PK" | "RO" | "SA" | "SE" | "SK" | "TN" | "VG" => 24,
        "PT" | "ST" => 25,
        "IS" | "TR" => 26,
        "FR" | "GR" | "IT" | "MC" | "MR" | "SM" => 27,
        "AL" | "AZ" | "CY" | "DO" | "GT" | "HU" | "LB" | "PL" => 28,
        "BR" | "EG" | "PS" | "QA" | "UA" => 29,
        "JO" | "KW" | "MU" => 30,
        "MT" | "SC" => 31,
        _ => return None,
    })
}

/// The IBAN at the start of `s` (a candidate match): its length in `s`, when the country's
/// length of characters passes the mod-97 check.
fn iban_prefix(s: &str) -> Option<usize> {
    let want = iban_length(&s[..2])?;
    let mut compact = String::with_capacity(want);
    let mut end = 0;
    for (i, c) in s.char_indices() {
        if c != ' ' {
            compact.push(c);
            if compact.len() == want {
                end = i + 1;
                break;
            }
        }
    }
    if compact.len() < want {
        return None;
    }
    let rearranged = compact[4..].chars().chain(compact[..4].chars());
    let mut rem = 0u32;
    for c in rearranged {
        let v = c.to_digit(36)?;
        rem = if v >= 10 { (rem * 100 + v) % 97 } else { (rem * 10 + v) % 97 };
    }
    (rem == 1).then_some(end)
}

fn is_phone(s: &str) -> bool {
    let n = digits(s).len();
    if let Some(rest) = s.strip_prefix('+') {
        // Without separators, at least 11 digits (`+2147483647` is an integer's range).
        let grouped = rest.bytes().any(|c| !c.is_ascii_digit());
        (8..=15).contains(&n) && (grouped || n >= 11)
    } else {
        (9..=13).contains(&n)
    }
}

/// Whether a phone candidate at `span` is one group of a longer run of digit groups
/// (`012 013 023 123`, a hex dump): a digit group right before or after it.
fn in_digit_run(text: &str, span: &Range<usize>) -> bool {
    let b = text.as_bytes();
    let before = span.start >= 2 && matches!(b[span.start - 1], b' ' | b'-') && b[span.start - 2].is_ascii_digit();
    let after = matches!(b.get(span.end), Some(b' ' | b'-')) && b.get(span.end + 1).is_some_and(u8::is_ascii_digit);
    before || after
}

fn is_ipv4(s: &str) -> bool {
    s.split('.').all(|p| p.parse::<u32>().is_ok_and(|v| v <= 255) && !(p.len() > 1 && p.starts_with('0')))
}

/// An IPv6 address with at least three groups written (`2001:db8::1`), or the loopback `::1`
/// (not `add::` or `be::` of reStructuredText, nor a time).
fn is_ipv6(s: &str) -> bool {
    let groups = s.split(':').filter(|g| !g.is_empty()).count();
    s.parse::<Ipv6Addr>().is_ok() && (groups >= 3 || s == "::1")
}

/// The built-in types of personal data in `text`, in text order, without overlaps.
pub fn find(text: &str) -> Vec<Found> {
    without_overlaps(find_builtin(text))
}

/// The candidates of the built-in types, verified, overlapping.
fn find_builtin(text: &str) -> Vec<Found> {
    let mut found: Vec<Found> = Vec::new();
    let mut add = |kind: PiiKind, span: Range<usize>| found.push(Found { kind, span });
    // Cheap tests first: most texts have no `@`, `://` or digits.
    let has_at = text.contains('@');
    let has_digit = text.bytes().any(|c| c.is_ascii_digit());
    if has_at && text.contains("://") {
        for m in URL.find_iter(text) {
            // Punctuation that ends a sentence is not part of the URL.
            let url = m.as_str().trim_end_matches(['.', ',', ';', ':', '!', '?']);
            add(PiiKind::Url, m.start()..m.start() + url.len());
        }
    }
    if has_at {
        for m in EMAIL.find_iter(text) {
            let local = &text[m.start()..text[m.range()].find('@').map_or(m.end(), |k| m.start() + k)];
            let before = text[..m.start()].chars().next_back();
            if !local.starts_with('.')
                && !local.ends_with('.')
                && !local.contains("..")
                && !before.is_some_and(|c| c.is_ascii_alphanumeric())
            {
                add(PiiKind::Email, m.range());
            }
        }
    }
    if has_digit {
        // IBAN-shaped strings (a country's code, whatever their check digits): the numbers in
        // them are no phone or card numbers.
        let mut shaped: Vec<Range<usize>> = Vec::new();
        for m in IBAN.find_iter(text) {
            if iban_length(&m.as_str()[..2]).is_some() {
                shaped.push(m.range());
            }
            if let Some(len) = iban_prefix(m.as_str()) {
                let span = m.start()..m.start() + len;
                if isolated(text, &span) {
                    add(PiiKind::Iban, span);
                }
            }
        }
        let inside_iban = |r: &Range<usize>| shaped.iter().any(|s| s.start < r.end && r.start < s.end);
        for m in ID.find_iter(text) {
            if isolated(text, &m.range()) && is_cn_id(m.as_str()) {
                add(PiiKind::Id, m.range());
            }
        }
        for m in CARD.find_iter(text) {
            if isolated(text, &m.range())
                && is_card(m.as_str())
                && !inside_iban(&m.range())
                && !NOT_A_CARD.is_match(tail(text, m.start(), 48))
            {
                add(PiiKind::Card, m.range());
            }
        }
        for m in PHONE.find_iter(text) {
            let mut span = m.range();
            // `+` is no ASCII alphanumeric: the isolation test looks past it.
            if text[span.clone()].starts_with('+') && span.start > 0 && text.as_bytes()[span.start - 1].is_ascii_alphanumeric() {
                continue;
            }
            if text.as_bytes().get(span.start) == Some(&b'+') {
                span.start += 1;
            }
            if isolated(text, &span) && is_phone(m.as_str()) && !inside_iban(&span) && !in_digit_run(text, &m.range()) {
                add(PiiKind::Phone, m.range());
            }
        }
        for m in IPV4.find_iter(text) {
            if isolated(text, &m.range()) && is_ipv4(m.as_str()) {
                add(PiiKind::Ip, m.range());
            }
        }
    }
    if text.contains(':') {
        for m in IPV6.find_iter(text) {
            let b = text.as_bytes();
            let before_ok = m.start() == 0 || !(b[m.start() - 1].is_ascii_alphanumeric() || b[m.start() - 1] == b':');
            let after_ok = b.get(m.end()).is_none_or(|c| !(c.is_ascii_alphanumeric() || *c == b':'));
            if before_ok && after_ok && is_ipv6(m.as_str()) {
                add(PiiKind::Ip, m.range());
            }
        }
    }
    found
}

/// The spans of `found` that no span of an earlier type (then a longer span, then an earlier
/// one) overlaps, in text order.
fn without_overlaps(mut found: Vec<Found>) -> Vec<Found> {
    if found.len() <= 1 {
        return found;
    }
    // Precedence: the type first, then the longer span, then the earlier.
    found.sort_by_key(|f| (f.kind, std::cmp::Reverse(f.span.len()), f.span.start));
    // The spans taken so far, by start (they do not overlap): a new span overlaps one of them
    // only if it overlaps the last one starting before its end.
    let mut taken: BTreeMap<usize, Found> = BTreeMap::new();
    for f in found {
        let free = taken.range(..f.span.end).next_back().is_none_or(|(_, t)| t.span.end <= f.span.start);
        if free && !f.span.is_empty() {
            taken.insert(f.span.start, f);
        }
    }
    taken.into_values().collect()
}

/// `text` with its built-in types of personal data replaced by placeholders (`None` when there
/// is none), and the counts per type.
pub fn redact(text: &str) -> (Option<String>, Counts) {
    static BUILTIN: LazyLock<Redactor> = LazyLock::new(Redactor::default);
    BUILTIN.redact(text)
}
