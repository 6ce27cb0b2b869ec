//! SentencePiece's own normalization (`normalizer.cc`), byte for byte: the precompiled
//! charsmap applied leftmost-longest, user-defined symbols copied untouched, extra whitespace
//! removal, the dummy prefix and the escaping of spaces to `▁`.

use serde::{Deserialize, Serialize};

use crate::base::normalized::is_continuation;
pub(crate) use crate::base::normalized::utf8_len;
use crate::normalizers::Precompiled;
use crate::utils::trie::Trie;
use crate::Result;

/// `▁` (U+2581), SentencePiece's visible space.
pub const SPACE_SYMBOL: &str = "\u{2581}";

/// The normalizer of one `.model` file.
#[derive(Debug, Clone)]
pub struct SpNormalizer {
    /// The compiled rules; `None` for identity (empty charsmap).
    charsmap: Option<Precompiled>,
    /// User-defined symbols, matched longest first before the rules and left untouched.
    user_defined: Option<Trie>,
    /// Which chars are copied without a rule lookup.
    copy: CopyTable,
    /// No rules and no user-defined symbols: every char but the space is copied.
    identity: bool,
    pub(crate) add_dummy_prefix: bool,
    pub(crate) remove_extra_whitespaces: bool,
    pub(crate) escape_whitespaces: bool,
    pub(crate) treat_whitespace_as_suffix: bool,
}

/// The normalized text and where its bytes come from in the original text (SentencePiece's
/// `norm_to_orig`), kept as chunks rather than per byte: a copied stretch of the input maps
/// by its start, so that normalizing costs nothing per byte for text that needs no change.
#[derive(Debug, Default, Clone)]
pub struct Normalized {
    /// Normalized text.
    pub text: String,
    /// The chunks of `text` in order, the last one at `text.len()` (empty when `text` is
    /// empty, or when normalized without offsets).
    chunks: Vec<Chunk>,
}

/// A chunk of normalized text starting at byte `norm`, up to the next chunk.
#[derive(Debug, Clone, Copy)]
struct Chunk {
    norm: u32,
    /// The original offset of its first byte.
    orig: u32,
    /// Copied from the original (each byte maps to the start of its char there), rather than
    /// made by a rule (every byte maps to `orig`, where the rule's input starts).
    copied: bool,
}

impl Normalized {
    /// The byte offset in the original text that normalized byte `k` comes from (the start of
    /// its char, or of the rule that made it); `k == text.len()` is the end of what was
    /// normalized. `None` without offsets.
    pub fn orig(&self, mut k: usize) -> Option<usize> {
        let at = self.chunks.partition_point(|c| c.norm as usize <= k).checked_sub(1)?;
        let c = self.chunks[at];
        if !c.copied {
            return Some(c.orig as usize);
        }
        let bytes = self.text.as_bytes();
        while k > c.norm as usize && bytes.get(k).is_some_and(|&b| is_continuation(b)) {
            k -= 1;
        }
        Some(c.orig as usize + (k - c.norm as usize))
    }

    /// A cursor answering [`Self::orig`] for offsets in increasing order, in constant time.
    pub(crate) fn aligner(&self) -> Aligner<'_> {
        Aligner { norm: self, at: 0, start: 0, end: 0, orig: 0, step: 0 }
    }

    fn clear(&mut self) {
        self.text.clear();
        self.chunks.clear();
    }

    /// Appends `input[start..end]` as is.
    #[inline]
    fn push_copied<const OFFSETS: bool>(&mut self, input: &str, start: usize, end: usize) {
        if OFFSETS {
            let norm = self.text.len() as u32;
            let contiguous = self.chunks.last().is_some_and(|c| c.copied && c.orig + (norm - c.norm) == start as u32);
            if !contiguous {
                self.chunks.push(Chunk { norm, orig: start as u32, copied: true });
            }
        }
        self.text.push_str(&input[start..end]);
    }

    /// Appends `s`, made by a rule from the original text at `orig`.
    #[inline]
    fn push_mapped<const OFFSETS: bool>(&mut self, s: &str, orig: u32) {
        if s.is_empty() {
            return;
        }
        if OFFSETS && !self.chunks.last().is_some_and(|c| !c.copied && c.orig == orig) {
            self.chunks.push(Chunk { norm: self.text.len() as u32, orig, copied: false });
        }
        self.text.push_str(s);
    }

    /// Ends the text: its end maps to `orig`.
    fn finish<const OFFSETS: bool>(&mut self, orig: u32) {
        if OFFSETS {
            self.chunks.push(Chunk { norm: self.text.len() as u32, orig, copied: false });
        }
    }

    /// Cuts the text to `len` bytes.
    fn truncate(&mut self, len: usize) {
        self.text.truncate(len);
        while self.chunks.last().is_some_and(|c| c.norm as usize >= len) {
            self.chunks.pop();
        }
    }
}

