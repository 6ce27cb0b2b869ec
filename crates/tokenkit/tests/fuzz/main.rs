//! A mutational fuzzer for every loader (tokenizer.json, SentencePiece `.model`, tiktoken rank
//! files, vocab.txt, vocab.json + merges.txt) and for encode/decode with what loads, on the
//! stable toolchain.
//!
//! Seeds are the real fixtures in `.fixtures` (cut down to a few thousand entries so that a
//! case loads in milliseconds) and the committed regression cases in
//! `tests/data/fuzz/<target>/<case>/`. Each case is a seed with one to three mutations
//! (`mutate.rs`), chosen by a PRNG from the run's seed and the case number, so a run is
//! reproducible and a case can be regenerated from its number.
//!
//! Cases run in worker processes (this binary again, `TOKENKIT_FUZZ_WORKER=1`) with a limit on
//! their address space (`RLIMIT_AS`); the driver gives each case a time limit. A panic is
//! caught in the worker and reported; a case that overruns its time is a hang (the worker is
//! killed and replaced); a worker that dies is a memory blow-up (allocation failure) or a crash.
//! Failing cases are written to `<target tmp>/fuzz/failures/` for minimisation; a minimised
//! input becomes a regression case under `tests/data/fuzz/`. Every seed is also run unmutated:
//! fixtures must load, regression cases must not crash.
//!
//! ```sh
//! cargo test --release -p tokenkit --test fuzz                 # the short run of scripts/test.sh
//! TOKENKIT_FUZZ_CASES=20000 TOKENKIT_FUZZ_JOBS=2 cargo test --release -p tokenkit --test fuzz
//! TOKENKIT_FUZZ_SECONDS=3600 TOKENKIT_FUZZ_CASES=1000000 TOKENKIT_FUZZ_SEED=7 cargo test --release -p tokenkit --test fuzz
//! cargo test --release -p tokenkit --test fuzz -- emit DIR 12000   # write mutated files (tests/fuzz/differential.py)
//! ```
//!
//! Environment: `TOKENKIT_FUZZ_CASES` (mutated cases per target), `TOKENKIT_FUZZ_SECONDS` (stop
//! starting cases after this long), `TOKENKIT_FUZZ_SEED`, `TOKENKIT_FUZZ_TARGETS` (comma-separated
//! names), `TOKENKIT_FUZZ_TIMEOUT` (seconds per case, default 10), `TOKENKIT_FUZZ_MEM_MB` (address
//! space per worker, default 2048), `TOKENKIT_FUZZ_JOBS` (workers, default 1),
//! `TOKENKIT_FIXTURES` (default `<repo>/.fixtures`).

mod mutate;
mod targets;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::Value;
use targets::{Seed, Target, TARGETS};

/// Mutated cases per target in the default (short) run: about 45 s in release on one core.
const DEFAULT_CASES: usize = if cfg!(debug_assertions) { 30 } else { 800 };

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

struct Config {
    cases: usize,
    seconds: Option<f64>,
    seed: u64,
    timeout: Duration,
    mem_mb: u64,
    jobs: usize,
    targets: Vec<Target>,
    fixtures: PathBuf,
    regressions: PathBuf,
    work: PathBuf,
}

impl Config {
    fn from_env() -> Config {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let targets = match std::env::var("TOKENKIT_FUZZ_TARGETS") {
            Ok(list) => list
                .split(',')
                .map(|n| Target::from_name(n.trim()).unwrap_or_else(|| panic!("TOKENKIT_FUZZ_TARGETS: unknown target {n:?}")))
                .collect(),
            Err(_) => TARGETS.to_vec(),
        };
        Config {
            cases: env_or("TOKENKIT_FUZZ_CASES", DEFAULT_CASES),
            seconds: std::env::var("TOKENKIT_FUZZ_SECONDS").ok().and_then(|s| s.parse().ok()),
            seed: env_or("TOKENKIT_FUZZ_SEED", 1),
            timeout: Duration::from_secs_f64(env_or("TOKENKIT_FUZZ_TIMEOUT", 10.0)),
            mem_mb: env_or("TOKENKIT_FUZZ_MEM_MB", 2048),
            jobs: env_or("TOKENKIT_FUZZ_JOBS", 1usize).max(1),
            targets,
            fixtures: std::env::var_os("TOKENKIT_FIXTURES").map_or_else(|| root.join("../../.fixtures"), PathBuf::from),
            regressions: root.join("tests/data/fuzz"),
            work: Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz"),
        }
    }
}

