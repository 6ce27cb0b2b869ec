//! NFC as HF computes it (`unicode_normalization_alignments`: each char of the result with its
//! alignment change), one segment at a time, so that only the segments NFC may change go
//! through the library.
//!
//! NFC never acts across a *stable* char: a starter (canonical combining class 0) whose NFC
//! quick check is Yes. Nothing composes with the chars before it (Yes: it is never the second
//! char of a composition), and it ends the canonical reordering of the marks before it, so
//! the library gives the same chars and changes on the text as on its segments (each from a
//! stable char to the next) one after the other. A segment is left as it is, each char with
//! change 0, when its quick check is Yes, or when it holds no starter at all (marks at the
//! start of a text, in canonical order, none of them decomposable: nothing to compose them
//! with). The tests compare with the library on every code point in several contexts.
//!
//! The library looks each char up in perfect-hash and searched tables (ccc, quick check,
//! decomposition, composition: several hundred instructions per char); here a char's ccc and
//! quick check come from a table filled block by block as the texts need it, and runs of
//! ASCII are skipped byte by byte.

use std::sync::OnceLock;

use unicode_normalization_alignments::char::canonical_combining_class;
use unicode_normalization_alignments::{is_nfc_quick, IsNormalized, Recompositions, UnicodeNormalization};

/// A char's quick-check answer in the low two bits ([`YES`], [`MAYBE`], [`NO`]) and its
/// canonical combining class in the high eight.
type Props = u16;
const YES: Props = 0;
const MAYBE: Props = 1;
const NO: Props = 2;

fn props_of(c: char) -> Props {
    let qc = match is_nfc_quick(std::iter::once(c)) {
        IsNormalized::Yes => YES,
        IsNormalized::Maybe => MAYBE,
        IsNormalized::No => NO,
    };
    (Props::from(canonical_combining_class(c)) << 8) | qc
}

/// The properties of every char below [`ALL_YES`], by blocks of 256 code points, each filled
/// from the library the first time one of its chars is looked up (a text touches few blocks).
static BLOCKS: [OnceLock<Box<[Props; 256]>>; ALL_YES >> 8] = [const { OnceLock::new() }; ALL_YES >> 8];

/// From this code point on (planes 3 to 16: CJK ideographs, tags, variation selectors,
/// private use, unassigned) every char is a starter whose quick check is Yes (a test asks the
/// library about each): random code points would otherwise fill a block for nearly every
/// one of them, 256 lookups in the library each.
const ALL_YES: usize = 0x3_0000;

#[inline]
fn props(c: char) -> Props {
    let cp = c as usize;
    if cp >= ALL_YES {
        return YES;
    }
    let block =
        BLOCKS[cp >> 8].get_or_init(|| Box::new(std::array::from_fn(|i| char::from_u32(((cp & !0xFF) | i) as u32).map_or(YES, props_of))));
    block[cp & 0xFF]
}

/// Whether a char with these properties is stable (see the module docs).
#[inline]
fn is_stable(p: Props) -> bool {
    p == YES
}

/// What is known of a segment read so far: whether it holds a char that is No, one that is
/// Maybe, a starter, marks out of canonical order, and its last combining class.
#[derive(Default)]
struct Segment {
    no: bool,
    maybe: bool,
    starter: bool,
    out_of_order: bool,
    last_cc: u16,
}

impl Segment {
    #[inline]
    fn add(&mut self, p: Props) {
        let cc = p >> 8;
        self.no |= p & 3 == NO;
        self.maybe |= p & 3 == MAYBE;
        self.starter |= cc == 0;
        self.out_of_order |= cc != 0 && self.last_cc > cc;
        self.last_cc = cc;
    }

    /// Whether NFC leaves the segment as it is.
    #[inline]
    fn same(&self) -> bool {
        !self.no && !self.out_of_order && (!self.maybe || !self.starter)
    }
}

