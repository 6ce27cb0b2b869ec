#!/usr/bin/env python3
"""Training benchmark: byte-level BPE with tokenkit (CLI) and HF `tokenizers` (Python), and
`rustbpe` / sentencepiece when installed, on the same corpus in the same run; then Unigram
(Metaspace pre-tokenizer) with tokenkit, HF `UnigramTrainer` and sentencepiece's unigram.

Each trainer runs in its own process; wall time, CPU time (user + sys, steadier than wall time
on a loaded machine) and peak RSS (ru_maxrss of that process) are reported, with the ratio to HF.
tokenkit (RAYON_NUM_THREADS) and sentencepiece (num_threads) use the same number of threads,
`--threads` (default: the number of cores); HF and rustbpe use their own defaults.

Peers: `pip install -r benches/requirements-bench.txt` (rustbpe, sentencepiece, tokenizers);
they are not test dependencies.

    .venv/bin/python benches/train_bench.py                      # 4 MB subset and all corpora (~40 MB)
    .venv/bin/python benches/train_bench.py --sizes 4 --vocab 32000
    .venv/bin/python benches/train_bench.py --models unigram --sizes 4 all
    .venv/bin/python benches/train_bench.py --large-gb 2 --memory-limits 2G 500M   # the corpora grown to 2 GB
    .venv/bin/python benches/train_bench.py --large-gb 20 --memory-limits 2G --prune-words --skip unlimited hf \
        --corpus /work/tmp/large_20.0gb.txt
    TOKENKIT_BIN=/path/to/tokenkit .venv/bin/python benches/train_bench.py
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPORA = Path(os.environ.get("TOKENKIT_CORPORA", REPO / ".fixtures" / "corpora"))

HF_SCRIPT = r"""
import sys
from tokenizers import Tokenizer, models, trainers, pre_tokenizers, decoders
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
tr = trainers.BpeTrainer(vocab_size=int(sys.argv[2]), special_tokens=["<|endoftext|>"],
                         initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
tok.train([sys.argv[1]], tr)
tok.save(sys.argv[3])
"""

HF_UNIGRAM_SCRIPT = r"""
import sys
from tokenizers import Tokenizer, models, trainers, pre_tokenizers, decoders
tok = Tokenizer(models.Unigram())
tok.pre_tokenizer = pre_tokenizers.Metaspace()
tok.decoder = decoders.Metaspace()
tr = trainers.UnigramTrainer(vocab_size=int(sys.argv[2]), special_tokens=["<unk>"], unk_token="<unk>",
                             show_progress=False)
tok.train([sys.argv[1]], tr)
tok.save(sys.argv[3])
"""

RUSTBPE_SCRIPT = r"""
import sys, rustbpe
def lines():
    with open(sys.argv[1], encoding="utf-8") as f:
        yield from f
t = rustbpe.Tokenizer()
t.train_from_iterator(lines(), vocab_size=int(sys.argv[2]))
"""

SPM_SCRIPT = r"""
import sys, sentencepiece as spm
spm.SentencePieceTrainer.train(input=sys.argv[1], model_prefix=sys.argv[3], vocab_size=int(sys.argv[2]),
    model_type=sys.argv[4], minloglevel=2, input_sentence_size=0, num_threads=int(sys.argv[5]))
"""


def tokenkit_bin() -> Path:
    if os.environ.get("TOKENKIT_BIN"):
        return Path(os.environ["TOKENKIT_BIN"])
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    return target / "release" / "tokenkit"


THREADS = os.cpu_count() or 1
CPU: dict[int, float] = {}


def run(cmd: list[str]) -> tuple[float, float, int]:
    """Wall seconds, peak RSS in MiB, exit code of one process (its CPU seconds go to `CPU`,
    keyed by `id` of the returned tuple)."""
    t0 = time.perf_counter()
    env = dict(os.environ, RAYON_NUM_THREADS=str(THREADS))
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode("utf-8", "replace") if p.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        print(f"  {cmd[0]} failed ({code}): {err[-400:]}", file=sys.stderr)
    out = (wall, usage.ru_maxrss / 1024, code)
    CPU[id(out)] = usage.ru_utime + usage.ru_stime
    return out


def has_module(name: str) -> bool:
    r = subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True)
    return r.returncode == 0


def make_corpus(mb: float | None, out: Path) -> int:
    """Concatenates the corpora (streamed: the parent stays small, so that the peak RSS of the
    children, which starts at the parent's size after fork, is their own)."""
    files = sorted(p for p in CORPORA.rglob("*") if p.is_file())
    limit = None if mb is None else int(mb * 1_000_000)
    n = 0
    with out.open("wb") as w:
        for p in files:
            with p.open("rb") as r:
                for line in r:
                    if limit is not None and n + len(line) > limit:
                        return n
                    w.write(line)
                    n += len(line)
    return n


def make_large_corpus(gb: float, out: Path, seed: int = 1) -> tuple[int, int]:
    """A corpus of `gb` GB grown from the corpora: each round takes their lines in a new order
    (seeded shuffle), and in one line of ten one word gets a random three-letter suffix, so new
    distinct words keep appearing as in real text. Returns (bytes, lines)."""
    import random

    rng = random.Random(seed)
    lines = [line for p in sorted(p for p in CORPORA.rglob("*") if p.is_file()) for line in p.open("rb")]
    letters = [bytes([c]) for c in range(ord("a"), ord("z") + 1)]
    limit = int(gb * 1e9)
    n = count = 0
    with out.open("wb", buffering=1 << 22) as w:
        while n < limit:
            rng.shuffle(lines)
            for line in lines:
                if rng.random() < 0.1:
                    words = line.split(b" ")
                    k = rng.randrange(len(words))
                    if words[k][-1:] != b"\n":
                        words[k] += b"".join(rng.choices(letters, k=3))
                        line = b" ".join(words)
                w.write(line)
                n += len(line)
                count += 1
                if n >= limit:
                    break
    return n, count


def large_rows(tk: Path, gb: float, vocab: int, limits: list[str], spm_sentences: int, d: Path,
               skip: list[str], prune: bool, corpus: Path | None) -> None:
    """Byte-level BPE on a corpus grown to `gb` GB: tokenkit (without a limit and with each of
    `limits`, `--prune-words` if `prune`), HF's BpeTrainer, sentencepiece BPE on `spm_sentences`
    sampled sentences; the runs in `skip` are left out. A given `corpus` is made only when it
    does not exist, and kept."""
    keep = corpus is not None
    corpus = corpus or d / f"large_{gb}gb.txt"
    t0 = time.perf_counter()
    if corpus.exists():
        n, lines = corpus.stat().st_size, None
        print(f"corpus: {n / 1e9:.2f} GB ({corpus}, made before)")
    else:
        n, lines = make_large_corpus(gb, corpus)
        print(f"corpus: {n / 1e9:.2f} GB, {lines} lines, made in {time.perf_counter() - t0:.0f} s")
    label = f"{n / 1e9:.2f} GB"
    rows = []
    for limit in ([] if "unlimited" in skip else [None]) + limits:
        out = d / f"tk_{limit or 'default'}.json"
        extra = ["--memory-limit", limit] + (["--prune-words"] if prune else []) if limit else []
        name = f"tokenkit{' ' + ' '.join(extra) if extra else ''}"
        rows.append((name, run([str(tk), "train", "-q", "-p", "byte-level", "-v", str(vocab), *extra, "--special-tokens",
                                "<|endoftext|>", "-o", str(out), str(corpus)]), out))
    hf_out = d / "hf.json"
    if "hf" not in skip:
        rows.append(("HF tokenizers", run([sys.executable, "-c", HF_SCRIPT, str(corpus), str(vocab), str(hf_out)]), hf_out))
    if "spm" not in skip and has_module("sentencepiece"):
        script = SPM_SCRIPT.replace("input_sentence_size=0", f"input_sentence_size={spm_sentences}, shuffle_input_sentence=True")
        rows.append((f"sentencepiece-bpe ({spm_sentences} sentences)",
                     run([sys.executable, "-c", script, str(corpus), str(vocab), str(d / "spm"), "bpe", str(THREADS)]), None))
    hf = next((r for name, r, _ in rows if name == "HF tokenizers"), None)
    import json
    hf_json = json.loads(hf_out.read_text()) if hf_out.exists() else None
    for name, r, out in rows:
        wall, mem, code = r
        flag = "" if code == 0 else " (failed)"
        same = ""
        if out is not None and out != hf_out and out.exists() and hf_json is not None:
            same = " (= HF)" if json.loads(out.read_text()) == hf_json else " (differs from HF)"
        ratios = f"{hf[0] / wall:.2f}x | {mem / hf[1]:.2f}" if hf else "— | —"
        print(f"| {label} | {name}{flag}{same} | {wall:.1f} | {CPU[id(r)]:.1f} | {mem:.0f} | {ratios} |")
    if not keep:
        corpus.unlink()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", nargs="*", default=["4", "all"], help="MB of corpus, or 'all'")
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--models", nargs="*", default=["bpe", "unigram"], choices=["bpe", "unigram"])
    ap.add_argument("--unigram-vocab", type=int, default=None,
                    help="Unigram vocabulary (default 8000, HF's, and 16000 for 'all': it must hold every "
                         "char of the corpus, 10.6k on all corpora; sentencepiece cannot reach 32000 "
                         "pieces on the 4 MB subset)")
    ap.add_argument("--threads", type=int, default=THREADS,
                    help="threads of tokenkit and sentencepiece (default: number of cores)")
    ap.add_argument("--large-gb", type=float, default=None,
                    help="instead: byte-level BPE on the corpora grown to this many GB (shuffled rounds, "
                         "perturbed words), tokenkit with --memory-limits vs HF and sampled sentencepiece")
    ap.add_argument("--memory-limits", nargs="*", default=["2G"], help="tokenkit --memory-limit values (--large-gb)")
    ap.add_argument("--spm-sentences", type=int, default=1_000_000,
                    help="sentencepiece's input_sentence_size with --large-gb")
    ap.add_argument("--dir", default=None, help="where the corpus is written (default: a temporary directory)")
    ap.add_argument("--corpus", type=Path, default=None,
                    help="with --large-gb: the grown corpus file, made there when missing and kept (a 20 GB corpus "
                         "takes about 15 minutes to make)")
    ap.add_argument("--skip", nargs="*", default=[], choices=["unlimited", "hf", "spm"],
                    help="with --large-gb: runs to leave out (HF takes about 8 minutes per GB)")
    ap.add_argument("--prune-words", action="store_true",
                    help="with --large-gb: give --prune-words to the memory-limited runs (needed when the distinct "
                         "words do not fit the limit)")
    args = ap.parse_args()
    globals()["THREADS"] = args.threads
    if args.large_gb:
        with tempfile.TemporaryDirectory(dir=args.dir) as d:
            print(f"threads (tokenkit, sentencepiece): {THREADS}")
            print("| corpus | trainer | wall s | CPU s | peak MiB | speed vs HF | memory vs HF |")
            print("|---|---|---:|---:|---:|---:|---:|")
            large_rows(tokenkit_bin(), args.large_gb, args.vocab, args.memory_limits, args.spm_sentences, Path(d),
                       args.skip, args.prune_words, args.corpus)
        return
    tk = tokenkit_bin()
    if not tk.exists():
        sys.exit(f"tokenkit binary not found at {tk}: cargo build --release -p tokenkit-cli")
    peers = [("rustbpe", has_module("rustbpe")), ("sentencepiece-bpe", has_module("sentencepiece"))]
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        print(f"threads (tokenkit, sentencepiece): {THREADS}")
        print(f"| corpus | trainer | wall s | CPU s | peak MiB | speed vs HF | memory vs HF |")
        print(f"|---|---|---:|---:|---:|---:|---:|")
        for size in args.sizes:
            corpus = d / f"corpus_{size}.txt"
            n = make_corpus(None if size == "all" else float(size), corpus)
            label = f"{n / 1e6:.1f} MB"
            if "unigram" in args.models:
                unigram_rows(tk, corpus, label, args.unigram_vocab or (16000 if size == "all" else 8000), d)
            if "bpe" not in args.models:
                continue
            rows = []
            rows.append(("tokenkit", run([str(tk), "train", "-q", "-p", "byte-level", "-v", str(args.vocab),
                                          "--special-tokens", "<|endoftext|>", "-o", str(d / "tk.json"), str(corpus)])))
            rows.append(("HF tokenizers", run([sys.executable, "-c", HF_SCRIPT, str(corpus), str(args.vocab),
                                               str(d / "hf.json")])))
            for name, ok in peers:
                if not ok:
                    continue
                if name == "rustbpe":
                    rows.append((name, run([sys.executable, "-c", RUSTBPE_SCRIPT, str(corpus), str(args.vocab)])))
                else:
                    rows.append((name, run([sys.executable, "-c", "import os\n" + SPM_SCRIPT, str(corpus),
                                            str(args.vocab), str(d / "spm"), "bpe", str(THREADS)])))
            hf_wall, hf_mem = rows[1][1][0], rows[1][1][1]
            for name, r in rows:
                wall, mem, code = r
                flag = "" if code == 0 else " (failed)"
                print(f"| {label} | {name}{flag} | {wall:.2f} | {CPU[id(r)]:.2f} | {mem:.0f} | {hf_wall / wall:.2f}x | "
                  f"{mem / hf_mem:.2f} |")
            if (d / "tk.json").exists() and (d / "hf.json").exists():
                import json
                same = json.loads((d / "tk.json").read_text()) == json.loads((d / "hf.json").read_text())
                print(f"|  | tokenizer.json tokenkit == HF: {same} | | | | | |")


def unigram_rows(tk: Path, corpus: Path, label: str, vocab: int, d: Path) -> None:
    """Unigram: tokenkit, HF UnigramTrainer, sentencepiece (unigram, `THREADS` threads), vocabulary `vocab`."""
    rows = [
        ("tokenkit unigram", run([str(tk), "train", "-q", "-m", "unigram", "-p", "metaspace", "-v", str(vocab),
                                  "--special-tokens", "<unk>", "--unk-token", "<unk>", "-o", str(d / "tku.json"),
                                  str(corpus)])),
        ("HF UnigramTrainer", run([sys.executable, "-c", HF_UNIGRAM_SCRIPT, str(corpus), str(vocab),
                                   str(d / "hfu.json")])),
    ]
    if has_module("sentencepiece"):
        rows.append(("sentencepiece-unigram", run([sys.executable, "-c", "import os\n" + SPM_SCRIPT, str(corpus),
                                                   str(vocab), str(d / "spmu"), "unigram", str(THREADS)])))
    hf_wall, hf_mem = rows[1][1][0], rows[1][1][1]
    for name, r in rows:
        wall, mem, code = r
        flag = "" if code == 0 else " (failed)"
        print(f"| {label} | {name}{flag} | {wall:.2f} | {CPU[id(r)]:.2f} | {mem:.0f} | {hf_wall / wall:.2f}x | "
                  f"{mem / hf_mem:.2f} |")
    if (d / "tku.json").exists() and (d / "hfu.json").exists():
        import json
        a = {p for p, _ in json.loads((d / "tku.json").read_text())["model"]["vocab"]}
        b = {p for p, _ in json.loads((d / "hfu.json").read_text())["model"]["vocab"]}
        print(f"|  | Unigram vocabulary overlap tokenkit/HF: {len(a & b) / max(1, len(b)):.2%} | | | | | |")


if __name__ == "__main__":
    main()
