//! `NormalizedString`: a string being normalized, with the alignment of every normalized byte
//! back to the original bytes, so that offsets can always be reported on the original input.

use std::borrow::Cow;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use unicode_normalization_alignments::UnicodeNormalization;

use crate::base::pattern::Pattern;
use crate::utils::nfc::Part;
use crate::{Offsets, Result};

/// Which string a range or offset refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffsetReferential {
    /// Offsets into the original input.
    Original,
    /// Offsets into the normalized string.
    Normalized,
}

/// A byte range into either the original or the normalized string.
#[derive(Debug, Clone, PartialEq)]
pub enum Range<T: RangeBounds<usize> + Clone> {
    /// Byte range into the original string.
    Original(T),
    /// Byte range into the normalized string.
    Normalized(T),
}

impl<T: RangeBounds<usize> + Clone> Range<T> {
    fn bounds(&self) -> &T {
        match self {
            Range::Original(r) | Range::Normalized(r) => r,
        }
    }

    /// Resolves the bounds against a string of `max_len` bytes.
    pub fn into_full_range(self, max_len: usize) -> std::ops::Range<usize> {
        let r = self.bounds();
        let start = match r.start_bound() {
            Bound::Unbounded => 0,
            Bound::Included(i) => *i,
            Bound::Excluded(i) => *i + 1,
        };
        let end = match r.end_bound() {
            Bound::Unbounded => max_len,
            Bound::Included(i) => *i + 1,
            Bound::Excluded(i) => *i,
        };
        start..end
    }
}

/// What a split does with the delimiter it matched (HF's `SplitDelimiterBehavior`).
///
/// With input `the-final--countdown` split on `-`:
/// `Removed` → `the final countdown`; `Isolated` → `the - final - - countdown`;
/// `MergedWithPrevious` → `the- final- - countdown`; `MergedWithNext` → `the -final - -countdown`;
/// `Contiguous` → `the - final -- countdown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SplitDelimiterBehavior {
    Removed,
    Isolated,
    MergedWithPrevious,
    MergedWithNext,
    Contiguous,
}

/// A string under normalization. `alignments[i]` is the original byte range that normalized
/// byte `i` comes from; `original_shift` is where this string starts in the full input (bytes).
///
/// The original text is shared by all the slices of one input (`Arc`), so that slicing copies
/// only the normalized part. While no change has moved a char (a new string, its slices, and
/// changes that keep every char's byte length), each byte's alignment is its own char's range:
/// the table is then not stored (`chars_aligned`) but read off the text, and built only when a
/// change needs it ([`Self::store_alignments`]).
#[derive(Default, Debug, Clone)]
pub struct NormalizedString {
    /// The whole original input; this string's original part is
    /// `original_shift..original_shift + original_len` of it.
    pub(super) original: Arc<str>,
    pub(super) original_len: usize,
    pub(super) normalized: String,
    /// Empty while `chars_aligned`.
    pub(super) alignments: Vec<(usize, usize)>,
    /// The normalized string has the original's chars' byte lengths and each byte is aligned
    /// with its char's range (of the normalized string, which is also the original's).
    pub(super) chars_aligned: bool,
    pub(super) original_shift: usize,
}

impl PartialEq for NormalizedString {
    fn eq(&self, other: &Self) -> bool {
        self.get_original() == other.get_original()
            && self.original_shift == other.original_shift
            && self.normalized == other.normalized
            && self.alignments() == other.alignments()
    }
}

/// The alignment of every byte of `s` to its own char's range: the first byte of a char and
/// its width, from the char's lead byte.
#[inline]
pub(super) fn char_alignments(s: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let (mut start, mut end) = (0, 0);
    s.as_bytes().iter().enumerate().map(move |(i, &b)| {
        if i >= end {
            start = i;
            end = i + utf8_len(b);
        }
        (start, end)
    })
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

/// The range of the char of `s` that holds byte `i` (< `s.len()`).
#[inline]
fn char_range_at(s: &[u8], i: usize) -> (usize, usize) {
    let mut start = i;
    while start > 0 && is_continuation(s[start]) {
        start -= 1;
    }
    (start, start + utf8_len(s[start]))
}

/// The alignments of the string a [`Transformer`] replaces chars of, by byte.
#[derive(Clone, Copy)]
enum OldAlignments<'a> {
    /// The stored table.
    Stored(&'a [(usize, usize)]),
    /// Not stored (`chars_aligned`): each byte of this string, the whole old string, is
    /// aligned with its own char's range.
    Chars(&'a [u8]),
}

impl OldAlignments<'_> {
    /// The alignment of byte `i`; `None` past the end.
    #[inline(always)]
    fn get(self, i: usize) -> Option<(usize, usize)> {
        match self {
            OldAlignments::Stored(table) => table.get(i).copied(),
            OldAlignments::Chars(s) => (i < s.len()).then(|| char_range_at(s, i)),
        }
    }
}

/// The rule of [`NormalizedString::transform_range`]: the chars of the new string, each with
/// its change, written with their alignments into new buffers.
struct Transformer<'a> {
    alignments: OldAlignments<'a>,
    /// The old string; its chars from byte `at` on are not yet replaced.
    old: &'a str,
    at: usize,
    /// Where `at` is in the string `alignments` are of.
    offset: usize,
    new_alignments: Vec<(usize, usize)>,
    new_text: String,
}