/// [`Normalized::orig`] for offsets asked in increasing order, at char boundaries (as the
/// bounds of segments are): walks the chunks once.
pub(crate) struct Aligner<'a> {
    norm: &'a Normalized,
    /// The chunk of the last offset asked.
    at: usize,
    /// Where that chunk starts and ends in the normalized text.
    start: usize,
    end: usize,
    /// The original offset of its start, and 1 when copied (offsets then advance with the
    /// text) or 0.
    orig: usize,
    step: usize,
}

impl Aligner<'_> {
    /// [`Normalized::orig`] of `k`, a char boundary of the text (0 without offsets).
    #[inline]
    pub(crate) fn orig(&mut self, k: usize) -> usize {
        if !(self.start..self.end).contains(&k) {
            self.seek(k);
        }
        self.orig + self.step * (k - self.start)
    }

    /// Moves to the chunk of `k`.
    fn seek(&mut self, k: usize) {
        let chunks = self.norm.chunks.as_slice();
        let Some(first) = chunks.first() else {
            // No offsets.
            (self.start, self.end, self.orig, self.step) = (0, usize::MAX, 0, 0);
            return;
        };
        let mut at = if self.start > k { 0 } else { self.at };
        let mut end = usize::MAX;
        while let Some(next) = chunks.get(at + 1) {
            if next.norm as usize > k {
                end = next.norm as usize;
                break;
            }
            at += 1;
        }
        let c = chunks.get(at).unwrap_or(first);
        (self.at, self.start, self.end) = (at, c.norm as usize, end);
        (self.orig, self.step) = (c.orig as usize, usize::from(c.copied));
    }
}

/// Which chars normalize to themselves, so that the normalizer copies them (in runs) instead
/// of looking for the longest rule at each char: the rule lookup walks the charsmap trie and
/// is most of the cost of normalizing otherwise.
///
/// A char qualifies when no user-defined symbol starts with its first byte and the rules
/// leave it alone (no rule for it, or one mapping it to itself). Rules for sequences (a letter
/// and a combining accent, kana and a voicing mark, Hangul jamo) also start with such chars;
/// those chars are copied only when the next char is not the second char of any rule (in
/// practice a combining mark), when no sequence rule can match.
#[derive(Debug, Clone)]
struct CopyTable {
    /// `ascii[b]`: how ASCII char `b` is copied.
    ascii: [Copying; 128],
    /// `ascii_before_ascii[b]`: byte `b` is an ASCII char, not a space, and is copied when
    /// the next char is ASCII too (or the text ends): the test made for most bytes of most
    /// texts (false for the other bytes, so that a run of such chars is found by this test
    /// alone).
    ascii_before_ascii: [bool; 256],
    /// Bit `c`: the BMP char `c` is copied whatever follows (1024 words).
    always: Box<[u64]>,
    /// Bit `c`: the BMP char `c` is copied unless the next char is in `second`.
    unless_second: Box<[u64]>,
    /// Bit `d`: the BMP char `d` is the second char of some rule.
    second: Box<[u64]>,
    /// Some rule has a char beyond the BMP as its second char.
    second_beyond_bmp: bool,
}

/// How a char may be copied (see [`CopyTable`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Copying {
    /// Never: look up the rules.
    No,
    /// Whatever follows.
    Always,
    /// Unless the next char is the second char of some rule.
    UnlessSecond,
}

fn bit(set: &[u64], c: u32) -> bool {
    set[c as usize / 64] >> (c % 64) & 1 == 1
}

fn set_bit(set: &mut [u64], c: u32) {
    set[c as usize / 64] |= 1 << (c % 64);
}

