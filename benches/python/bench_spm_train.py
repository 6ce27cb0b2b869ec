#!/usr/bin/env python3
"""tokenkit.sentencepiece.SentencePieceTrainer against sentencepiece's own trainer (`spm_train`'s
code, called from Python), in the same run, on the same corpus, with the same options.

Each training runs in its own process (so peak memory is that training's alone), alternating
tokenkit and sentencepiece for --rounds rounds; the table has the median wall time, the median
CPU time (user + sys: steadier than wall time on a loaded machine), the largest peak RSS
(VmHWM of the process, which includes the Python interpreter and the imported library: 16 MB
for sentencepiece, 21-25 MB for tokenkit), the training's own part of it (VmHWM less the
resident memory once the library is imported), and the ratios sentencepiece / tokenkit (above
1: tokenkit is faster or smaller). Before timing, the BPE models of the two libraries are compared piece by piece (they
must be identical); Unigram models are not (sentencepiece sums its E step in f32 across threads;
tests/python/test_sentencepiece_trainer.py checks their tokens per byte).

Usage:
  .venv/bin/python benches/python/bench_spm_train.py
  .venv/bin/python benches/python/bench_spm_train.py --models bpe --corpora en ja zh \\
      --bytes 4000000 --vocab 8000 --threads 2 --rounds 3
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CORPORA = Path(os.environ.get("TOKENKIT_CORPORA", REPO / ".fixtures" / "corpora"))
# The corpus files of each language, read in this order up to --bytes (whole lines).
SOURCES = {
    "en": ["en/bible-kjv.txt", "en/python-3.11-docs.rst.txt", "en/pride_and_prejudice.txt", "en/botchan.txt"],
    "ja": ["ja/wagahai.txt", "builtin/ja"],
    "zh": ["zh/manpages-zh_CN.txt", "zh/songci.txt", "zh/lunyu.txt", "builtin/zh"],
    "code": ["code/cpython-3.11-stdlib.py.txt", "code/rust-1.63-library-part.rs.txt"],
}

TRAIN = r"""
import json, sys
lib, corpus, prefix, options = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
if lib == "tokenkit":
    from tokenkit import sentencepiece as spm
else:
    import sentencepiece as spm
    spm.set_min_log_level(2)
def status(key):
    return int(next(l.split()[1] for l in open("/proc/self/status") if l.startswith(key)))
imported = status("VmRSS:")
spm.SentencePieceTrainer.train(input=corpus, model_prefix=prefix, **options)
# The peak RSS of this process image (ru_maxrss would include the parent's before exec), and
# the resident memory after the import.
print(status("VmHWM:"), imported)
"""


def build_corpus(lang: str, max_bytes: int, path: Path) -> int:
    """Writes the first `max_bytes` of `lang`'s sources (whole lines) to `path`; returns its size."""
    total = 0
    with open(path, "w", encoding="utf-8") as out:
        for name in SOURCES[lang]:
            source = CORPORA / name
            files = sorted(p for p in source.iterdir() if p.is_file()) if source.is_dir() else [source]
            for f in files:
                if not f.exists():
                    continue
                for line in f.read_text(encoding="utf-8").splitlines():
                    size = len(line.encode()) + 1
                    if total + size > max_bytes:
                        return total
                    out.write(line + "\n")
                    total += size
    return total


def train(lib: str, corpus: Path, prefix: Path, options: dict) -> tuple:
    """(wall seconds, CPU seconds, peak RSS MiB, peak RSS above the imported library's MiB) of one
    training in a new process."""
    start = time.perf_counter()
    # The child's log goes to a file (a pipe could fill up); its one line of stdout is read
    # after it exits, so that `wait4` can reap it and return its resource usage.
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen([sys.executable, "-c", TRAIN, lib, str(corpus), str(prefix), json.dumps(options)],
                                stdout=subprocess.PIPE, stderr=log)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        out = proc.stdout.read().decode()
        proc.stdout.close()
        log.seek(0)
        err = log.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{lib} training failed:\n{err}")
    peak, imported = (int(x) for x in out.split()[-2:])
    return wall, usage.ru_utime + usage.ru_stime, peak / 1024, (peak - imported) / 1024


def pieces(prefix: Path) -> list:
    with open(f"{prefix}.vocab", encoding="utf-8") as f:
        return f.read().splitlines()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=["bpe", "unigram"], choices=["bpe", "unigram", "char", "word"])
    ap.add_argument("--corpora", nargs="+", default=["en", "ja", "zh"], choices=sorted(SOURCES))
    ap.add_argument("--bytes", type=int, default=4_000_000, help="UTF-8 bytes of each corpus (default 4000000)")
    ap.add_argument("--vocab", type=int, default=8000, help="vocab_size (default 8000, sentencepiece's)")
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="num_threads of both (default: cores)")
    ap.add_argument("--rounds", type=int, default=3, help="trainings of each library per cell (default 3)")
    args = ap.parse_args()

    print(f"vocab_size {args.vocab}, num_threads {args.threads}, {args.rounds} rounds, medians; "
          f"ratio = sentencepiece / tokenkit")
    print(f"{'model':8} {'corpus':6} {'MB':>5}  {'wall s spm / tk':>17} {'ratio':>6}  {'CPU s spm / tk':>17} "
          f"{'ratio':>6}  {'peak MiB spm / tk':>17} {'ratio':>6}  {'training MiB spm / tk':>21} {'ratio':>6}")
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for lang in args.corpora:
            corpus = tmp / f"{lang}.txt"
            size = build_corpus(lang, args.bytes, corpus)
            for model in args.models:
                options = {"vocab_size": args.vocab, "model_type": model, "num_threads": args.threads,
                           "character_coverage": 0.9995 if lang in ("ja", "zh") else 1.0,
                           "input_sentence_size": 0, "hard_vocab_limit": False}
                runs = {"sentencepiece": [], "tokenkit": []}
                for r in range(args.rounds):
                    for lib in ("sentencepiece", "tokenkit") if r % 2 == 0 else ("tokenkit", "sentencepiece"):
                        runs[lib].append(train(lib, corpus, tmp / f"{lib}_{model}_{lang}", options))
                if model in ("bpe", "char", "word"):
                    a, b = pieces(tmp / f"sentencepiece_{model}_{lang}"), pieces(tmp / f"tokenkit_{model}_{lang}")
                    if a != b:
                        same = sum(x == y for x, y in zip(a, b))
                        print(f"{model:8} {lang:6} DIFFERENT pieces: {same}/{max(len(a), len(b))} identical")
                        failed = True
                        continue
                cols = []
                for k, agg in ((0, statistics.median), (1, statistics.median), (2, max), (3, max)):
                    s = agg(x[k] for x in runs["sentencepiece"])
                    t = agg(x[k] for x in runs["tokenkit"])
                    cols.append(f"{s:{12 if k == 3 else 8}.2f} / {t:7.2f} {s / t:5.2f}x")
                print(f"{model:8} {lang:6} {size / 1e6:5.1f}  " + "  ".join(cols), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
