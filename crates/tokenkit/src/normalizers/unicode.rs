//! Unicode normalization forms (NFC, NFD, NFKC, NFKD) and the NMT cleanup.

use unicode_normalization_alignments::{is_nfd_quick, is_nfkc_quick, is_nfkd_quick, IsNormalized};

use crate::base::{NormalizedString, Normalizer};
use crate::normalizers::impl_unit_serde;
use crate::Result;

/// Unicode canonical decomposition (NFD). JSON `{"type":"NFD"}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NFD;

/// Unicode compatibility decomposition (NFKD). JSON `{"type":"NFKD"}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NFKD;

/// Unicode canonical composition (NFC). JSON `{"type":"NFC"}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NFC;

/// Unicode compatibility composition (NFKC). JSON `{"type":"NFKC"}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NFKC;

/// The cleanup of SentencePiece's `nmt_nfkc` rule minus the NFKC itself: removes the ASCII
/// control chars other than `\t \n \r` and `\x0C` (and U+008F, U+009F), and turns `\t \n \x0C \r`,
/// U+1680, U+200B..U+200F, U+2028, U+2029, U+2581, U+FEFF and U+FFFD into `' '`.
/// JSON `{"type":"Nmt"}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Nmt;

impl_unit_serde!(NFD, NFKD, NFC, NFKC, Nmt);

/// A normalization form is the identity on ASCII and on text its quick check accepts, so
/// those skip the (allocating) transform.
fn is_already(s: &str, quick: impl Fn(std::str::Chars<'_>) -> IsNormalized) -> bool {
    s.is_ascii() || quick(s.chars()) == IsNormalized::Yes
}

macro_rules! impl_form {
    ($($name:ident => $method:ident, $already:expr;)*) => {$(
        impl Normalizer for $name {
            fn normalize(&self, n: &mut NormalizedString) -> Result<()> {
                if !$already(n.get()) {
                    n.$method();
                }
                Ok(())
            }
        }
    )*};
}

impl_form! {
    NFD => nfd, |s| is_already(s, |c| is_nfd_quick(c));
    NFKD => nfkd, |s| is_already(s, |c| is_nfkd_quick(c));
    // NFC's own test: also true of a text of marks alone, which the quick check leaves to
    // the transform.
    NFC => nfc, crate::utils::nfc::is_nfc;
    NFKC => nfkc, |s| is_already(s, |c| is_nfkc_quick(c));
}

fn nmt_removes(c: char) -> bool {
    matches!(c as u32, 0x0001..=0x0008 | 0x000B | 0x000E..=0x001F | 0x007F | 0x008F | 0x009F)
}

fn nmt_map(c: char) -> char {
    match c as u32 {
        0x0009 | 0x000A | 0x000C | 0x000D | 0x1680 | 0x200B..=0x200F | 0x2028 | 0x2029 | 0x2581 | 0xFEFF | 0xFFFD => ' ',
        _ => c,
    }
}

impl Normalizer for Nmt {
    fn normalize(&self, n: &mut NormalizedString) -> Result<()> {
        let (mut removes, mut maps) = (false, false);
        for c in n.get().chars() {
            removes |= nmt_removes(c);
            maps |= nmt_map(c) != c;
        }
        if removes {
            n.filter(|c| !nmt_removes(c));
        }
        if maps {
            n.map(nmt_map);
        }
        Ok(())
    }
}