/// The BMP char starting at `bytes[i]` and its length in bytes; `None` at the end, for a
/// char beyond the BMP, or when `i` is not at the start of a char.
#[inline]
fn decode_bmp(bytes: &[u8], i: usize) -> Option<(u32, usize)> {
    let b = *bytes.get(i)? as u32;
    if b < 0x80 {
        return Some((b, 1));
    }
    if (0xC2..0xE0).contains(&b) {
        let b1 = *bytes.get(i + 1)? as u32;
        return Some(((b & 0x1F) << 6 | (b1 & 0x3F), 2));
    }
    if (0xE0..0xF0).contains(&b) {
        let (b1, b2) = (*bytes.get(i + 1)? as u32, *bytes.get(i + 2)? as u32);
        return Some(((b & 0x0F) << 12 | (b1 & 0x3F) << 6 | (b2 & 0x3F), 3));
    }
    None
}

impl CopyTable {
    fn new(charsmap: Option<&Precompiled>, user_defined: Option<&Trie>) -> Self {
        let mut table = Self {
            ascii: [Copying::No; 128],
            ascii_before_ascii: [false; 256],
            always: vec![0; 1024].into_boxed_slice(),
            unless_second: vec![0; 1024].into_boxed_slice(),
            second: vec![0; 1024].into_boxed_slice(),
            second_beyond_bmp: false,
        };
        // Whether a user-defined piece starts with byte `b` (then no char starting with it is copied).
        let starts_symbol: [bool; 256] = std::array::from_fn(|b| user_defined.is_some_and(|t| t.has_child(b as u8)));
        let chars = match charsmap {
            Some(_) => 0u32..0x10000,
            None => {
                // Without rules every char is copied but those a user-defined piece starts with,
                // which share their first byte: in whole words of `always` from U+0080 on (the 64
                // chars of a word share it), the ASCII ones one by one below.
                for (w, word) in table.always.iter_mut().enumerate().skip(2) {
                    let c = (w * 64) as u32;
                    let first = if c < 0x800 { 0xC0 | c >> 6 } else { 0xE0 | c >> 12 };
                    let surrogate = (0xD800..0xE000).contains(&c);
                    *word = if surrogate || starts_symbol[first as usize] { 0 } else { u64::MAX };
                }
                0u32..0x80
            }
        };
        let mut buf = [0u8; 4];
        let mut c = chars.start;
        while c < chars.end {
            // From U+0080 on, by words of 64 chars, which share all their bytes but the last:
            // when the rules' trie has no key starting with those bytes (most of the BMP), the
            // word is copied whole; else its chars are looked up one by one.
            if let (Some(m), Some(ch)) = (charsmap.filter(|_| c >= 0x80 && c % 64 == 0), char::from_u32(c)) {
                let key = ch.encode_utf8(&mut buf).as_bytes();
                if !starts_symbol[key[0] as usize] && Self::no_rule_starts_with(m, &key[..key.len() - 1]) {
                    table.always[c as usize / 64] = u64::MAX;
                    c += 64;
                    continue;
                }
            }
            let Some(ch) = char::from_u32(c) else {
                c += 1;
                continue;
            };
            let key = ch.encode_utf8(&mut buf).as_bytes();
            if !starts_symbol[key[0] as usize] {
                let copy = match charsmap {
                    None => Copying::Always,
                    Some(m) => table.rules_for(m, key),
                };
                match copy {
                    Copying::No => {}
                    Copying::Always => set_bit(&mut table.always, c),
                    Copying::UnlessSecond => set_bit(&mut table.unless_second, c),
                }
                if c < 128 {
                    table.ascii[c as usize] = copy;
                }
            }
            c += 1;
        }
        let ascii_second = (0..128).any(|n| bit(&table.second, n));
        for (b, ok) in table.ascii_before_ascii.iter_mut().enumerate().take(128) {
            *ok = b != b' ' as usize
                && match table.ascii[b] {
                    Copying::Always => true,
                    Copying::UnlessSecond => !ascii_second,
                    Copying::No => false,
                };
        }
        table
    }

