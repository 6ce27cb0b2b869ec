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

/// The name, sha256 and length of each built-in rule's charsmap, as sentencepiece 0.2.3
/// writes it (`scripts/extract_spm_charsmaps.py`).
const SHA256: &[(&str, &str, usize)] = &[
    ("nmt_nfkc", "1e2c7b43d3ee9755ceaa2ac335e253d8703604e0249ee1e81156c92b46423844", 240007),
    ("nfkc", "7e46d9e08af4b6a37991b04fb8388644c1595a0abcd0f26d6a5d575e2a3663ea", 240008),
    ("nmt_nfkc_cf", "2c03512e62f9ed965ec90d85314211b63b5b8aa0395311ea2147eec9ff738907", 247164),
    ("nfkc_cf", "d8dfef3d6db0eef0742f8b55a73aee7fce6c1e21d26a09b8d3d4b52c42a791cb", 247165),
];

/// Charsmaps that earlier sentencepiece versions wrote for the same rules, which many
/// published models carry: where each is found (a fixture), its sha256 and length.
const EARLIER: &[(&str, &str, usize)] = &[
    // nmt_nfkc (ALBERT, XLNet, T5 and others).
    ("registry/albert/spiece.model", "0942789e0111452f1cc446f70036e26d24458c3c7858c53cc12ca4d87531279b", 237539),
    // nfkc (sentencepiece's own Japanese test model).
    ("registry/sentencepiece/kyoto_ja_unigram_8000.model", "ec4a65fa10ad2a465f4f30ac3ee83a4ba4e9f507a4b092e07ff790c1c7c318af", 237484),
];

/// Whether `charsmap` is a built-in rule's or one of the [`EARLIER`] ones (by its length, then
/// its sha256): one that passes [`Precompiled::check_trie`](crate::normalizers::Precompiled::check_trie)
/// (the tests check each), so a model that carries it (most do) skips that walk, most of an
/// uncached load (a sha256 of its 240 KB costs a few percent of it).
pub(crate) fn is_checked(charsmap: &[u8]) -> bool {
    use sha2::Digest as _;
    let known = || SHA256.iter().chain(EARLIER).filter(|&&(_, _, len)| len == charsmap.len());
    known().next().is_some() && {
        let sha: String = sha2::Sha256::digest(charsmap).iter().map(|b| format!("{b:02x}")).collect();
        known().any(|&(_, s, _)| s == sha)
    }
}

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

    /// The embedded charsmaps are sentencepiece's (by sha256), and each, as each of the
    /// [`EARLIER`] ones, passes the trie check that [`is_checked`] lets a load skip; a charsmap
    /// one byte off is not taken for one.
    #[test]
    fn charsmaps_are_sentencepieces() {
        assert_eq!(SHA256.len(), RULES.len() - 1, "every rule with a charsmap has its sha256");
        for &(name, sha, len) in SHA256 {
            let mut map = charsmap(name).unwrap();
            assert_eq!(map.len(), len, "{name}");
            let got: String = sha2::Sha256::digest(&map).iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(got, sha, "{name}");
            assert!(is_checked(&map), "{name}");
            crate::normalizers::Precompiled::from_bytes(map.clone()).unwrap().check_trie().unwrap();
            map[len / 2] ^= 1;
            assert!(!is_checked(&map), "{name} changed");
            assert!(!is_checked(&map[1..]), "{name} cut");
        }
        // The earlier charsmaps, from the models that carry them (an absent one is reported).
        for &(file, sha, len) in EARLIER {
            let Some(path) = crate::test_fixtures::get(file) else { continue };
            let model = crate::formats::sentencepiece::read_model(&path).unwrap();
            let map = model.proto().normalizer_spec.as_ref().and_then(|n| n.precompiled_charsmap.clone()).unwrap_or_default();
            assert_eq!(map.len(), len, "{file}");
            let got: String = sha2::Sha256::digest(&map).iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(got, sha, "{file}");
            assert!(is_checked(&map), "{file}");
            crate::normalizers::Precompiled::from_bytes(map).unwrap().check_trie().unwrap();
        }
        assert!(charsmap("identity").unwrap().is_empty());
        let err = charsmap("nfd").unwrap_err().to_string();
        assert!(err.contains("\"nfd\"") && err.contains("nmt_nfkc_cf"), "{err}");
    }
}
