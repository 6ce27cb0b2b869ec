//! Linear time on every input: each worst-case text of
//! [`tokenkit::utils::lexers::adversarial_texts`] (a long run of every char class of
//! every fast lexer's pattern, and random mixes) encoded by every model at two sizes, with
//! the time per byte at each, their ratio (1.0 when linear) and the ratio to English prose of
//! the larger size. Side by side in the same run: the reference library of each model
//! (`tiktoken-rs` for the tiktoken encodings, the `tokenizers` crate for tokenizer.json), with
//! its ids checked identical on every text first (at the probe size), and its time when it
//! keeps up (a peer that needs more than 50 ms for the probe is not timed further: it is
//! superlinear there).
//!
//! In callgrind mode, last, a vocabulary with one long token (the 256 bytes and `x` repeated
//! as many times as the text has bytes) encoding a text one byte short of it, at both sizes:
//! the search's trie walks once went down the token's prefix from every position (quadratic),
//! and its cost per byte is shown against r50k's prose.
//!
//! Models: r50k, cl100k and o200k (tiktoken), GPT-2, Llama-3, Qwen3 and DeepSeek-V3
//! (tokenizer.json), and Llama-3 with its digit group written `[\p{N}]{1,3}`, which no fast
//! lexer recognises, so that the general regex path (Oniguruma) is measured too.
//!
//! Run: `cargo bench -p tokenkit-bench --bench linear`. Environment:
//! `TOKENKIT_BENCH_FILTER` (models whose name contains it), `TOKENKIT_LINEAR_CASES` (cases
//! whose name contains it), `TOKENKIT_LINEAR_SIZES` (`100000,1000000`: the two sizes),
//! `TOKENKIT_LINEAR_CALLGRIND=1` (instruction counts: each model runs in a child process
//! under `valgrind --tool=callgrind`, one dump per text and size; wall-clock on a shared
//! machine is noisy, instruction counts are not), with `TOKENKIT_LINEAR_PEER=1` the peer's
//! instruction counts too, at both sizes (filter the cases: the peer is superlinear on some).

use std::path::PathBuf;
use std::time::Instant;

use tokenkit::formats::tiktoken::EncodingSpec;
use tokenkit::tiktoken::Encoding;
use tokenkit::utils::lexers::adversarial_texts;
use tokenkit_bench::{corpora_dir, fixtures_dir};

/// A peer needing more than this for a text at the probe size is not timed on it.
const PEER_BUDGET_SECS: f64 = 0.05;
/// The size ids are compared at (and peers probed at).
const PROBE_BYTES: usize = 10_000;

enum Ours {
    Tiktoken(Box<Encoding>),
    Json(Box<tokenkit::Tokenizer>),
}

enum Peer {
    Tiktoken(tiktoken_rs::CoreBPE),
    Json(Box<tokenizers::Tokenizer>),
}

impl Ours {
    fn encode(&self, text: &str) -> Vec<u32> {
        match self {
            Ours::Tiktoken(e) => e.encode_ordinary(text).expect("tokenkit encodes"),
            Ours::Json(t) => t.encode(text, false).expect("tokenkit encodes").get_ids().to_vec(),
        }
    }
}

impl Peer {
    fn encode(&self, text: &str) -> Vec<u32> {
        match self {
            Peer::Tiktoken(e) => e.encode_ordinary(text),
            Peer::Json(t) => t.encode(text, false).expect("tokenizers encodes").get_ids().to_vec(),
        }
    }
}