    /// Whether no key of the rules' trie starts with the bytes `prefix` (the bytes of a char
    /// but its last) and none is a part of them: then [`Self::rules_for`] finds every char
    /// starting with `prefix` copied whatever follows.
    fn no_rule_starts_with(m: &Precompiled, prefix: &[u8]) -> bool {
        let Some(mut node) = m.root() else { return true };
        for &b in prefix {
            match m.step(node, b) {
                None => return true,
                // A rule for a part of a char: each char is looked up.
                Some((_, true)) => return false,
                Some((next, false)) => node = next,
            }
        }
        false
    }

    /// How the rules treat the char of UTF-8 `key`: whether it is its own normalization, and
    /// whether rules for sequences start with it (their second chars go into `second`).
    fn rules_for(&mut self, m: &Precompiled, key: &[u8]) -> Copying {
        let Some(mut node) = m.root() else { return Copying::Always };
        for (k, &b) in key.iter().enumerate() {
            match m.step(node, b) {
                // A rule for a part of the char.
                Some((_, true)) if k + 1 < key.len() => return Copying::No,
                Some((next, _)) => node = next,
                None => return Copying::Always,
            }
        }
        if let Some((len, rep)) = m.longest_prefix(key) {
            if len != key.len() || rep.as_bytes() != key {
                return Copying::No;
            }
        }
        let mut continued = false;
        for lead in 0..=255u8 {
            let Some((next, ends)) = m.step(node, lead) else { continue };
            continued = true;
            let (value, more) = match lead {
                0x00..=0x7F => (lead, 0),
                0xC2..=0xDF => (lead & 0x1F, 1),
                0xE0..=0xEF => (lead & 0x0F, 2),
                0xF0..=0xF4 => {
                    self.second_beyond_bmp = true;
                    continue;
                }
                // Not the start of a char: a rule made of bytes rather than chars.
                _ => return Copying::No,
            };
            if !self.add_seconds(m, next, ends, value as u32, more) {
                return Copying::No;
            }
        }
        if continued {
            Copying::UnlessSecond
        } else {
            Copying::Always
        }
    }

    /// Adds to `second` the chars that complete the bytes read so far (`value`, `more`
    /// continuation bytes to go) from `node` on; false if a rule ends inside a char.
    fn add_seconds(&mut self, m: &Precompiled, node: usize, ends: bool, value: u32, more: usize) -> bool {
        if more == 0 {
            set_bit(&mut self.second, value);
            return true;
        }
        if ends {
            return false;
        }
        (0x80..=0xBFu8).all(|b| match m.step(node, b) {
            Some((next, e)) => self.add_seconds(m, next, e, value << 6 | (b & 0x3F) as u32, more - 1),
            None => true,
        })
    }

    /// Whether the BMP char `c` is copied when the next char starts at `bytes[next]`.
    #[inline(always)]
    fn copies(&self, c: u32, bytes: &[u8], next: usize) -> bool {
        if bit(&self.always, c) {
            return true;
        }
        bit(&self.unless_second, c) && !self.is_second(bytes, next)
    }

    /// Whether the char at `bytes[i]` may be the second char of a rule.
    #[inline]
    fn is_second(&self, bytes: &[u8], i: usize) -> bool {
        match decode_bmp(bytes, i) {
            Some((d, _)) => bit(&self.second, d),
            None => i < bytes.len() && self.second_beyond_bmp,
        }
    }
}

impl SpNormalizer {
    /// Builds the normalizer from its parts; `user_defined` are the user-defined pieces.
    pub fn new(
        charsmap: Option<Precompiled>,
        user_defined: &[&str],
        add_dummy_prefix: bool,
        remove_extra_whitespaces: bool,
        escape_whitespaces: bool,
        treat_whitespace_as_suffix: bool,
    ) -> Self {
        let user_defined = (!user_defined.is_empty()).then(|| Trie::new(user_defined.iter().enumerate().map(|(i, p)| (*p, i as u32))));
        let copy = CopyTable::new(charsmap.as_ref(), user_defined.as_ref());
        Self {
            identity: charsmap.is_none() && user_defined.is_none(),
            charsmap,
            user_defined,
            copy,
            add_dummy_prefix,
            remove_extra_whitespaces,
            escape_whitespaces,
            treat_whitespace_as_suffix,
        }
    }

