#!/usr/bin/env python3
"""tokenkit.sentencepiece against the sentencepiece package, from Python, in one process.

For each .model and each corpus (its first --bytes of UTF-8), the calls people make, ids only:

  lines      sp.encode(list_of_lines, num_threads=T)     one call for the whole batch
  docs       sp.encode(list_of_documents, num_threads=T) documents of --doc-lines lines
  per line   [sp.encode(line) for line in lines]         one call per line (T=1 only)
  decode     sp.decode(list_of_id_lists, num_threads=T)

T is 1 and 2 (`num_threads`, which both libraries take per call; tokenkit's 2 is its process
pool, one thread per core). Before timing, the ids (and decoded texts) of both libraries are
compared: a model and corpus where any differ is reported (how many lines, the first one) and
not timed, and the run exits with status 1. Each timing is the median of --rounds rounds in which
the two libraries alternate (so both see the same machine load); MB/s are of UTF-8 input, the
ratio is tokenkit's speed over sentencepiece's.

Usage:
  .venv/bin/python benches/python/bench_sentencepiece.py
  .venv/bin/python benches/python/bench_sentencepiece.py --models llama2 xlnet --corpora en ja \\
      --bytes 1000000 --rounds 7 --threads 1 2
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import sentencepiece

from tokenkit import sentencepiece as tk_spm

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / ".fixtures"
MODELS = {
    "llama2": "hub/llama2.model",
    "mistral03": "hub/mistral03.model",
    "xlnet": "hub/xlnet_base_cased.model",
    "albert": "registry/albert/spiece.model",
    "botchan_bpe": "registry/sentencepiece/botchan_en_bpe_1000.model",
    "botchan_unigram": "registry/sentencepiece/botchan_en_unigram_1000.model",
    "kyoto_ja": "registry/sentencepiece/kyoto_ja_unigram_8000.model",
}
CORPORA = {
    "en": "corpora/en/pride_and_prejudice.txt",
    "ja": "corpora/ja/wagahai.txt",
    "zh": "corpora/zh/manpages-zh_CN.txt",
    "code": "corpora/code/cpython-3.11-stdlib.py.txt",
}


def corpus_lines(name: str, max_bytes: int) -> list:
    lines, total = [], 0
    with open(FIXTURES / CORPORA[name], encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            size = len(line.encode()) + 1
            if total + size > max_bytes:
                break
            lines.append(line)
            total += size
    return lines


def interleaved(calls: dict, rounds: int) -> dict:
    """Median seconds of each call over `rounds` rounds, the calls alternating within a round,
    after one warm-up round."""
    times = {name: [] for name in calls}
    for r in range(rounds + 1):
        for name, fn in calls.items():
            t0 = time.perf_counter()
            fn()
            if r:
                times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    ap.add_argument("--corpora", nargs="+", default=["en", "ja", "code"], choices=list(CORPORA))
    ap.add_argument("--bytes", type=int, default=500_000, help="UTF-8 bytes of each corpus (default 500000)")
    ap.add_argument("--doc-lines", type=int, default=50, help="lines per document (default 50)")
    ap.add_argument("--rounds", type=int, default=5, help="timed rounds per measurement (default 5)")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args()

    print(f"sentencepiece {sentencepiece.__version__}; {args.bytes} bytes per corpus, median of {args.rounds} "
          f"interleaved rounds; MB/s of UTF-8 input; ratio = tokenkit / sentencepiece")
    print(f"{'model':16} {'corpus':6} {'workload':10} {'T':>2} {'sentencepiece':>14} {'tokenkit':>10} {'ratio':>7}")
    ratios, mismatches = [], 0
    for model in args.models:
        path = FIXTURES / MODELS[model]
        if not path.exists():
            print(f"{model}: {path} missing (run scripts/setup.sh)", file=sys.stderr)
            return 1
        ref = sentencepiece.SentencePieceProcessor(model_file=str(path))
        tk = tk_spm.SentencePieceProcessor(model_file=str(path))
        for corpus in args.corpora:
            lines = corpus_lines(corpus, args.bytes)
            docs = ["\n".join(lines[i:i + args.doc_lines]) for i in range(0, len(lines), args.doc_lines)]
            mb = sum(len(line.encode()) + 1 for line in lines) / 1e6
            ids = ref.encode(lines, num_threads=1)
            checks = [("ids of lines", ids, tk.encode(lines, num_threads=1)),
                      ("ids of documents", ref.encode(docs), tk.encode(docs)),
                      ("ids line by line", ids, [tk.encode(line) for line in lines]),
                      ("decoded lines", ref.decode(ids), tk.decode(ids))]
            differ = False
            for what, expected, got in checks:
                bad = [i for i, (e, g) in enumerate(zip(expected, got)) if e != g]
                if bad or len(expected) != len(got):
                    differ = True
                    print(f"{model:16} {corpus:6} {what}: {len(bad)}/{len(expected)} differ (first: item {bad[:1]}); "
                          "not timed", flush=True)
            if differ:
                mismatches += 1
                continue
            for threads in args.threads:
                workloads = {
                    "lines": lambda sp: sp.encode(lines, num_threads=threads),
                    "docs": lambda sp: sp.encode(docs, num_threads=threads),
                    "decode": lambda sp: sp.decode(ids, num_threads=threads),
                }
                if threads == 1:
                    workloads["per line"] = lambda sp: [sp.encode(line) for line in lines]
                for workload, call in workloads.items():
                    t = interleaved({"sp": lambda: call(ref), "tk": lambda: call(tk)}, args.rounds)
                    ratio = t["sp"] / t["tk"]
                    ratios.append(ratio)
                    print(f"{model:16} {corpus:6} {workload:10} {threads:>2} {mb / t['sp']:>10.2f} MB/s "
                          f"{mb / t['tk']:>6.2f} MB/s {ratio:>6.2f}x", flush=True)
    print(f"ratio: min {min(ratios):.2f}x, median {statistics.median(ratios):.2f}x, max {max(ratios):.2f}x "
          f"over {len(ratios)} measurements")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
