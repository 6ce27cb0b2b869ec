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
    use sha2::Digest as _;

    #[test]
    fn charsmaps_are_sentencepieces() {
        // sha256 of the charsmaps sentencepiece 0.2.3 writes (scripts/extract_spm_charsmaps.py).
        for (name, sha, len) in [
            ("nmt_nfkc", "1e2c7b43d3ee9755ceaa2ac335e253d8703604e0249ee1e81156c92b46423844", 240007),
            ("nfkc", "7e46d9e08af4b6a37991b04fb8388644c1595a0abcd0f26d6a5d575e2a3663ea", 240008),
            ("nmt_nfkc_cf", "2c03512e62f9ed965ec90d85314211b63b5b8aa0395311ea2147eec9ff738907", 247164),
            ("nfkc_cf", "d8dfef3d6db0eef0742f8b55a73aee7fce6c1e21d26a09b8d3d4b52c42a791cb", 247165),
        ] {
            let map = charsmap(name).unwrap();
            assert_eq!(map.len(), len, "{name}");
            let got: String = sha2::Sha256::digest(&map).iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(got, sha, "{name}");
            crate::normalizers::Precompiled::from_bytes(map).unwrap();
        }
        assert!(charsmap("identity").unwrap().is_empty());
        let err = charsmap("nfd").unwrap_err().to_string();
        assert!(err.contains("\"nfd\"") && err.contains("nmt_nfkc_cf"), "{err}");
    }
}
