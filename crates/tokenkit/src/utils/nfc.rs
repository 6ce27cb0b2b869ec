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
//! quick check come from a table filled char by char as the texts need them (none for the
//! chars of the blocks that hold only stable chars, [`STABLE_BLOCKS`]), and runs of stable
//! chars are passed over in a tight loop, ASCII eight bytes at a time.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU16, Ordering};

use unicode_normalization_alignments::char::canonical_combining_class;
use unicode_normalization_alignments::{is_nfc_quick, IsNormalized, UnicodeNormalization};

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

/// The properties of every char below [`ALL_YES`], plus one (zero: not looked up yet), each
/// filled from the library the first time a text holds the char: a text of random code points
/// touches a few chars of many blocks, and filling a block of 256 at a time made the first
/// 100 KB of such text cost 200 instructions per byte more than the next megabyte. Zeroed
/// static memory: pages never touched cost nothing.
static PROPS: [AtomicU16; ALL_YES] = [const { AtomicU16::new(0) }; ALL_YES];

/// From this code point on (planes 3 to 16: CJK ideographs, tags, variation selectors,
/// private use, unassigned) every char is a starter whose quick check is Yes (a test asks the
/// library about each).
const ALL_YES: usize = 0x3_0000;

/// The blocks of 64 code points below [`ALL_YES`] whose chars are all stable (starters whose
/// quick check is Yes: most of the BMP, CJK, Hangul syllables, private use, unassigned), one bit
/// per block: bit `k % 64` of word `k / 64` for the block `k = cp / 64`. A char of such a block
/// needs no lookup at all (random code points touched a few chars of many blocks, each filled
/// from the library on first use, and read the table at each char). A test compares every
/// block with the library and prints the table when they differ (a new Unicode version).
#[rustfmt::skip]
static STABLE_BLOCKS: [u64; ALL_YES / 64 / 64] = [
    0x00410004443B8FFF, 0x1F7608EB6FFFDF1A, 0xFF57F7FFFFFFEFE6, 0xFFFFFFFFFFFFFFFA,
    0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF,
    0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF, 0xFFFF7306F1FFFFFF, 0xFFFFFFFFFFFFFFFF,
    0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF, 0xFEFFC00FFFFFFFFF,
    0xFFFFF6FFFFFFD77F, 0xFFFEFFFFEA31C649, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF,
    0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF, 0xFFFFE7FFFFFFFFFF, 0xFFFFFFFFFFFFFFFF,
    0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF, 0xFFFBFFFFFFFFFFFF,
    0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFD1F, 0xFFFFFFD7FFFFFFFE, 0xFFFFFFFFFFFFFFFF,
    0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF,
    0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF,
    0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF,
    0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF, 0xFFFFFE00FFFFFFFF,
];

/// Whether `cp` (below [`ALL_YES`]) is in one of the [`STABLE_BLOCKS`].
#[inline(always)]
fn in_stable_block(cp: usize) -> bool {
    let k = cp >> 6;
    (STABLE_BLOCKS[k >> 6] >> (k & 63)) & 1 != 0
}

#[inline]
fn props(cp: u32) -> Props {
    let cp = cp as usize;
    if cp >= ALL_YES || in_stable_block(cp) {
        return YES;
    }
    match PROPS[cp].load(Ordering::Relaxed) {
        0 => props_slow(cp),
        p => p - 1,
    }
}

/// [`props`] of a char not looked up yet (another thread may be storing the same value).
#[inline(never)]
#[cold]
fn props_slow(cp: usize) -> Props {
    let p = char::from_u32(cp as u32).map_or(YES, props_of);
    PROPS[cp].store(p + 1, Ordering::Relaxed);
    p
}

/// Whether a char with these properties is stable (see the module docs).
#[inline]
fn is_stable(p: Props) -> bool {
    p == YES
}

/// What is known of a segment read so far, in one word of flags: whether it holds a char that
/// is No ([`NO`]), one that is Maybe ([`MAYBE`]), a starter ([`STARTER`]), marks out of
/// canonical order ([`OUT_OF_ORDER`]); and its last combining class.
#[derive(Default)]
struct Segment {
    flags: u16,
    last_cc: u16,
}

const STARTER: u16 = 4;
const OUT_OF_ORDER: u16 = 8;

impl Segment {
    /// The segment of one char of properties `p`.
    #[inline(always)]
    fn of(p: Props) -> Self {
        let mut seg = Self::default();
        seg.add(p);
        seg
    }

