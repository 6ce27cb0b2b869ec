//! A direct path for BERT-style tokenizer.json files: a `BertNormalizer` (or none), the
//! `BertPreTokenizer` and a `WordPiece` model. One loop over the text normalizes each char,
//! cuts the words and runs the model on each word as it ends, writing ids and offsets
//! straight into the encoding: no `NormalizedString` (an alignment pair per byte, rebuilt by
//! the normalizer), no list of word ranges, and a word that normalization leaves as it is
//! (most of them) is a slice of the input, aligned byte for byte.
//!
//! It gives exactly what the general pipeline gives (same words, word indices and offsets):
//! each normalized char is aligned with the original char it comes from, as the normalizer's
//! one-pass rewrite ([`BertNormalizer::rewrite_char`]) aligns it. Text that rewrite cannot
//! handle takes the general pipeline.

use std::sync::OnceLock;

use crate::models::wordpiece::WordPiece;
use crate::models::ModelWrapper;
use crate::normalizers::bert::{is_plain_ideograph, memo_index, MEMO_REMOVED, MEMO_SLOW};
use crate::normalizers::{BertNormalizer, NormalizerWrapper};
use crate::pre_tokenizers::bert::{char_class, CharClass};
use crate::pre_tokenizers::PreTokenizerWrapper;
use crate::tokenizer::normalized::OffsetsIn;
use crate::tokenizer::pipeline::Stages;
use crate::tokenizer::{Encoding, OffsetType};
use crate::{Offsets, Result};

/// The parts of a tokenizer the direct path runs.
#[derive(Clone, Copy)]
pub(crate) struct Plan<'a> {
    /// The normalizer and its memo ([`BertNormalizer::char_memo`]).
    normalizer: Option<(&'a BertNormalizer, &'static [u32])>,
    /// What becomes of each ASCII char.
    ascii: &'static [Ascii; 128],
    model: &'a WordPiece,
}

/// What the normalizer and the pre-tokenizer make of an ASCII char.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ascii {
    /// A word char: this ASCII char.
    Word(u8),
    /// Whitespace.
    Space,
    /// Punctuation: this ASCII char, a word of its own.
    Punct(u8),
    /// Removed by the normalizer.
    Removed,
    /// Anything else: the general per-char step.
    Other,
}

impl Ascii {
    /// The table for a normalizer memo (`None`: no normalizer).
    fn table(memo: Option<&[u32]>) -> [Ascii; 128] {
        std::array::from_fn(|b| {
            let m = memo.map_or(b as u32, |m| m[b]);
            match (m, char::from_u32(m).filter(char::is_ascii)) {
                (MEMO_REMOVED, _) => Ascii::Removed,
                (_, Some(d)) => match char_class(d) {
                    CharClass::Word => Ascii::Word(d as u8),
                    CharClass::Space => Ascii::Space,
                    CharClass::Punct => Ascii::Punct(d as u8),
                },
                _ => Ascii::Other,
            }
        })
    }
}

/// The plan, when the tokenizer is of the BERT family, its token strings are its
/// vocabulary's and its added tokens are all matched on the raw text.
pub(crate) fn plan(stages: &Stages) -> Option<Plan<'_>> {
    let ModelWrapper::WordPiece(model) = &stages.model else { return None };
    if !model.tokens_are_vocab_strings() || !matches!(stages.pre_tokenizer, Some(PreTokenizerWrapper::BertPreTokenizer(_))) {
        return None;
    }
    // One ASCII table per memo: by the options that choose the memo, and one without normalizer.
    static ASCII: [OnceLock<[Ascii; 128]>; 9] = [const { OnceLock::new() }; 9];
    let (normalizer, key) = match &stages.normalizer {
        None => (None, 8),
        Some(NormalizerWrapper::BertNormalizer(n)) if !stages.added_vocabulary.has_normalized_tokens() => {
            let strip = n.strip_accents.unwrap_or(n.lowercase);
            (Some((n, n.char_memo())), usize::from(n.clean_text) | usize::from(strip) << 1 | usize::from(n.lowercase) << 2)
        }
        Some(_) => return None,
    };
    let ascii = ASCII[key].get_or_init(|| Ascii::table(normalizer.map(|(_, memo)| memo)));
    Some(Plan { normalizer, ascii, model })
}