/// A case: a seed unmutated (`case` None) or mutated by the PRNG state of case number `case`.
#[derive(Clone, Copy, Debug)]
struct Case {
    target: Target,
    seed: usize,
    case: Option<u64>,
}

/// The PRNG of a mutated case: from the run's seed, the target and the case number.
fn case_rng(run_seed: u64, target: Target, case: u64) -> StdRng {
    let t = TARGETS.iter().position(|x| *x == target).unwrap() as u64;
    StdRng::seed_from_u64(run_seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (t << 56) ^ case)
}

/// The seeds of every target and the JSON documents mutations may splice components from.
struct Corpus {
    seeds: BTreeMap<&'static str, Vec<Seed>>,
    donors: Vec<Value>,
}

impl Corpus {
    fn load(cfg: &Config) -> Corpus {
        let mut seeds = BTreeMap::new();
        for t in TARGETS {
            seeds.insert(t.name(), targets::seeds(t, &cfg.fixtures, &cfg.regressions));
        }
        let donors = seeds["tokenizer_json"].iter().filter_map(|s| serde_json::from_slice(&s.files[0].1).ok()).collect();
        Corpus { seeds, donors }
    }

    /// The files of a case.
    fn files(&self, cfg: &Config, c: Case) -> (usize, Vec<(String, Vec<u8>)>) {
        let seeds = &self.seeds[c.target.name()];
        match c.case {
            None => (c.seed, seeds[c.seed].files.clone()),
            Some(n) => {
                let mut rng = case_rng(cfg.seed, c.target, n);
                let i = rng.gen_range(0..seeds.len());
                let donors: Vec<&Value> = self.donors.iter().collect();
                (i, targets::mutate_seed(&mut rng, &seeds[i], &donors))
            }
        }
    }
}

fn write_case(dir: &Path, files: &[(String, Vec<u8>)]) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    for (name, data) in files {
        std::fs::write(dir.join(name), data).unwrap();
    }
}

// ---------------------------------------------------------------------------------------------
// Worker

/// The message and place of the last panic on this thread (the hook runs before unwinding).
static LAST_PANIC: Mutex<String> = Mutex::new(String::new());

fn worker(cfg: &Config) {
    // SAFETY: setrlimit with a valid struct; it only lowers this process's own limit.
    unsafe {
        let bytes = cfg.mem_mb * 1024 * 1024;
        let lim = libc::rlimit { rlim_cur: bytes, rlim_max: bytes };
        libc::setrlimit(libc::RLIMIT_AS, &lim);
    }
    std::panic::set_hook(Box::new(|info| {
        *LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner()) = info.to_string().replace('\n', " ");
    }));
    let corpus = Corpus::load(cfg);
    let dir = cfg.work.join(format!("worker-{}", std::process::id()));
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    writeln!(out, "ready").unwrap();
    out.flush().unwrap();
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let mut parts = line.split(' ');
        let target = Target::from_name(parts.next().unwrap()).unwrap();
        let seed: usize = parts.next().unwrap().parse().unwrap();
        let case = parts.next().unwrap().parse().ok();
        let (_, files) = corpus.files(cfg, Case { target, seed, case });
        write_case(&dir, &files);
        let result = std::panic::catch_unwind(|| targets::run(target, &dir, &files));
        let reply = match result {
            Ok(Ok(_)) => "loaded".to_owned(),
            Ok(Err(msg)) => format!("error\t{}", msg.replace(['\n', '\t'], " ")),
            Err(_) => format!("panic\t{}", LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner())),
        };
        writeln!(out, "{reply}").unwrap();
        out.flush().unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------------
// Driver

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    Error,
    Loaded,
    Panic,
    Hang,
    BlowUp,
    Crash,
}

const OUTCOMES: [(Outcome, &str); 6] = [
    (Outcome::Error, "clean error"),
    (Outcome::Loaded, "loaded"),
    (Outcome::Panic, "panic"),
    (Outcome::Hang, "hang"),
    (Outcome::BlowUp, "memory blow-up"),
    (Outcome::Crash, "crash"),
];