impl<'a> Transformer<'a> {
    /// Replaces `old`, which starts at byte `start` of a string with these `alignments`, after
    /// removing its first `initial_offset` chars.
    fn new(alignments: OldAlignments<'a>, old: &'a str, start: usize, initial_offset: usize) -> Self {
        let mut t = Self {
            alignments,
            old,
            at: 0,
            offset: start,
            new_alignments: Vec::with_capacity(old.len()),
            new_text: String::with_capacity(old.len()),
        };
        t.skip_chars(initial_offset);
        t
    }

    /// Passes over the next `n` old chars (fewer when the old string ends first), read by
    /// their lead bytes.
    #[inline(always)]
    fn skip_chars(&mut self, n: usize) {
        let old = self.old.as_bytes();
        for _ in 0..n {
            let Some(&lead) = old.get(self.at) else { break };
            let len = utf8_len(lead);
            self.at += len;
            self.offset += len;
        }
    }

    /// The next char of the new string: `0` replaces the next old char, `1` inserts a char
    /// (aligned like the previous one), `-n` replaces the next old char and removes the `n`
    /// after it.
    #[inline(always)]
    fn push(&mut self, c: char, change: isize) {
        let align = if change > 0 {
            if self.offset == 0 {
                (0, 0)
            } else {
                self.alignments.get(self.offset - 1).unwrap_or((0, 0))
            }
        } else {
            // Replacing the char at `offset`; past the end (nothing left to replace) keep
            // the last alignment rather than panicking.
            self.alignments.get(self.offset).or_else(|| self.alignments.get(self.offset.wrapping_sub(1))).unwrap_or((0, 0))
        };
        if change <= 0 {
            self.skip_chars(1 + change.unsigned_abs());
        }
        // A char is 1 to 4 bytes, each with its alignment.
        self.new_alignments.extend_from_slice(&[align; 4][..c.len_utf8()]);
        self.new_text.push(c);
    }

    /// The next `n` bytes of the old string kept as they are: what [`Self::push`] does for
    /// each of their chars with change `0`, every byte of a char taking its first byte's
    /// alignment, in one pass.
    #[inline]
    fn keep(&mut self, n: usize) {
        let kept = &self.old[self.at..self.at + n];
        match self.alignments {
            OldAlignments::Stored(table) => {
                let mut last = (0, 0);
                let from = &table[self.offset..self.offset + n];
                self.new_alignments.extend(kept.bytes().zip(from).map(|(b, &a)| {
                    if !is_continuation(b) {
                        last = a;
                    }
                    last
                }));
            }
            OldAlignments::Chars(_) => {
                // `kept` starts at a char of the old string, at `offset`.
                let at = self.offset;
                self.new_alignments.extend(char_alignments(kept).map(|(s, e)| (s + at, e + at)));
            }
        }
        self.new_text.push_str(kept);
        self.at += n;
        self.offset += n;
    }
}

impl From<&str> for NormalizedString {
    fn from(s: &str) -> Self {
        // Each byte gets its char's range: not stored until a change needs the table.
        Self {
            original: Arc::from(s),
            original_len: s.len(),
            normalized: s.to_owned(),
            alignments: Vec::new(),
            chars_aligned: true,
            original_shift: 0,
        }
    }
}

impl From<String> for NormalizedString {
    fn from(s: String) -> Self {
        NormalizedString::from(s.as_str())
    }
}

/// What lowercasing does to `c`, as [`NormalizedString::transform`] changes: the first char
/// of its lowercase replaces it, the others are inserted after it.
#[inline]
pub(crate) fn lowercase_changes(c: char) -> impl Iterator<Item = (char, isize)> {
    c.to_lowercase().enumerate().map(|(i, l)| (l, isize::from(i > 0)))
}

