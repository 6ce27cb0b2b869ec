//! The precompiled charsmaps of sentencepiece's built-in normalization rules, as the
//! `sentencepiece` package writes them into a trained model's `normalizer_spec`.
//!
//! The files in `charsmaps/` are those bytes, gzip-compressed, taken out of models trained by
//! `sentencepiece` 0.2.3 by `scripts/extract_spm_charsmaps.py` (which checks their sha256).

use std::io::Read as _;

use crate::{Error, Result};

/// The rule names the trainer accepts, with the compressed charsmap of each (`identity` has
/// none).
const RULES: &[(&str, Option<&[u8]>)] = &[
    ("nmt_nfkc", Some(include_bytes!("charsmaps/nmt_nfkc.bin.gz"))),
    ("nfkc", Some(include_bytes!("charsmaps/nfkc.bin.gz"))),
    ("nmt_nfkc_cf", Some(include_bytes!("charsmaps/nmt_nfkc_cf.bin.gz"))),
    ("nfkc_cf", Some(include_bytes!("charsmaps/nfkc_cf.bin.gz"))),
    ("identity", None),
];

/// The names of the built-in rules.
pub fn rule_names() -> impl Iterator<Item = &'static str> {
    RULES.iter().map(|(n, _)| *n)
}

/// The precompiled charsmap of the rule `name` (empty for `identity`); an unknown name is an
/// error that lists the known ones.
pub fn charsmap(name: &str) -> Result<Vec<u8>> {
    let Some((_, data)) = RULES.iter().find(|(n, _)| *n == name) else {
        let known: Vec<&str> = rule_names().collect();
        return Err(Error::invalid(format!("normalization_rule_name: unknown rule {name:?} (known: {})", known.join(", "))));
    };
    let Some(data) = data else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(*data)
        .read_to_end(&mut out)
        .map_err(|e| Error::invalid(format!("normalization rule {name}: corrupt embedded charsmap: {e}")))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalizers::precompiled::{is_checked, EARLIER, SHA256};
    use sha2::Digest as _;

    /// The embedded charsmaps are sentencepiece's (by sha256; their XXH3-128 as listed), and each, as each of the
    /// [`EARLIER`] ones, passes the trie check that [`is_checked`] lets a load skip; a charsmap
    /// one byte off is not taken for one.
    #[test]
    fn charsmaps_are_sentencepieces() {
        assert_eq!(SHA256.len(), RULES.len() - 1, "every rule with a charsmap has its sha256");
        for &(name, sha, xxh3, len) in SHA256 {
            let mut map = charsmap(name).unwrap();
            assert_eq!(map.len(), len, "{name}");
            let got: String = sha2::Sha256::digest(&map).iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(got, sha, "{name}");
            assert_eq!(twox_hash::XxHash3_128::oneshot(&map), xxh3, "{name}");
            assert!(is_checked(&map), "{name}");
            crate::normalizers::Precompiled::from_bytes(map.clone()).unwrap().check_trie().unwrap();
            map[len / 2] ^= 1;
            assert!(!is_checked(&map), "{name} changed");
            assert!(!is_checked(&map[1..]), "{name} cut");
        }
        // The earlier charsmaps, from the models that carry them (an absent one is reported).
        for &(file, sha, xxh3, len) in EARLIER {
            let Some(path) = crate::test_fixtures::get(file) else { continue };
            let model = crate::formats::sentencepiece::read_model(&path).unwrap();
            let map = model.proto().normalizer_spec.as_ref().and_then(|n| n.precompiled_charsmap.clone()).unwrap_or_default();
            assert_eq!(map.len(), len, "{file}");
            let got: String = sha2::Sha256::digest(&map).iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(got, sha, "{file}");
            assert_eq!(twox_hash::XxHash3_128::oneshot(&map), xxh3, "{file}");
            assert!(is_checked(&map), "{file}");
            crate::normalizers::Precompiled::from_bytes(map).unwrap().check_trie().unwrap();
        }
        assert!(charsmap("identity").unwrap().is_empty());
        let err = charsmap("nfd").unwrap_err().to_string();
        assert!(err.contains("\"nfd\"") && err.contains("nmt_nfkc_cf"), "{err}");
    }
}
