//! Patterns that split or replace text: a char, a string, a regex, or a char predicate.

use crate::utils::regex::SysRegex;
use crate::{Offsets, Result};

/// Something that can find its matches in a string.
pub trait Pattern {
    /// Cuts `inside` into consecutive byte ranges covering all of it, each flagged `true` when it
    /// is a match. An empty input gives `[((0, 0), false)]`.
    fn find_matches(&self, inside: &str) -> Result<Vec<(Offsets, bool)>>;
}

impl Pattern for char {
    fn find_matches(&self, inside: &str) -> Result<Vec<(Offsets, bool)>> {
        let c = *self;
        (move |x: char| x == c).find_matches(inside)
    }
}

impl Pattern for &str {
    fn find_matches(&self, inside: &str) -> Result<Vec<(Offsets, bool)>> {
        if self.is_empty() {
            return Ok(vec![((0, inside.len()), false)]);
        }
        if inside.is_empty() {
            return Ok(vec![((0, 0), false)]);
        }
        // memchr's search: the same leftmost non-overlapping matches as `match_indices`.
        let n = self.len();
        Ok(cover(inside.len(), memchr::memmem::find_iter(inside.as_bytes(), self.as_bytes()).map(|s| (s, s + n))))
    }
}

impl Pattern for &String {
    fn find_matches(&self, inside: &str) -> Result<Vec<(Offsets, bool)>> {
        self.as_str().find_matches(inside)
    }
}

impl Pattern for &SysRegex {
    fn find_matches(&self, inside: &str) -> Result<Vec<(Offsets, bool)>> {
        if inside.is_empty() {
            return Ok(vec![((0, 0), false)]);
        }
        let mut matches = Vec::new();
        self.try_for_each_match(inside, |s, e| matches.push((s, e)))?;
        Ok(cover(inside.len(), matches.into_iter()))
    }
}

impl<F: Fn(char) -> bool> Pattern for F {
    fn find_matches(&self, inside: &str) -> Result<Vec<(Offsets, bool)>> {
        if inside.is_empty() {
            return Ok(vec![((0, 0), false)]);
        }
        let mut out = Vec::new();
        let mut last = 0;
        for (b, c) in inside.char_indices() {
            if self(c) {
                if last < b {
                    out.push(((last, b), false));
                }
                last = b + c.len_utf8();
                out.push(((b, last), true));
            }
        }
        if last < inside.len() {
            out.push(((last, inside.len()), false));
        }
        Ok(out)
    }
}

/// Flips the match flag of the inner pattern (the `invert` option of Split).
pub struct Invert<P: Pattern>(pub P);

impl<P: Pattern> Pattern for Invert<P> {
    fn find_matches(&self, inside: &str) -> Result<Vec<(Offsets, bool)>> {
        Ok(self.0.find_matches(inside)?.into_iter().map(|(o, m)| (o, !m)).collect())
    }
}

/// Turns an ordered list of match ranges into a full cover of `0..len`.
fn cover(len: usize, matches: impl Iterator<Item = (usize, usize)>) -> Vec<(Offsets, bool)> {
    let mut out = Vec::new();
    let mut prev = 0;
    for (s, e) in matches {
        if prev != s {
            out.push(((prev, s), false));
        }
        out.push(((s, e), true));
        prev = e;
    }
    if prev != len {
        out.push(((prev, len), false));
    }
    out
}