/// The models: name, tokenkit's encoder, the peer's (loaded from the same file).
fn models(filter: &str) -> Vec<(String, Ours, Peer, &'static str)> {
    let fx = fixtures_dir();
    let mut out = Vec::new();
    type Load = fn() -> Option<tiktoken_rs::CoreBPE>;
    let tiktoken_peers: [(&str, Load); 3] = [
        ("r50k_base", || tiktoken_rs::r50k_base().ok()),
        ("cl100k_base", || tiktoken_rs::cl100k_base().ok()),
        ("o200k_base", || tiktoken_rs::o200k_base().ok()),
    ];
    for (name, peer) in tiktoken_peers {
        if !name.contains(filter) {
            continue;
        }
        let spec = EncodingSpec::named(name).expect("a known encoding");
        let path = fx.join("tiktoken").join(&spec.file);
        let (Ok(ours), Some(peer)) = (Encoding::from_spec(spec, &path), peer()) else { continue };
        out.push((name.to_owned(), Ours::Tiktoken(Box::new(ours)), Peer::Tiktoken(peer), "tiktoken-rs"));
    }
    let mut json: Vec<(String, PathBuf)> = vec![
        ("gpt2".into(), fx.join("hub/gpt2.json")),
        ("llama3".into(), fx.join("registry/llama3/tokenizer.json")),
        ("qwen3".into(), fx.join("registry/qwen3/tokenizer.json")),
        ("deepseek_v3".into(), fx.join("registry/deepseek_v3/tokenizer.json")),
    ];
    // Llama-3 on the general regex path: the same splits, a pattern no fast lexer knows.
    if let Ok(s) = std::fs::read_to_string(fx.join("registry/llama3/tokenizer.json")) {
        let tmp = std::env::temp_dir().join(format!("tokenkit-linear-llama3-onig-{}.json", std::process::id()));
        let edited = s.replace(r"\\p{N}{1,3}", r"[\\p{N}]{1,3}");
        if edited != s && std::fs::write(&tmp, edited).is_ok() {
            json.push(("llama3-onig".into(), tmp));
        }
    }
    for (name, path) in json {
        if !name.contains(filter) {
            continue;
        }
        let (Ok(ours), Ok(peer)) = (tokenkit::Tokenizer::from_file(&path), tokenizers::Tokenizer::from_file(&path)) else {
            continue;
        };
        out.push((name, Ours::Json(Box::new(ours)), Peer::Json(Box::new(peer)), "tokenizers"));
    }
    out
}

