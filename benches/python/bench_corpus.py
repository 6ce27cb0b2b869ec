"""`tokenkit corpus dedup --near` against datatrove's MinHash pipeline, exact dedup against datatrove's ExactDedup and a
Python set, `tokenkit corpus pii` and `tokenkit corpus clean` against Python `re` passes (the seed-style approach):
documents/s, documents per CPU second and peak RSS of each, in one run, on the same JSONL built
from the shared corpora (documents of random sentences of the en/zh/code texts, plus planted exact
and near duplicates), and the documents removed by both MinHash implementations.

    .venv/bin/python benches/python/bench_corpus.py [--mb 50] [--threads 2] [--dt-mb MB] [--spill-memory 64M]
        [--exact-memory 4M] [--tasks exact,near,pii,clean] [--tmp DIR] [--dt-python DTVENV/bin/python]

Each tool runs in its own process; peak RSS is GNU time's %M (the largest process of the tree).
datatrove is a benchmark dependency, not a test one: pip install 'datatrove[processing]' orjson spacy, in a venv of
its own given with --dt-python.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPORA = ROOT / ".fixtures" / "corpora"
BIN = ROOT / "target" / "release" / "tokenkit"
SOURCES = ["en/bible-kjv.txt", "en/python-3.11-docs.rst.txt", "en/pride_and_prejudice.txt", "zh/manpages-zh_CN.txt",
           "code/cpython-3.11-stdlib.py.txt", "en/botchan.txt"]


def build_corpus(path: Path, mb: float, seed: int = 0) -> tuple[int, int, int]:
    """About `mb` MB of JSONL: documents of 40-400 words made of sentences drawn at random from
    the paragraphs of the corpora (so a corpus of any size has distinct documents, not copies of
    the 43 MB of shared text), with 10% exact copies and 10% copies with 1-5% of words replaced
    planted among them (each a copy of one of the last 20,000 documents). Written as it is made.
    Returns (documents, exact copies, near copies)."""
    rng = random.Random(seed)
    sentences = []
    for rel in SOURCES:
        p = CORPORA / rel
        if p.is_file():
            text = p.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
            for para in text.split("\n\n"):
                para = " ".join(para.split())
                # Sentences of prose; lines of code and of Chinese text (no spaces to cut at).
                sentences += [x for x in para.replace("。", "。\n").replace(". ", ".\n").split("\n") if len(x) >= 20]
    if not sentences:
        sys.exit(f"no corpora in {CORPORA}: run scripts/setup.sh")
    budget = int(mb * 1e6)
    recent: list[str] = []
    n = n_exact = n_near = size = 0
    with path.open("w", encoding="utf-8") as f:
        while size < budget:
            roll = rng.random()
            if roll < 0.1 and recent:
                doc = rng.choice(recent)
                n_exact += 1
            elif roll < 0.2 and recent:
                w = rng.choice(recent).split(" ")
                rate = rng.choice([0.01, 0.02, 0.05])
                doc = " ".join(f"w{rng.randrange(10**6)}" if rng.random() < rate else x for x in w)
                n_near += 1
            else:
                parts, words = [], 0
                target = rng.randint(40, 400)
                while words < target:
                    s = rng.choice(sentences)
                    parts.append(s)
                    words += s.count(" ") + 1 + len(s) // 40 * (not s.isascii())
                doc = " ".join(parts)
                if len(recent) < 20_000:
                    recent.append(doc)
                else:
                    recent[rng.randrange(20_000)] = doc
            line = json.dumps({"id": str(n), "text": doc}, ensure_ascii=False) + "\n"
            f.write(line)
            size += len(line.encode())
            n += 1
    return n, n_exact, n_near


def run_measured(cmd: list[str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system of the process and its waited-for children) and
    peak RSS (MiB) of a command, from GNU time (%M: the peak of the process and its waited-for
    children; a child's own wait4 counts the parent's memory image from before its exec). CPU
    seconds are what to compare on a shared machine, where wall clock depends on the load."""
    with tempfile.NamedTemporaryFile(suffix=".time") as tf:
        t = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", tf.name, *cmd], capture_output=True, text=True)
        secs = time.perf_counter() - t
        if p.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr[-3000:]}")
        user, system, rss = Path(tf.name).read_text().split()[-3:]
        return secs, float(user) + float(system), int(rss) / 1024