/// The first segment at or after `at` (a segment's start) that NFC may change: its start and
/// end. Each ASCII char is a segment of its own that NFC leaves as it is, unless a non-ASCII
/// char follows it (then its segment goes on), so runs of ASCII are skipped by bytes; the
/// other chars are read once each, a segment ending where the next stable char starts the
/// next one.
#[inline]
fn next_changed(s: &str, mut at: usize) -> Option<(usize, usize)> {
    let b = s.as_bytes();
    'ascii: loop {
        let j = at + ascii_run(&b[at..]);
        if j == b.len() {
            return None;
        }
        let start = if j > at { j - 1 } else { at };
        let (mut seg_start, mut seg) = (start, Segment::default());
        for (i, c) in s[start..].char_indices() {
            let p = if c.is_ascii() { YES } else { props(c) };
            if i > 0 && is_stable(p) {
                if !seg.same() {
                    return Some((seg_start, start + i));
                }
                if c.is_ascii() {
                    at = start + i;
                    continue 'ascii;
                }
                (seg_start, seg) = (start + i, Segment::default());
            }
            seg.add(p);
        }
        return (!seg.same()).then_some((seg_start, s.len()));
    }
}

/// Whether NFC leaves `s` as it is (then its alignments too): the quick check of the library
/// (a char NFC changes, or marks out of canonical order: no; only chars that are Yes: yes),
/// with the properties from the table rather than the library's lookups and runs of ASCII
/// skipped eight bytes at a time, in one pass that is cheaper than segments on text of ASCII
/// and non-ASCII chars mixed; at the first char that is Maybe the segments decide, from the
/// segment that holds it on (the segments before it hold only chars that are Yes, in order:
/// NFC leaves them as they are).
pub fn is_nfc(s: &str) -> bool {
    let b = s.as_bytes();
    // The start of the segment being read (its stable char's), and the last combining class.
    let (mut segment_start, mut last_cc) = (0, 0);
    let mut at = 0;
    'ascii: loop {
        let run = ascii_run(&b[at..]);
        if run > 0 {
            (segment_start, last_cc) = (at + run - 1, 0);
        }
        at += run;
        for (i, c) in s[at..].char_indices() {
            if c.is_ascii() {
                at += i;
                continue 'ascii;
            }
            let p = props(c);
            let cc = p >> 8;
            if p & 3 == NO || (cc != 0 && last_cc > cc) {
                return false;
            }
            if p & 3 == MAYBE {
                return next_changed(s, segment_start).is_none();
            }
            if is_stable(p) {
                segment_start = at + i;
            }
            last_cc = cc;
        }
        return true;
    }
}

/// The length of the run of ASCII bytes that `b` starts with, read eight bytes at a time.
#[inline]
fn ascii_run(b: &[u8]) -> usize {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut i = 0;
    while let Some(w) = b.get(i..i + 8) {
        let high = u64::from_le_bytes(w.try_into().expect("eight bytes")) & HIGH;
        if high != 0 {
            // The first byte in memory is the lowest.
            return i + high.trailing_zeros() as usize / 8;
        }
        i += 8;
    }
    i + b[i..].iter().position(|&x| x >= 0x80).unwrap_or(b.len() - i)
}

/// The NFC of `s` as `s.nfc()` gives it (each char with its alignment change, see
/// `NormalizedString::transform`), segment by segment.
pub fn nfc(s: &str) -> Nfc<'_> {
    Nfc { s, at: 0, next: None, part: Part::Done, memo: None }
}

/// See [`nfc`].
pub struct Nfc<'a> {
    s: &'a str,
    /// Where the segments not yet started begin.
    at: usize,
    /// The next segment NFC may change, when found (at or after `at`).
    next: Option<(usize, usize)>,
    part: Part<'a>,
    /// The library's result for the short segments met so far (made at the first).
    memo: Option<Box<Memo>>,
}