    #[inline(always)]
    fn add(&mut self, p: Props) {
        let cc = p >> 8;
        self.flags |= (p & 3)
            | if cc == 0 {
                STARTER
            } else if self.last_cc > cc {
                OUT_OF_ORDER
            } else {
                0
            };
        self.last_cc = cc;
    }

    /// Whether NFC leaves the segment as it is.
    #[inline(always)]
    fn same(&self) -> bool {
        self.flags & (NO | OUT_OF_ORDER) == 0 && self.flags & (MAYBE | STARTER) != MAYBE | STARTER
    }
}

/// Calls `changed(start, end)` for each segment at or after `at` (a segment's start) that NFC
/// may change, in order, in one pass that stops when `changed` breaks. A stable char ends the
/// segment before it; the stable chars right after it (runs of ASCII read by bytes, chars of
/// the [`STABLE_BLOCKS`] without a lookup) are each a segment of their own that NFC leaves as
/// it is, so they are passed over in a tight loop, only the last one's segment going on; the
/// other chars are added to the segment they are in.
#[inline]
fn for_each_changed(s: &str, at: usize, mut changed: impl FnMut(usize, usize) -> ControlFlow<()>) -> ControlFlow<()> {
    let b = s.as_bytes();
    let (mut seg_start, mut seg) = (at, Segment::default());
    let mut i = at;
    while i < b.len() {
        let (p, len) = props_at(b, i);
        if !is_stable(p) {
            seg.add(p);
            i += len;
            continue;
        }
        if i > seg_start && !seg.same() {
            changed(seg_start, i)?;
        }
        let mut last = i;
        i += len;
        while let Some(&x) = b.get(i) {
            if x.is_ascii() {
                let run = ascii_run(&b[i..]);
                (last, i) = (i + run - 1, i + run);
                continue;
            }
            let (cp, len) = decode(b, i);
            if !is_stable(props(cp)) {
                break;
            }
            (last, i) = (i, i + len);
        }
        // The segment of the last stable char goes on.
        (seg_start, seg) = (last, Segment::of(YES));
    }
    if !seg.same() {
        changed(seg_start, b.len())?;
    }
    ControlFlow::Continue(())
}

/// The properties of the char that starts at `b[i]` (UTF-8 of a `str`) and its length in bytes.
#[inline(always)]
fn props_at(b: &[u8], i: usize) -> (Props, usize) {
    if b[i].is_ascii() {
        return (YES, 1);
    }
    let (cp, len) = decode(b, i);
    (props(cp), len)
}