    /// The normalization of the longest rule or symbol at the start of `input` and the
    /// number of input bytes it consumes (`NormalizePrefix`).
    #[inline]
    fn normalize_prefix<'a>(&'a self, input: &'a str) -> (&'a str, usize) {
        let bytes = input.as_bytes();
        let first = bytes[0];
        if first < 128 && self.copy.ascii[first as usize] == Copying::Always {
            return (&input[..1], 1);
        }
        if let Some(t) = &self.user_defined {
            let mut longest = 0;
            t.common_prefixes(bytes, |len, _| longest = len);
            if longest > 0 {
                return (&input[..longest], longest);
            }
        }
        if let Some((len, rep)) = self.charsmap.as_ref().and_then(|c| c.longest_prefix(bytes)) {
            return (rep, len);
        }
        let len = utf8_len(first);
        (&input[..len], len)
    }

    fn push_space<const OFFSETS: bool>(&self, out: &mut Normalized, orig: u32) {
        out.push_mapped::<OFFSETS>(if self.escape_whitespaces { SPACE_SYMBOL } else { " " }, orig);
    }

    /// Normalizes `input` into `out` (cleared first), with the original offset of each byte.
    pub fn normalize(&self, input: &str, out: &mut Normalized) {
        self.normalize_into::<true>(input, out)
    }

    /// sentencepiece's `Normalize` with offsets: the normalized text and, for each of its
    /// bytes and its end, the byte offset in `input` it comes from (none when the input was
    /// empty or only removed spaces).
    pub fn normalize_with_offsets(&self, input: &str) -> (String, Vec<usize>) {
        let mut out = Normalized::default();
        self.normalize(input, &mut out);
        // No offsets at all when nothing was normalized (an empty input, or only spaces that
        // are removed), as in sentencepiece.
        let offsets = (0..=out.text.len()).map(|k| out.orig(k)).collect::<Option<Vec<_>>>().unwrap_or_default();
        (out.text, offsets)
    }

    /// Normalizes `input` into `out.text` (cleared first), without original offsets: for
    /// callers that need none.
    pub fn normalize_text(&self, input: &str, out: &mut Normalized) {
        self.normalize_into::<false>(input, out)
    }

    fn normalize_into<const OFFSETS: bool>(&self, input: &str, out: &mut Normalized) {
        // Two copies of the loop, so that models with rules do not test for `identity` at
        // every char (2.6% more instructions on XLNet's ids, en).
        if self.identity {
            self.normalize_with::<OFFSETS, true>(input, out)
        } else {
            self.normalize_with::<OFFSETS, false>(input, out)
        }
    }

    fn normalize_with<const OFFSETS: bool, const IDENTITY: bool>(&self, input: &str, out: &mut Normalized) {
        out.clear();
        let mut rest = input;
        let mut consumed = 0usize;
        // Leading spaces (after normalization) are dropped when removing extra whitespace.
        if self.remove_extra_whitespaces {
            while !rest.is_empty() {
                let (sp, n) = self.normalize_prefix(rest);
                if sp != " " {
                    break;
                }
                rest = &rest[n..];
                consumed += n;
            }
        }
        if rest.is_empty() {
            return;
        }
        out.text.reserve(rest.len() + 8);
        if !self.treat_whitespace_as_suffix && self.add_dummy_prefix {
            self.push_space::<OFFSETS>(out, consumed as u32);
        }
        let mut prev_space = self.remove_extra_whitespaces;
        let bytes = input.as_bytes();
        let mut i = consumed;
        // `input[run..i]` is copied as is when the loop reaches a char that is not.
        let mut run = i;
        loop {
            if IDENTITY {
                // Every char but the space is its own normalization: on to the next space.
                match memchr::memchr(b' ', &bytes[i..]) {
                    Some(k) => i += k,
                    None => i = bytes.len(),
                }
            }
            let Some(&b) = bytes.get(i) else { break };
            if b < 0x80 {
                if self.copy.ascii_before_ascii[b as usize] && bytes.get(i + 1).is_none_or(|&n| n < 0x80) {
                    // And the run of such chars that follows, but for the last one when a
                    // non-ASCII char follows it: that one is tested again.
                    i += 1;
                    while let Some(&c) = bytes.get(i) {
                        if !self.copy.ascii_before_ascii[c as usize] {
                            if c >= 0x80 {
                                i -= 1;
                            }
                            break;
                        }
                        i += 1;
                    }
                    continue;
                }
                let copy = match self.copy.ascii[b as usize] {
                    Copying::Always => true,
                    Copying::UnlessSecond => !self.copy.is_second(bytes, i + 1),
                    Copying::No => false,
                };
                if copy && b != b' ' {
                    i += 1;
                    continue;
                }
                if copy {
                    if run < i {
                        out.push_copied::<OFFSETS>(input, run, i);
                        prev_space = false;
                    }
                    if !(prev_space && self.remove_extra_whitespaces) {
                        self.push_space::<OFFSETS>(out, i as u32);
                        prev_space = self.remove_extra_whitespaces;
                    }
                    i += 1;
                    run = i;
                    continue;
                }
            } else if let Some((c, len)) = decode_bmp(bytes, i) {
                if self.copy.copies(c, bytes, i + len) {
                    i += len;
                    continue;
                }
            }
            if run < i {
                out.push_copied::<OFFSETS>(input, run, i);
                prev_space = false;
            }
            let (mut sp, n) = self.normalize_prefix(&input[i..]);
            if prev_space {
                sp = sp.trim_start_matches(' ');
            }
            if !sp.is_empty() {
                let orig = i as u32;
                if self.escape_whitespaces && sp.contains(' ') {
                    for (k, part) in sp.split(' ').enumerate() {
                        if k > 0 {
                            self.push_space::<OFFSETS>(out, orig);
                        }
                        out.push_mapped::<OFFSETS>(part, orig);
                    }
                } else {
                    out.push_mapped::<OFFSETS>(sp, orig);
                }
                prev_space = sp.ends_with(' ') && self.remove_extra_whitespaces;
            }
            i += n;
            run = i;
        }
        if run < i {
            out.push_copied::<OFFSETS>(input, run, i);
        }
        consumed = i;
        if self.remove_extra_whitespaces {
            let space = if self.escape_whitespaces { SPACE_SYMBOL } else { " " };
            while out.text.ends_with(space) {
                let len = out.text.len() - space.len();
                if OFFSETS {
                    consumed = out.orig(len).unwrap_or(consumed);
                }
                out.truncate(len);
            }
        }
        if self.treat_whitespace_as_suffix && self.add_dummy_prefix {
            self.push_space::<OFFSETS>(out, consumed as u32);
        }
        out.finish::<OFFSETS>(consumed as u32);
    }
}