impl NormalizedString {
    /// The normalized string.
    pub fn get(&self) -> &str {
        &self.normalized
    }

    /// The original string.
    pub fn get_original(&self) -> &str {
        &self.original[self.original_shift..self.original_shift + self.original_len]
    }

    /// Byte offsets of this string inside the full original input.
    pub fn offsets_original(&self) -> Offsets {
        (self.original_shift, self.original_shift + self.len_original())
    }

    /// Length of the normalized string in bytes.
    pub fn len(&self) -> usize {
        self.normalized.len()
    }

    /// Length of the original string in bytes.
    pub fn len_original(&self) -> usize {
        self.original_len
    }

    /// Whether the normalized string is empty.
    pub fn is_empty(&self) -> bool {
        self.normalized.is_empty()
    }

    /// The byte alignments of the normalized string onto the original one (built here when
    /// no change has moved a char yet).
    pub fn alignments(&self) -> Cow<'_, [(usize, usize)]> {
        if self.chars_aligned {
            Cow::Owned(char_alignments(&self.normalized).collect())
        } else {
            Cow::Borrowed(&self.alignments)
        }
    }

    /// Stores the alignment table, for a change that moves chars.
    #[inline]
    pub(super) fn store_alignments(&mut self) {
        if self.chars_aligned {
            self.alignments = char_alignments(&self.normalized).collect();
            self.chars_aligned = false;
        }
    }

    /// The original range (bytes of this string's original part) of the normalized bytes
    /// `start..end` (`start < end`): the first byte's alignment start to the last one's end;
    /// `None` when the range goes past the end. [`convert_offsets`](Self::convert_offsets)
    /// from the normalized string, for callers that have the range as numbers.
    #[inline]
    pub(crate) fn original_range(&self, start: usize, end: usize) -> Option<std::ops::Range<usize>> {
        if self.chars_aligned {
            let s = self.normalized.as_bytes();
            if end > s.len() || start >= end {
                return None;
            }
            return Some(char_range_at(s, start).0..char_range_at(s, end - 1).1);
        }
        expand_alignments(self.alignments.get(start..end)?)
    }

    /// Converts a byte range from one referential to the other. `None` when out of range.
    pub fn convert_offsets<T: RangeBounds<usize> + Clone>(&self, range: Range<T>) -> Option<std::ops::Range<usize>> {
        let (target, from_original) = match range {
            Range::Original(_) => (range.into_full_range(self.len_original()), true),
            Range::Normalized(_) => (range.into_full_range(self.len()), false),
        };
        if target.start == target.end {
            return Some(target);
        }
        if target.start > target.end {
            return None;
        }
        if from_original {
            if self.original_len == 0 && target == (0..0) {
                return Some(0..self.len());
            }
            let (mut start, mut end) = (None, None);
            for (i, (a, b)) in self.alignments().iter().copied().enumerate() {
                if target.end < b {
                    break;
                }
                if start.is_none() && target.start <= a && a != b {
                    start = Some(i);
                }
                end = Some(i + 1);
            }
            match (start, end) {
                (Some(s), None) => Some(s..s),
                (None, Some(e)) => Some(e..e),
                (Some(s), Some(e)) => Some(s..e),
                _ => None,
            }
        } else {
            if self.normalized.is_empty() && target == (0..0) {
                return Some(0..self.len_original());
            }
            self.original_range(target.start, target.end)
        }
    }

    /// The offsets in the full input of the normalized bytes `start..end` of this string: those
    /// [`convert_offsets`](Self::convert_offsets) gives, moved by where this string starts;
    /// `(start, end)` as they are when they do not convert.
    #[inline]
    pub(crate) fn offsets_in_input(&self, (start, end): Offsets) -> Offsets {
        let range = match start.cmp(&end) {
            std::cmp::Ordering::Less => self.original_range(start, end),
            std::cmp::Ordering::Equal => Some(start..end),
            std::cmp::Ordering::Greater => None,
        };
        range.map_or((start, end), |r| (self.original_shift + r.start, self.original_shift + r.end))
    }

    /// A range of the normalized string.
    pub fn get_range<T: RangeBounds<usize> + Clone>(&self, range: Range<T>) -> Option<&str> {
        match range {
            Range::Original(_) => self.normalized.get(self.convert_offsets(range)?),
            Range::Normalized(_) => self.normalized.get(range.into_full_range(self.len())),
        }
    }

    /// A range of the original string.
    pub fn get_range_original<T: RangeBounds<usize> + Clone>(&self, range: Range<T>) -> Option<&str> {
        match range {
            Range::Original(_) => self.get_original().get(range.into_full_range(self.len_original())),
            Range::Normalized(_) => self.get_original().get(self.convert_offsets(range)?),
        }
    }

    /// A sub-string as its own `NormalizedString` (its offsets still point into the full input).
    /// `None` if the range is not on char boundaries.
    pub fn slice<T: RangeBounds<usize> + Clone>(&self, range: Range<T>) -> Option<NormalizedString> {
        let (normalized_range, original_range) = match range {
            Range::Original(_) => {
                let original = self.get_original();
                let r = range.into_full_range(original.len());
                if r.end > original.len() || !(original.is_char_boundary(r.start) && original.is_char_boundary(r.end)) {
                    return None;
                }
                (self.convert_offsets(Range::Original(r.clone()))?, r)
            }
            Range::Normalized(_) => {
                let r = range.into_full_range(self.normalized.len());
                if !(self.normalized.is_char_boundary(r.start) && self.normalized.is_char_boundary(r.end)) {
                    return None;
                }
                (r.clone(), self.convert_offsets(Range::Normalized(r))?)
            }
        };
        let shift = original_range.start;
        // A slice on char boundaries of a string whose chars have not moved: its own chars'
        // ranges are its alignments too.
        let alignments = if self.chars_aligned {
            if normalized_range.end > self.normalized.len() {
                return None;
            }
            Vec::new()
        } else {
            self.alignments.get(normalized_range.clone())?.iter().map(|&(s, e)| (s - shift, e - shift)).collect()
        };
        Some(Self {
            original: Arc::clone(&self.original),
            original_len: original_range.len(),
            normalized: self.normalized.get(normalized_range).unwrap_or_default().to_owned(),
            alignments,
            chars_aligned: self.chars_aligned,
            original_shift: self.original_shift + original_range.start,
        })
    }

    /// Replaces a range of the normalized string with `dest`, updating the alignments.
    ///
    /// Each item of `dest` is a char of the new string with a change: `0` replaces the next
    /// char, `1` inserts a new char (aligned like the previous one), `-n` replaces the next
    /// char and removes the `n` after it. `initial_offset` chars are removed first.
    pub fn transform_range<T, I>(&mut self, range: Range<T>, dest: I, initial_offset: usize)
    where
        T: RangeBounds<usize> + Clone,
        I: IntoIterator<Item = (char, isize)>,
    {
        let n_range = match range {
            Range::Normalized(_) => range.into_full_range(self.len()),
            Range::Original(_) => match self.convert_offsets(range) {
                Some(r) => r,
                None => return,
            },
        };
        self.store_alignments();
        let old = &self.normalized[n_range.clone()];
        let mut t = Transformer::new(OldAlignments::Stored(&self.alignments), old, n_range.start, initial_offset);
        for (c, change) in dest {
            t.push(c, change);
        }
        let Transformer { new_alignments, new_text, .. } = t;
        if n_range.start == 0 && n_range.end == self.normalized.len() {
            // The whole string (every normalizer's `transform`): the new buffers replace the
            // old ones, nothing to move around them.
            self.alignments = new_alignments;
            self.normalized = new_text;
        } else {
            self.alignments.splice(n_range.clone(), new_alignments);
            self.normalized.replace_range(n_range, &new_text);
        }
    }

    /// [`transform_range`](Self::transform_range) over the whole string.
    pub fn transform<I: IntoIterator<Item = (char, isize)>>(&mut self, dest: I, initial_offset: usize) {
        self.transform_range(Range::Original(..), dest, initial_offset)
    }

    /// Unicode NFD.
    pub fn nfd(&mut self) -> &mut Self {
        let s = self.normalized.clone();
        self.transform(s.nfd(), 0);
        self
    }

    /// Unicode NFKD.
    pub fn nfkd(&mut self) -> &mut Self {
        let s = self.normalized.clone();
        self.transform(s.nfkd(), 0);
        self
    }

    /// Unicode NFC (the library's, segment by segment: see [`crate::utils::nfc`]). What
    /// `transform` does with the chars NFC gives, but the stretches it leaves as they are
    /// (most of a text) go through [`Transformer::keep`] in bulk rather than char by char.
    pub fn nfc(&mut self) -> &mut Self {
        if self.normalized.is_empty() {
            return self;
        }
        // A string no change has moved a char of yet has its table read off the text rather
        // than stored first (a pass and a table of 16 bytes per byte saved).
        let s = std::mem::take(&mut self.normalized);
        let old = if self.chars_aligned { OldAlignments::Chars(s.as_bytes()) } else { OldAlignments::Stored(&self.alignments) };
        let mut t = Transformer::new(old, &s, 0, 0);
        crate::utils::nfc::for_each_part(&s, |part| match part {
            Part::Same(n) => t.keep(n),
            Part::Changed(items) => {
                for &(c, change) in items {
                    t.push(c, change);
                }
            }
        });
        let Transformer { new_alignments, new_text, .. } = t;
        self.alignments = new_alignments;
        self.normalized = new_text;
        self.chars_aligned = false;
        self
    }

    /// Unicode NFKC.
    pub fn nfkc(&mut self) -> &mut Self {
        let s = self.normalized.clone();
        self.transform(s.nfkc(), 0);
        self
    }

    /// Keeps only the chars for which `keep` is true.
    pub fn filter<F: Fn(char) -> bool>(&mut self, keep: F) -> &mut Self {
        let mut removed: isize = 0;
        let mut removed_start: usize = 0;
        let mut transforms = Vec::with_capacity(self.normalized.len());
        let mut last_c = None;
        for c in self.normalized.chars() {
            if keep(c) {
                match last_c {
                    Some(lc) => transforms.push((lc, -removed)),
                    None => removed_start = removed as usize,
                }
                last_c = Some(c);
                removed = 0;
            } else {
                removed += 1;
            }
        }
        if let Some(lc) = last_c {
            transforms.push((lc, -removed));
        }
        self.transform(transforms, removed_start);
        self
    }

    /// Prepends `s` (aligned to the first char).
    pub fn prepend(&mut self, s: &str) -> &mut Self {
        if let Some(next) = self.normalized.chars().next() {
            // The first new char takes the place of `next`, which is then re-inserted: every
            // new char shares the alignment of the old first char.
            let transformations = s.chars().enumerate().map(|(i, c)| (c, if i == 0 { 0 } else { 1 })).chain(std::iter::once((next, 1)));
            self.transform_range(Range::Normalized(0..next.len_utf8()), transformations, 0);
        }
        self
    }

    /// Appends `s` (aligned to the last char).
    pub fn append(&mut self, s: &str) -> &mut Self {
        if let Some((b, prev)) = self.normalized.char_indices().last() {
            let transformations = std::iter::once((prev, 0)).chain(s.chars().map(|c| (c, 1)));
            self.transform_range(Range::Normalized(b..), transformations, 0);
        }
        self
    }

    /// Maps every char through `f`.
    pub fn map<F: Fn(char) -> char>(&mut self, f: F) -> &mut Self {
        let s = std::mem::take(&mut self.normalized);
        let mut same_widths = true;
        self.normalized = s
            .chars()
            .map(|c| {
                let m = f(c);
                same_widths &= m.len_utf8() == c.len_utf8();
                m
            })
            .collect();
        if !same_widths && self.chars_aligned {
            // The chars move: the table of the old ones, before the text changes.
            self.alignments = char_alignments(&s).collect();
            self.chars_aligned = false;
        }
        if self.normalized.len() != s.len() {
            // A char changed its UTF-8 length: rebuild alignments char by char.
            let mapped: Vec<(char, isize)> = self.normalized.chars().map(|c| (c, 0)).collect();
            self.normalized = s;
            self.transform(mapped, 0);
        }
        self
    }

    /// Lowercases (full Unicode, a char may become several).
    pub fn lowercase(&mut self) -> &mut Self {
        if self.normalized.is_ascii() {
            self.normalized.make_ascii_lowercase();
            return self;
        }
        let new_chars: Vec<_> = self.normalized.chars().flat_map(lowercase_changes).collect();
        self.transform(new_chars, 0);
        self
    }

    /// Uppercases (full Unicode, a char may become several).
    pub fn uppercase(&mut self) -> &mut Self {
        let mut new_chars = Vec::with_capacity(self.normalized.len());
        for c in self.normalized.chars() {
            for (i, uc) in c.to_uppercase().enumerate() {
                new_chars.push((uc, if i > 0 { 1 } else { 0 }));
            }
        }
        self.transform(new_chars, 0);
        self
    }

    /// Replaces every match of `pattern` with `content`. The new chars are all aligned with
    /// the last char of the match they replace.
    pub fn replace<P: Pattern>(&mut self, pattern: P, content: &str) -> Result<()> {
        let mut shift: isize = 0;
        let content_len = content.len() as isize;
        for ((start, end), is_match) in pattern.find_matches(&self.normalized)? {
            if !is_match {
                continue;
            }
            let range = (start as isize + shift) as usize..(end as isize + shift) as usize;
            let removed_chars = self.normalized[range.clone()].chars().count();
            self.transform_range(Range::Normalized(range), content.chars().map(|c| (c, 1)), removed_chars);
            shift += content_len - (end - start) as isize;
        }
        Ok(())
    }

    /// Whether the normalized string is aligned with all of its original part (its first byte
    /// with the original's start, its last with the original's end): then its slice of every
    /// normalized byte equals it.
    pub(crate) fn covers_its_original(&self) -> bool {
        if self.chars_aligned {
            return !self.normalized.is_empty();
        }
        match (self.alignments.first(), self.alignments.last()) {
            (Some(first), Some(last)) => first.0 == 0 && last.1 == self.original_len,
            _ => false,
        }
    }

    /// Splits on `pattern`, the delimiter handled as `behavior` says.
    pub fn split<P: Pattern>(&self, pattern: P, behavior: SplitDelimiterBehavior) -> Result<Vec<NormalizedString>> {
        Ok(split_pieces(&self.normalized, pattern, behavior)?
            .into_iter()
            .filter_map(|(s, e)| self.slice(Range::Normalized(s..e)))
            .collect())
    }

    /// Removes leading whitespace.
    pub fn lstrip(&mut self) -> &mut Self {
        self.lrstrip(true, false)
    }

    /// Removes trailing whitespace.
    pub fn rstrip(&mut self) -> &mut Self {
        self.lrstrip(false, true)
    }

    /// Removes leading and trailing whitespace.
    pub fn strip(&mut self) -> &mut Self {
        self.lrstrip(true, true)
    }

    fn lrstrip(&mut self, left: bool, right: bool) -> &mut Self {
        let leading = if left { self.normalized.chars().take_while(|c| c.is_whitespace()).count() } else { 0 };
        let trailing = if right { self.normalized.chars().rev().take_while(|c| c.is_whitespace()).count() } else { 0 };
        if leading > 0 || trailing > 0 {
            let count = self.normalized.chars().count();
            let transforms: Vec<(char, isize)> = self
                .normalized
                .chars()
                .enumerate()
                .filter_map(|(i, c)| {
                    if i < leading || i >= count.saturating_sub(trailing) {
                        None
                    } else if i == count - trailing - 1 {
                        Some((c, -(trailing as isize)))
                    } else {
                        Some((c, 0))
                    }
                })
                .collect();
            self.transform(transforms, leading);
        }
        self
    }

    /// Empties the normalized string; returns how many bytes were removed.
    pub fn clear(&mut self) -> usize {
        let len = self.len();
        self.transform(std::iter::empty(), self.normalized.chars().count());
        len
    }
}