/// The code point of the non-ASCII char that starts at `b[i]` (UTF-8 of a `str`) and its
/// length in bytes.
#[inline(always)]
fn decode(b: &[u8], i: usize) -> (u32, usize) {
    let x = u32::from(b[i]);
    let next = |k: usize| u32::from(b[i + k]) & 0x3F;
    if x < 0xE0 {
        (((x & 0x1F) << 6) | next(1), 2)
    } else if x < 0xF0 {
        (((x & 0x0F) << 12) | (next(1) << 6) | next(2), 3)
    } else {
        (((x & 0x07) << 18) | (next(1) << 12) | (next(2) << 6) | next(3), 4)
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
            let p = props(c as u32);
            let cc = p >> 8;
            if p & 3 == NO || (cc != 0 && last_cc > cc) {
                return false;
            }
            if p & 3 == MAYBE {
                return for_each_changed(s, segment_start, |_, _| ControlFlow::Break(())).is_continue();
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

/// One piece of the NFC of a text, in order (see [`for_each_part`]).
pub enum Part<'a> {
    /// The next this many bytes, which NFC leaves as they are (each char with change 0).
    Same(usize),
    /// The next segment's chars with their alignment changes, as the library gives them.
    Changed(&'a [(char, isize)]),
}

/// The NFC of `s` as `s.nfc()` gives it (each char with its alignment change, see
/// `NormalizedString::transform`), given to `part` piece by piece in one pass: the stretches
/// NFC leaves as they are in bulk, each segment it changes as the library's chars. A segment
/// the quick check cannot pass (a Maybe after a starter) but that the library leaves as it is
/// (marks that compose with nothing) stays in the stretch around it.
pub fn for_each_part(s: &str, mut part: impl FnMut(Part<'_>)) {
    let mut memo: Option<Box<Memo>> = None;
    let mut long = Vec::new();
    // The end of what was given.
    let mut given = 0;
    let _ = for_each_changed(s, 0, |start, end| {
        let segment = &s[start..end];
        let items = if segment.len() <= SHORT {
            let memo = memo.get_or_insert_with(|| Box::new(Memo { slots: [Slot::default(); SLOTS], items: Vec::new() }));
            let (from, to, same) = memo.get(segment);
            if same {
                return ControlFlow::Continue(());
            }
            &memo.items[from..to]
        } else {
            long.clear();
            long.extend(segment.nfc());
            &long[..]
        };
        if start > given {
            part(Part::Same(start - given));
        }
        part(Part::Changed(items));
        given = end;
        ControlFlow::Continue(())
    });
    if s.len() > given {
        part(Part::Same(s.len() - given));
    }
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
    /// Whether the library leaves the segment as it is (each char with change 0).
    same: bool,
    key: (u64, u64),
    from: u32,
    to: u32,
}

/// The bytes of a segment of 1 to [`SHORT`] bytes in two words, read from its start and from
/// its end (overlapping when it is short): with the length, they are the bytes.
#[inline(always)]
fn key(seg: &[u8]) -> (u64, u64) {
    let n = seg.len();
    let w8 = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8 bytes"));
    let w4 = |b: &[u8]| u64::from(u32::from_le_bytes(b.try_into().expect("4 bytes")));
    let w2 = |b: &[u8]| u64::from(u16::from_le_bytes(b.try_into().expect("2 bytes")));
    match n {
        8.. => (w8(&seg[..8]), w8(&seg[n - 8..])),
        4.. => (w4(&seg[..4]), w4(&seg[n - 4..])),
        2.. => (w2(&seg[..2]), w2(&seg[n - 2..])),
        _ => (seg.first().map_or(0, |&x| u64::from(x)), 0),
    }
}

impl Memo {
    /// The slot of `seg` (at most [`SHORT`] bytes), its items filled from the library when
    /// it held another segment; returns the range of its items and whether they leave the
    /// segment as it is.
    #[inline]
    fn get(&mut self, seg: &str) -> (usize, usize, bool) {
        let key = key(seg.as_bytes());
        let h = (key.0.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ key.1 ^ seg.len() as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93);
        let i = (h >> 56) as usize % SLOTS;
        let slot = self.slots[i];
        if usize::from(slot.len) == seg.len() && slot.key == key {
            return (slot.from as usize, slot.to as usize, slot.same);
        }
        self.fill(i, seg, key)
    }

    /// [`Self::get`] for a segment slot `i` does not hold.
    #[inline(never)]
    fn fill(&mut self, i: usize, seg: &str, key: (u64, u64)) -> (usize, usize, bool) {
        // The items of segments no slot holds any more are dropped when there are many.
        if self.items.len() > 64 * SLOTS {
            self.items.clear();
            self.slots = [Slot::default(); SLOTS];
        }
        let from = self.items.len();
        self.items.extend(seg.nfc());
        let items = &self.items[from..];
        let same = items.len() == seg.chars().count() && items.iter().zip(seg.chars()).all(|(&(c, change), o)| c == o && change == 0);
        self.slots[i] = Slot { len: seg.len() as u8, same, key, from: from as u32, to: self.items.len() as u32 };
        (from, self.items.len(), same)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What [`for_each_part`] gives, each char of a stretch NFC leaves with change 0.
    fn nfc(s: &str) -> Vec<(char, isize)> {
        let mut out = Vec::new();
        let mut at = 0;
        for_each_part(s, |part| match part {
            Part::Same(n) => {
                out.extend(s[at..at + n].chars().map(|c| (c, 0)));
                at += n;
            }
            Part::Changed(items) => {
                out.extend_from_slice(items);
                // The chars an item replaces: itself and the `-change` after it.
                at += s[at..]
                    .chars()
                    .take(items.iter().map(|&(_, d)| if d > 0 { 0 } else { (1 - d) as usize }).sum())
                    .map(char::len_utf8)
                    .sum::<usize>();
            }
        });
        assert_eq!(at, s.len(), "{s:?}");
        out
    }

    /// Compares [`for_each_part`], [`is_nfc`] and `NormalizedString::nfc` with the library on
    /// `s`; returns the number of comparisons made (of chars and changes, of strings and
    /// alignments).
    fn check(s: &str) -> usize {
        let want: Vec<(char, isize)> = s.nfc().collect();
        let got = nfc(s);
        assert_eq!(got, want, "{s:?} ({:x?})", s.chars().map(|c| c as u32).collect::<Vec<_>>());
        let unchanged = want.len() == s.chars().count() && want.iter().zip(s.chars()).all(|(&(c, d), o)| c == o && d == 0);
        // `is_nfc` may say no to a text NFC leaves as it is, never yes to one it changes.
        assert!(!is_nfc(s) || unchanged, "{s:?}");
        // `NormalizedString::nfc` (stretches NFC leaves kept in bulk) as `transform` with the
        // library's chars: the same string and alignments, on a new string (its alignments
        // read off the text) and after earlier changes (a stored table: `İ` lowercases to two
        // chars).
        let mut compared = 1;
        for prefix in ["", "\u{130}"] {
            let text = format!("{prefix}{s}");
            let mut ours = crate::base::NormalizedString::from(text.as_str());
            let mut library = ours.clone();
            ours.nfc();
            library.transform(text.nfc(), 0);
            assert_eq!((ours.get(), ours.alignments()), (library.get(), library.alignments()), "{text:?}");
            let mut ours = crate::base::NormalizedString::from(text.as_str());
            let mut library = ours.clone();
            ours.lowercase().nfc();
            library.lowercase();
            let lowered = library.get().to_owned();
            library.transform(lowered.nfc(), 0);
            assert_eq!((ours.get(), ours.alignments()), (library.get(), library.alignments()), "{text:?}");
            compared += 2;
        }
        compared
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

    /// Every block of [`STABLE_BLOCKS`] is stable by the library's answers, and every stable
    /// block is there (the table is printed when it differs).
    #[test]
    fn stable_blocks_as_the_library() {
        let mut want = [0u64; ALL_YES / 64 / 64];
        for k in 0..ALL_YES / 64 {
            let stable = (k * 64..k * 64 + 64).all(|cp| char::from_u32(cp as u32).is_none_or(|c| props_of(c) == YES));
            want[k / 64] |= u64::from(stable) << (k % 64);
        }
        let table: String = want.chunks(4).map(|w| w.iter().map(|x| format!("0x{x:016X},")).collect::<Vec<_>>().join(" ") + "\n").collect();
        assert!(want == STABLE_BLOCKS, "STABLE_BLOCKS should be:\n{table}");
        // Most blocks are stable; a block with one mark or composing char is not.
        let stable_blocks: u32 = want.iter().map(|w| w.count_ones()).sum();
        assert!(stable_blocks > 2_000 && !in_stable_block(0x300) && !in_stable_block(0x1161) && in_stable_block(0x4E00), "{stable_blocks}");
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
    /// lexers: the library's chars and changes. The second alphabet mixes runs of stable
    /// chars (ASCII, CJK, Hangul syllables, Latin-1 and Greek letters, chars above the BMP,
    /// which the scan passes over in bulk) with the chars that end them (marks in and out of
    /// order, Hangul jamo, composition exclusions, chars NFC decomposes).
    #[test]
    fn random_and_adversarial_texts_as_the_library() {
        let alphabets = [
            (
                "aAeEoOuU \u{301}\u{300}\u{308}\u{323}\u{302}\u{315}\u{345}\u{5b0}\u{5d0}\u{93f}\u{915}\u{94d}\u{93c}\u{1100}\u{1161}\u{11a8}\u{ac00}\u{b47}\u{b3e}\u{c5}\u{212b}\u{f900}\u{1e0a}\u{344}\u{f73}\u{2adc}\u{1d15e}日",
                0x5EED_0F00_1234_ABCD,
            ),
            (
                "ab Z\u{e9}\u{c5}\u{3a9}\u{4e00}\u{65e5}\u{ac00}\u{d55c}\u{1f600}\u{20000}\u{e000}\u{301}\u{300}\u{323}\u{315}\u{1161}\u{11a8}\u{1100}\u{344}\u{958}\u{2adc}\u{f900}\u{2f800}\u{1d15e}\u{212b}\u{b3e}\u{b47}",
                0x0DDB_A115_EED0_0001,
            ),
        ];
        let (mut texts, mut compared) = (0, 0);
        for (alphabet, seed) in alphabets {
            for s in crate::utils::lexers::random_strings(alphabet, seed, 20_000) {
                compared += check(&s);
                texts += 1;
            }
        }
        for (_, t) in crate::utils::lexers::adversarial_texts(4096) {
            compared += check(&t);
            texts += 1;
        }
        // 2 x 20,000 random strings and the 70-odd adversarial texts, 5 comparisons each.
        assert!(texts > 40_060 && compared == 5 * texts, "{texts} texts, {compared} comparisons");
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
        assert!(nfc(&twice).len() > 64 * SLOTS);
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