struct Worker {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    stderr: Arc<Mutex<Vec<u8>>>,
}

impl Worker {
    fn spawn() -> Worker {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .env("TOKENKIT_FUZZ_WORKER", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawning a fuzz worker");
        let stdin = child.stdin.take().unwrap();
        let (tx, lines) = mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for l in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let mut err_pipe = child.stderr.take().unwrap();
        let tail = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = err_pipe.read(&mut buf) {
                let mut t = tail.lock().unwrap();
                t.extend_from_slice(&buf[..n]);
                let excess = t.len().saturating_sub(4096);
                t.drain(..excess);
            }
        });
        let w = Worker { child, stdin, lines, stderr };
        match w.lines.recv_timeout(Duration::from_secs(600)) {
            Ok(l) if l == "ready" => w,
            other => panic!("fuzz worker did not start: {other:?} {}", String::from_utf8_lossy(&w.stderr.lock().unwrap())),
        }
    }

    /// Runs one case: its outcome and a detail (the error or panic message, the signal).
    fn run(&mut self, c: Case, timeout: Duration) -> (Outcome, String) {
        let case = c.case.map_or("-".to_owned(), |n| n.to_string());
        if writeln!(self.stdin, "{} {} {case}", c.target.name(), c.seed).and_then(|_| self.stdin.flush()).is_err() {
            return self.died();
        }
        match self.lines.recv_timeout(timeout) {
            Ok(line) => {
                let (kind, detail) = line.split_once('\t').unwrap_or((&line, ""));
                let outcome = match kind {
                    "loaded" => Outcome::Loaded,
                    "error" => Outcome::Error,
                    _ => Outcome::Panic,
                };
                (outcome, detail.to_owned())
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let _ = self.child.kill();
                let _ = self.child.wait();
                (Outcome::Hang, format!("no answer in {timeout:?}"))
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => self.died(),
        }
    }

    fn died(&mut self) -> (Outcome, String) {
        let status = self.child.wait().map(|s| format!("{s}")).unwrap_or_default();
        std::thread::sleep(Duration::from_millis(50));
        let tail = String::from_utf8_lossy(&self.stderr.lock().unwrap()).replace('\n', " ");
        let tail = tail.trim().chars().rev().take(300).collect::<String>().chars().rev().collect::<String>();
        let outcome =
            if tail.contains("memory allocation") || tail.contains("capacity overflow") { Outcome::BlowUp } else { Outcome::Crash };
        (outcome, format!("{status}: {tail}"))
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Results {
    counts: BTreeMap<(&'static str, Outcome), usize>,
    failures: Vec<(Case, Outcome, String)>,
    unloadable_fixtures: Vec<String>,
}

fn drive(cfg: &Config) -> bool {
    let start = Instant::now();
    std::fs::create_dir_all(&cfg.work).unwrap();
    let corpus = Corpus::load(cfg);
    let mut cases = Vec::new();
    for &t in &cfg.targets {
        let n = corpus.seeds[t.name()].len();
        if n == 0 {
            eprintln!("fuzz: no seeds for {} (fixtures missing from {}?)", t.name(), cfg.fixtures.display());
            continue;
        }
        cases.extend((0..n).map(|seed| Case { target: t, seed, case: None }));
    }
    // Targets interleaved, so that a run cut short by its time budget covers all of them.
    for n in 0..cfg.cases as u64 {
        for &t in &cfg.targets {
            if !corpus.seeds[t.name()].is_empty() {
                cases.push(Case { target: t, seed: 0, case: Some(n) });
            }
        }
    }
    let results = Mutex::new(Results { counts: BTreeMap::new(), failures: Vec::new(), unloadable_fixtures: Vec::new() });
    let next = AtomicUsize::new(0);
    let ran = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..cfg.jobs {
            s.spawn(|| {
                let mut w = Worker::spawn();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= cases.len() || cfg.seconds.is_some_and(|b| start.elapsed().as_secs_f64() > b) {
                        break;
                    }
                    let c = cases[i];
                    let (outcome, detail) = w.run(c, cfg.timeout);
                    ran.fetch_add(1, Ordering::Relaxed);
                    let mut r = results.lock().unwrap();
                    *r.counts.entry((c.target.name(), outcome)).or_default() += 1;
                    let seed = &corpus.seeds[c.target.name()][c.seed];
                    if c.case.is_none() && outcome != Outcome::Loaded && !seed.origin.contains("tests/data/fuzz") {
                        r.unloadable_fixtures.push(format!("{}: {detail}", seed.origin));
                    }
                    if outcome > Outcome::Loaded {
                        r.failures.push((c, outcome, detail));
                        drop(r);
                        if outcome != Outcome::Panic {
                            w = Worker::spawn();
                        }
                    }
                }
            });
        }
    });
    let r = results.into_inner().unwrap();
    report(cfg, &corpus, &r, ran.into_inner(), start.elapsed());
    r.failures.is_empty() && r.unloadable_fixtures.is_empty()
}