def head(src: Path, dst: Path, mb: float) -> int:
    """The first `mb` MB of the JSONL `src` (whole lines) into `dst`; returns the lines."""
    n, size, budget = 0, 0, int(mb * 1e6)
    with src.open("rb") as f, dst.open("wb") as out:
        for line in f:
            if size >= budget:
                break
            out.write(line)
            size += len(line)
            n += 1
    return n


# What both datatrove scripts start with: argv (the input folder, a work folder), a reader of the
# corpus, the hash (xxhash 3.x refuses str in datatrove 0.10.1, "Strings must be encoded": sha1,
# as datatrove also offers; 64 bits, its default precision) and one stage's run.
DT_PRELUDE = r'''
import sys
from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers.jsonl import JsonlWriter
from datatrove.utils.hashing import HashConfig
data, work = sys.argv[1], sys.argv[2]
HASH = HashConfig(precision=64, hash_fc="sha1")
def reader():
    return JsonlReader(data, glob_pattern="corpus.jsonl")
def writer():
    return JsonlWriter(f"{work}/out", output_filename="kept.jsonl", compression=None)
def stage(k, *steps, tasks=1, workers=1):
    LocalPipelineExecutor(pipeline=list(steps), tasks=tasks, workers=workers, logging_dir=f"{work}/logs/{k}").run()
'''

DATATROVE = DT_PRELUDE + r'''
from datatrove.pipeline.dedup import MinhashDedupSignature, MinhashDedupBuckets, MinhashDedupCluster, MinhashDedupFilter
from datatrove.pipeline.dedup.minhash import MinhashConfig
workers = int(sys.argv[3])
cfg = MinhashConfig(hash_config=HASH, num_buckets=14, hashes_per_bucket=8, n_grams=5)
stage(1, reader(), MinhashDedupSignature(output_folder=f"{work}/sigs", config=cfg))
stage(2, MinhashDedupBuckets(input_folder=f"{work}/sigs", output_folder=f"{work}/buckets", config=cfg),
      tasks=cfg.num_buckets, workers=workers)
stage(3, MinhashDedupCluster(input_folder=f"{work}/buckets", output_folder=f"{work}/remove", config=cfg))
stage(4, reader(), MinhashDedupFilter(input_folder=f"{work}/remove"), writer())
'''

DATATROVE_EXACT = DT_PRELUDE + r'''
from datatrove.pipeline.dedup import ExactDedupConfig, ExactDedupFilter, ExactDedupSignature, ExactFindDedups
cfg = ExactDedupConfig(content_getter=lambda doc: doc.text, hash_config=HASH)
stage(1, reader(), ExactDedupSignature(output_folder=f"{work}/sigs", config=cfg))
stage(2, ExactFindDedups(data_folder=f"{work}/sigs", output_folder=f"{work}/dups", config=cfg))
stage(3, reader(), ExactDedupFilter(data_folder=f"{work}/dups", config=cfg), writer())
'''

PYTHON_RE = r'''
import json, re, sys
PATTERNS = [
    (re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:]+:[^\s/?#@]*@\S+"), "[URL]"),
    (re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}"), "[EMAIL]"),
    (re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}(?: ?[A-Z0-9]{1,3})?\b"), "[IBAN]"),
    (re.compile(r"(?<![0-9A-Za-z])[1-8]\d{5}(?:19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}[\dXx](?![0-9A-Za-z])"), "[ID]"),
    (re.compile(r"(?<![0-9])(?:\d[ -]?){12,18}\d(?![0-9])"), "[CARD]"),
    (re.compile(r"\+[1-9]\d{0,2}[ .-]?\(?\d{1,4}\)?(?:[ .-]?\d{2,4}){1,5}|(?<![0-9])1[3-9]\d{9}(?![0-9])|\(\d{3}\) ?\d{3}-\d{4}"), "[PHONE]"),
    (re.compile(r"(?<![0-9.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?![0-9.])"), "[IP]"),
]
with open(sys.argv[1], encoding="utf-8") as f, open(sys.argv[2], "w", encoding="utf-8") as out:
    for line in f:
        d = json.loads(line)
        t = d["text"]
        for p, r in PATTERNS:
            t = p.sub(r, t)
        d["text"] = t
        out.write(json.dumps(d, ensure_ascii=False) + "\n")
'''

