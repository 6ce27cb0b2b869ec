//! Worst-case texts for the fast lexers and the encoders behind them: for each alternative of
//! each well-known pattern (GPT-2/r50k, cl100k/Llama-3/Qwen2, o200k, DeepSeek's three
//! splits), a long run of one char class, a long run of the shortest string that alternative
//! matches, and random mixes of the classes. Shared by the lexers' tests (splits identical to
//! the reference engines, time linear in the length) and by the `linear` benchmark, which
//! times every tokenizer on each of them at two sizes.

/// One unit per char class and per alternative, each repeated to make a run: `(name, unit)`.
/// The names say which alternative the run exercises.
const RUNS: &[(&str, &str)] = &[
    // \p{N}{1,3} / ` ?\p{N}+`: ASCII digits, other scripts' digits, No (superscripts).
    ("digits", "1"),
    ("digits-arabic", "\u{663}"),
    ("digits-superscript", "\u{b2}"),
    ("space-digit", " 1"),
    // Letters: ASCII lower and upper (o200k's two letter branches), non-ASCII Ll/Lu,
    // Lt, Lm, Lo, CJK (DeepSeek's CJK split), kana, Hangul, marks on letters and alone.
    ("letter", "a"),
    ("upper", "A"),
    ("camel", "aB"),
    ("upper-lower", "Ab"),
    ("latin1-lower", "\u{e9}"),
    ("greek-upper", "\u{3a9}"),
    ("title-case", "\u{1c5}"),
    ("modifier", "\u{2b0}"),
    ("hebrew", "\u{5d0}"),
    ("cjk", "\u{65e5}"),
    ("kana", "\u{30a2}"),
    ("hangul", "\u{d55c}"),
    ("letter-mark", "a\u{301}"),
    ("mark", "\u{301}"),
    ("upper-mark", "A\u{301}"),
    ("devanagari", "\u{915}\u{93f}"),
    ("math-bold", "\u{1d400}"),
    // [^\r\n\p{L}\p{N}]?\p{L}+ and ` ?\p{L}+`: a prefix char before each letter.
    ("space-letter", " a"),
    ("dot-letter", ".a"),
    ("tab-letter", "\ta"),
    // Contractions, alone and after letters (o200k), with the long s.
    ("contraction-s", "'s"),
    ("contraction-ll", "'ll"),
    ("contraction-upper", "'RE"),
    ("contraction-long-s", "'\u{17f}"),
    ("letter-contraction", "a's"),
    ("apostrophe", "'"),
    // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`: punctuation, symbols, emoji, with a space or newlines.
    ("punct", "!"),
    ("slash", "/"),
    ("space-punct", " !"),
    ("punct-newline", "!\n"),
    ("punct-slash", "!/"),
    ("guillemet", "\u{ab}"),
    ("euro", "\u{20ac}"),
    ("emoji", "\u{1f600}"),
    ("emoji-modifier", "\u{1f44d}\u{1f3fd}"),
    // Whitespace: \s*[\r\n]+, \s+(?!\S), \s+, in ASCII and not.
    ("space", " "),
    ("tab", "\t"),
    ("newline", "\n"),
    ("crlf", "\r\n"),
    ("space-newline", " \n"),
    ("ideographic-space", "\u{3000}"),
    ("nbsp", "\u{a0}"),
    ("nel", "\u{85}"),
    // Chars no alternative of DeepSeek's main split matches (left in gaps), controls.
    ("control", "\u{1}"),
    ("nul", "\u{0}"),
    ("zwj", "\u{200d}"),
    ("bom", "\u{feff}"),
];