fn report(cfg: &Config, corpus: &Corpus, r: &Results, ran: usize, took: Duration) {
    println!(
        "fuzz: {ran} cases (seed {}, {} mutated per target, {:?} per case, {} MB per worker) in {:.1} s",
        cfg.seed,
        cfg.cases,
        cfg.timeout,
        cfg.mem_mb,
        took.as_secs_f64()
    );
    print!("| target |");
    for (_, name) in OUTCOMES {
        print!(" {name} |");
    }
    println!("\n|---|{}", "---|".repeat(OUTCOMES.len()));
    for &t in &cfg.targets {
        print!("| {} |", t.name());
        for (o, _) in OUTCOMES {
            print!(" {} |", r.counts.get(&(t.name(), o)).copied().unwrap_or(0));
        }
        println!();
    }
    for f in &r.unloadable_fixtures {
        println!("fuzz: a fixture seed does not load: {f}");
    }
    for (c, outcome, detail) in &r.failures {
        let (seed, files) = corpus.files(cfg, *c);
        let name = format!("{}-{}-{:?}", c.target.name(), c.case.map_or(format!("seed{seed}"), |n| n.to_string()), outcome);
        let dir = cfg.work.join("failures").join(&name);
        write_case(&dir, &files);
        println!(
            "fuzz: {outcome:?} in {} (seed {}): {detail}\n      input: {}",
            c.target.name(),
            corpus.seeds[c.target.name()][seed].origin,
            dir.display()
        );
    }
}

/// Writes `n` mutated cases (round-robin over the targets) to `dir/<target>/<case>/` and a
/// manifest, `dir/manifest.jsonl`, one JSON object per case: target, case, dir, files, seed.
fn emit(cfg: &Config, dir: &Path, n: u64) {
    let dir = &std::path::absolute(dir).unwrap();
    let corpus = Corpus::load(cfg);
    let live: Vec<Target> = cfg.targets.iter().copied().filter(|t| !corpus.seeds[t.name()].is_empty()).collect();
    let mut manifest = std::fs::File::create({
        std::fs::create_dir_all(dir).unwrap();
        dir.join("manifest.jsonl")
    })
    .unwrap();
    for i in 0..n {
        let target = live[(i % live.len() as u64) as usize];
        let case = i / live.len() as u64;
        let (seed, files) = corpus.files(cfg, Case { target, seed: 0, case: Some(case) });
        let case_dir = dir.join(target.name()).join(case.to_string());
        write_case(&case_dir, &files);
        let entry = serde_json::json!({
            "target": target.name(),
            "case": case,
            "dir": case_dir,
            "files": files.iter().map(|f| &f.0).collect::<Vec<_>>(),
            "seed": corpus.seeds[target.name()][seed].origin,
        });
        writeln!(manifest, "{entry}").unwrap();
    }
    println!("fuzz: wrote {n} cases to {}", dir.display());
}

fn main() {
    let cfg = Config::from_env();
    if std::env::var_os("TOKENKIT_FUZZ_WORKER").is_some() {
        return worker(&cfg);
    }
    // Arguments: `emit DIR N`; anything else (libtest flags passed by `cargo test -- ...`) is
    // ignored.
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("emit") {
        let dir = PathBuf::from(args.get(1).expect("emit DIR N"));
        let n = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10_000);
        return emit(&cfg, &dir, n);
    }
    if args.iter().any(|a| a == "--list") {
        // `cargo test -- --list` asks each test binary for its tests.
        println!("fuzz: test");
        return;
    }
    if !drive(&cfg) {
        std::process::exit(1);
    }
}