/// The fastest of `runs` encodings of `text`, in seconds (after one warm-up).
fn fastest(runs: usize, mut encode: impl FnMut() -> usize) -> f64 {
    std::hint::black_box(encode());
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(encode());
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// The measured call of callgrind mode (`--toggle-collect=*linear_measured*`): `encode` is
/// tokenkit's or the peer's encoding of `text`.
#[inline(never)]
fn linear_measured(encode: &dyn Fn(&str) -> usize, text: &str) -> usize {
    encode(text)
}

fn prose(bytes: usize) -> String {
    let text = std::fs::read_to_string(corpora_dir().join("en/pride_and_prejudice.txt")).unwrap_or_else(|_| "The quick brown fox. ".into());
    let mut s: String = text
        .chars()
        .cycle()
        .take_while({
            let mut n = 0;
            move |c| {
                n += c.len_utf8();
                n <= bytes
            }
        })
        .collect();
    s.shrink_to_fit();
    s
}

/// The texts of one run: `("prose", ...)` then the adversarial ones, at `bytes` each.
fn texts(bytes: usize, cases: &str) -> Vec<(&'static str, String)> {
    let mut v = vec![("prose", prose(bytes))];
    v.extend(adversarial_texts(bytes).into_iter().filter(|(n, _)| n.contains(cases)));
    v
}

fn main() {
    let filter = std::env::var("TOKENKIT_BENCH_FILTER").unwrap_or_default();
    let cases = std::env::var("TOKENKIT_LINEAR_CASES").unwrap_or_default();
    let sizes: Vec<usize> = std::env::var("TOKENKIT_LINEAR_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .filter(|v: &Vec<usize>| v.len() == 2)
        .unwrap_or_else(|| vec![100_000, 1_000_000]);
    let (small, large) = (sizes[0], sizes[1]);
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--callgrind-child") {
        if args[i + 1] == ONE_BYTE_SHORT {
            return one_byte_short_child(small, large);
        }
        return callgrind_child(&args[i + 1], small, large, &cases);
    }
    let callgrind = std::env::var("TOKENKIT_LINEAR_CALLGRIND").is_ok_and(|v| v == "1");
    let peer_callgrind = callgrind && std::env::var("TOKENKIT_LINEAR_PEER").is_ok_and(|v| v == "1");
    let (t_small, t_large, t_probe) = (texts(small, &cases), texts(large, &cases), texts(PROBE_BYTES, &cases));
    let unit = if callgrind { "instr/B" } else { "ns/B" };
    println!("sizes {small} and {large} bytes; {unit}; ratios per byte (large/small, and large vs prose at the large size)\n");
    let peer_at = if peer_callgrind { format!("@{small} / @{large}") } else { format!("@{small}") };
    println!("| model | text | tokenkit {unit} @{small} | @{large} | large/small | vs prose | peer | peer {unit} {peer_at} | tokenkit/peer | ids @{PROBE_BYTES} |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut worst: Vec<(f64, f64, String)> = Vec::new();
    for (name, ours, peer, peer_name) in models(&filter) {
        let counts = callgrind.then(|| callgrind_counts(&name, small, large, &cases));
        let peer_counts = peer_callgrind.then(|| callgrind_counts(&format!("{PEER}{name}"), small, large, &cases));
        let mut same = 0;
        let mut prose_large = f64::NAN;
        for (i, ((label, s), (_, l))) in t_small.iter().zip(&t_large).enumerate() {
            let probe = &t_probe[i].1;
            let ids = ours.encode(probe);
            let identical = ids == peer.encode(probe);
            same += usize::from(identical);
            let (a, b) = match &counts {
                Some(c) => (c[2 * i] / s.len() as f64, c[2 * i + 1] / l.len() as f64),
                None => {
                    (fastest(5, || ours.encode(s).len()) * 1e9 / s.len() as f64, fastest(3, || ours.encode(l).len()) * 1e9 / l.len() as f64)
                }
            };
            if i == 0 {
                prose_large = b;
            }
            // The peer, at the small size, when the probe shows it keeps up.
            let probe_secs = fastest(1, || peer.encode(probe).len());
            let peer_small =
                (!callgrind && probe_secs * (small as f64 / PROBE_BYTES as f64) < 20.0 * PEER_BUDGET_SECS && probe_secs < PEER_BUDGET_SECS)
                    .then(|| fastest(3, || peer.encode(s).len()) * 1e9 / s.len() as f64);
            let (peer_col, vs_peer) = match (&peer_counts, peer_small) {
                // Both sizes, and the ratio at the large one.
                (Some(c), _) => {
                    let (pa, pb) = (c[2 * i] / s.len() as f64, c[2 * i + 1] / l.len() as f64);
                    (format!("{pa:.1} / {pb:.1}"), format!("{:.2}x", b / pb))
                }
                (None, Some(p)) => (format!("{p:.1}"), format!("{:.2}x", a / p)),
                (None, None) => (if callgrind { "-".into() } else { "superlinear, not timed".into() }, "-".into()),
            };
            println!(
                "| {name} | {label} | {a:.1} | {b:.1} | {:.2} | {:.2} | {peer_name} | {peer_col} | {vs_peer} | {} |",
                b / a,
                b / prose_large,
                if identical { "same" } else { "DIFFER" }
            );
            worst.push((b / a, b / prose_large, format!("{name}/{label}")));
        }
        println!("| {name} | **ids identical to {peer_name}** | | | | | | | | {same}/{} |", t_small.len());
    }
    if callgrind {
        one_byte_short(small, large, &mut worst);
    }
    worst.sort_by(|x, y| y.0.total_cmp(&x.0));
    if let Some((r, p, what)) = worst.first() {
        println!("\nlargest large/small ratio: {r:.2} ({what}, {p:.2}x prose)");
    }
    worst.sort_by(|x, y| y.1.total_cmp(&x.1));
    if let Some((r, p, what)) = worst.first() {
        println!("largest ratio to prose: {p:.2} ({what}, large/small {r:.2})");
    }
}

/// Callgrind mode, child side: encodes each text once at each size inside
/// [`linear_measured`] (a warm-up outside it first), in the order the parent reads them.
/// `model` is a model's name, or [`PEER`] and the name for its peer.
fn callgrind_child(model: &str, small: usize, large: usize, cases: &str) {
    let (name, peer) = model.strip_prefix(PEER).map_or((model, false), |m| (m, true));
    let Some((_, ours, theirs, _)) = models(name).into_iter().find(|m| m.0 == name) else { return };
    let encode = |t: &str| if peer { theirs.encode(t).len() } else { ours.encode(t).len() };
    for ((_, s), (_, l)) in texts(small, cases).iter().zip(&texts(large, cases)) {
        for t in [s, l] {
            // A warm-up on the text's start builds what encoders build on first use.
            std::hint::black_box(encode(&t[..t.char_indices().nth(500).map_or(t.len(), |(i, _)| i)]));
            std::hint::black_box(linear_measured(&encode, t));
        }
    }
}

/// Prefix of a child's model name for a run of the model's peer.
const PEER: &str = "peer:";

/// Callgrind mode, parent side: the instructions of each [`linear_measured`] call of a child
/// run of `model` (one dump per call), in order.
fn callgrind_counts(model: &str, small: usize, large: usize, cases: &str) -> Vec<f64> {
    let dir = std::env::temp_dir().join(format!("tokenkit-linear-cg-{}-{model}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let exe = std::env::current_exe().expect("the bench's own path");
    let status = std::process::Command::new("valgrind")
        .args(["--tool=callgrind", "--toggle-collect=*linear_measured*", "--dump-after=linear::linear_measured"])
        .arg(format!("--callgrind-out-file={}", dir.join("cg.out").display()))
        .arg(&exe)
        .args(["--callgrind-child", model])
        .env("TOKENKIT_LINEAR_SIZES", format!("{small},{large}"))
        .env("TOKENKIT_LINEAR_CASES", cases)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("valgrind runs");
    assert!(status.success(), "valgrind on {model} failed: {status}");
    let mut files: Vec<(usize, PathBuf)> = std::fs::read_dir(&dir)
        .expect("the dumps")
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            let part = p.file_name()?.to_str()?.strip_prefix("cg.out.")?.parse().ok()?;
            Some((part, p))
        })
        .collect();
    files.sort();
    let counts = files
        .iter()
        .map(|(_, p)| {
            let text = std::fs::read_to_string(p).unwrap_or_default();
            text.lines()
                .find_map(|l| l.strip_prefix("totals:").or_else(|| l.strip_prefix("summary:")))
                .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
                .unwrap_or(f64::NAN)
        })
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    counts
}

/// The name of the one-byte-short run (see the module docs) in callgrind mode.
const ONE_BYTE_SHORT: &str = "one-byte-short";

/// An encoding whose vocabulary is the 256 bytes and `x` repeated `n` times, and a text of
/// `n - 1` times `x`: one piece, one byte short of the long token.
fn one_byte_short_case(n: usize) -> (Encoding, String) {
    let ranks: tokenkit::formats::tiktoken::Ranks = (0..=255u8).map(|b| Some(vec![b])).chain([Some(vec![b'x'; n])]).collect();
    let pattern = tokenkit::formats::tiktoken::R50K_PATTERN;
    (Encoding::new(ONE_BYTE_SHORT, pattern, ranks, &[], None).expect("a valid encoding"), "x".repeat(n - 1))
}

/// Callgrind mode, child side of the one-byte-short run: r50k on prose, then the case at each
/// size, each once inside [`linear_measured`].
fn one_byte_short_child(small: usize, large: usize) {
    let Some((_, prose_enc, _, _)) = models("r50k_base").into_iter().next() else { return };
    let text = prose(large);
    std::hint::black_box(prose_enc.encode(&text[..text.char_indices().nth(500).map_or(text.len(), |(i, _)| i)]));
    std::hint::black_box(linear_measured(&|t| prose_enc.encode(t).len(), &text));
    for n in [small, large] {
        let (enc, text) = one_byte_short_case(n);
        let ours = Ours::Tiktoken(Box::new(enc));
        std::hint::black_box(ours.encode(&text[..500.min(text.len())]));
        std::hint::black_box(linear_measured(&|t| ours.encode(t).len(), &text));
    }
}

/// Callgrind mode, parent side of the one-byte-short run: prints its row.
fn one_byte_short(small: usize, large: usize, worst: &mut Vec<(f64, f64, String)>) {
    let counts = callgrind_counts(ONE_BYTE_SHORT, small, large, "");
    let [prose_count, a, b] = counts[..] else { return };
    let (prose, a, b) = (prose_count / large as f64, a / (small - 1) as f64, b / (large - 1) as f64);
    println!("\n| vocabulary | text | tokenkit instr/B @{small} | @{large} | large/small | vs r50k prose |");
    println!("|---|---|---|---|---|---|");
    println!("| bytes + x*N | x*(N-1) | {a:.1} | {b:.1} | {:.2} | {:.2} |", b / a, b / prose);
    worst.push((b / a, b / prose, ONE_BYTE_SHORT.into()));
}