/// A `.model`'s `denormalizer_spec`: rules applied to decoded text exactly as the normalizer
/// applies its rules to input (sentencepiece builds it only when the charsmap is not empty).
/// JSON `{"precompiled_charsmap":"<base64>","add_dummy_prefix":false,
/// "remove_extra_whitespaces":false,"escape_whitespaces":false}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "DenormalizerFields", into = "DenormalizerFields")]
pub struct Denormalizer {
    fields: DenormalizerFields,
    /// Boxed: decoders are values of one enum, kept small.
    normalizer: Box<SpNormalizer>,
}

/// The serialized form of a [`Denormalizer`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct DenormalizerFields {
    /// Base64 of the charsmap bytes.
    precompiled_charsmap: String,
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    escape_whitespaces: bool,
}

impl PartialEq for Denormalizer {
    fn eq(&self, o: &Self) -> bool {
        self.fields == o.fields
    }
}

impl From<Denormalizer> for DenormalizerFields {
    fn from(d: Denormalizer) -> Self {
        d.fields
    }
}

impl TryFrom<DenormalizerFields> for Denormalizer {
    type Error = crate::Error;
    fn try_from(fields: DenormalizerFields) -> Result<Self> {
        use base64::Engine as _;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(fields.precompiled_charsmap.as_bytes())
            .map_err(|e| crate::Error::invalid(format!("SentencePiece decoder: denormalizer charsmap is not valid base64: {e}")))?;
        let charsmap = Precompiled::from_bytes(bytes)?;
        let normalizer = SpNormalizer::new(
            Some(charsmap),
            &[],
            fields.add_dummy_prefix,
            fields.remove_extra_whitespaces,
            fields.escape_whitespaces,
            false,
        );
        Ok(Self { fields, normalizer: Box::new(normalizer) })
    }
}

