//! Test support: which fixture files `scripts/fetch_fixtures.py` provided on this machine.
//!
//! The fixture step writes `.fixtures/MANIFEST.json`: every fixture it knows, either with its
//! source (present) or as `{"absent": why}` (a Hub file that only `../shared` has). Tests ask
//! [`get`] for a file, so that a missing fixture is skipped only where the manifest says this
//! machine cannot have it: a file the manifest lists as present must be there, and a test whose
//! every fixture is absent fails rather than passing on nothing.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// `<repo>/.fixtures`.
pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.fixtures")
}

/// The manifest: fixture path (relative to [`dir`]) -> present?
fn manifest() -> &'static BTreeMap<String, bool> {
    static MANIFEST: OnceLock<BTreeMap<String, bool>> = OnceLock::new();
    MANIFEST.get_or_init(|| {
        let path = dir().join("MANIFEST.json");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}; run scripts/fetch_fixtures.py (scripts/setup.sh does) before the tests", path.display()));
        let json: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let map = json.as_object().unwrap_or_else(|| panic!("{}: not a JSON object", path.display()));
        map.iter().map(|(k, v)| (k.clone(), v.get("absent").is_none())).collect()
    })
}

/// Every fixture the manifest knows (present or absent), in order.
pub fn names() -> impl Iterator<Item = &'static str> {
    manifest().keys().map(String::as_str)
}

/// The path of fixture `rel` (e.g. `"hub/llama2.json"`) when the fixture step provided it, `None`
/// when the manifest records it as absent on this machine. Panics when the manifest does not know
/// `rel`, or lists it as present and it is not there.
pub fn get(rel: &str) -> Option<PathBuf> {
    let present =
        *manifest().get(rel).unwrap_or_else(|| panic!("fixture {rel} is not in .fixtures/MANIFEST.json (scripts/fetch_fixtures.py)"));
    let path = dir().join(rel);
    if present {
        assert!(path.exists(), "{}: listed as present in .fixtures/MANIFEST.json but missing", path.display());
        Some(path)
    } else {
        eprintln!("fixture {rel}: absent on this machine (see .fixtures/MANIFEST.json), skipped");
        None
    }
}

/// The text of fixture `rel`, as [`get`].
pub fn read(rel: &str) -> Option<String> {
    get(rel).map(|p| std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
}

/// The corpus directory: `../shared/corpora` linked, or the small built-in sample corpus.
pub fn corpora() -> PathBuf {
    get("corpora").expect("the fixture step always provides corpora")
}

/// The first of `candidates` (paths under [`corpora`]) that this machine has: list the shared
/// corpora's file first, then the one a fresh clone has (botchan from the registry, the built-in
/// samples). None of them present is a failure, never a skip.
pub fn corpus_file(candidates: &[&str]) -> PathBuf {
    let dir = corpora();
    candidates
        .iter()
        .map(|rel| dir.join(rel))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("none of {candidates:?} in {}: run scripts/setup.sh", dir.display()))
}

/// The `Precompiled` normalizer (JSON) of the nmt_nfkc charsmap: XLNet's, from
/// hub/xlnet_base_cased.json, or where that is absent the same bytes from ALBERT's spiece.model
/// (registry/albert/spiece.model; XLNet's and ALBERT's models carry one and the same charsmap,
/// which this checks whenever both are present).
pub fn nmt_nfkc_precompiled() -> serde_json::Value {
    use base64::Engine;
    let albert = get("registry/albert/spiece.model").map(|p| {
        let model = crate::formats::sentencepiece::read_model(&p).unwrap();
        let bytes = model.proto().normalizer_spec.as_ref().and_then(|n| n.precompiled_charsmap.clone()).unwrap();
        serde_json::json!({"type": "Precompiled", "precompiled_charsmap": base64::engine::general_purpose::STANDARD.encode(bytes)})
    });
    let xlnet = read("hub/xlnet_base_cased.json").map(|text| {
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        json["normalizer"]["normalizers"].as_array().unwrap().iter().find(|n| n["type"] == "Precompiled").unwrap().clone()
    });
    match (xlnet, albert) {
        (Some(x), Some(a)) => {
            assert_eq!(x, a, "XLNet's and ALBERT's charsmaps differ");
            x
        }
        (x, a) => x.or(a).expect("neither hub/xlnet_base_cased.json nor registry/albert/spiece.model is present"),
    }
}
