//! SentencePiece's own normalization (`normalizer.cc`), byte for byte: the precompiled
//! charsmap applied leftmost-longest, user-defined symbols copied untouched, extra whitespace
//! removal, the dummy prefix and the escaping of spaces to `▁`.

use crate::models::unigram::trie::Trie;
use crate::normalizers::Precompiled;

/// `▁` (U+2581), SentencePiece's visible space.
pub const SPACE_SYMBOL: &str = "\u{2581}";

/// The normalizer of one `.model` file.
#[derive(Debug, Clone)]
pub struct SpNormalizer {
    /// The compiled rules; `None` for identity (empty charsmap).
    charsmap: Option<Precompiled>,
    /// User-defined symbols, matched longest first before the rules and left untouched.
    user_defined: Option<Trie>,
    /// `simple[b]`: an ASCII byte `b` is its own normalization (no rule or symbol starts with it).
    simple: [bool; 128],
    /// `ascii_safe[b]`: an ASCII byte `b` followed by another ASCII byte (or the end) is its
    /// own normalization: simple, or every rule starting with it is `b` alone mapped to `b`
    /// or continues with a non-ASCII byte (NFKC compositions such as `a` + U+0301).
    ascii_safe: [bool; 128],
    /// Bit `c` set: the non-ASCII BMP char `c` is its own normalization whatever follows (no
    /// rule or user-defined symbol starts with its bytes); 1024 words.
    bmp_simple: Box<[u64]>,
    pub(crate) add_dummy_prefix: bool,
    pub(crate) remove_extra_whitespaces: bool,
    pub(crate) escape_whitespaces: bool,
    pub(crate) treat_whitespace_as_suffix: bool,
}

/// The normalized text and, for each of its bytes plus one past the end, the byte offset in
/// the original text it comes from (SentencePiece's `norm_to_orig`).
#[derive(Debug, Default, Clone)]
pub struct Normalized {
    /// Normalized text.
    pub text: String,
    /// `text.len() + 1` original byte offsets (empty when `text` is empty).
    pub to_orig: Vec<u32>,
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
        let user_defined =
            (!user_defined.is_empty()).then(|| Trie::new(user_defined.iter().enumerate().map(|(i, p)| (*p, i as u32))));
        let mut simple = [true; 128];
        for (b, s) in simple.iter_mut().enumerate() {
            let b = b as u8;
            if charsmap.as_ref().is_some_and(|c| c.has_key_starting_with(b))
                || user_defined.as_ref().is_some_and(|t| {
                    let mut hit = false;
                    t.common_prefixes(&[b], |_, _| hit = true);
                    hit || t.has_child(b)
                })
            {
                *s = false;
            }
        }
        let mut ascii_safe = simple;
        for (b, safe) in ascii_safe.iter_mut().enumerate() {
            let b = b as u8;
            let Some(c) = charsmap.as_ref() else { continue };
            if *safe || b == b' ' || user_defined.as_ref().is_some_and(|t| t.has_child(b)) {
                continue;
            }
            let alone = c.longest_prefix(&[b]);
            *safe = alone.is_none_or(|(_, rep)| rep.as_bytes() == [b]) && (0..128u8).all(|n| !c.has_key_with_prefix(&[b, n]));
        }
        let mut bmp_simple = vec![0u64; 1024].into_boxed_slice();
        let mut buf = [0u8; 4];
        for c in (0x80u32..0x10000).filter_map(char::from_u32) {
            let key = c.encode_utf8(&mut buf).as_bytes();
            let rule = charsmap.as_ref().is_some_and(|m| m.has_key_with_prefix(key));
            let symbol = user_defined.as_ref().is_some_and(|t| t.has_child(key[0]));
            if !rule && !symbol {
                bmp_simple[c as usize / 64] |= 1 << (c as usize % 64);
            }
        }
        Self {
            charsmap,
            user_defined,
            simple,
            ascii_safe,
            bmp_simple,
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
        if first < 128 && self.simple[first as usize] {
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

    fn push_space(&self, out: &mut Normalized, orig: u32) {
        if self.escape_whitespaces {
            out.text.push_str(SPACE_SYMBOL);
            out.to_orig.extend_from_slice(&[orig; 3]);
        } else {
            out.text.push(' ');
            out.to_orig.push(orig);
        }
    }

    /// Normalizes `input` into `out` (cleared first).
    pub fn normalize(&self, input: &str, out: &mut Normalized) {
        out.text.clear();
        out.to_orig.clear();
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
        out.to_orig.reserve(rest.len() + 9);
        if !self.treat_whitespace_as_suffix && self.add_dummy_prefix {
            self.push_space(out, consumed as u32);
        }
        let mut prev_space = self.remove_extra_whitespaces;
        let bytes = input.as_bytes();
        let mut i = consumed;
        while let Some(&b) = bytes.get(i) {
            // An ASCII byte that is its own normalization: copied (or escaped) inline.
            if b < 128 && (self.simple[b as usize] || (self.ascii_safe[b as usize] && bytes.get(i + 1).is_none_or(|&n| n < 128))) {
                if b != b' ' {
                    out.text.push(b as char);
                    out.to_orig.push(i as u32);
                    prev_space = false;
                } else if !(prev_space && self.remove_extra_whitespaces) {
                    self.push_space(out, i as u32);
                    prev_space = self.remove_extra_whitespaces;
                }
                i += 1;
                continue;
            }
            // A 2- or 3-byte char that no rule or symbol starts with: copied as is.
            if (0xC2..0xF0).contains(&b) {
                let len = if b < 0xE0 { 2 } else { 3 };
                if let Some(c) = input.get(i..i + len).and_then(|s| s.chars().next()) {
                    let c = c as usize;
                    if self.bmp_simple[c / 64] >> (c % 64) & 1 == 1 {
                        out.text.push_str(&input[i..i + len]);
                        out.to_orig.extend_from_slice(&[i as u32; 3][..len]);
                        prev_space = false;
                        i += len;
                        continue;
                    }
                }
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
                            self.push_space(out, orig);
                        }
                        out.text.push_str(part);
                        out.to_orig.resize(out.to_orig.len() + part.len(), orig);
                    }
                } else {
                    out.text.push_str(sp);
                    match sp.len() {
                        n @ 1..=4 => out.to_orig.extend_from_slice(&[orig; 4][..n]),
                        n => out.to_orig.resize(out.to_orig.len() + n, orig),
                    }
                }
                prev_space = sp.ends_with(' ') && self.remove_extra_whitespaces;
            }
            i += n;
        }
        consumed = i;
        if self.remove_extra_whitespaces {
            let space = if self.escape_whitespaces { SPACE_SYMBOL } else { " " };
            while out.text.ends_with(space) {
                let len = out.text.len() - space.len();
                consumed = out.to_orig[len] as usize;
                out.text.truncate(len);
                out.to_orig.truncate(len);
            }
        }
        if self.treat_whitespace_as_suffix && self.add_dummy_prefix {
            self.push_space(out, consumed as u32);
        }
        out.to_orig.push(consumed as u32);
    }
}

/// Length of the UTF-8 sequence a lead byte starts (1 for a stray continuation byte).
#[inline]
pub(crate) fn utf8_len(lead: u8) -> usize {
    match lead {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}