impl Denormalizer {
    /// The denormalizer of a `.model`'s `denormalizer_spec` (its charsmap and the three
    /// flags), if it has rules: none when the charsmap is absent or empty.
    pub fn from_spec(
        charsmap: Option<&[u8]>,
        add_dummy_prefix: bool,
        remove_extra_whitespaces: bool,
        escape_whitespaces: bool,
    ) -> Result<Option<Self>> {
        use base64::Engine as _;
        let Some(bytes) = charsmap.filter(|b| !b.is_empty()) else {
            return Ok(None);
        };
        Self::try_from(DenormalizerFields {
            precompiled_charsmap: base64::engine::general_purpose::STANDARD.encode(bytes),
            add_dummy_prefix,
            remove_extra_whitespaces,
            escape_whitespaces,
        })
        .map(Some)
    }

    /// Applies the rules to decoded `text`.
    pub fn apply(&self, text: &str) -> String {
        let mut out = Normalized::default();
        self.normalizer.normalize_text(text, &mut out);
        out.text
    }
}

#[cfg(test)]
mod copy_table_tests {
    use super::*;

    /// Without a charsmap, the table filled by whole words copies exactly the chars whose
    /// first byte starts no user-defined piece (checked char by char).
    #[test]
    fn without_rules_every_char_but_symbol_starts_is_copied() {
        let symbols = Trie::new([("<sep>", 0), ("\u{e9}t\u{e9}", 1), ("\u{4e2d}\u{6587}", 2), ("\u{1F600}", 3)]);
        for user in [None, Some(&symbols)] {
            let table = CopyTable::new(None, user);
            let mut buf = [0u8; 4];
            let mut copied = 0;
            for c in (0u32..0x10000).filter_map(char::from_u32) {
                let first = c.encode_utf8(&mut buf).as_bytes()[0];
                let expected = !user.is_some_and(|t| t.has_child(first));
                assert_eq!(bit(&table.always, c as u32), expected, "U+{:04X}", c as u32);
                copied += usize::from(expected);
                if (c as u32) < 128 {
                    assert_eq!(table.ascii[c as usize] == Copying::Always, expected);
                }
            }
            // Surrogates are no chars: never copied.
            assert!((0xD800..0xE000).all(|c| !bit(&table.always, c)));
            // `<` (ASCII), U+00C0..U+00FF (byte C3), U+4000..U+4FFF (byte E4) start symbols.
            assert_eq!(copied, if user.is_some() { 0x10000 - 0x800 - 1 - 64 - 0x1000 } else { 0x10000 - 0x800 });
        }
    }

    /// With sentencepiece's charsmaps, the table that copies the words of chars no rule starts
    /// with whole is the one a lookup of every char gives.
    #[test]
    fn with_rules_whole_words_are_copied_as_char_by_char() {
        let symbols = Trie::new([("<sep>", 0), ("\u{e9}t\u{e9}", 1), ("\u{4e2d}\u{6587}", 2), ("\u{1F600}", 3)]);
        for name in ["nmt_nfkc", "nfkc_cf"] {
            let m = Precompiled::from_bytes(crate::formats::sentencepiece::charsmaps::charsmap(name).unwrap()).unwrap();
            for user in [None, Some(&symbols)] {
                let table = CopyTable::new(Some(&m), user);
                let mut want = CopyTable::new(None, None);
                want.always.fill(0);
                let mut buf = [0u8; 4];
                for c in (0u32..0x10000).filter_map(char::from_u32) {
                    let key = c.encode_utf8(&mut buf).as_bytes();
                    let copy = if user.is_some_and(|t| t.has_child(key[0])) { Copying::No } else { want.rules_for(&m, key) };
                    match copy {
                        Copying::No => {}
                        Copying::Always => set_bit(&mut want.always, c as u32),
                        Copying::UnlessSecond => set_bit(&mut want.unless_second, c as u32),
                    }
                    if (c as u32) < 128 {
                        assert_eq!(table.ascii[c as usize], copy, "{name} U+{:04X}", c as u32);
                    }
                }
                assert!(table.always == want.always && table.unless_second == want.unless_second, "{name}");
                assert!(table.second == want.second && table.second_beyond_bmp == want.second_beyond_bmp, "{name}");
                // Most of the BMP has no rule: copied whole.
                assert!(table.always.iter().filter(|&&w| w == u64::MAX).count() > 600, "{name}");
            }
        }
    }
}