# The seed-style cleaning pass tokenkit corpus clean's defaults replace: control and invisible
# characters out (keeping \n and \t), NFC, runs of spaces made one and lines stripped.
PYTHON_CLEAN = r'''
import json, re, sys, unicodedata
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")
SPACES = re.compile(r"[^\S\n]+")
BLANKS = re.compile(r"\n{3,}")
with open(sys.argv[1], encoding="utf-8") as f, open(sys.argv[2], "w", encoding="utf-8") as out:
    for line in f:
        d = json.loads(line)
        t = unicodedata.normalize("NFC", CONTROLS.sub("", d["text"]))
        t = BLANKS.sub("\n\n", "\n".join(l.strip() for l in SPACES.sub(" ", t).split("\n"))).strip()
        d["text"] = t
        out.write(json.dumps(d, ensure_ascii=False) + "\n")
'''

PYTHON_EXACT = r'''
import json, sys, hashlib
seen = set()
with open(sys.argv[1], encoding="utf-8") as f, open(sys.argv[2], "w", encoding="utf-8") as out:
    for line in f:
        h = hashlib.blake2b(json.loads(line)["text"].encode(), digest_size=16).digest()
        if h not in seen:
            seen.add(h)
            out.write(line)
'''


def ids(path: Path) -> set[str]:
    return {json.loads(l)["id"] for l in path.open(encoding="utf-8")}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=50)
    ap.add_argument("--threads", type=int, default=2)
    # datatrove's bucket stage with workers=2 (a multiprocessing pool) hung here with no CPU time
    # after its signature stage (datatrove 0.10.1, spaCy tokenizer); 1 runs its tasks in turn.
    ap.add_argument("--dt-workers", type=int, default=1)
    ap.add_argument("--dt-mb", type=float, help="run datatrove (and a second tokenkit near dedup, for the clusters) on "
                    "the first DT_MB MB of the corpus only (datatrove runs about 400 documents/s here)")
    ap.add_argument("--spill-memory", default="64M",
                    help="a second tokenkit near dedup with this --memory-limit (band keys spilled to disk)")
    ap.add_argument("--exact-memory", default="4M",
                    help="a second tokenkit exact dedup with this --memory-limit (two passes, hashes sorted on disk)")
    ap.add_argument("--tasks", default="exact,near,pii,clean", help="the tasks to run (comma-separated: exact, near, pii, clean)")
    ap.add_argument("--tmp", help="directory for the corpus and outputs (default: the system's temporary directory)")
    ap.add_argument("--dt-python", default=sys.executable,
                    help="the Python that has datatrove (a venv of its own keeps its dependencies out of the test venv)")
    args = ap.parse_args()
    if not BIN.is_file():
        sys.exit(f"{BIN} missing: cargo build --release -p tokenkit-cli")
    have_dt = subprocess.run([args.dt_python, "-c", "import datatrove"], capture_output=True).returncode == 0
    if not have_dt:
        print(f"datatrove is not installed for {args.dt_python}: its cell is skipped (pip install 'datatrove[processing]' orjson spacy)")
    with tempfile.TemporaryDirectory(dir=args.tmp) as d:
        d = Path(d)
        data = d / "data"
        data.mkdir()
        corpus = data / "corpus.jsonl"
        t = time.perf_counter()
        n, n_exact, n_near = build_corpus(corpus, args.mb)
        size = corpus.stat().st_size
        print(f"corpus: {size / 1e6:.1f} MB, {n:,} documents ({n_exact:,} exact and {n_near:,} near copies planted; built in "
              f"{time.perf_counter() - t:.0f} s); threads {args.threads}; {os.cpu_count()} cores (shared)", flush=True)
        dt_data, dt_n = data, n
        if args.dt_mb is not None and args.dt_mb * 1e6 < size:
            dt_data = d / "dt_data"
            dt_data.mkdir()
            dt_n = head(corpus, dt_data / "corpus.jsonl", args.dt_mb)
            print(f"datatrove's slice: the first {dt_n:,} documents ({(dt_data / 'corpus.jsonl').stat().st_size / 1e6:.1f} MB)")
        py = sys.executable
        (d / "dt.py").write_text(DATATROVE)
        (d / "pii_re.py").write_text(PYTHON_RE)
        (d / "clean_re.py").write_text(PYTHON_CLEAN)
        (d / "exact.py").write_text(PYTHON_EXACT)
        (d / "dt_exact.py").write_text(DATATROVE_EXACT)
        tasks = set(args.tasks.split(","))
        rows = []
        tk = [str(BIN), "corpus"]
        common = ["-q", "--threads", str(args.threads)]
        near = ["dedup", "--near", *common]
        runs = []
        if "exact" in tasks:
            runs += [
                ("exact dedup", "tokenkit corpus dedup", n, tk + ["dedup", *common, "-o", str(d / "tk_exact.jsonl"), str(corpus)]),
                ("exact dedup", f"  the same, --memory-limit {args.exact_memory}", n,
                 tk + ["dedup", *common, "--memory-limit", args.exact_memory, "-o", str(d / "tk_exact_spill.jsonl"), str(corpus)]),
                ("exact dedup", "Python set (blake2b)", n, [py, str(d / "exact.py"), str(corpus), str(d / "py_exact.jsonl")]),
            ]
            if have_dt:
                runs.append(("exact dedup", "datatrove ExactDedup (3 stages)", n,
                             [args.dt_python, str(d / "dt_exact.py"), str(data), str(d / "dt_exact")]))
        if "near" in tasks:
            runs += [
                ("near dedup", "tokenkit corpus dedup --near (14x8, 5-grams)", n, tk + [*near, "-o", str(d / "tk_near.jsonl"), str(corpus)]),
                ("near dedup", f"  the same, --memory-limit {args.spill_memory}", n,
                 tk + [*near, "--memory-limit", args.spill_memory, "-o", str(d / "tk_near_spill.jsonl"), str(corpus)]),
            ]
        if "near" in tasks and dt_data != data:
            runs.append(("near dedup", "  the same on datatrove's slice", dt_n,
                         tk + [*near, "-o", str(d / "tk_near_slice.jsonl"), str(dt_data / "corpus.jsonl")]))
        if "near" in tasks and have_dt:
            # Another seed (other permutations): how far two MinHash runs of one implementation
            # disagree on the documents near the threshold, the yardstick for the comparison.
            slice_in = dt_data / "corpus.jsonl"
            runs.append(("near dedup", "  the same with --seed 2", dt_n,
                         tk + [*near, "--seed", "2", "-o", str(d / "tk_near_seed2.jsonl"), str(slice_in)]))
            runs.append(("near dedup", "datatrove MinHash (14x8, 5-grams, 4 stages)", dt_n,
                         [args.dt_python, str(d / "dt.py"), str(dt_data), str(d / "dt"), str(args.dt_workers)]))
        if "pii" in tasks:
            runs += [
                ("pii", "tokenkit corpus pii", n, tk + ["pii", *common, "-o", str(d / "tk_pii.jsonl"), str(corpus)]),
                ("pii", "Python re pass (7 patterns, no verification)", n,
                 [py, str(d / "pii_re.py"), str(corpus), str(d / "py_pii.jsonl")]),
            ]
        if "clean" in tasks:
            runs += [
                ("clean", "tokenkit corpus clean (controls, NFC, spaces)", n,
                 tk + ["clean", *common, "-o", str(d / "tk_clean.jsonl"), str(corpus)]),
                ("clean", "Python pass (re + unicodedata)", n, [py, str(d / "clean_re.py"), str(corpus), str(d / "py_clean.jsonl")]),
            ]
        print(f"{'task':<12} {'tool':<48} {'docs':>10} {'wall s':>8} {'CPU s':>8} {'docs/s':>10} {'docs/CPU s':>10} {'peak RSS':>10}")
        for task, name, docs, cmd in runs:
            secs, cpu, rss = run_measured(cmd)
            rows.append((task, name, docs / secs, docs / cpu, rss))
            print(f"{task:<12} {name:<48} {docs:>10,} {secs:8.2f} {cpu:8.2f} {docs / secs:>10,.0f} {docs / cpu:>10,.0f} {rss:7.1f} MiB",
                  flush=True)
        for task in ("exact dedup", "near dedup", "pii", "clean"):
            mine = [r for r in rows if r[0] == task and r[1].startswith("tokenkit")]
            peers = [r for r in rows if r[0] == task and not r[1].startswith(("tokenkit", " "))]
            for a in mine:
                for b in peers:
                    print(f"{task}: tokenkit {a[2] / b[2]:.1f}x the documents/s ({a[3] / b[3]:.1f}x per CPU second) of {b[1]}; "
                          f"peak RSS {a[4]:.0f} MiB against {b[4]:.0f} MiB")
        if "near" in tasks and have_dt:
            tk_near = d / ("tk_near_slice.jsonl" if dt_data != data else "tk_near.jsonl")
            all_ids = ids(dt_data / "corpus.jsonl")
            tk_removed = all_ids - ids(tk_near)
            for other, path in (("datatrove", d / "dt" / "out" / "kept.jsonl"), ("tokenkit --seed 2", d / "tk_near_seed2.jsonl")):
                removed = all_ids - ids(path)
                both = len(tk_removed & removed)
                print(f"near dedup removed: tokenkit {len(tk_removed):,}, {other} {len(removed):,}, both {both:,}, "
                      f"tokenkit only {len(tk_removed - removed):,}, {other} only {len(removed - tk_removed):,} "
                      f"(agreement {both / max(1, len(tk_removed | removed)):.2%} of the documents either removed)")
        if "near" in tasks:
            print(f"near dedup with --memory-limit {args.spill_memory}: the same output "
                  f"{(d / 'tk_near.jsonl').read_bytes() == (d / 'tk_near_spill.jsonl').read_bytes()}")
        if "clean" in tasks:
            texts = lambda p: [json.loads(l)["text"] for l in p.open(encoding="utf-8")]  # noqa: E731
            a, b = texts(d / "tk_clean.jsonl"), texts(d / "py_clean.jsonl")
            print(f"clean: {sum(x == y for x, y in zip(a, b)):,} of {len(b):,} documents the same text as the Python pass "
                  f"({len(a):,} written by tokenkit)")
        if "exact" in tasks:
            tk_exact = (d / "tk_exact.jsonl").read_bytes()
            print(f"exact dedup with --memory-limit {args.exact_memory}: the same output {tk_exact == (d / 'tk_exact_spill.jsonl').read_bytes()}")
            print(f"exact dedup kept: tokenkit {len(ids(d / 'tk_exact.jsonl')):,}, Python {len(ids(d / 'py_exact.jsonl')):,} "
                  f"(identical files: {tk_exact == (d / 'py_exact.jsonl').read_bytes()})")
            if have_dt:
                # datatrove writes the documents again (its own JSON): compare the ids kept.
                tk_ids, dt_ids = ids(d / "tk_exact.jsonl"), ids(d / "dt_exact" / "out" / "kept.jsonl")
                print(f"exact dedup kept: tokenkit {len(tk_ids):,}, datatrove {len(dt_ids):,}, both {len(tk_ids & dt_ids):,} "
                      f"(the same documents: {tk_ids == dt_ids})")


if __name__ == "__main__":
    main()