/// The pieces [`NormalizedString::split`] cuts `s` into, as byte ranges in order (some may
/// be empty): the matches of `pattern` handled as `behavior` says. The one place of the rule;
/// pre-tokenizers that only cut the text call it without a `NormalizedString`.
pub(crate) fn split_pieces<P: Pattern>(s: &str, pattern: P, behavior: SplitDelimiterBehavior) -> Result<Vec<Offsets>> {
    let matches = pattern.find_matches(s)?;
    let pieces = |splits: Vec<(Offsets, bool)>| splits.into_iter().filter(|(_, remove)| !remove).map(|(o, _)| o).collect();
    Ok(match behavior {
        SplitDelimiterBehavior::Isolated => matches.into_iter().map(|(o, _)| o).collect(),
        SplitDelimiterBehavior::Removed => pieces(matches),
        SplitDelimiterBehavior::Contiguous => {
            let mut prev_match = false;
            let mut acc: Vec<(Offsets, bool)> = Vec::with_capacity(matches.len());
            for (o, is_match) in matches {
                match acc.last_mut() {
                    Some(((_, end), _)) if is_match == prev_match => *end = o.1,
                    _ => acc.push((o, false)),
                }
                prev_match = is_match;
            }
            pieces(acc)
        }
        SplitDelimiterBehavior::MergedWithPrevious => {
            let mut prev_match = false;
            let mut acc: Vec<(Offsets, bool)> = Vec::with_capacity(matches.len());
            for (o, is_match) in matches {
                match acc.last_mut() {
                    Some(((_, end), _)) if is_match && !prev_match => *end = o.1,
                    _ => acc.push((o, false)),
                }
                prev_match = is_match;
            }
            pieces(acc)
        }
        SplitDelimiterBehavior::MergedWithNext => {
            let mut prev_match = false;
            let mut acc: Vec<(Offsets, bool)> = Vec::with_capacity(matches.len());
            for (o, is_match) in matches.into_iter().rev() {
                match acc.last_mut() {
                    Some(((start, _), _)) if is_match && !prev_match => *start = o.0,
                    _ => acc.push((o, false)),
                }
                prev_match = is_match;
            }
            acc.reverse();
            pieces(acc)
        }
    })
}

