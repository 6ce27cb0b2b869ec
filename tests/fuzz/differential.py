#!/usr/bin/env python3
"""Differential fuzz: mutated tokenizer files loaded by tokenkit (CLI and Python) side by side
with the reference library of each format, every load and encode with a time and memory bound.

The mutated files come from the Rust fuzzer (`crates/tokenkit/tests/fuzz`, one mutator for both
runs): `cargo test --release -p tokenkit --test fuzz -- emit DIR N` writes N cases round-robin over
the five loaders. Each case is then

- loaded by the reference: `tokenizers.Tokenizer.from_file` (tokenizer.json),
  `sentencepiece.SentencePieceProcessor` (.model), `tiktoken.Encoding` with the named
  encoding's pattern and special tokens (.tiktoken), `BertWordPieceTokenizer` (vocab.txt),
  `ByteLevelBPETokenizer` + `<|endoftext|>` (vocab.json + merges.txt);
- loaded by the tokenkit Python package and by the `tokenkit` CLI (`encode --jsonl`);
- if it loads, used to encode the sample texts; the ids are compared.

Every run is in a child process with an address-space limit (`--mem-gb`, default 4) and a time
limit (`--timeout`, default 20 s); Python runs are persistent workers that are replaced after a
hang or a death. The outcome table is printed as Markdown and the cases as JSON lines
(`DIR/results.jsonl`), disagreements first in the summary.

    .venv/bin/python tests/fuzz/differential.py --cases 12000            # about an hour on 2 cores
    .venv/bin/python tests/fuzz/differential.py --cases 500 --jobs 1     # a quick look
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import queue
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The texts each loaded tokenizer encodes (crates/tokenkit/tests/fuzz/targets.rs has the same).
TEXTS = [
    "Hello, world! The year 2024: naïve café, ÀÉÎ ß.",
    "日本語のテキスト 中文 한국어 👍🏽 \u200d\t\n  x",
    "<|endoftext|> [CLS] <s> </s> <unk> [MASK] <|begin_of_text|> ▁a ##b",
    "1234567890 3.14159 \0 \r\n a\u0301",
    "",
]
LLAMA3_PATTERN = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
LLAMA3_NAMED = ["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
                "<|reserved_special_token_1|>", "<|finetune_right_pad_id|>", "<|step_id|>",
                "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>",
                "<|python_tag|>", "<|image|>"]


def limit_memory(gb: float) -> None:
    n = int(gb * (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (n, n))


# ---------------------------------------------------------------------------------------------
# Loading, in a worker process


def tiktoken_reference(path: Path):
    import tiktoken
    import tiktoken.load
    import tiktoken_ext.openai_public as public

    name = path.name.removesuffix(".tiktoken")
    ranks = tiktoken.load.load_tiktoken_bpe(str(path))
    if name == "llama3":
        specials = LLAMA3_NAMED + [f"<|reserved_special_token_{i}|>" for i in range(2, 2 + 256 - len(LLAMA3_NAMED))]
        return tiktoken.Encoding("llama3", pat_str=LLAMA3_PATTERN, mergeable_ranks=ranks,
                                 special_tokens={s: 128000 + i for i, s in enumerate(specials)})
    public.load_tiktoken_bpe = lambda *a, **k: ranks
    return tiktoken.Encoding(**getattr(public, name)())


def encode_reference(target: str, d: Path, files: list[str]):
    if target == "tiktoken":
        enc = tiktoken_reference(d / files[0])
        return [enc.encode(t, allowed_special="all") for t in TEXTS]
    if target == "sentencepiece":
        import sentencepiece as spm

        sp = spm.SentencePieceProcessor(model_file=str(d / files[0]))
        return [sp.encode(t) for t in TEXTS]
    from tokenizers import Tokenizer
    from tokenizers.implementations import BertWordPieceTokenizer, ByteLevelBPETokenizer

    if target == "tokenizer_json":
        tok = Tokenizer.from_file(str(d / files[0]))
    elif target == "vocab_txt":
        tok = BertWordPieceTokenizer(str(d / "vocab.txt"), lowercase=True)
    else:
        tok = ByteLevelBPETokenizer(str(d / "vocab.json"), str(d / "merges.txt"))
        tok.add_special_tokens(["<|endoftext|>"])
    return [tok.encode(t).ids for t in TEXTS]


def encode_tokenkit(target: str, d: Path, files: list[str]):
    import tokenkit
    from tokenkit import tiktoken

    if target == "tiktoken":
        from tokenkit._tokenkit import TiktokenCore

        # The rank-file loader the CLI uses (`-t FILE -e NAME`), behind tiktoken's Encoding.
        core = TiktokenCore.from_file(str(d / files[0]), files[0].removesuffix(".tiktoken"))
        enc = tiktoken.Encoding._from_core(core, False)
        return [enc.encode(t, allowed_special="all") for t in TEXTS]
    path = d / ("vocab.json" if target == "gpt2_files" else files[0])
    tok = tokenkit.Tokenizer.from_file(str(path))
    return [tok.encode(t).ids for t in TEXTS]


def worker(kind: str, mem_gb: float) -> None:
    limit_memory(mem_gb)
    run = encode_reference if kind == "reference" else encode_tokenkit
    out = sys.stdout
    out.write("ready\n")
    out.flush()
    for line in sys.stdin:
        case = json.loads(line)
        try:
            ids = run(case["target"], Path(case["dir"]), case["files"])
            res = {"status": "loaded", "ids": ids}
        except BaseException as e:  # noqa: BLE001 - PanicException derives from BaseException
            name = type(e).__name__
            msg = str(e)[:300]
            panic = name == "PanicException" or "Rust panic" in msg or "panicked" in msg
            res = {"status": "panic" if panic else "error", "msg": f"{name}: {msg}"}
            if isinstance(e, MemoryError):
                res["status"] = "blowup"
        out.write(json.dumps(res) + "\n")
        out.flush()


class Worker:
    """A persistent worker process, replaced after a hang or a death."""

    def __init__(self, kind: str, mem_gb: float):
        self.kind, self.mem_gb = kind, mem_gb
        self.start()

    def start(self):
        self.p = subprocess.Popen([sys.executable, __file__, "--worker", self.kind, "--mem-gb", str(self.mem_gb)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, encoding="utf-8", cwd=ROOT)
        self.lines: queue.Queue = queue.Queue()
        self.err: collections.deque = collections.deque(maxlen=50)
        threading.Thread(target=self._pump, args=(self.p.stdout, self.lines), daemon=True).start()
        threading.Thread(target=lambda: [self.err.append(l) for l in self.p.stderr], daemon=True).start()
        first = self.lines.get(timeout=120)
        assert first == "ready\n", first

    @staticmethod
    def _pump(f, q):
        for l in f:
            q.put(l)
        q.put(None)

    def run(self, case: dict, timeout: float) -> dict:
        try:
            self.p.stdin.write(json.dumps(case) + "\n")
            self.p.stdin.flush()
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            self.p.kill()
            self.p.wait()
            self.start()
            return {"status": "hang"}
        except (BrokenPipeError, OSError):
            line = None
        if line is not None:
            return json.loads(line)
        rc = self.p.wait()
        time.sleep(0.05)
        tail = "".join(self.err)[-400:]
        self.start()
        blowup = "memory allocation" in tail or "MemoryError" in tail or "bad_alloc" in tail or "capacity overflow" in tail
        return {"status": "blowup" if blowup else "crash", "msg": f"exit {rc}: {tail}"}


def run_cli(binary: str, case: dict, timeout: float, mem_gb: float) -> dict:
    d = Path(case["dir"])
    target, files = case["target"], case["files"]
    path = d / ("vocab.json" if target == "gpt2_files" else files[0])
    args = [binary, "encode", "-t", str(path), "--jsonl"]
    if target == "tiktoken":
        args += ["-e", files[0].removesuffix(".tiktoken"), "--allowed-special", "all"]
    stdin = "".join(json.dumps(t) + "\n" for t in TEXTS)
    try:
        p = subprocess.run(args, input=stdin, capture_output=True, text=True, timeout=timeout,
                           preexec_fn=lambda: limit_memory(mem_gb), env={**os.environ, "RUST_BACKTRACE": "0"})
    except subprocess.TimeoutExpired:
        return {"status": "hang"}
    err = p.stderr[-400:]
    if p.returncode == 0:
        try:
            return {"status": "loaded", "ids": [json.loads(l)["ids"] for l in p.stdout.splitlines()]}
        except (ValueError, KeyError) as e:
            return {"status": "crash", "msg": f"unreadable output ({e}): {p.stdout[:200]}"}
    if "panicked" in p.stderr or p.returncode == 101 or "RUST_BACKTRACE" in p.stderr:
        return {"status": "panic", "msg": err}
    if "memory allocation" in p.stderr or "capacity overflow" in p.stderr:
        return {"status": "blowup", "msg": err}
    if p.returncode < 0:
        return {"status": "crash", "msg": f"signal {-p.returncode}: {err}"}
    return {"status": "error", "msg": err.strip()}


# ---------------------------------------------------------------------------------------------
# Driver

STATUSES = ["error", "loaded", "panic", "hang", "blowup", "crash"]
LABELS = {"error": "clean error", "loaded": "loaded", "panic": "**panic**", "hang": "**hang** (> timeout)",
          "blowup": "**memory blow-up**", "crash": "**crash** (other signal)"}


def emit(corpus: Path, cases: int, seed: int) -> None:
    env = {**os.environ, "TOKENKIT_FUZZ_SEED": str(seed)}
    subprocess.run(["cargo", "test", "--release", "-q", "-p", "tokenkit", "--test", "fuzz", "--", "emit",
                    str(corpus), str(cases)], cwd=ROOT, env=env, check=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=12000, help="mutated files (round-robin over the loaders)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--corpus", type=Path, default=ROOT / "target" / "fuzz-differential")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--mem-gb", type=float, default=4.0)
    ap.add_argument("--bin", default=os.environ.get("TOKENKIT_BIN", str(ROOT / "target" / "release" / "tokenkit")))
    ap.add_argument("--targets", help="comma-separated subset of the loaders")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return worker(a.worker, a.mem_gb)

    a.corpus = a.corpus.resolve()
    manifest = a.corpus / "manifest.jsonl"
    if not manifest.exists() or sum(1 for _ in manifest.open()) != a.cases:
        emit(a.corpus, a.cases, a.seed)
    cases = [json.loads(l) for l in manifest.open()]
    if a.targets:
        keep = set(a.targets.split(","))
        cases = [c for c in cases if c["target"] in keep]

    results: list[dict] = [None] * len(cases)  # type: ignore[list-item]
    todo: queue.Queue = queue.Queue()
    for i in range(len(cases)):
        todo.put(i)
    start = time.time()
    done = [0]
    lock = threading.Lock()

    def lane():
        ref, py = Worker("reference", a.mem_gb), Worker("tokenkit", a.mem_gb)
        while True:
            try:
                i = todo.get_nowait()
            except queue.Empty:
                return
            c = cases[i]
            results[i] = {"case": c, "reference": ref.run(c, a.timeout), "python": py.run(c, a.timeout),
                          "cli": run_cli(a.bin, c, a.timeout, a.mem_gb)}
            with lock:
                done[0] += 1
                if done[0] % 500 == 0:
                    print(f"  {done[0]}/{len(cases)} cases, {time.time() - start:.0f} s", file=sys.stderr)

    threads = [threading.Thread(target=lane) for _ in range(a.jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    report(results, a, time.time() - start)


def report(results: list[dict], a, took: float) -> None:
    out = a.corpus / "results.jsonl"
    with out.open("w") as f:
        for r in results:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    count = collections.Counter()
    by_target = collections.defaultdict(collections.Counter)
    for r in results:
        t = r["case"]["target"]
        ref = r["reference"]["status"]
        for side in ("cli", "python", "reference"):
            count[(side, r[side]["status"])] += 1
        for side in ("cli", "python"):
            tk = r[side]["status"]
            if tk == "loaded" and ref == "loaded":
                key = "same ids" if r[side]["ids"] == r["reference"]["ids"] else "silent difference"
            elif tk == "error" and ref in ("error", "panic"):
                key = "both reject"
            elif tk == "loaded" and ref in ("error", "panic"):
                key = "accepted by tokenkit, rejected by the reference"
            elif tk == "error" and ref == "loaded":
                key = "rejected by tokenkit, accepted by the reference"
            else:
                key = f"tokenkit {tk} / reference {ref}"
            count[(side, key)] += 1
            by_target[t][(side, key)] += 1
    n = len(results)
    print(f"\n{n} mutated files ({', '.join(f'{t}: {sum(v.values()) // 2}' for t, v in sorted(by_target.items()))}), "
          f"{took:.0f} s, timeout {a.timeout:g} s, address space {a.mem_gb:g} GB\n")
    print("| outcome | tokenkit CLI | tokenkit Python | reference |\n|---|---|---|---|")
    for s in STATUSES:
        print(f"| {LABELS[s]} | {count[('cli', s)]} | {count[('python', s)]} | {count[('reference', s)]} |")
    print("| **silently different result** (both load, ids differ) | "
          f"{count[('cli', 'silent difference')]} | {count[('python', 'silent difference')]} | |")
    for key in ["same ids", "both reject", "accepted by tokenkit, rejected by the reference",
                "rejected by tokenkit, accepted by the reference"]:
        print(f"| {key} | {count[('cli', key)]} | {count[('python', key)]} | |")
    agree = sum(count[("python", k)] for k in ("same ids", "both reject"))
    print(f"\nvalidity agreement with the reference (Python): {agree}/{n}")
    print("\nper loader (Python): " + "; ".join(
        f"{t}: " + ", ".join(f"{k[1]} {v}" for k, v in sorted(c.items()) if k[0] == "python")
        for t, c in sorted(by_target.items())))
    print(f"\ncases: {out}")


if __name__ == "__main__":
    main()
