//! The fast lexers against the reference reading of each pattern: tiktoken's engine
//! (fancy-regex) with the exact tiktoken pattern for the .tiktoken encodings, and Oniguruma
//! for the patterns found in tokenizer.json, on every shared corpus and on random strings
//! drawn to hit the corners. `TOKENKIT_LEXER_STRINGS` sets how many random strings (default
//! 20,000 per lexer; the ignored test runs 1,000,000). DeepSeek's split chain is also checked
//! whole: the fused pieces against the three Oniguruma regexes applied one after the other.

use std::path::PathBuf;

use crate::formats::tiktoken::{CL100K_ONIG_PATTERN, CL100K_PATTERN, O200K_PATTERN, R50K_PATTERN};
use crate::utils::lexers::{deepseek_pieces, DEEPSEEK_CJK_PATTERN, DEEPSEEK_DIGITS_PATTERN, DEEPSEEK_MAIN_PATTERN};
use crate::utils::regex::{SysRegex, CL100K_PATTERN as HF_CL100K_PATTERN, GPT2_PATTERN, LLAMA3_PATTERN, QWEN2_PATTERN};

/// Corner-case alphabet: whitespace runs and newlines, apostrophes and contraction letters in
/// both cases (and 'ſ'), digits of several scripts, marks, emoji, CJK, upper/lower/title/
/// modifier letters, slashes and punctuation, non-ASCII punctuation and symbols, control and
/// format chars, the edges of DeepSeek's CJK class (U+4E00, U+9FA5, U+9FA6, U+3040, U+30FF,
/// U+31F0).
pub(crate) const ALPHABET: &str = concat!(
    " \t\n\r\u{b}\u{c}'aZséßſ日本ア😀👍🏽1٣३_-./,!?\u{301}\u{300}\u{3000}\u{a0}\u{85}\u{2028}rRvVlLmMdDtTeEsSǅʰ\u{93f}क한Ω",
    "$`~«»。€©\u{0}\u{1b}\u{200d}\u{feff}\u{4e00}\u{9fa5}\u{9fa6}\u{3040}\u{30ff}\u{31f0}²𝐀",
);

fn fancy_matches(re: &fancy_regex::Regex, text: &str) -> Vec<(usize, usize)> {
    re.find_iter(text).map(|m| m.map(|m| (m.start(), m.end())).unwrap()).collect()
}

/// `(name, pattern our tokenizers run, tiktoken's pattern)`: the lexer behind the first must
/// split as fancy-regex splits with the second.
const TIKTOKEN_READINGS: &[(&str, &str, &str)] =
    &[("r50k", GPT2_PATTERN, R50K_PATTERN), ("cl100k", CL100K_ONIG_PATTERN, CL100K_PATTERN), ("o200k", O200K_PATTERN, O200K_PATTERN)];

/// Patterns whose lexer must split as Oniguruma does.
pub(crate) const ONIG_READINGS: &[&str] = &[
    GPT2_PATTERN,
    LLAMA3_PATTERN,
    HF_CL100K_PATTERN,
    CL100K_PATTERN,
    CL100K_ONIG_PATTERN,
    O200K_PATTERN,
    R50K_PATTERN,
    QWEN2_PATTERN,
    DEEPSEEK_DIGITS_PATTERN,
    DEEPSEEK_CJK_PATTERN,
    DEEPSEEK_MAIN_PATTERN,
];

/// The pieces of a chain of `Isolated` splits on `text`, each regex run by Oniguruma on each
/// piece the previous ones made (HF's `Sequence` of `Split`s).
fn onig_chain(regexes: &[SysRegex], text: &str) -> Vec<(usize, usize)> {
    let mut pieces = vec![(0, text.len())];
    for re in regexes {
        let mut next = Vec::new();
        for (ps, pe) in pieces {
            let mut last = ps;
            for (s, e) in re.find_iter(&text[ps..pe]) {
                if ps + s > last {
                    next.push((last, ps + s));
                }
                next.push((ps + s, ps + e));
                last = ps + e;
            }
            if last < pe {
                next.push((last, pe));
            }
        }
        pieces = next;
    }
    pieces
}

