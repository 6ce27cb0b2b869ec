//! The normalizer chains of SentencePiece models converted to tokenizer.json (XLNet, ALBERT,
//! T5): literal `Replace`s, `NFD`/`NFKD`, `StripAccents`, `Lowercase` and `Precompiled`, run
//! without a `NormalizedString`. Before a whitespace split, a last `Replace` of space runs by
//! whitespace (T5's and ALBERT's `" {2,}"` → `" "`) changes nothing the split keeps, and is
//! skipped.
//!
//! Most chars are *plain*: every step of the chain leaves them as they are, whatever their
//! neighbours (not in a `Replace` pattern, their own decomposition and a starter, not a
//! combining mark, a grapheme of their own that the charsmap keeps). Between two plain chars
//! every step can be cut: each step on the whole text gives the concatenation of the step on
//! each side. So the text is cut there: a plain char between plain chars goes through as is,
//! aligned with itself, and each maximal stretch of the other chars (a *chunk*, which starts
//! and ends with a plain char except at the ends of the text) goes through the steps with the
//! alignment rules of [`NormalizedString::transform`], one alignment per char instead of one
//! per byte. Two quirks of those rules are not local (an insertion before any char, a
//! removal by a charsmap entry before anything was kept); a chunk that would rely on them
//! away from the start of the text is refused, and the caller then takes the general pipeline.
//!
//! [`NormalizedString::transform`]: crate::tokenizer::NormalizedString::transform

use unicode_normalization_alignments::char::{canonical_combining_class, decompose_canonical, decompose_compatible};
use unicode_normalization_alignments::UnicodeNormalization;
use unicode_segmentation::UnicodeSegmentation;

use crate::normalizers::{NormalizerWrapper, Precompiled, ReplacePattern, StripAccents};
use crate::tokenizer::normalized::lowercase_changes;
use crate::utils::char_memo::CharMemo;

/// An original byte range (relative to the text normalized), one per normalized char.
pub(crate) type Align = (u32, u32);

/// Unicode facts about a char that decide whether it is plain.
mod props {
    /// The char is its own canonical decomposition and a starter.
    pub const NFD_SELF: u8 = 1;
    /// The char is its own compatibility decomposition and a starter.
    pub const NFKD_SELF: u8 = 2;
    /// The char is a combining mark (what `StripAccents` removes).
    pub const COMBINING: u8 = 4;
    /// A grapheme boundary separates the char from any neighbour that has this property too.
    pub const ISOLATED: u8 = 8;
    /// The char is its own lowercase.
    pub const LOWER_SELF: u8 = 16;
}

static UNICODE_PROPS: CharMemo = CharMemo::new();

/// Whether `decompose` gives `c` alone.
fn decomposes_to_itself(c: char, decompose: fn(char, &mut dyn FnMut(char))) -> bool {
    let mut n = 0;
    let mut same = true;
    decompose(c, &mut |d| {
        n += 1;
        same &= d == c;
    });
    n == 1 && same
}

fn compute_props(c: char) -> u8 {
    let mut p = 0;
    let starter = canonical_combining_class(c) == 0;
    if starter && decomposes_to_itself(c, |c, f| decompose_canonical(c, f)) {
        p |= props::NFD_SELF;
    }
    if starter && decomposes_to_itself(c, |c, f| decompose_compatible(c, f)) {
        p |= props::NFKD_SELF;
    }
    if StripAccents::removes(c) {
        p |= props::COMBINING;
    }
    if c.to_lowercase().eq([c]) {
        p |= props::LOWER_SELF;
    }
    // A char that breaks from an ordinary letter on both sides and from itself has no
    // grapheme rule joining it to another such char, but CR (CR LF).
    let mut buf = String::with_capacity(16);
    let alone = |buf: &mut String, s: &[char]| {
        buf.clear();
        buf.extend(s);
        buf.graphemes(true).count() == s.len()
    };
    if c != '\r' && alone(&mut buf, &['a', c]) && alone(&mut buf, &[c, 'a']) && alone(&mut buf, &[c, c]) {
        p |= props::ISOLATED;
    }
    p
}

/// One step of a chain.
#[derive(Clone, Copy)]
enum Step<'a> {
    Replace { pattern: &'a str, content: &'a str },
    Nfd,
    Nfkd,
    StripAccents,
    Lowercase,
    Precompiled(&'a Precompiled),
}

