"""Dataset tokenization, end to end with I/O: `tokenkit tokenize` (1 and 2 threads) vs a
nanoGPT-style `prepare.py` loop over tiktoken (`encode_ordinary_batch`, numpy write),
`datasets.map(num_proc=2)` with HF tokenizers, datatrove's `DocumentTokenizer` (2 tasks on 2
workers, no shuffling; skipped unless `pip install datatrove orjson` was run), and tokenkit's own in-memory
batch encode on the same texts. Every runner is its own process: wall and CPU time (the machine may be shared: CPU time shows
the work, wall time what a user waits), tokens/s, and the peak resident memory of its process tree.
The ids of each peer are checked equal to tokenkit's before the timings are reported.

    .venv/bin/python benches/python/bench_tokenize.py [--mb 100] [--tokenizers cl100k,llama3] [--skip-datasets]
        [--rss-mb 512 --rss-times 5] [--scaling-rounds 5] [--tmp DIR]
        (--tokenizers "" --rss-mb 512: the RSS check alone)

The JSONL corpus is built from the shared corpora (../shared/corpora, else .fixtures/corpora):
their paragraphs, repeated and shuffled with a fixed seed up to --mb megabytes. With --rss-mb,
peak RSS of `tokenkit tokenize -e cl100k_base` on the first --rss-mb MiB of it and on that file
concatenated --rss-times times (streaming: the peak must not grow with the input).

With --scaling-rounds N, N interleaved rounds of `tokenize -e cl100k_base` with 1 thread, with 2
threads, and two 1-thread runs side by side on the whole corpus: the last is what this machine gives
two cores doing independent work (no sharing at all), the ceiling for "2 threads vs 1". Medians.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import resource
import subprocess
import sys
import tempfile
import threading
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


def tree_rss_kib(root: int) -> int:
    """Resident memory (KiB) of `root` and its descendants now (forked workers' shared pages
    counted in each)."""
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            total += int(next(l.split()[1] for l in status.splitlines() if l.startswith("VmRSS:")))
            for task in Path(f"/proc/{pid}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, StopIteration, ValueError):
            pass
    return total


def timed(cmd: list[str], env: dict | None = None) -> tuple[float, float, float, str, str]:
    """(wall seconds, CPU seconds, peak RSS MiB, stdout, stderr) of a child process. The peak is the
    largest resident size of the process tree sampled every 50 ms (wait4's ru_maxrss would count
    the memory of this Python process, which the child inherits at fork)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            peak[0] = max(peak[0], tree_rss_kib(p.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = p.communicate()
    secs = time.perf_counter() - t
    done.set()
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"{cmd} failed: {err[-2000:]}")
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return secs, cpu, peak[0] / 1024, out, err


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

DATATROVE = r'''
import sys
from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.tokens import DocumentTokenizer
folder, out, tok_path = sys.argv[1:4]
LocalPipelineExecutor(
    pipeline=[JsonlReader(folder, glob_pattern="*.jsonl"),
              DocumentTokenizer(out, tokenizer_name_or_path=tok_path, eos_token="<|end_of_text|>",
                                shuffle_documents=False, save_final_metadata=False)],
    tasks=2, workers=2, logging_dir=out + ".logs", skip_completed=False).run()
'''

IN_MEMORY = r'''
import json, os, sys, time
os.environ.setdefault("TOKENKIT_TIKTOKEN_DIR", sys.argv[3])
import tokenkit.data
path, spec = sys.argv[1:3]
texts = [json.loads(l)["text"] for l in open(path, encoding="utf-8")]
enc = tokenkit.data.DocumentEncoder(spec)
enc.encode_batch_to_arrow(texts[:100])
t, c = time.perf_counter(), time.process_time(); n = 0
for k in range(0, len(texts), 20000):
    n += len(enc.encode_batch_to_arrow(texts[k:k + 20000]).flatten())
print(json.dumps({"secs": time.perf_counter() - t, "cpu": time.process_time() - c, "tokens": n}))
'''


def datatrove_installed() -> bool:
    try:
        import datatrove  # noqa: F401
    except ImportError:
        print("datatrove is not installed: its cell is skipped (pip install datatrove orjson)")
        return False
    return True


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--tokenizers", default="cl100k,llama3")
    ap.add_argument("--skip-datasets", action="store_true")
    ap.add_argument("--rss-mb", type=int, default=0, help="peak RSS on this many MiB and on --rss-times times that")
    ap.add_argument("--rss-times", type=int, default=5)
    ap.add_argument("--scaling-rounds", type=int, default=0, help="interleaved 1-thread / 2-thread / ceiling rounds")
    ap.add_argument("--tmp", type=Path, default=None, help="directory for the corpus and outputs (default: $TMPDIR)")
    args = ap.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        tmp = Path(tmp)
        corpus = tmp / "corpus.jsonl"
        size = build_corpus(corpus, args.mb)
        print(f"corpus: {size / 2**20:.0f} MiB of JSONL from the shared corpora ({corpus})")
        for name in filter(None, args.tokenizers.split(",")):  # --tokenizers "": the RSS check alone
            spec = ["-e", "cl100k_base"] if name == "cl100k" else ["-t", str(LLAMA3)]
            rows = []  # (label, wall s, CPU s, peak MiB)
            ref = None
            for threads in (1, 2):
                secs, cpu, rss, _, _ = timed([str(BIN), "tokenize", "-q", *spec, "--threads", str(threads), "-o",
                                           str(tmp / f"tk{threads}"), str(corpus)])
                meta = json.loads((tmp / f"tk{threads}.json").read_text())
                data = (tmp / f"tk{threads}.bin").read_bytes()
                assert ref is None or data == ref, "thread counts differ"
                ref = data
                rows.append((f"tokenkit tokenize, {threads} thread{'s' * (threads > 1)}", secs, cpu, rss))
            tokens = meta["tokens"]
            ids = np.frombuffer(ref, dtype=meta["dtype"]).astype(np.uint32)
            del data, ref
            peer_spec = "cl100k_base" if name == "cl100k" else str(LLAMA3)
            _, _, rss, out, _ = timed([py, "-c", IN_MEMORY, str(corpus), peer_spec, str(FIXTURES / "tiktoken")])
            out = json.loads(out)
            assert out["tokens"] == tokens, (out["tokens"], tokens)
            rows.append(("tokenkit in-memory encode_batch, 2 threads (encode only)", out["secs"], out["cpu"], float("nan")))
            if name == "cl100k":
                secs, cpu, rss, _, _ = timed([py, "-c", NANOGPT, str(corpus), str(tmp / "nano.bin"),
                                           str(FIXTURES / "tiktoken" / "cl100k_base.tiktoken")])
                same = np.array_equal(np.fromfile(tmp / "nano.bin", dtype=np.uint32), ids)
                rows.append((f"nanoGPT loop, tiktoken encode_ordinary_batch (ids {'identical' if same else 'DIFFER'})",
                             secs, cpu, rss))
            elif datatrove_installed():
                # datatrove splits the work by input file: the corpus in two halves, in order.
                halves = tmp / "halves"
                halves.mkdir(exist_ok=True)
                lines = corpus.read_bytes().splitlines(keepends=True)
                (halves / "a.jsonl").write_bytes(b"".join(lines[:len(lines) // 2]))
                (halves / "b.jsonl").write_bytes(b"".join(lines[len(lines) // 2:]))
                del lines
                secs, cpu, rss, _, _ = timed([py, "-c", DATATROVE, str(halves), str(tmp / "dt"), str(LLAMA3)])
                got = np.concatenate([np.fromfile(f, dtype=np.uint32) for f in sorted((tmp / "dt").glob("*.ds"))])
                same = np.array_equal(got, ids)
                # Its pool's workers are not waited for, so their CPU time is not counted: none shown.
                rows.append((f"datatrove DocumentTokenizer, 2 tasks (ids {'identical' if same else 'DIFFER'})", secs,
                             float("nan"), rss))
            if name != "cl100k" and not args.skip_datasets:
                secs, cpu, rss, _, _ = timed([py, "-c", DATASETS, str(corpus), str(tmp / "ds.bin"), str(LLAMA3)])
                same = np.array_equal(np.fromfile(tmp / "ds.bin", dtype=np.uint32), ids)
                rows.append((f"datasets.map(num_proc=2), HF tokenizers (ids {'identical' if same else 'DIFFER'})",
                             secs, cpu, rss))
            print(f"\n{name}: {tokens} tokens, {size / tokens:.2f} bytes/token")
            print(f"  {'':<78} {'wall s':>8} {'M tok/s':>8} {'CPU s':>8} {'M tok/CPU-s':>11} {'peak MiB':>9}")
            for label, secs, cpu, rss in rows:
                print(f"  {label:<78} {secs:8.2f} {tokens / secs / 1e6:8.2f} {cpu:8.2f} {tokens / cpu / 1e6:11.2f} {rss:9.1f}")
            t1, t2, mem = rows[0], rows[1], rows[2]
            print(f"  2 threads vs 1: {t1[1] / t2[1]:.2f}x wall, CPU time {t2[2] / t1[2]:.2f}x of 1 thread's; "
                  f"tokenize vs in-memory encode_batch: {mem[1] / t2[1] * 100:.0f}% of its throughput (wall), "
                  f"{mem[2] / t2[2] * 100:.0f}% (CPU); peers: "
                  + ", ".join(f"{r[1] / t2[1]:.1f}x the wall time" for r in rows[3:]), flush=True)
            for f in tmp.glob("tk*.bin"):
                f.unlink()
        if args.scaling_rounds:
            scaling(tmp, corpus, args.scaling_rounds)
        if args.rss_mb:
            rss_check(tmp, corpus, args.rss_mb, args.rss_times)


def scaling(tmp: Path, corpus: Path, rounds: int) -> None:
    """2 threads vs 1 next to the machine's own ceiling: two independent 1-thread processes at once."""
    def cmd(threads: int, out: str) -> list[str]:
        return [str(BIN), "tokenize", "-q", "-e", "cl100k_base", "--threads", str(threads), "-o", str(tmp / out), str(corpus)]

    def run(*cmds: list[str]) -> float:
        """Wall seconds of the commands started together (no RSS sampler: it would take CPU)."""
        t = time.perf_counter()
        procs = [subprocess.Popen(c, stderr=subprocess.PIPE) for c in cmds]
        for p in procs:
            if p.wait() != 0:
                raise SystemExit(f"{p.args} failed: {p.stderr.read()[-2000:]}")
        return time.perf_counter() - t

    one, two, pair = [], [], []
    for r in range(rounds):
        one.append(run(cmd(1, "s1")))
        two.append(run(cmd(2, "s2")))
        pair.append(run(cmd(1, "p0"), cmd(1, "p1")))
        print(f"  round {r + 1}: 1 thread {one[-1]:.2f} s, 2 threads {two[-1]:.2f} s, "
              f"two 1-thread runs side by side {pair[-1]:.2f} s", flush=True)
    assert (tmp / "s1.bin").read_bytes() == (tmp / "s2.bin").read_bytes() == (tmp / "p0.bin").read_bytes()
    m1, m2, mp = (statistics.median(x) for x in (one, two, pair))
    ceiling = 2 * m1 / mp
    print(f"\nscaling, cl100k, {rounds} interleaved rounds (medians): 1 thread {m1:.2f} s, 2 threads {m2:.2f} s "
          f"= {m1 / m2:.2f}x; two independent 1-thread runs at once do 2 corpora in {mp:.2f} s = {ceiling:.2f}x "
          f"(this machine's ceiling for two cores); 2 threads reach {m1 / m2 / ceiling * 100:.0f}% of it", flush=True)
    for f in ("s1", "s2", "p0", "p1"):
        for ext in (".bin", ".json"):
            (tmp / (f + ext)).unlink(missing_ok=True)


def rss_check(tmp: Path, corpus: Path, mb: int, times: int) -> None:
    """Peak RSS of `tokenkit tokenize` on `mb` MiB of the corpus (repeated when shorter) and on
    `times` copies of that."""
    small, big = tmp / "rss_small.jsonl", tmp / "rss_big.jsonl"
    with open(small, "wb") as out:
        size = 0
        while size < mb << 20:  # the corpus, again from its start while it is shorter than `mb`
            with open(corpus, "rb") as f:
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
        secs, _, rss, _, err = timed([str(BIN), "tokenize", "-q", "-e", "cl100k_base", "-o", str(tmp / "rss"), str(path)])
        meta = json.loads((tmp / "rss.json").read_text())
        gib = path.stat().st_size / 2**30
        hwm = re.search(r"peak memory ([0-9.]+) MiB", err)  # the process's own VmHWM, from its summary
        print(f"  {gib:6.2f} GiB input: peak {rss:7.1f} MiB sampled, {hwm.group(1) if hwm else '?'} MiB VmHWM, "
              f"{secs:7.1f} s, {meta['tokens'] / secs / 1e6:5.2f} M tokens/s", flush=True)
        (tmp / "rss.bin").unlink()
    big.unlink()


if __name__ == "__main__":
    main()