/// The original range covered by a run of alignments: first start to last end.
fn expand_alignments(alignments: &[(usize, usize)]) -> Option<std::ops::Range<usize>> {
    if alignments.is_empty() {
        None
    } else {
        let start = alignments[0].0;
        let end = alignments[alignments.len() - 1].1;
        Some(start..end)
    }
}

/// Whether byte `b` of UTF-8 text continues a char (`0b10xx_xxxx`) rather than starts one:
/// the one rule of the alignments, the char counts and the byte-level path's widening.
#[inline(always)]
pub(crate) fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// Turns byte offsets into the unit an encode call asked for, as HF reports offsets to
/// Python: bytes stay as they are; in chars, an offset inside a char counts as that char, an
/// end past the text is two past the start's char, and a start past the text stays in bytes.
/// Chars are counted from a cursor that moves between the offsets asked for (which mostly
/// come in increasing order) instead of a table of the whole input: the cost is the bytes the
/// cursor crosses, not a word per byte.
pub(crate) struct OffsetsIn<'t>(Option<CharCursor<'t>>);

/// Counts the chars before a byte position of a non-ASCII text, moving from where it was.
struct CharCursor<'t> {
    text: &'t [u8],
    /// A byte position and the number of chars that start before it.
    at: std::cell::Cell<(usize, usize)>,
}

