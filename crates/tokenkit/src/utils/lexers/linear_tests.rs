//! Every fast lexer takes time linear in the text on every worst-case text
//! ([`super::adversarial_texts`]: a long run of each char class, random mixes). A counted
//! repeat that scanned the whole run for each match (`\p{N}{1,3}` on a run of digits) made
//! a megabyte of digits take seconds.

use super::adversarial::assert_linear;
use super::reference_tests::ONIG_READINGS;
use super::{adversarial_texts, deepseek_pieces};
use crate::utils::regex::SysRegex;

const BASE: usize = 64 << 10;

#[test]
fn lexers_are_linear_on_adversarial_texts() {
    let small = adversarial_texts(BASE);
    let large = adversarial_texts(16 * BASE);
    for &pattern in ONIG_READINGS {
        let re = SysRegex::new(pattern).unwrap();
        assert!(re.is_fast(), "{pattern}: no fast lexer");
        for ((name, s), (_, l)) in small.iter().zip(&large) {
            assert_linear(&format!("{pattern} on {name}"), s.as_str(), l.as_str(), |t| {
                std::hint::black_box(re.find_iter(t).count());
            });
        }
    }
    for ((name, s), (_, l)) in small.iter().zip(&large) {
        assert_linear(&format!("DeepSeek's split chain on {name}"), s.as_str(), l.as_str(), |t| {
            let mut n = 0;
            deepseek_pieces(t, |_, _| n += 1);
            std::hint::black_box(n);
        });
    }
}