/// Encodes one sequence on the direct path. `word_idx` overrides the word index
/// (pre-tokenized input), as in the general pipeline. `None` when the text needs the general
/// pipeline.
pub(crate) fn encode(
    stages: &Stages,
    plan: Plan<'_>,
    text: &str,
    word_idx: Option<u32>,
    type_id: u32,
    offset_type: OffsetType,
) -> Option<Result<Encoding>> {
    let capacity = text.len() / 4;
    let mut out = Out {
        offsets_in: OffsetsIn::new(text, offset_type),
        ids: Vec::with_capacity(capacity),
        offsets: Vec::with_capacity(capacity),
        words: Vec::with_capacity(capacity),
        explicit: Vec::new(),
        word: 0,
        word_idx,
    };
    let mut cutter = Cutter { plan, text, word: Word::default(), spans: Vec::new(), scratch: String::new() };
    for (id, (s, e)) in stages.added_vocabulary.split_unnormalized(text) {
        if let Some(id) = id {
            out.explicit.push((out.ids.len(), text[s..e].to_owned()));
            let word = out.next_word();
            out.push(id, (s, e), word);
            continue;
        }
        match cutter.segment(s, e, &mut out) {
            Ok(true) => {}
            Ok(false) => return None,
            Err(e) => return Some(Err(e)),
        }
    }
    let vocab = plan.model.reverse_vocab();
    Some(Ok(Encoding::from_vocab_tokens(out.ids, out.offsets, out.words, type_id, vocab, out.explicit)))
}

/// The tokens so far.
struct Out<'t> {
    offsets_in: OffsetsIn<'t>,
    ids: Vec<u32>,
    offsets: Vec<Offsets>,
    words: Vec<Option<u32>>,
    /// The strings of the added tokens, by position.
    explicit: Vec<(usize, String)>,
    /// The index of the next word.
    word: u32,
    word_idx: Option<u32>,
}

impl Out<'_> {
    /// The word index of the next word's tokens.
    #[inline]
    fn next_word(&mut self) -> Option<u32> {
        let w = self.word_idx.unwrap_or(self.word);
        self.word += 1;
        Some(w)
    }

    /// Appends a token; `offsets` are bytes of the text.
    #[inline]
    fn push(&mut self, id: u32, offsets: Offsets, word: Option<u32>) {
        self.ids.push(id);
        self.offsets.push(self.offsets_in.convert(offsets));
        self.words.push(word);
    }
}

/// The word being cut: its normalized text and the original range of each of its bytes.
#[derive(Default)]
struct Word {
    /// No char yet.
    empty: bool,
    /// The original range from its first char's start to its last char's end.
    start: usize,
    end: usize,
    /// The normalized text is `buf`, not the original `text[start..end]`.
    owned: bool,
    buf: String,
    /// Normalized byte `k` comes from original byte `start + k` (each char kept its length
    /// and none was removed inside the word); otherwise `align[k]` is the original range of
    /// the char normalized byte `k` comes from.
    aligned: bool,
    align: Vec<Offsets>,
}

impl Word {
    /// Starts a new word at original byte `at`.
    #[inline]
    fn begin(&mut self, at: usize) {
        self.empty = false;
        self.start = at;
        self.end = at;
        self.owned = false;
        self.aligned = true;
    }

    /// Appends the normalized char `d`, which comes from the original char `text[cs..ce]`
    /// (`unchanged`: `d` is that char).
    #[inline]
    fn push(&mut self, text: &str, d: char, (cs, ce): Offsets, unchanged: bool) {
        if self.empty {
            self.begin(cs);
        }
        let same_place = self.end == cs && d.len_utf8() == ce - cs;
        if !self.owned {
            if same_place && unchanged {
                self.end = ce;
                return;
            }
            self.buf.clear();
            self.buf.push_str(&text[self.start..self.end]);
            self.owned = true;
        }
        if self.aligned && !same_place {
            self.align.clear();
            for (k, c) in self.buf.char_indices() {
                let at = self.start + k;
                self.align.extend(std::iter::repeat_n((at, at + c.len_utf8()), c.len_utf8()));
            }
            self.aligned = false;
        }
        self.buf.push(d);
        if !self.aligned {
            self.align.extend(std::iter::repeat_n((cs, ce), d.len_utf8()));
        }
        self.end = ce;
    }
}

/// Cuts the segments of one text into words and encodes them.
struct Cutter<'a> {
    plan: Plan<'a>,
    text: &'a str,
    word: Word,
    /// The model's tokens of the current word.
    spans: Vec<(u32, Offsets)>,
    /// What the normalizer makes of one char, when it is not memoized.
    scratch: String,
}