impl<'a> Step<'a> {
    /// The step of a normalizer, if it is one the chain can run.
    fn of(n: &'a NormalizerWrapper) -> Option<Self> {
        Some(match n {
            NormalizerWrapper::Replace(r) => match r.pattern() {
                ReplacePattern::String(p) if !p.is_empty() && p.is_ascii() => Step::Replace { pattern: p, content: r.content() },
                _ => return None,
            },
            NormalizerWrapper::NFD(_) => Step::Nfd,
            NormalizerWrapper::NFKD(_) => Step::Nfkd,
            NormalizerWrapper::StripAccents(_) => Step::StripAccents,
            NormalizerWrapper::Lowercase(_) => Step::Lowercase,
            NormalizerWrapper::Precompiled(p) => Step::Precompiled(p),
            _ => return None,
        })
    }
}

/// A normalizer chain the direct path can run.
#[derive(Clone, Copy)]
pub(crate) struct Chain<'a> {
    /// The normalizers, each a [`Step`].
    list: &'a [NormalizerWrapper],
    /// Bit `b` is set when the ASCII char `b` is plain.
    plain_ascii: u128,
    /// The Unicode properties a plain non-ASCII char must have, and must not have.
    required: u8,
    forbidden: u8,
    /// The chain's charsmap (at most one).
    precompiled: Option<&'a Precompiled>,
}

/// Buffers reused between chunks.
#[derive(Default)]
pub(crate) struct Scratch {
    cur: Vec<(char, Align)>,
    next: Vec<(char, Align)>,
    text: String,
}

/// Whether `n` replaces runs of spaces, and nothing else, by whitespace: all a whitespace
/// split that follows it removes, whatever it replaced them with.
fn replaces_space_runs_by_whitespace(n: &NormalizerWrapper) -> bool {
    let NormalizerWrapper::Replace(r) = n else { return false };
    let runs = matches!(r.pattern(), ReplacePattern::Regex(p) if [" {2,}", " +", " {1,}"].contains(&p.as_str()));
    runs && r.content().chars().all(char::is_whitespace)
}

impl<'a> Chain<'a> {
    /// The chain of `normalizer` (`None`: no normalizer), when it is made of the steps above
    /// only (one `Precompiled` at most) and its `Replace` patterns are non-empty ASCII literals;
    /// with `whitespace_split` (the chain's output is split at whitespace, which is dropped), a
    /// last `Replace` of space runs by whitespace is allowed too, and skipped.
    pub(crate) fn new(normalizer: Option<&'a NormalizerWrapper>, whitespace_split: bool) -> Option<Self> {
        let mut list = match normalizer {
            None => &[][..],
            Some(NormalizerWrapper::Sequence(s)) => s.get_normalizers(),
            Some(n) => std::slice::from_ref(n),
        };
        if let Some((last, rest)) = list.split_last() {
            if whitespace_split && replaces_space_runs_by_whitespace(last) {
                list = rest;
            }
        }
        let mut chain = Chain { list, plain_ascii: !(1u128 << b'\r'), required: 0, forbidden: 0, precompiled: None };
        for n in list {
            match Step::of(n)? {
                Step::Replace { pattern, .. } => {
                    for b in pattern.bytes() {
                        chain.plain_ascii &= !(1u128 << b);
                    }
                }
                Step::Nfd => chain.required |= props::NFD_SELF,
                Step::Nfkd => chain.required |= props::NFKD_SELF,
                Step::StripAccents => chain.forbidden |= props::COMBINING,
                Step::Lowercase => {
                    chain.required |= props::LOWER_SELF;
                    for b in b'A'..=b'Z' {
                        chain.plain_ascii &= !(1u128 << b);
                    }
                }
                Step::Precompiled(p) => {
                    if chain.precompiled.replace(p).is_some() {
                        return None;
                    }
                    chain.required |= props::ISOLATED;
                    for b in 0..128u8 {
                        if !p.keeps_char(b as char) {
                            chain.plain_ascii &= !(1u128 << b);
                        }
                    }
                }
            }
        }
        Some(chain)
    }

    fn steps(&self) -> impl Iterator<Item = Step<'a>> + 'a {
        self.list.iter().filter_map(Step::of)
    }

    /// Whether every step leaves `c` as it is whatever its neighbours (see the module docs).
    #[inline]
    fn is_plain(&self, c: char) -> bool {
        if c.is_ascii() {
            return self.plain_ascii >> (c as u32) & 1 != 0;
        }
        let p = UNICODE_PROPS.get_or_compute(c, compute_props);
        p & self.required == self.required && p & self.forbidden == 0 && self.precompiled.is_none_or(|pc| pc.keeps_char(c))
    }

    /// Whether `c` is a grapheme of its own next to any char with the same property, and
    /// the charsmap `p` keeps it.
    #[inline]
    fn kept_alone(&self, p: &Precompiled, c: char) -> bool {
        let isolated = if c.is_ascii() { c != '\r' } else { UNICODE_PROPS.get_or_compute(c, compute_props) & props::ISOLATED != 0 };
        isolated && p.keeps_char(c)
    }