/// The number of chars that start in `bytes` (which need not be on char boundaries).
#[inline]
fn char_starts(bytes: &[u8]) -> usize {
    // Counted as the bytes less the continuation bytes (`0b10xx_xxxx`: top bit set, next clear),
    // eight at a time.
    const TOP: u64 = 0x8080_8080_8080_8080;
    let mut words = bytes.chunks_exact(8);
    let mut continuations = 0;
    for w in &mut words {
        let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        continuations += (w & !(w << 1) & TOP).count_ones() as usize;
    }
    continuations += words.remainder().iter().filter(|&&b| is_continuation(b)).count();
    bytes.len() - continuations
}

impl CharCursor<'_> {
    /// The number of chars that start before byte `p` (at most the text's length).
    #[inline(always)]
    fn starts_before(&self, p: usize) -> usize {
        let (at, n) = self.at.get();
        if p == at {
            // Where the last token ended, mostly the next one's start: nothing to count.
            return n;
        }
        self.move_to(p, at, n)
    }

    /// [`Self::starts_before`] from `n` chars before `at`, kept for the next call.
    #[inline(never)]
    fn move_to(&self, p: usize, at: usize, n: usize) -> usize {
        let n = if p > at { n + char_starts(&self.text[at..p]) } else { n - char_starts(&self.text[p..at]) };
        self.at.set((p, n));
        n
    }

    /// The char offsets of byte offsets `(s, e)`; `None` when `s` is past the text.
    #[inline]
    fn convert(&self, (s, e): Offsets) -> Option<Offsets> {
        let len = self.text.len();
        if s >= len {
            return None;
        }
        // The index of the char holding byte `b` (< len) is the number starting up to it, less one.
        let start = self.starts_before(s + 1) - 1;
        let end = if e < len {
            self.starts_before(e + 1) - 1
        } else if e == len {
            self.starts_before(len)
        } else {
            start + 2
        };
        Some((start, end))
    }
}

