"""Dataset tokenization, end to end with I/O: `tokenkit tokenize` (1 and 2 threads) vs a
nanoGPT-style `prepare.py` loop over tiktoken (`encode_ordinary_batch`, numpy write) and
`datasets.map(num_proc=2)` with HF tokenizers, and tokenkit's own in-memory batch encode on the
same texts. Every runner is its own process: tokens/s and its peak RSS (wait4's ru_maxrss).
The ids of each peer are checked equal to tokenkit's before the timings are reported.

    .venv/bin/python benches/python/bench_tokenize.py [--mb 100] [--tokenizers cl100k,llama3] [--skip-datasets]
        [--rss-mb 512 --rss-times 5] [--tmp DIR]

The JSONL corpus is built from the shared corpora (../shared/corpora, else .fixtures/corpora):
their paragraphs, repeated and shuffled with a fixed seed up to --mb megabytes. With --rss-mb,
peak RSS of `tokenkit tokenize -e cl100k_base` on the first --rss-mb MiB of it and on that file
concatenated --rss-times times (streaming: the peak must not grow with the input).
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

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / ".fixtures"
os.environ.setdefault("TOKENKIT_TIKTOKEN_DIR", str(FIXTURES / "tiktoken"))
BIN = Path(os.environ.get("TOKENKIT_BIN", ROOT / "target" / "release" / "tokenkit"))
LLAMA3 = FIXTURES / "registry" / "llama3" / "tokenizer.json"


def build_corpus(path: Path, mb: int) -> int:
    base = ROOT.parent / "shared" / "corpora"
    if not base.exists():
        base = FIXTURES / "corpora"
    paras = []
    for f in sorted(base.rglob("*.txt")):
        text = f.read_text(encoding="utf-8", errors="replace")
        paras += [p for p in text.split("\n\n") if p.strip()]
    rng = random.Random(0)
    size = 0
    with open(path, "w", encoding="utf-8") as out:
        while size < mb << 20:
            rng.shuffle(paras)
            for p in paras:
                line = json.dumps({"text": p}, ensure_ascii=False) + "\n"
                out.write(line)
                size += len(line.encode())
                if size >= mb << 20:
                    break
    return size


def timed(cmd: list[str], env: dict | None = None) -> tuple[float, float, str]:
    """(seconds, peak RSS MiB, stdout) of a child process."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    out, err = p.stdout.read(), p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    secs = time.perf_counter() - t
    if status != 0:
        raise SystemExit(f"{cmd} failed: {err[-2000:]}")
    return secs, ru.ru_maxrss / 1024, out


NANOGPT = r'''
import json, sys, numpy as np, tiktoken, tiktoken.load, tiktoken_ext.openai_public as op
path, out, rank_file = sys.argv[1:4]
op.load_tiktoken_bpe = lambda *a, **k: tiktoken.load.load_tiktoken_bpe(rank_file)
enc = tiktoken.Encoding(**op.cl100k_base())
with open(path, encoding="utf-8") as f, open(out, "wb") as w:
    batch = []
    def flush():
        ids = enc.encode_ordinary_batch(batch, num_threads=2)
        for x in ids:
            x.append(enc.eot_token)
        np.array([i for x in ids for i in x], dtype=np.uint32).tofile(w)
        batch.clear()
    for line in f:
        batch.append(json.loads(line)["text"])
        if len(batch) == 1024:
            flush()
    if batch:
        flush()
'''

DATASETS = r'''
import sys, numpy as np, datasets
from tokenizers import Tokenizer
path, out, tok_path = sys.argv[1:4]
tok = Tokenizer.from_file(tok_path)
eos = tok.token_to_id("<|end_of_text|>")
ds = datasets.load_dataset("json", data_files=path, split="train", cache_dir=out + ".cache")
def f(b):
    return {"ids": [e.ids + [eos] for e in tok.encode_batch(b["text"])]}
ds = ds.map(f, batched=True, num_proc=2, remove_columns=["text"])
with open(out, "wb") as w:
    for chunk in ds.iter(batch_size=10000):
        np.array([i for x in chunk["ids"] for i in x], dtype=np.uint32).tofile(w)
'''