    /// Normalizes `text`, giving each normalized char and its original byte range in `text`
    /// to `emit`, in order. `false` (after some chars may have been emitted) when the text
    /// needs the general pipeline.
    pub(crate) fn normalize(&self, text: &str, scratch: &mut Scratch, mut emit: impl FnMut(char, Align)) -> bool {
        let mut chars = text.char_indices();
        let mut cur = chars.next().map(|(i, c)| (i, c, self.is_plain(c)));
        let mut prev_plain = true;
        let mut chunk: Option<usize> = None;
        while let Some((i, c, plain)) = cur {
            let next = chars.next().map(|(j, d)| (j, d, self.is_plain(d)));
            if plain && prev_plain && next.is_none_or(|n| n.2) {
                if let Some(start) = chunk.take() {
                    if !self.chunk(text, start, i, scratch, &mut emit) {
                        return false;
                    }
                }
                emit(c, (i as u32, (i + c.len_utf8()) as u32));
            } else if chunk.is_none() {
                chunk = Some(i);
            }
            prev_plain = plain;
            cur = next;
        }
        match chunk {
            Some(start) => self.chunk(text, start, text.len(), scratch, &mut emit),
            None => true,
        }
    }

    /// Runs the steps on the chunk `text[start..end]`.
    fn chunk(&self, text: &str, start: usize, end: usize, scratch: &mut Scratch, emit: &mut impl FnMut(char, Align)) -> bool {
        let at = Ends { first: start == 0, last: end == text.len() };
        let Scratch { cur, next, text: buf } = scratch;
        cur.clear();
        cur.extend(text[start..end].char_indices().map(|(i, c)| {
            let s = (start + i) as u32;
            (c, (s, s + c.len_utf8() as u32))
        }));
        for step in self.steps() {
            next.clear();
            match step {
                Step::Replace { pattern, content } => {
                    let first = pattern.chars().next();
                    if !cur.iter().any(|x| Some(x.0) == first) {
                        continue;
                    }
                    replace(cur, pattern, content, next)
                }
                Step::Nfd => {
                    if !transform(cur, cur.iter().map(|x| x.0).nfd(), at, next) {
                        return false;
                    }
                }
                Step::Nfkd => {
                    if !transform(cur, cur.iter().map(|x| x.0).nfkd(), at, next) {
                        return false;
                    }
                }
                Step::StripAccents => next.extend(cur.iter().filter(|x| !StripAccents::removes(x.0))),
                Step::Lowercase => {
                    if !transform(cur, cur.iter().flat_map(|x| lowercase_changes(x.0)), at, next) {
                        return false;
                    }
                }
                Step::Precompiled(p) => {
                    // Chars that are each a grapheme the charsmap keeps: nothing changes.
                    if cur.iter().all(|&(c, _)| self.kept_alone(p, c)) {
                        continue;
                    }
                    buf.clear();
                    buf.extend(cur.iter().map(|x| x.0));
                    match p.changes(buf) {
                        Some(changes) => {
                            if !transform(cur, changes, at, next) {
                                return false;
                            }
                        }
                        None => continue,
                    }
                }
            }
            std::mem::swap(cur, next);
        }
        for &(c, a) in cur.iter() {
            emit(c, a);
        }
        true
    }
}

/// Where a chunk lies in the text.
#[derive(Clone, Copy)]
struct Ends {
    first: bool,
    last: bool,
}

/// `Replace` of a literal: each leftmost non-overlapping occurrence of `pattern` becomes
/// `content`, every new char aligned with the occurrence's last char.
fn replace(old: &[(char, Align)], pattern: &str, content: &str, out: &mut Vec<(char, Align)>) {
    let n = pattern.chars().count();
    let mut i = 0;
    while i < old.len() {
        if i + n <= old.len() && old[i..i + n].iter().map(|x| x.0).eq(pattern.chars()) {
            let a = old[i + n - 1].1;
            out.extend(content.chars().map(|c| (c, a)));
            i += n;
        } else {
            out.push(old[i]);
            i += 1;
        }
    }
}

