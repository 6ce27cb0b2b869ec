//! Sets `TOKENKIT_SOURCE_HASH`: a hash of the library's sources, part of the key of the cache
//! of built tables (`utils::table_cache`), so that tables built by one version of the code are
//! never read by another.

use std::path::Path;

fn hash_dir(dir: &Path, h: &mut u64) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            hash_dir(&p, h);
        } else if let Ok(data) = std::fs::read(&p) {
            for b in p.to_string_lossy().bytes().chain([0]).chain(data) {
                // FNV-1a, 64 bits.
                *h = (*h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
    }
}

fn main() {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    hash_dir(Path::new("src"), &mut h);
    println!("cargo:rustc-env=TOKENKIT_SOURCE_HASH={h:016x}");
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=Cargo.toml");
}