/// Alphabets drawn from at random, char by char: `(name, chars)`.
const MIXES: &[(&str, &str)] = &[
    ("mix-digits", "0123456789"),
    ("mix-digits-unicode", "0123456789\u{663}\u{b2}\u{96a}"),
    ("mix-letters-digits", "aZ09eE13"),
    ("mix-letters-case", "aAbBzZ\u{e9}\u{c9}\u{1c5}\u{2b0}"),
    ("mix-space-newline", " \t\n\r\u{a0}\u{3000}"),
    ("mix-space-punct", " !?.,;"),
    ("mix-contractions", "'sStTdDlLmMrReEvV\u{17f}a"),
    ("mix-punct-newline-slash", "!?/\n\r"),
    // Runs of punctuation broken up at random by a space, a letter or a digit: many short
    // pieces of symbols, each its own BPE.
    ("mix-punct-broken", "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ a1"),
    ("mix-marks", "a\u{301}\u{300}A\u{5d0}\u{93f}"),
    ("mix-cjk-latin-digits", "\u{65e5}\u{672c}\u{30a2}a1 \u{3002}"),
    (
        "mix-all",
        concat!(
            " \t\n\r\u{b}\u{c}'aZs\u{e9}\u{df}\u{17f}\u{65e5}\u{672c}\u{30a2}\u{1f600}\u{1f44d}\u{1f3fd}1\u{663}\u{965}",
            "_-./,!?\u{301}\u{300}\u{3000}\u{a0}\u{85}\u{2028}rRvVlLmMdDtTeEsS\u{1c5}\u{2b0}\u{93f}\u{915}\u{d55c}\u{3a9}",
            "$`~\u{ab}\u{bb}\u{3002}\u{20ac}\u{a9}\u{0}\u{1b}\u{200d}\u{feff}\u{4e00}\u{9fa5}\u{9fa6}\u{3040}\u{30ff}\u{31f0}\u{b2}\u{1d400}",
        ),
    ),
];

/// Worst-case texts of about `bytes` bytes each (at least one unit): `(name, text)`, one per
/// entry of the run and mix lists, then random printable ASCII and random code points of
/// every plane (without surrogates). Deterministic.
pub fn adversarial_texts(bytes: usize) -> Vec<(&'static str, String)> {
    let mut out = Vec::with_capacity(RUNS.len() + MIXES.len() + 2);
    for &(name, unit) in RUNS {
        out.push((name, unit.repeat((bytes / unit.len()).max(1))));
    }
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut draw = |pick: &mut dyn FnMut(u64) -> char| {
        let mut s = String::with_capacity(bytes + 4);
        while s.len() < bytes.max(1) {
            s.push(pick(next()));
        }
        s
    };
    for &(name, alphabet) in MIXES {
        let chars: Vec<char> = alphabet.chars().collect();
        out.push((name, draw(&mut |x| chars[(x % chars.len() as u64) as usize])));
    }
    out.push(("mix-printable-ascii", draw(&mut |x| char::from(b' ' + (x % 95) as u8))));
    out.push((
        "mix-code-points",
        draw(&mut |x| {
            // Half from the BMP, half from above it; surrogates and unassigned map to U+FFFD.
            let cp = if x & 1 == 0 { (x >> 1) % 0x1_0000 } else { 0x1_0000 + (x >> 1) % 0x10_0000 };
            char::from_u32(cp as u32).unwrap_or('\u{fffd}')
        }),
    ));
    out
}

/// Asserts that `work` takes time linear in its input's length: `large` must be 16 times
/// the size of `small`, and the fastest of a few runs on it must take less than 64 times the
/// fastest on `small` (16 when linear, 256 when quadratic; the fourfold margin absorbs cache
/// effects). Time is the calling thread's CPU time, so a preemption on a loaded machine (other
/// tests or builds alongside) does not count; `work` must run on the calling thread. A ratio over
/// the bound is measured again, up to five times: a quadratic cost exceeds it every time, noise
/// does not.
#[cfg(test)]
pub(crate) fn assert_linear<T: ?Sized>(what: &str, small: &T, large: &T, mut work: impl FnMut(&T)) {
    let mut fastest = |input: &T, runs: usize| {
        work(input);
        (0..runs)
            .map(|_| {
                let t = thread_cpu_seconds();
                work(input);
                thread_cpu_seconds() - t
            })
            .fold(f64::INFINITY, f64::min)
    };
    let mut ratios = Vec::new();
    for _ in 0..5 {
        let small = fastest(small, 5).max(1e-7);
        let large = fastest(large, 5);
        ratios.push(large / small);
        if large / small < 64.0 {
            return;
        }
    }
    panic!("{what}: {ratios:.0?} times the time for 16x the input, on every try: not linear");
}

/// The calling thread's CPU time in seconds (`CLOCK_THREAD_CPUTIME_ID`).
#[cfg(test)]
pub(crate) fn thread_cpu_seconds() -> f64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid timespec for the call to write.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_have_the_asked_size_and_distinct_names() {
        let texts = adversarial_texts(1000);
        let mut names: Vec<&str> = texts.iter().map(|(n, _)| *n).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), texts.len());
        for (name, t) in &texts {
            assert!((996..=1004).contains(&t.len()), "{name}: {} bytes", t.len());
        }
    }
}