IN_MEMORY = r'''
import json, os, sys, time
os.environ.setdefault("TOKENKIT_TIKTOKEN_DIR", sys.argv[3])
import tokenkit.data
path, spec = sys.argv[1:3]
texts = [json.loads(l)["text"] for l in open(path, encoding="utf-8")]
enc = tokenkit.data.DocumentEncoder(spec)
enc.encode_batch_to_arrow(texts[:100])
t = time.perf_counter(); n = 0
for k in range(0, len(texts), 20000):
    n += len(enc.encode_batch_to_arrow(texts[k:k + 20000]).flatten())
print(json.dumps({"secs": time.perf_counter() - t, "tokens": n}))
'''


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--tokenizers", default="cl100k,llama3")
    ap.add_argument("--skip-datasets", action="store_true")
    ap.add_argument("--rss-mb", type=int, default=0, help="peak RSS on this many MiB and on --rss-times times that")
    ap.add_argument("--rss-times", type=int, default=5)
    ap.add_argument("--tmp", type=Path, default=None, help="directory for the corpus and outputs (default: $TMPDIR)")
    args = ap.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        tmp = Path(tmp)
        corpus = tmp / "corpus.jsonl"
        size = build_corpus(corpus, args.mb)
        print(f"corpus: {size / 2**20:.0f} MiB of JSONL from the shared corpora ({corpus})")
        for name in args.tokenizers.split(","):
            spec = ["-e", "cl100k_base"] if name == "cl100k" else ["-t", str(LLAMA3)]
            rows = []
            ref = None
            for threads in (1, 2):
                secs, rss, _ = timed([str(BIN), "tokenize", "-q", *spec, "--threads", str(threads), "-o",
                                      str(tmp / f"tk{threads}"), str(corpus)])
                meta = json.loads((tmp / f"tk{threads}.json").read_text())
                data = (tmp / f"tk{threads}.bin").read_bytes()
                assert ref is None or data == ref, "thread counts differ"
                ref = data
                rows.append((f"tokenkit tokenize, {threads} thread{'s' * (threads > 1)}", secs, rss, meta["tokens"]))
            tokens = rows[0][3]
            ids = np.frombuffer(ref, dtype=meta["dtype"]).astype(np.uint32)
            peer_spec = "cl100k_base" if name == "cl100k" else str(LLAMA3)
            out = json.loads(timed([py, "-c", IN_MEMORY, str(corpus), peer_spec, str(FIXTURES / "tiktoken")])[2])
            rows.append(("tokenkit in-memory batch encode, 2 threads (no I/O)", out["secs"], float("nan"), out["tokens"]))
            if name == "cl100k":
                secs, rss, _ = timed([py, "-c", NANOGPT, str(corpus), str(tmp / "nano.bin"),
                                      str(FIXTURES / "tiktoken" / "cl100k_base.tiktoken")])
                same = np.array_equal(np.fromfile(tmp / "nano.bin", dtype=np.uint32), ids)
                rows.append((f"nanoGPT loop, tiktoken encode_ordinary_batch (ids {'identical' if same else 'DIFFER'})",
                             secs, rss, tokens))
            elif not args.skip_datasets:
                secs, rss, _ = timed([py, "-c", DATASETS, str(corpus), str(tmp / "ds.bin"), str(LLAMA3)])
                same = np.array_equal(np.fromfile(tmp / "ds.bin", dtype=np.uint32), ids)
                rows.append((f"datasets.map(num_proc=2), HF tokenizers (ids {'identical' if same else 'DIFFER'})",
                             secs, rss, tokens))
            print(f"\n{name}: {tokens} tokens, {size / tokens:.2f} bytes/token")
            best = rows[1][1]
            for label, secs, rss, n in rows:
                print(f"  {label:<78} {secs:7.2f} s {n / secs / 1e6:7.2f} M tokens/s {size / secs / 2**20:7.1f} MiB/s"
                      f"  peak {rss:7.1f} MiB  x{secs / best:5.2f} time of tokenize (2 threads)")
            print(f"  2 threads vs 1: {rows[0][1] / rows[1][1]:.2f}x; tokenize (2 threads) vs in-memory: "
                  f"{rows[2][1] / rows[1][1] * 100:.0f}% of its throughput", flush=True)
            for f in tmp.glob("tk*.bin"):
                f.unlink()
        if args.rss_mb:
            rss_check(tmp, corpus, args.rss_mb, args.rss_times)


def rss_check(tmp: Path, corpus: Path, mb: int, times: int) -> None:
    """Peak RSS of `tokenkit tokenize` on `mb` MiB of the corpus and on `times` copies of it."""
    small, big = tmp / "rss_small.jsonl", tmp / "rss_big.jsonl"
    with open(corpus, "rb") as f, open(small, "wb") as out:
        size = 0
        for line in f:
            if size >= mb << 20:
                break
            out.write(line)
            size += len(line)
    with open(big, "wb") as out:
        for _ in range(times):
            with open(small, "rb") as f:
                while chunk := f.read(64 << 20):
                    out.write(chunk)
    print(f"\npeak RSS of tokenkit tokenize -e cl100k_base (2 threads) by input size:")
    for path in (small, big):
        secs, rss, _ = timed([str(BIN), "tokenize", "-q", "-e", "cl100k_base", "-o", str(tmp / "rss"), str(path)])
        meta = json.loads((tmp / "rss.json").read_text())
        gib = path.stat().st_size / 2**30
        print(f"  {gib:6.2f} GiB input: peak {rss:7.1f} MiB, {secs:7.1f} s, {meta['tokens'] / secs / 1e6:5.2f} M tokens/s",
              flush=True)
        (tmp / "rss.bin").unlink()
    big.unlink()


if __name__ == "__main__":
    main()