impl Cutter<'_> {
    /// Encodes the words of the segment `text[s..e]`; `false` when its normalization needs
    /// the general pipeline.
    fn segment(&mut self, s: usize, e: usize, out: &mut Out<'_>) -> Result<bool> {
        let bytes = self.text.as_bytes();
        let ascii = self.plan.ascii;
        let class = |b: u8| if b.is_ascii() { ascii[usize::from(b)] } else { Ascii::Other };
        self.word.empty = true;
        let mut i = s;
        while i < e {
            let b = bytes[i];
            match class(b) {
                Ascii::Word(m) => {
                    let w = &mut self.word;
                    if !(w.empty || (w.aligned && w.end == i)) {
                        w.push(self.text, char::from(m), (i, i + 1), m == b);
                        i += 1;
                        continue;
                    }
                    // A run of ASCII word chars: each keeps its place, so the word stays a
                    // slice of the text (or a copy once the normalizer changes a char).
                    if w.empty {
                        w.begin(i);
                    }
                    let mut j = i;
                    if !w.owned {
                        while j < e && class(bytes[j]) == Ascii::Word(bytes[j]) {
                            j += 1;
                        }
                        if j < e && matches!(class(bytes[j]), Ascii::Word(_)) {
                            w.buf.clear();
                            w.buf.push_str(&self.text[w.start..j]);
                            w.owned = true;
                        }
                    }
                    if w.owned {
                        while j < e {
                            let Ascii::Word(m) = class(bytes[j]) else { break };
                            w.buf.push(char::from(m));
                            j += 1;
                        }
                    }
                    w.end = j;
                    i = j;
                }
                Ascii::Space => {
                    self.flush(out)?;
                    i += 1;
                    while i < e && class(bytes[i]) == Ascii::Space {
                        i += 1;
                    }
                }
                Ascii::Punct(m) => {
                    self.single(char::from(m), (i, i + 1), out)?;
                    i += 1;
                }
                Ascii::Removed => i += 1,
                Ascii::Other => {
                    let Some(c) = self.text[i..].chars().next() else { break };
                    let at = (i, i + c.len_utf8());
                    i = at.1;
                    if !self.char(c, at, out)? {
                        return Ok(false);
                    }
                }
            }
        }
        self.flush(out)?;
        Ok(true)
    }

    /// Normalizes the char `c` (at `at` in the text) and cuts its chars; `false` when the
    /// normalizer's one-pass rewrite cannot take it.
    #[inline]
    fn char(&mut self, c: char, at: Offsets, out: &mut Out<'_>) -> Result<bool> {
        let Some((normalizer, memo)) = self.plan.normalizer else {
            self.normalized_char(c, at, true, out)?;
            return Ok(true);
        };
        match memo_index(c).map(|k| memo[k]) {
            Some(MEMO_REMOVED) => return Ok(true),
            Some(MEMO_SLOW) | None => {}
            Some(d) => {
                if let Some(d) = char::from_u32(d) {
                    self.normalized_char(d, at, d == c, out)?;
                }
                return Ok(true);
            }
        }
        if normalizer.handle_chinese_chars && is_plain_ideograph(c) {
            // Spaces on both sides: a word of its own.
            self.single(c, at, out)?;
            return Ok(true);
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        let ok = normalizer.rewrite_char(c, memo, &mut scratch);
        if ok {
            for d in scratch.chars() {
                self.normalized_char(d, at, false, out)?;
            }
        }
        self.scratch = scratch;
        Ok(ok)
    }

    /// Cuts at the normalized char `d`, which comes from the original char at `at`
    /// (`unchanged`: `d` is that char).
    #[inline]
    fn normalized_char(&mut self, d: char, at: Offsets, unchanged: bool, out: &mut Out<'_>) -> Result<()> {
        match char_class(d) {
            CharClass::Word => self.word.push(self.text, d, at, unchanged),
            CharClass::Space => self.flush(out)?,
            CharClass::Punct => self.single(d, at, out)?,
        }
        Ok(())
    }

    /// Encodes the current word and then the normalized char `d` (from the original char at
    /// `at`) as a word of its own.
    #[inline]
    fn single(&mut self, d: char, at: Offsets, out: &mut Out<'_>) -> Result<()> {
        self.flush(out)?;
        match self.plan.model.char_token(d) {
            Some(id) => {
                let word = out.next_word();
                out.push(id, at, word);
            }
            None => {
                self.word.push(self.text, d, at, false);
                self.flush(out)?;
            }
        }
        Ok(())
    }

    /// Encodes the current word, if any, and starts a new one.
    fn flush(&mut self, out: &mut Out<'_>) -> Result<()> {
        let w = &mut self.word;
        if w.empty {
            return Ok(());
        }
        w.empty = true;
        let normalized = if w.owned { w.buf.as_str() } else { &self.text[w.start..w.end] };
        self.spans.clear();
        self.plan.model.tokenize_spans(normalized, &mut self.spans)?;
        let word = out.next_word();
        for &(id, (ts, te)) in &self.spans {
            let offsets = if w.aligned { (w.start + ts, w.start + te) } else { (w.align[ts].0, w.align[te - 1].1) };
            out.push(id, offsets, word);
        }
        Ok(())
    }
}