pub(crate) fn corpus_texts() -> Vec<String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.fixtures/corpora");
    let mut out = Vec::new();
    let Ok(langs) = std::fs::read_dir(&dir) else { return out };
    for lang in langs.flatten() {
        for f in std::fs::read_dir(lang.path()).into_iter().flatten().flatten() {
            if let Ok(text) = std::fs::read_to_string(f.path()) {
                out.push(text);
            }
        }
    }
    out
}

fn check_all(texts: &[String]) {
    for &(name, ours, theirs) in TIKTOKEN_READINGS {
        let lexer = SysRegex::new(ours).unwrap();
        assert!(lexer.is_fast(), "{name}: no fast lexer");
        let reference = fancy_regex::Regex::new(theirs).unwrap();
        for t in texts {
            let got: Vec<_> = lexer.find_iter(t).collect();
            let want = fancy_matches(&reference, t);
            if got != want {
                let i = got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(0);
                let (s, _) = want.get(i).or(got.get(i)).copied().unwrap_or((0, 0));
                let ctx: String = t[s..].chars().take(20).collect();
                panic!("{name} vs tiktoken's reading at byte {s} ({ctx:?}): ours {:?}, tiktoken {:?}", got.get(i), want.get(i));
            }
        }
    }
    for &pattern in ONIG_READINGS {
        let lexer = SysRegex::new(pattern).unwrap();
        assert!(lexer.is_fast(), "{pattern}: no fast lexer");
        let onig = SysRegex::onig_only(pattern).unwrap();
        for t in texts {
            let got: Vec<_> = lexer.find_iter(t).collect();
            let want: Vec<_> = onig.find_iter(t).collect();
            assert_eq!(got, want, "{pattern} vs Oniguruma on {:?}", t.chars().take(60).collect::<String>());
        }
    }
    let chain: Vec<SysRegex> =
        [DEEPSEEK_DIGITS_PATTERN, DEEPSEEK_CJK_PATTERN, DEEPSEEK_MAIN_PATTERN].iter().map(|p| SysRegex::onig_only(p).unwrap()).collect();
    let mut got = Vec::new();
    for t in texts {
        got.clear();
        deepseek_pieces(t, |s, e| got.push((s, e)));
        assert_eq!(got, onig_chain(&chain, t), "DeepSeek chain vs Oniguruma on {:?}", t.chars().take(60).collect::<String>());
    }
}

fn random_count(default: usize) -> usize {
    std::env::var("TOKENKIT_LEXER_STRINGS").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
fn lexers_match_references_on_random_strings() {
    check_all(&super::random_strings(ALPHABET, 0xC0FF_EE12_3456_789B, random_count(20_000)));
}

/// Texts of mostly ASCII runs of every length around the eight bytes the ASCII fast paths
/// test at a time, with a few non-ASCII letters, digits and punctuation where a run could
/// go on.
#[test]
fn lexers_match_references_on_random_ascii_runs() {
    let strings =
        super::random_strings("aaaaZZZZzz0000999''!!!??..//--  \t\n\r\r\nsStTdDlLé٣«ǅ", 0x005E_ED0F_A5C1_1234, random_count(20_000));
    let texts: Vec<String> = strings.chunks(6).map(|c| c.concat()).collect();
    check_all(&texts);
}

/// Long runs of each char class and random mixes ([`super::adversarial_texts`]).
#[test]
fn lexers_match_references_on_adversarial_texts() {
    let texts: Vec<String> = super::adversarial_texts(3000).into_iter().map(|(_, t)| t).collect();
    check_all(&texts);
}

#[test]
#[ignore = "a million random strings per lexer: run with --release --ignored"]
fn lexers_match_references_on_a_million_random_strings() {
    check_all(&super::random_strings(ALPHABET, 0x0DDB_A11C_AFE0_1234, random_count(1_000_000)));
}

#[test]
#[ignore = "every shared corpus, whole files: run with --release --ignored"]
fn lexers_match_references_on_the_corpora() {
    check_all(&corpus_texts());
}
