//! The block paths of the cl100k and o200k lexers against their per-piece paths and against
//! Oniguruma, on random mostly-ASCII texts of every length from 0 to 199 bytes, each after a
//! letter run of every length from 0 to 63 (so that the text starts at every offset of the
//! first block and its pieces cross the reload points and block ends), for every reading of
//! the cl100k pattern (digit runs, whitespace runs to the end) and for o200k.

use super::cl100k::{Cl100kLexer, DigitRun};
use super::o200k::{O200kLexer, O200K_PATTERN};
use crate::utils::regex::{SysRegex, CL100K_ONIG_PATTERN, CL100K_PATTERN, LLAMA3_PATTERN, QWEN2_PATTERN, TIKTOKEN_CL100K_PATTERN};

/// The chars the block paths decide on (with the weights of a draw: letters and spaces most
/// often, so that runs form), and a few non-ASCII chars where they give up: letters, a
/// digit, whitespace, a mark, the long s of the contractions.
const CHARS: &str = concat!(
    "aaaaaaeeeessttrrvvllmmddZZZZSSTTLLEE",
    "000011223456789",
    "        \t\t\n\n\r\r\r\n\u{b}\u{c}",
    "''''''..,,!!??--//__()$\u{1}\u{7f}",
    "é٣\u{a0}\u{3000}ſ日\u{301}Ω",
);

/// Deterministic random texts of exactly `len` bytes drawn from [`CHARS`].
fn random_text(len: usize, state: &mut u64) -> String {
    let chars: Vec<char> = CHARS.chars().collect();
    let mut s = String::with_capacity(len);
    while s.len() < len {
        *state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let c = chars[(*state >> 33) as usize % chars.len()];
        if s.len() + c.len_utf8() <= len {
            s.push(c);
        } else {
            s.push('x');
        }
    }
    s
}

/// The texts: for each length 0..200 and each letter-run prefix 0..64, one random text.
fn texts() -> Vec<String> {
    let mut state = 0x9E37_79B9_7F4A_7C15;
    let mut out = Vec::new();
    for len in 0..200 {
        for prefix in 0..64 {
            out.push(format!("{}{}", "w".repeat(prefix), random_text(len, &mut state)));
        }
    }
    out
}

/// The pieces of a text of `len` bytes given the end of the piece at each start.
fn per_piece(len: usize, end: impl Fn(usize) -> usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < len {
        let e = end(start);
        out.push((start, e));
        start = e;
    }
    out
}

#[test]
fn block_paths_agree_with_per_piece_paths_and_oniguruma() {
    let texts = texts();
    assert_eq!(texts.len(), 200 * 64);
    let readings: [(DigitRun, bool, Option<&str>); 6] = [
        (DigitRun::UpToThree, false, Some(LLAMA3_PATTERN)),
        (DigitRun::Unbounded, false, Some(CL100K_PATTERN)),
        (DigitRun::UpToThree, true, Some(CL100K_ONIG_PATTERN)),
        (DigitRun::Unbounded, true, Some(TIKTOKEN_CL100K_PATTERN)),
        (DigitRun::One, false, Some(QWEN2_PATTERN)),
        (DigitRun::One, true, None),
    ];
    let (mut vs_per_piece, mut onig, mut pieces) = (0, 0, 0);
    for (digits, to_end, pattern) in readings {
        let re = pattern.map(|p| SysRegex::onig_only(p).unwrap());
        for t in &texts {
            let lexer = |t| {
                let l = Cl100kLexer::new(t, digits);
                if to_end {
                    l.whitespace_run_to_end()
                } else {
                    l
                }
            };
            let got: Vec<_> = lexer(t).collect();
            assert_eq!(got, per_piece(t.len(), |s| lexer(t).per_piece_end(s)), "{digits:?} {to_end} block vs per-piece on {t:?}");
            vs_per_piece += 1;
            if let Some(re) = &re {
                assert_eq!(got, re.find_iter(t).collect::<Vec<_>>(), "{digits:?} {to_end} block vs Oniguruma on {t:?}");
                onig += 1;
            }
            pieces += got.len();
        }
    }
    let re = SysRegex::onig_only(O200K_PATTERN).unwrap();
    for t in &texts {
        let got: Vec<_> = O200kLexer::new(t).collect();
        assert_eq!(got, per_piece(t.len(), |s| O200kLexer::new(t).per_piece_end(s)), "o200k block vs per-piece on {t:?}");
        assert_eq!(got, re.find_iter(t).collect::<Vec<_>>(), "o200k block vs Oniguruma on {t:?}");
        vs_per_piece += 1;
        onig += 1;
        pieces += got.len();
    }
    assert_eq!((vs_per_piece, onig), (7 * texts.len(), 6 * texts.len()));
    assert!(pieces > 1_000_000, "{pieces} pieces");
}
