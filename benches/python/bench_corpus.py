"""`tokenkit corpus dedup --near` against datatrove's MinHash pipeline, exact dedup against a
Python set, and `tokenkit corpus pii` against a Python `re` pass (the seed-style approach):
documents/s and peak RSS of each, in one run, on the same JSONL built from the shared corpora
(paragraphs of en/zh/code text, plus planted exact and near duplicates). Also the clusters found by
both MinHash implementations.

    .venv/bin/python benches/python/bench_corpus.py [--mb 50] [--threads 2]

Each tool runs in its own process; peak RSS is GNU time's %M (the largest process of the tree).
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
    """Paragraphs of the corpora, 10% exact copies and 10% copies with 1-5% of words replaced,
    shuffled; about `mb` MB of JSONL. Returns (documents, exact copies, near copies)."""
    rng = random.Random(seed)
    paras = []
    for rel in SOURCES:
        p = CORPORA / rel
        if p.is_file():
            text = p.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
            paras += [x.strip() for x in text.split("\n\n") if len(x.split()) >= 20]
    if not paras:
        sys.exit(f"no corpora in {CORPORA}: run scripts/setup.sh")
    rng.shuffle(paras)
    budget = int(mb * 1e6 / 1.25)
    docs, size = [], 0
    for p in paras:
        docs.append(p)
        size += len(p.encode())
        if size >= budget:
            break
    n_exact = n_near = len(docs) // 10
    extra = [rng.choice(docs) for _ in range(n_exact)]
    for _ in range(n_near):
        w = rng.choice(docs).split(" ")
        rate = rng.choice([0.01, 0.02, 0.05])
        extra.append(" ".join(f"w{rng.randrange(10**6)}" if rng.random() < rate else x for x in w))
    docs += extra
    rng.shuffle(docs)
    with path.open("w", encoding="utf-8") as f:
        for k, d in enumerate(docs):
            f.write(json.dumps({"id": str(k), "text": d}, ensure_ascii=False) + "\n")
    return len(docs), n_exact, n_near


def run_measured(cmd: list[str]) -> tuple[float, float, str]:
    """Seconds, peak RSS (MiB) and stdout of a command, the RSS from GNU time's %M (the peak of
    the process and its waited-for children; a child's own wait4 counts the parent's memory
    image from before its exec)."""
    with tempfile.NamedTemporaryFile(suffix=".rss") as rss:
        t = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss.name, *cmd], capture_output=True, text=True)
        secs = time.perf_counter() - t
        if p.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr[-3000:]}")
        return secs, int(Path(rss.name).read_text().split()[-1]) / 1024, p.stdout


DATATROVE = r'''
import sys
from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.dedup import MinhashDedupSignature, MinhashDedupBuckets, MinhashDedupCluster, MinhashDedupFilter
from datatrove.pipeline.dedup.minhash import MinhashConfig
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers.jsonl import JsonlWriter
from datatrove.utils.hashing import HashConfig
data, work, workers = sys.argv[1], sys.argv[2], int(sys.argv[3])
# xxhash 3.x refuses str in datatrove 0.10.1 ("Strings must be encoded"): sha1, as datatrove also offers.
cfg = MinhashConfig(hash_config=HashConfig(precision=64, hash_fc="sha1"), num_buckets=14, hashes_per_bucket=8, n_grams=5)
logs = f"{work}/logs"
def reader():
    return JsonlReader(data, glob_pattern="corpus.jsonl")
LocalPipelineExecutor(pipeline=[reader(), MinhashDedupSignature(output_folder=f"{work}/sigs", config=cfg)],
                      tasks=1, workers=1, logging_dir=f"{logs}/1").run()
LocalPipelineExecutor(pipeline=[MinhashDedupBuckets(input_folder=f"{work}/sigs", output_folder=f"{work}/buckets", config=cfg)],
                      tasks=cfg.num_buckets, workers=workers, logging_dir=f"{logs}/2").run()
LocalPipelineExecutor(pipeline=[MinhashDedupCluster(input_folder=f"{work}/buckets", output_folder=f"{work}/remove", config=cfg)],
                      tasks=1, workers=1, logging_dir=f"{logs}/3").run()
LocalPipelineExecutor(pipeline=[reader(), MinhashDedupFilter(input_folder=f"{work}/remove"),
                                JsonlWriter(f"{work}/out", output_filename="kept.jsonl", compression=None)],
                      tasks=1, workers=1, logging_dir=f"{logs}/4").run()
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
    args = ap.parse_args()
    if not BIN.is_file():
        sys.exit(f"{BIN} missing: cargo build --release -p tokenkit-cli")
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        data = d / "data"
        data.mkdir()
        corpus = data / "corpus.jsonl"
        n, n_exact, n_near = build_corpus(corpus, args.mb)
        size = corpus.stat().st_size
        print(f"corpus: {corpus.name}, {size / 1e6:.1f} MB, {n} documents ({n_exact} exact and {n_near} near copies planted); "
              f"threads {args.threads}; {os.cpu_count()} cores (shared)")
        py = sys.executable
        (d / "dt.py").write_text(DATATROVE)
        (d / "pii_re.py").write_text(PYTHON_RE)
        (d / "exact.py").write_text(PYTHON_EXACT)
        rows = []
        tk = [str(BIN), "corpus"]
        common = ["-q", "--threads", str(args.threads)]
        runs = [
            ("exact dedup", "tokenkit corpus dedup", tk + ["dedup", *common, "-o", str(d / "tk_exact.jsonl"), str(corpus)]),
            ("exact dedup", "Python set (blake2b)", [py, str(d / "exact.py"), str(corpus), str(d / "py_exact.jsonl")]),
            ("near dedup", "tokenkit corpus dedup --near (14x8, 5-grams)",
             tk + ["dedup", "--near", *common, "-o", str(d / "tk_near.jsonl"), str(corpus)]),
            ("near dedup", "datatrove MinHash (14x8, 5-grams, 4 stages)", [py, str(d / "dt.py"), str(data), str(d / "dt"), str(args.dt_workers)]),
            ("pii", "tokenkit corpus pii", tk + ["pii", *common, "-o", str(d / "tk_pii.jsonl"), str(corpus)]),
            ("pii", "Python re pass (7 patterns, no verification)", [py, str(d / "pii_re.py"), str(corpus), str(d / "py_pii.jsonl")]),
        ]
        for task, name, cmd in runs:
            secs, rss, _ = run_measured(cmd)
            rows.append((task, name, secs, n / secs, rss))
            print(f"{task:<12} {name:<48} {secs:8.2f} s {n / secs:>12,.0f} docs/s {rss:9.1f} MiB peak RSS", flush=True)
        for task in ("exact dedup", "near dedup", "pii"):
            a, b = [r for r in rows if r[0] == task]
            print(f"{task}: tokenkit {b[2] / a[2]:.1f}x the documents/s, {a[4] / b[4]:.2f}x the peak RSS of {b[1]}")
        tk_kept, dt_kept, all_ids = ids(d / "tk_near.jsonl"), ids(d / "dt" / "out" / "kept.jsonl"), ids(corpus)
        tk_removed, dt_removed = all_ids - tk_kept, all_ids - dt_kept
        print(f"near dedup removed: tokenkit {len(tk_removed)}, datatrove {len(dt_removed)}, both {len(tk_removed & dt_removed)}, "
              f"tokenkit only {len(tk_removed - dt_removed)}, datatrove only {len(dt_removed - tk_removed)}")
        print(f"exact dedup kept: tokenkit {len(ids(d / 'tk_exact.jsonl'))}, Python {len(ids(d / 'py_exact.jsonl'))} "
              f"(identical files: {(d / 'tk_exact.jsonl').read_bytes() == (d / 'py_exact.jsonl').read_bytes()})")


if __name__ == "__main__":
    main()