/// The segments being given: a stretch NFC leaves as it is, one through the library, or a
/// short one's result from the memo (`memo.items[from..to]`).
enum Part<'a> {
    Same(std::str::Chars<'a>),
    Library(Box<Recompositions<std::str::Chars<'a>>>),
    Memo(usize, usize),
    Done,
}

/// Segments of at most this many bytes go through the memo.
const SHORT: usize = 16;
/// Memo slots (a power of two), by a hash of the segment.
const SLOTS: usize = 256;

/// The library's result for short segments: the same bytes give the same chars and changes,
/// so text that repeats its segments (a language written with combining marks, the same few
/// letters and accents again and again) runs the library once per distinct segment. A slot
/// holds the last segment that hashed to it.
struct Memo {
    slots: [Slot; SLOTS],
    items: Vec<(char, isize)>,
}

#[derive(Clone, Copy, Default)]
struct Slot {
    len: u8,
    bytes: [u8; SHORT],
    from: u32,
    to: u32,
}

impl Memo {
    /// The slot of `seg` (at most [`SHORT`] bytes), its items filled from the library when
    /// it held another segment; returns the range of its items.
    fn get(&mut self, seg: &str) -> (usize, usize) {
        let mut key = [0u8; SHORT];
        key[..seg.len()].copy_from_slice(seg.as_bytes());
        let h = u64::from_le_bytes(key[..8].try_into().expect("8 bytes"))
            ^ u64::from_le_bytes(key[8..].try_into().expect("8 bytes")).rotate_left(31)
            ^ seg.len() as u64;
        let i = (h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as usize % SLOTS;
        let slot = self.slots[i];
        if usize::from(slot.len) == seg.len() && slot.bytes == key {
            return (slot.from as usize, slot.to as usize);
        }
        // The items of segments no slot holds any more are dropped when there are many.
        if self.items.len() > 64 * SLOTS {
            self.items.clear();
            self.slots = [Slot::default(); SLOTS];
        }
        let from = self.items.len();
        self.items.extend(seg.nfc());
        self.slots[i] = Slot { len: seg.len() as u8, bytes: key, from: from as u32, to: self.items.len() as u32 };
        (from, self.items.len())
    }
}

impl Nfc<'_> {
    /// When the chars being given are from a stretch NFC leaves as it is, the rest of that
    /// stretch, taken at once: its length in bytes (its chars, each with change 0, are not
    /// given one by one); `None` otherwise.
    #[inline]
    pub fn take_same(&mut self) -> Option<usize> {
        match &mut self.part {
            Part::Same(chars) if !chars.as_str().is_empty() => {
                let n = chars.as_str().len();
                *chars = "".chars();
                Some(n)
            }
            _ => None,
        }
    }
}

impl Iterator for Nfc<'_> {
    type Item = (char, isize);

    #[inline]
    fn next(&mut self) -> Option<(char, isize)> {
        loop {
            match &mut self.part {
                Part::Same(chars) => {
                    if let Some(c) = chars.next() {
                        return Some((c, 0));
                    }
                }
                Part::Library(r) => {
                    if let Some(x) = r.next() {
                        return Some(x);
                    }
                }
                Part::Memo(from, to) => {
                    if from < to {
                        let x = self.memo.as_ref().map(|m| m.items[*from]);
                        *from += 1;
                        return x;
                    }
                }
                Part::Done => {}
            }
            if self.at >= self.s.len() {
                self.part = Part::Done;
                return None;
            }
            // What NFC leaves as it is up to the next segment it may change, then that segment.
            let (start, end) = match self.next.take().or_else(|| next_changed(self.s, self.at)) {
                None => (self.s.len(), self.s.len()),
                Some(next) => next,
            };
            if start > self.at {
                self.part = Part::Same(self.s[self.at..start].chars());
                self.at = start;
                self.next = (start < end).then_some((start, end));
                continue;
            }
            if end - start <= SHORT {
                let memo = self.memo.get_or_insert_with(|| Box::new(Memo { slots: [Slot::default(); SLOTS], items: Vec::new() }));
                let (from, to) = memo.get(&self.s[start..end]);
                self.part = Part::Memo(from, to);
            } else {
                self.part = Part::Library(Box::new(self.s[start..end].nfc()));
            }
            self.at = end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(s: &str) {
        let want: Vec<(char, isize)> = s.nfc().collect();
        let got: Vec<(char, isize)> = nfc(s).collect();
        assert_eq!(got, want, "{s:?} ({:x?})", s.chars().map(|c| c as u32).collect::<Vec<_>>());
        let unchanged = want.len() == s.chars().count() && want.iter().zip(s.chars()).all(|(&(c, d), o)| c == o && d == 0);
        // `is_nfc` may say no to a text NFC leaves as it is, never yes to one it changes.
        assert!(!is_nfc(s) || unchanged, "{s:?}");
        // `NormalizedString::nfc` (stretches NFC leaves kept in bulk) as `transform` with the
        // library's chars: the same string and alignments, also after an earlier change.
        for prefix in ["", "\u{130}"] {
            let text = format!("{prefix}{s}");
            let mut ours = crate::base::NormalizedString::from(text.as_str());
            let mut library = ours.clone();
            ours.lowercase().nfc();
            library.lowercase();
            let lowered = library.get().to_owned();
            library.transform(lowered.nfc(), 0);
            assert_eq!((ours.get(), ours.alignments()), (library.get(), library.alignments()), "{text:?}");
        }
    }

    /// Every code point of the BMP and every 31st above it, alone and next to the chars NFC
    /// acts on (marks, Hangul jamo and syllables, a starter that composes, a decomposable
    /// char), gives the library's chars and changes.
    #[test]
    fn every_code_point_in_context_as_the_library() {
        let contexts: [(&str, &str); 9] = [
            ("", ""),
            ("a", ""),
            ("", "\u{301}"),
            ("\u{301}", ""),
            ("\u{1100}", "\u{1161}"),
            ("\u{ac00}", "\u{11a8}"),
            ("e\u{323}", "\u{302}x"),
            ("\u{b47}", "\u{b3e}"),
            ("\u{c5}", "\u{315}\u{300}"),
        ];
        let mut checked = 0;
        for cp in (0x80..0x1_0000).chain((0x1_0000..=char::MAX as u32).step_by(31)) {
            let Some(c) = char::from_u32(cp) else { continue };
            for (before, after) in contexts {
                check(&format!("{before}{c}{after}"));
                checked += 1;
            }
            check(&format!("{c}{c}"));
        }
        assert!(checked > 800_000, "{checked}");
    }

    #[test]
    fn planes_3_to_16_are_all_yes() {
        let odd = (ALL_YES as u32..=char::MAX as u32).filter_map(char::from_u32).find(|&c| props_of(c) != YES);
        assert_eq!(odd, None);
    }

    #[test]
    fn ascii_runs() {
        for s in [
            "",
            "a",
            "abcdefgh",
            "abcdefghi",
            "abcdefg\u{e9}",
            "abcdefgh\u{e9}",
            "\u{e9}",
            "ab\u{e9}cdefghijkl",
            "abcdefghijklmnopqrs\u{301}t",
        ] {
            let want = s.bytes().position(|x| x >= 0x80).unwrap_or(s.len());
            assert_eq!(ascii_run(s.as_bytes()), want, "{s:?}");
        }
    }

    /// Random strings over the chars NFC acts on (and ASCII), the worst-case texts of the
    /// lexers: the library's chars and changes.
    #[test]
    fn random_and_adversarial_texts_as_the_library() {
        let alphabet = "aAeEoOuU \u{301}\u{300}\u{308}\u{323}\u{302}\u{315}\u{345}\u{5b0}\u{5d0}\u{93f}\u{915}\u{94d}\u{93c}\u{1100}\u{1161}\u{11a8}\u{ac00}\u{b47}\u{b3e}\u{c5}\u{212b}\u{f900}\u{1e0a}\u{344}\u{f73}\u{2adc}\u{1d15e}日";
        for s in crate::utils::lexers::random_strings(alphabet, 0x5EED_0F00_1234_ABCD, 20_000) {
            check(&s);
        }
        for (_, t) in crate::utils::lexers::adversarial_texts(4096) {
            check(&t);
        }
    }

    /// A text of more distinct short segments than the memo keeps (a letter and two marks,
    /// 17,472 of them), then again: the library's chars and changes all along.
    #[test]
    fn many_distinct_segments_as_the_library() {
        let mut text = String::new();
        for base in ('a'..='z').chain('A'..='Z') {
            for m1 in 0x300..0x370 {
                for m2 in ['\u{301}', '\u{323}', '\u{308}'] {
                    text.push(base);
                    text.push(char::from_u32(m1).unwrap());
                    text.push(m2);
                }
            }
        }
        let twice = text.repeat(2);
        assert!(nfc(&twice).count() > 64 * SLOTS);
        check(&twice);
    }

    #[test]
    fn marks_alone_and_ascii_are_nfc() {
        assert!(is_nfc("plain ASCII"));
        assert!(is_nfc(&"\u{301}".repeat(1000)));
        assert!(is_nfc("caf\u{e9}"));
        assert!(!is_nfc("cafe\u{301}"));
        assert!(!is_nfc("\u{212b}"));
    }
}