impl<'t> OffsetsIn<'t> {
    /// The conversion of offsets into `text` to `offset_type`.
    pub(crate) fn new(text: &'t str, offset_type: crate::base::OffsetType) -> Self {
        Self(match offset_type {
            crate::base::OffsetType::Char if !text.is_ascii() => {
                Some(CharCursor { text: text.as_bytes(), at: std::cell::Cell::new((0, 0)) })
            }
            _ => None,
        })
    }

    /// `o` (bytes) in the asked unit; offsets that do not convert are kept.
    #[inline]
    pub(crate) fn convert(&self, o: Offsets) -> Offsets {
        match &self.0 {
            Some(c) => c.convert(o).unwrap_or(o),
            None => o,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference the cursor is checked against: a table of the char index of every byte, as
    /// HF builds it to report offsets to Python (including its treatment of offsets that fall
    /// inside a char or at the very end).
    struct BytesToCharOffsetConverter {
        /// `map[b]` = index of the char containing byte `b`; empty for ASCII input.
        map: Vec<usize>,
        ascii: bool,
    }

    impl BytesToCharOffsetConverter {
        /// Builds the converter for `s`.
        fn new(s: &str) -> Self {
            if s.is_ascii() {
                return Self { map: Vec::new(), ascii: true };
            }
            let mut map = Vec::with_capacity(s.len());
            for (j, c) in s.chars().enumerate() {
                map.extend(std::iter::repeat_n(j, c.len_utf8()));
            }
            Self { map, ascii: false }
        }

        /// Converts byte offsets to char offsets; `None` when the start is past the last char.
        fn convert(&self, offsets: Offsets) -> Option<Offsets> {
            if self.ascii {
                return Some(offsets);
            }
            let start = *self.map.get(offsets.0)?;
            match self.map.get(offsets.1) {
                Some(&end) => Some((start, end)),
                None => {
                    let last = offsets.1.checked_sub(1).and_then(|b| self.map.get(b)).copied().unwrap_or(start + 1);
                    Some((start, last + 1))
                }
            }
        }
    }

    #[test]
    fn nfd_alignments_point_to_original_chars() {
        let mut n = NormalizedString::from("élégant");
        n.nfd();
        assert_eq!(n.get(), "e\u{301}le\u{301}gant");
        // The combining accent maps back to the whole 'é' (2 bytes).
        assert_eq!(n.get_range_original(Range::Normalized(0..3)), Some("é"));
        assert_eq!(n.convert_offsets(Range::Original(3..5)), Some(4..7));
    }

    #[test]
    fn filter_and_strip_keep_offsets() {
        let mut n = NormalizedString::from("  a b  ");
        n.strip();
        assert_eq!(n.get(), "a b");
        assert_eq!(n.convert_offsets(Range::Normalized(0..3)), Some(2..5));
        let mut n = NormalizedString::from("xaxbx");
        n.filter(|c| c != 'x');
        assert_eq!(n.get(), "ab");
        assert_eq!(n.convert_offsets(Range::Normalized(1..2)), Some(3..4));
    }

    #[test]
    fn split_behaviors() {
        let n = NormalizedString::from("the-final--countdown");
        let parts = |b| -> Vec<String> { n.split('-', b).unwrap().iter().map(|s| s.get().to_owned()).collect() };
        assert_eq!(parts(SplitDelimiterBehavior::Removed), ["the", "final", "countdown"]);
        assert_eq!(parts(SplitDelimiterBehavior::Isolated), ["the", "-", "final", "-", "-", "countdown"]);
        assert_eq!(parts(SplitDelimiterBehavior::MergedWithPrevious), ["the-", "final-", "-", "countdown"]);
        assert_eq!(parts(SplitDelimiterBehavior::MergedWithNext), ["the", "-final", "-", "-countdown"]);
        assert_eq!(parts(SplitDelimiterBehavior::Contiguous), ["the", "-", "final", "--", "countdown"]);
    }

    #[test]
    fn offsets_in_chars_are_the_converters() {
        let texts = ["", "abc", "aé日😀b", "日本語のテキスト", "\u{301}x\u{10ffff}"];
        let mut compared = 0;
        for t in texts {
            let table = BytesToCharOffsetConverter::new(t);
            let cursor = OffsetsIn::new(t, crate::base::OffsetType::Char);
            // Every pair of offsets up to two past the end, in increasing, decreasing and
            // jumping order (the cursor moves both ways).
            let mut pairs: Vec<Offsets> = (0..t.len() + 3).flat_map(|s| (0..t.len() + 3).map(move |e| (s, e))).collect();
            for order in 0..3 {
                match order {
                    1 => pairs.reverse(),
                    2 => pairs.sort_by_key(|&(s, e)| (s * 7 + e * 13) % 11),
                    _ => {}
                }
                for &o in &pairs {
                    assert_eq!(cursor.convert(o), table.convert(o).unwrap_or(o), "{t:?} {o:?}");
                    compared += 1;
                }
            }
        }
        assert!(compared > 1000);
    }

    #[test]
    fn replace_shrinks_and_grows() {
        let mut n = NormalizedString::from("a  b");
        n.replace("  ", " ").unwrap();
        assert_eq!(n.get(), "a b");
        assert_eq!(n.convert_offsets(Range::Normalized(2..3)), Some(3..4));
        let mut n = NormalizedString::from("a b");
        n.replace(' ', "▁▁").unwrap();
        assert_eq!(n.get(), "a▁▁b");
        assert_eq!(n.convert_offsets(Range::Normalized(7..8)), Some(2..3));
    }
}
