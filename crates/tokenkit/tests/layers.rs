//! The layer check: every `crate::…` path in the library's non-test code goes down the layer
//! order written in `src/lib.rs` (the `//! N. \`module\`, …:` list), or stays in its own layer
//! without a cycle between the modules of that layer. Test code (`#[cfg(test)]` items and the
//! files of `#[cfg(test)] mod x;`) may reach up: it compares a layer with what is built on it.
//!
//! It also prints the module graph (which top-level module imports which, how many paths):
//! `cargo test -p tokenkit --test layers -- --nocapture`. `TOKENKIT_LAYERS_SRC=DIR` checks
//! another source tree (e.g. an older checkout's `crates/tokenkit/src`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One source file: its module path below the crate root and its text with comments and the
/// insides of string and char literals blanked (same length, same line breaks).
struct Source {
    file: PathBuf,
    module: Vec<String>,
    code: Vec<u8>,
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Blanks comments and literal contents so that a `crate::` inside them does not count.
fn strip(text: &str) -> Vec<u8> {
    let s = text.as_bytes();
    let mut out = s.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for b in &mut out[from..to] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    };
    let mut i = 0;
    while i < s.len() {
        let prev_ident = i > 0 && is_ident(s[i - 1]);
        if s[i..].starts_with(b"//") {
            let end = s[i..].iter().position(|&b| b == b'\n').map_or(s.len(), |p| i + p);
            blank(&mut out, i, end);
            i = end;
        } else if s[i..].starts_with(b"/*") {
            let (mut depth, mut j) = (0usize, i);
            while j < s.len() {
                if s[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if s[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if !prev_ident && (s[i] == b'r' || s[i..].starts_with(b"br") || s[i..].starts_with(b"cr")) {
            // A raw string `r#"…"#` (or an identifier starting with r).
            let start = if s[i] == b'r' { i + 1 } else { i + 2 };
            let hashes = s[start..].iter().take_while(|&&b| b == b'#').count();
            if s.get(start + hashes) == Some(&b'"') {
                let mut close = vec![b'"'];
                close.extend(std::iter::repeat_n(b'#', hashes));
                let body = start + hashes + 1;
                let end = s[body..].windows(close.len()).position(|w| w == close.as_slice()).map_or(s.len(), |p| body + p);
                blank(&mut out, body, end);
                i = end + close.len();
            } else {
                i += 1;
                while i < s.len() && is_ident(s[i]) {
                    i += 1;
                }
            }
        } else if s[i] == b'"' {
            let mut j = i + 1;
            while j < s.len() && s[j] != b'"' {
                j += if s[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i + 1, j.min(s.len()));
            i = j + 1;
        } else if s[i] == b'\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime / label ('a).
            if s.get(i + 1) == Some(&b'\\') {
                let end = s[i + 2..].iter().position(|&b| b == b'\'').map_or(s.len(), |p| i + 2 + p);
                blank(&mut out, i + 1, end);
                i = end + 1;
            } else {
                let width = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                if s.get(i + 1 + width) == Some(&b'\'') {
                    blank(&mut out, i + 1, i + 1 + width);
                    i += 2 + width;
                } else {
                    i += 1;
                }
            }
        } else if is_ident(s[i]) {
            while i < s.len() && is_ident(s[i]) {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    out
}

fn skip_ws(code: &[u8], mut i: usize) -> usize {
    while i < code.len() && code[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

fn ident_at(code: &[u8], i: usize) -> &str {
    let end = code[i..].iter().position(|&b| !is_ident(b)).map_or(code.len(), |p| i + p);
    std::str::from_utf8(&code[i..end]).unwrap()
}

/// The index just past the bracket that closes the one at `open`.
fn close_of(code: &[u8], open: usize) -> usize {
    let mut depth = 0i32;
    for (j, &b) in code.iter().enumerate().skip(open) {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return j + 1;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// The byte ranges of `#[cfg(test)]` items, and the names of `#[cfg(test)] mod name;` files.
fn test_items(code: &[u8]) -> (Vec<(usize, usize)>, Vec<String>) {
    let (mut ranges, mut mods) = (Vec::new(), Vec::new());
    let compact: Vec<(usize, u8)> = code.iter().copied().enumerate().filter(|(_, b)| !b.is_ascii_whitespace()).collect();
    let pattern = b"#[cfg(test)]";
    for k in 0..compact.len() {
        if compact.len() - k < pattern.len() || !compact[k..k + pattern.len()].iter().map(|p| p.1).eq(pattern.iter().copied()) {
            continue;
        }
        let start = compact[k].0;
        let mut i = skip_ws(code, compact[k + pattern.len() - 1].0 + 1);
        while code.get(i) == Some(&b'#') {
            i = skip_ws(code, close_of(code, i + 1));
        }
        let item = i;
        let mut end = code.len();
        while i < code.len() {
            match code[i] {
                b'(' | b'[' => i = close_of(code, i),
                b';' => {
                    end = i + 1;
                    break;
                }
                b'{' => {
                    end = close_of(code, i);
                    break;
                }
                _ => i += 1,
            }
        }
        let words: Vec<&str> = std::str::from_utf8(&code[item..end]).unwrap().split_whitespace().collect();
        let words: Vec<&str> = words.into_iter().skip_while(|w| w.starts_with("pub")).collect();
        if words.len() == 2 && words[0] == "mod" && words[1].ends_with(';') {
            mods.push(words[1].trim_end_matches(';').to_owned());
        }
        ranges.push((start, end));
    }
    (ranges, mods)
}

fn read_sources(dir: &Path, module: &[String], out: &mut Vec<(PathBuf, Vec<String>)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        if path.is_dir() {
            let mut m = module.to_vec();
            m.push(name);
            read_sources(&path, &m, out);
        } else if let Some(stem) = name.strip_suffix(".rs") {
            let mut m = module.to_vec();
            if stem != "mod" && !(module.is_empty() && stem == "lib") {
                m.push(stem.to_owned());
            }
            out.push((path, m));
        }
    }
}

/// The layers from lib.rs's doc comment: lines `//! N. \`a\`, \`b\`: …`, bottom first.
fn layers(lib: &str) -> BTreeMap<String, usize> {
    let mut rank = BTreeMap::new();
    for line in lib.lines() {
        let Some(rest) = line.strip_prefix("//! ") else { continue };
        let Some((number, rest)) = rest.split_once(". ") else { continue };
        let Ok(n) = number.trim().parse::<usize>() else { continue };
        let names = rest.split(':').next().unwrap();
        for name in names.split(',') {
            let name = name.trim();
            if let Some(name) = name.strip_prefix('`').and_then(|n| n.strip_suffix('`')) {
                rank.insert(name.to_owned(), n);
            }
        }
    }
    rank
}

/// The imports lib.rs's doc allows against the order: lines `//! Exception…: \`a\` -> \`b\``.
fn exceptions(lib: &str) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for line in lib.lines() {
        let Some(rest) = line.strip_prefix("//! Exception") else { continue };
        let names: Vec<&str> = rest.split('`').skip(1).step_by(2).collect();
        if let [from, to, ..] = names[..] {
            out.insert((from.to_owned(), to.to_owned()));
        }
    }
    out
}

/// What each name lib.rs re-exports (`pub use tokenizer::{Tokenizer, …}`) comes from.
fn root_reexports(code: &[u8], modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let text = std::str::from_utf8(code).unwrap();
    let mut out = BTreeMap::new();
    for stmt in text.split(';') {
        let Some(path) = stmt.trim().strip_prefix("pub use ") else { continue };
        let path = path.trim();
        let Some((module, rest)) = path.split_once("::") else { continue };
        if !modules.contains(module) {
            continue;
        }
        let inner = rest.trim().trim_start_matches('{').trim_end_matches('}');
        for item in inner.split(',') {
            let item = item.trim();
            let name = item.rsplit(" as ").next().unwrap().rsplit("::").next().unwrap().trim();
            if !name.is_empty() {
                out.insert(name.to_owned(), module.to_owned());
            }
        }
    }
    out
}

/// One import: the file and line it is on and the top-level module it reaches.
struct Import {
    file: PathBuf,
    line: usize,
    target: String,
}

/// The `crate::…` paths of non-test code, resolved to top-level modules.
fn imports(src: &Source, test: &[(usize, usize)], modules: &BTreeSet<String>, root: &BTreeMap<String, String>) -> Vec<Import> {
    let code = &src.code;
    let mut out = Vec::new();
    let resolve = |name: &str| {
        if modules.contains(name) {
            Some(name.to_owned())
        } else {
            root.get(name).cloned()
        }
    };
    let mut i = 0;
    while let Some(p) = code[i..].windows(5).position(|w| w == b"crate") {
        let at = i + p;
        i = at + 5;
        if (at > 0 && is_ident(code[at - 1])) || code.get(at + 5).is_some_and(|&b| is_ident(b)) {
            continue;
        }
        if test.iter().any(|&(s, e)| s <= at && at < e) {
            continue;
        }
        let j = skip_ws(code, at + 5);
        if !code[j..].starts_with(b"::") {
            continue;
        }
        let j = skip_ws(code, j + 2);
        let line = code[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        let mut targets = Vec::new();
        if code.get(j) == Some(&b'{') {
            // `crate::{a::x, b::{y, z}}`: the first segment of each top-level element.
            let end = close_of(code, j);
            let mut depth = 0;
            let mut expect = true;
            let mut k = j + 1;
            while k < end - 1 {
                match code[k] {
                    b'{' => depth += 1,
                    b'}' => depth -= 1,
                    b',' if depth == 0 => expect = true,
                    b if is_ident(b) && expect && depth == 0 => {
                        targets.push(ident_at(code, k).to_owned());
                        expect = false;
                    }
                    _ => {}
                }
                k += 1;
            }
        } else if code.get(j).is_some_and(|&b| is_ident(b)) {
            targets.push(ident_at(code, j).to_owned());
        }
        for t in targets {
            if let Some(target) = resolve(&t) {
                out.push(Import { file: src.file.clone(), line, target });
            }
        }
    }
    out
}

#[test]
fn imports_go_down_the_layers() {
    let dir =
        std::env::var_os("TOKENKIT_LAYERS_SRC").map(PathBuf::from).unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let mut files = Vec::new();
    read_sources(&dir, &[], &mut files);
    let sources: Vec<Source> =
        files.into_iter().map(|(file, module)| Source { code: strip(&std::fs::read_to_string(&file).unwrap()), file, module }).collect();
    let lib = sources.iter().find(|s| s.module.is_empty()).expect("lib.rs");
    let lib_text = std::fs::read_to_string(&lib.file).unwrap();
    let modules: BTreeSet<String> = String::from_utf8_lossy(&lib.code)
        .split(';')
        .filter_map(|stmt| {
            let words: Vec<&str> = stmt.split_whitespace().filter(|w| !w.starts_with("#[")).collect();
            let at = words.iter().position(|&w| w == "mod")?;
            (words.len() == at + 2).then(|| words[at + 1].to_owned())
        })
        .collect();
    let root = root_reexports(&lib.code, &modules);

    // Modules declared `#[cfg(test)] mod x;` and every file below them are test code.
    let mut test_modules = BTreeSet::new();
    let mut test_ranges = Vec::new();
    for s in &sources {
        let (ranges, mods) = test_items(&s.code);
        for m in mods {
            let mut path = s.module.clone();
            path.push(m);
            test_modules.insert(path);
        }
        test_ranges.push(ranges);
    }
    let mut edges: BTreeMap<(String, String), Vec<Import>> = BTreeMap::new();
    for (s, test) in sources.iter().zip(&test_ranges) {
        if s.module.is_empty() || (1..=s.module.len()).any(|n| test_modules.contains(&s.module[..n])) {
            continue;
        }
        for import in imports(s, test, &modules, &root) {
            if import.target != s.module[0] {
                edges.entry((s.module[0].clone(), import.target.clone())).or_default().push(import);
            }
        }
    }

    let rank = layers(&lib_text);
    let allowed = exceptions(&lib_text);
    let modules: BTreeSet<String> = modules.into_iter().filter(|m| !test_modules.contains(std::slice::from_ref(m))).collect();
    println!("module graph of {} (non-test code; n = paths):", dir.display());
    let mut by_rank: Vec<&String> = modules.iter().collect();
    by_rank.sort_by_key(|m| (rank.get(*m).copied().unwrap_or(usize::MAX), (*m).clone()));
    for m in &by_rank {
        let out: Vec<String> = edges.iter().filter(|((from, _), _)| from == *m).map(|((_, to), v)| format!("{to} ({})", v.len())).collect();
        let layer = rank.get(*m).map_or("?".to_owned(), |r| r.to_string());
        let out: Vec<String> = out
            .into_iter()
            .map(|e| {
                let to = e.split(' ').next().unwrap_or_default();
                let up = rank.get(to).zip(rank.get(*m)).is_some_and(|(b, a)| b > a);
                if up {
                    format!("{e} UP")
                } else {
                    e
                }
            })
            .collect();
        println!("  [{layer}] {m} -> {}", out.join(", "));
    }

    let mut problems = Vec::new();
    for m in &modules {
        if !rank.contains_key(m) {
            problems.push(format!("module `{m}` is in no layer of lib.rs's list"));
        }
    }
    for ((from, to), list) in &edges {
        let (Some(a), Some(b)) = (rank.get(from), rank.get(to)) else { continue };
        if b > a && !allowed.contains(&(from.clone(), to.clone())) {
            for i in list {
                problems.push(format!(
                    "{}:{}: `{from}` (layer {a}) imports `{to}` (layer {b}), which is above it",
                    i.file.display(),
                    i.line
                ));
            }
        }
    }
    // Within a layer: no cycle (depth-first search over the same-layer edges).
    fn cycle(node: &str, next: &BTreeMap<&str, Vec<&str>>, path: &mut Vec<String>, done: &mut BTreeSet<String>) -> Option<Vec<String>> {
        if let Some(p) = path.iter().position(|n| n == node) {
            let mut c = path[p..].to_vec();
            c.push(node.to_owned());
            return Some(c);
        }
        if !done.insert(node.to_owned()) {
            return None;
        }
        path.push(node.to_owned());
        for n in next.get(node).into_iter().flatten() {
            if let Some(c) = cycle(n, next, path, done) {
                return Some(c);
            }
        }
        path.pop();
        None
    }
    let mut same: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        if rank.contains_key(from) && rank.get(from) == rank.get(to) {
            same.entry(from.as_str()).or_default().push(to.as_str());
        }
    }
    let mut done = BTreeSet::new();
    for m in same.keys() {
        if let Some(c) = cycle(m, &same, &mut Vec::new(), &mut done) {
            problems.push(format!("a cycle within one layer: {}", c.join(" -> ")));
            break;
        }
    }
    assert!(problems.is_empty(), "{} layer violations:\n{}", problems.len(), problems.join("\n"));
}