/// [`NormalizedString::transform`](crate::tokenizer::NormalizedString::transform)'s rules
/// on one chunk: `(c, 0)` replaces the next old char (and takes its alignment), `(c, 1)` is
/// inserted (aligned with the last old char consumed), `(c, -n)` replaces the next old char
/// and removes the `n` after it; old chars left at the end are dropped. `false` when the
/// result would depend on chars outside the chunk.
fn transform(old: &[(char, Align)], changes: impl IntoIterator<Item = (char, isize)>, at: Ends, out: &mut Vec<(char, Align)>) -> bool {
    let n = old.len();
    // Old chars consumed, and how many the changes asked for (more than `n` = past the end).
    let (mut i, mut wanted) = (0usize, 0usize);
    for (c, change) in changes {
        let a = if change > 0 {
            match i.checked_sub(1) {
                Some(j) => old[j].1,
                None if at.first => (0, 0),
                None => return false,
            }
        } else {
            match old.get(i).or_else(|| i.checked_sub(1).and_then(|j| old.get(j))) {
                Some(x) => x.1,
                None if at.first => (0, 0),
                None => return false,
            }
        };
        if change <= 0 {
            let k = 1 + change.unsigned_abs();
            wanted += k;
            i = (i + k).min(n);
        }
        out.push((c, a));
    }
    at.last || wanted == n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalizers::{Lowercase, Replace, StripAccents, NFKD};
    use crate::tokenizer::{NormalizedString, Normalizer};

    /// XLNet's (and ALBERT's) charsmap; the registry always provides ALBERT's.
    fn precompiled() -> Option<Precompiled> {
        Some(serde_json::from_value(crate::test_fixtures::nmt_nfkc_precompiled()).unwrap())
    }

    /// The general pipeline's normalized chars and their alignments.
    fn general(n: &NormalizerWrapper, text: &str) -> Vec<(char, Align)> {
        let mut s = NormalizedString::from(text);
        n.normalize(&mut s).unwrap();
        let al = s.alignments();
        s.get().char_indices().map(|(i, c)| (c, (al[i].0 as u32, al[i].1 as u32))).collect()
    }

    #[test]
    fn same_as_normalized_string() {
        let mut chains = vec![NormalizerWrapper::Sequence(crate::normalizers::Sequence::new(vec![
            Replace::new("``", "\"").unwrap().into(),
            Replace::new("''", "\"").unwrap().into(),
            NFKD.into(),
            StripAccents.into(),
        ]))];
        let NormalizerWrapper::Sequence(s) = &chains[0] else { unreachable!() };
        let mut lowercased = s.get_normalizers().to_vec();
        lowercased.push(Lowercase.into());
        chains.push(NormalizerWrapper::Sequence(crate::normalizers::Sequence::new(lowercased.clone())));
        chains.push(Lowercase.into());
        if let Some(p) = precompiled() {
            let NormalizerWrapper::Sequence(s) = &chains[0] else { unreachable!() };
            let mut with = s.get_normalizers().to_vec();
            with.push(p.clone().into());
            chains.push(NormalizerWrapper::Sequence(crate::normalizers::Sequence::new(with)));
            // ALBERT's chain: quotes, NFKD, StripAccents, Lowercase, then the charsmap.
            lowercased.push(p.clone().into());
            chains.push(NormalizerWrapper::Sequence(crate::normalizers::Sequence::new(lowercased)));
            chains.push(p.into());
        }
        let texts = [
            "",
            "plain ascii text",
            "``quoted'' and ```three'''",
            "吾輩は猫である。名前はまだ無い。",
            "がぎぐ　ゲゴ",
            "ｆｕｌｌ　ｗｉｄｔｈ（１２３）",
            "e\u{301}te\u{301} cafe\u{301}\u{300}\u{327}x",
            "\u{301}\u{300}start with marks",
            "a\u{0F73}\u{301}b \u{0344}",
            "emoji 😀👍🏽 👨\u{200D}👩\u{200D}👧 🇯🇵🇫🇷",
            "한국어 ᄀ\u{1161}\u{11A8} 가\u{11A8}",
            "\r\n line\r\nend\r",
            "ﬁ ligature ½ ⅓ ㍿ ℡ ™",
            "tab\tnl\nnbsp\u{a0}zwsp\u{200b}x",
            "क्षि हिन्दी",
            "Upper CASE İstanbul ΣΑΣ Ǆemal ẞ Ⅻ ＡＢＣ Å\u{30A}",
            "\u{130}\u{301} at the start",
        ];
        let mut scratch = Scratch::default();
        for n in &chains {
            let chain = Chain::new(Some(n), false).expect("a supported chain");
            let mut direct = 0;
            for text in texts {
                let mut got = Vec::new();
                if chain.normalize(text, &mut scratch, |c, a| got.push((c, a))) {
                    assert_eq!(got, general(n, text), "{text:?}");
                    direct += 1;
                }
            }
            assert_eq!(direct, texts.len(), "texts left to the general pipeline");
        }
    }
}
