#!/usr/bin/env python3
"""Load-time benchmark: how long each tokenizer file takes from the file read to the first
encode, tokenkit against the library that owns the format, on the same file, in one run.

For every file it measures, in fresh child processes (the library imported first, not timed):

  cold   the first load + first encode of the process (the file is in the page cache: a
         warm-up child reads it first); median over --repeat children
  warm   a further load + first encode in the same process; median over --repeat loads
  rss    the growth of the process's resident memory over one load (MB), as a cost per tokenizer
  anon   the part of it that is the process's own (RssAnon): the rest is file pages (a mapped
         table-cache entry, and the library's code on its first use) that every process loading
         the same tokenizer shares
  rss2, anon2  the same over the second load of the process (the library's code already in):
         what each further tokenizer costs (a mapped entry's pages count again in RSS, though
         they are the same pages of the page cache)

and prints the ratio peer/tokenkit (above 1: tokenkit loads faster). The files:

  cl100k_base, o200k_base    tiktoken.Encoding (rank file read with tiktoken's own loader)
                             vs tokenkit's TiktokenCore.from_file (tiktoken mode)
  Llama-3, GPT-2, BERT,      tokenizers.Tokenizer.from_file vs tokenkit.Tokenizer.from_file
  XLNet (Unigram)
  tokenizer.json
  Llama-2 .model             sentencepiece.SentencePieceProcessor vs tokenkit.sentencepiece's
  Tekken tekken.json         mistral_common's Tekkenizer.from_file vs tokenkit.Tokenizer.from_file
  GGUF (llama-bpe vocab)     tokenkit only (no reference library reads it in this environment)
  ALBERT, XLNet, Mistral     as Llama-2's (Mistral 7B v0.3 is BPE; Kyoto is sentencepiece's
  v0.3, Kyoto .model         own Japanese Unigram test model)
  pickled Llama-3, BERT      pickle.loads of a tokenizer pickled by another process (what a
                             worker process pays) vs tokenizers' pickle

and the command-line cell: `tokenkit encode -e cl100k_base < 8MB-of-English > ids.json` (wall
clock of the whole process: load, encode, write JSON), against tiktoken's in-process
`encode_ordinary` of the same text (load not included), median of --repeat runs each.

Usage:
  .venv/bin/python benches/python/bench_load.py [--repeat 5] [--only cl100k o200k ...] [--no-cli]
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
FIXTURES = Path(os.environ.get("TOKENKIT_FIXTURES", REPO / ".fixtures"))
CLI = Path(os.environ.get("TOKENKIT_CLI", REPO / "target" / "release" / "tokenkit"))
TEXT = "Hello world, this is the first encode: 12345 héllo 你好."

# name -> (fixture, peer kind, tokenkit kind)
CASES = {
    "cl100k": ("tiktoken/cl100k_base.tiktoken", "tiktoken:cl100k_base", "tk-tiktoken:cl100k_base"),
    "o200k": ("tiktoken/o200k_base.tiktoken", "tiktoken:o200k_base", "tk-tiktoken:o200k_base"),
    "llama3-json": ("registry/llama3/tokenizer.json", "hf", "tk"),
    "gpt2-json": ("hub/gpt2.json", "hf", "tk"),
    "bert-json": ("registry/bert_uncased/tokenizer.json", "hf", "tk"),
    "xlnet-json": ("hub/xlnet_base_cased.json", "hf", "tk"),
    "llama2-model": ("hub/llama2.model", "spm", "tk-spm"),
    "albert-model": ("registry/albert/spiece.model", "spm", "tk-spm"),
    "xlnet-model": ("hub/xlnet_base_cased.model", "spm", "tk-spm"),
    "mistral-model": ("hub/mistral03.model", "spm", "tk-spm"),
    "kyoto-unigram": ("registry/sentencepiece/kyoto_ja_unigram_8000.model", "spm", "tk-spm"),
    "tekken": ("registry/tekken/tekken_240911.json", "mistral", "tk"),
    "gguf-llama-bpe": ("registry/gguf/ggml-vocab-llama-bpe.gguf", None, "tk"),
    "pickled-llama3": ("registry/llama3/tokenizer.json", "hf-pickle", "tk-pickle"),
    "pickled-bert": ("registry/bert_uncased/tokenizer.json", "hf-pickle", "tk-pickle"),
}

# The child: imports the library, then times `load(); encode(TEXT)` `n` times in one process and
# prints the seconds of each and the RSS growth of the first, as JSON.
CHILD = r'''
import json, os, sys, time, pickle
kind, path, n, text = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

def anon():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith("RssAnon:"))

if kind.startswith("tiktoken:"):
    import tiktoken, tiktoken.load, tiktoken_ext.openai_public as op
    name = kind.split(":", 1)[1]
    op.load_tiktoken_bpe = lambda *_a, **_k: tiktoken.load.load_tiktoken_bpe(path)
    def load():
        return tiktoken.Encoding(**getattr(op, name)())
    enc = lambda t, s: t.encode_ordinary(s)
elif kind.startswith("tk-tiktoken:"):
    from tokenkit._tokenkit import TiktokenCore
    name = kind.split(":", 1)[1]
    load = lambda: TiktokenCore.from_file(path, name)
    enc = lambda t, s: t.encode_ordinary(s)
elif kind == "hf":
    from tokenizers import Tokenizer
    load = lambda: Tokenizer.from_file(path)
    enc = lambda t, s: t.encode(s).ids
elif kind == "tk":
    from tokenkit import Tokenizer
    load = lambda: Tokenizer.from_file(path)
    enc = lambda t, s: t.encode(s).ids
elif kind in ("hf-pickle", "tk-pickle"):
    # `path` is a pickle written by another process (`pickle_in_child`).
    if kind == "hf-pickle":
        from tokenizers import Tokenizer
    else:
        from tokenkit import Tokenizer
    with open(path, "rb") as f:
        blob = f.read()
    load = lambda: pickle.loads(blob)
    enc = lambda t, s: t.encode(s).ids
elif kind == "spm":
    import sentencepiece as spm
    load = lambda: spm.SentencePieceProcessor(model_file=path)
    enc = lambda t, s: t.encode(s)
elif kind == "tk-spm":
    from tokenkit import sentencepiece as spm
    load = lambda: spm.SentencePieceProcessor(model_file=path)
    enc = lambda t, s: t.encode(s)
elif kind == "mistral":
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer
    load = lambda: Tekkenizer.from_file(path)
    enc = lambda t, s: t.encode(s, bos=False, eos=False)
else:
    raise SystemExit(f"unknown kind {kind}")

times, growth, anon_growth, growth2, anon2, keep = [], None, None, None, None, []
for i in range(n):
    before, anon_before = rss(), anon()
    t0 = time.perf_counter()
    tok = load()
    ids = enc(tok, text)
    times.append(time.perf_counter() - t0)
    if i == 0:
        growth, anon_growth = rss() - before, anon() - anon_before
    elif i == 1:
        growth2, anon2 = rss() - before, anon() - anon_before
    assert len(ids) > 0
    keep.append(tok)
print(json.dumps({"times": times, "rss": growth, "anon": anon_growth, "rss2": growth2, "anon2": anon2}))
'''


def child(kind: str, path: Path, n: int) -> dict:
    r = subprocess.run([sys.executable, "-c", CHILD, kind, str(path), str(n), TEXT],
                       capture_output=True, text=True, cwd=REPO)
    if r.returncode != 0:
        raise RuntimeError(f"{kind} {path}: {r.stderr.strip()[-800:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def pickle_in_child(kind: str, path: Path, dest: Path) -> Path:
    """Pickles the tokenizer at `path` in a child process (as a parent hands it to workers)."""
    lib = "tokenizers" if kind == "hf-pickle" else "tokenkit"
    code = f"import pickle, sys\nfrom {lib} import Tokenizer\nopen(sys.argv[2], 'wb').write(pickle.dumps(Tokenizer.from_file(sys.argv[1])))"
    subprocess.run([sys.executable, "-c", code, str(path), str(dest)], check=True, cwd=REPO)
    return dest


def measure(kind: str, path: Path, repeat: int) -> dict:
    """Cold: the first load of `repeat` fresh processes; warm: loads 2.. of one process."""
    path.read_bytes()  # into the page cache
    cold, rss, anon = [], [], []
    for _ in range(repeat):
        r = child(kind, path, 1)
        cold.append(r["times"][0])
        rss.append(r["rss"])
        anon.append(r["anon"])
    w = child(kind, path, repeat + 1)
    warm = w["times"][1:]
    return {"cold": statistics.median(cold), "warm": statistics.median(warm), "rss": statistics.median(rss) / 1e6,
            "anon": statistics.median(anon) / 1e6, "rss2": (w["rss2"] or 0) / 1e6, "anon2": (w["anon2"] or 0) / 1e6}


def english_8mb(dest: Path) -> Path:
    """8,000,000 bytes of English (Gutenberg texts, then Python's docs), cut at a line end."""
    out, total = [], 0
    for rel in ("corpora/en/bible-kjv.txt", "corpora/en/pride_and_prejudice.txt", "corpora/en/botchan.txt",
                "corpora/en/python-3.11-docs.rst.txt"):
        for line in (FIXTURES / rel).read_bytes().splitlines(keepends=True):
            if total + len(line) > 8_000_000:
                dest.write_bytes(b"".join(out))
                return dest
            out.append(line)
            total += len(line)
    dest.write_bytes(b"".join(out))
    return dest


def cli_cell(repeat: int) -> dict:
    import tiktoken
    import tiktoken.load
    import tiktoken_ext.openai_public as op

    rank_file = FIXTURES / "tiktoken" / "cl100k_base.tiktoken"
    with tempfile.TemporaryDirectory() as d:
        text_path = english_8mb(Path(d) / "en8.txt")
        text = text_path.read_text(encoding="utf-8")
        op.load_tiktoken_bpe = lambda *_a, **_k: tiktoken.load.load_tiktoken_bpe(str(rank_file))
        enc = tiktoken.Encoding(**op.cl100k_base())
        env = dict(os.environ, TOKENKIT_TIKTOKEN_DIR=str(rank_file.parent))
        cli, peer = [], []
        for _ in range(repeat):  # interleaved, so both see the same machine load
            with open(text_path, "rb") as fin, open(Path(d) / "ids.json", "wb") as fout:
                t0 = time.perf_counter()
                subprocess.run([str(CLI), "encode", "-e", "cl100k_base"], stdin=fin, stdout=fout, env=env, check=True)
                cli.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            ids = enc.encode_ordinary(text)
            peer.append(time.perf_counter() - t0)
        got = json.loads((Path(d) / "ids.json").read_text())
        got = got["ids"] if isinstance(got, dict) else got
        same = got == ids
    return {"bytes": len(text.encode()), "cli": statistics.median(cli), "tiktoken": statistics.median(peer), "same_ids": same}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", nargs="*", choices=list(CASES), default=list(CASES))
    ap.add_argument("--no-cli", action="store_true", help="skip the command-line 8 MB cell")
    args = ap.parse_args()

    print(f"{'file':16} {'library':14} {'cold ms':>9} {'warm ms':>9} {'rss MB':>8} {'anon MB':>8} {'rss2 MB':>8} {'anon2 MB':>8}"
          "   peer/tokenkit (cold, warm)")
    for name in args.only:
        rel, peer_kind, tk_kind = CASES[name]
        path = FIXTURES / rel
        if not path.is_file():
            print(f"{name:16} (fixture {rel} absent; run scripts/fetch_fixtures.py)")
            continue
        with tempfile.TemporaryDirectory() as d:
            def source(kind):
                return pickle_in_child(kind, path, Path(d) / f"{kind}.pkl") if kind.endswith("-pickle") else path
            tk = measure(tk_kind, source(tk_kind), args.repeat)
            peer = None
            if peer_kind:
                try:
                    peer = measure(peer_kind, source(peer_kind), args.repeat)
                except (RuntimeError, ImportError, subprocess.CalledProcessError) as e:
                    print(f"{name:16} {peer_kind:14} failed: {e}")
        print(f"{name:16} {'tokenkit':14} {tk['cold']*1e3:9.1f} {tk['warm']*1e3:9.1f} {tk['rss']:8.1f} {tk['anon']:8.1f}"
              f" {tk['rss2']:8.1f} {tk['anon2']:8.1f}")
        if peer:
            print(f"{'':16} {peer_kind.split(':')[0]:14} {peer['cold']*1e3:9.1f} {peer['warm']*1e3:9.1f} {peer['rss']:8.1f} {peer['anon']:8.1f}"
                  f" {peer['rss2']:8.1f} {peer['anon2']:8.1f}"
                  f"   {peer['cold']/tk['cold']:.2f}x, {peer['warm']/tk['warm']:.2f}x"
                  f"   {'meets' if min(peer['cold']/tk['cold'], peer['warm']/tk['warm']) >= 3 else 'below'} 3x;"
                  f" rss {tk['rss']/max(peer['rss'], 1e-9):.2f}x of the peer's (anon {tk['anon']/max(peer['anon'], 1e-9):.2f}x;"
                  f" second load rss {tk['rss2']/max(peer['rss2'], 1e-9):.2f}x, anon {tk['anon2']/max(peer['anon2'], 1e-9):.2f}x)")
        if name == "o200k":
            print(f"{'':16} o200k under 50 ms (cold, warm): {tk['cold'] < 0.05}, {tk['warm'] < 0.05}")
        sys.stdout.flush()
    if not args.no_cli:
        if not CLI.is_file():
            print(f"CLI {CLI} absent: cargo build --release -p tokenkit-cli")
            return 1
        c = cli_cell(args.repeat)
        print(f"\nCLI end to end, encode -e cl100k_base, {c['bytes']:,} bytes of English -> JSON: "
              f"{c['cli']*1e3:.0f} ms; tiktoken in-process encode_ordinary: {c['tiktoken']*1e3:.0f} ms; "
              f"tiktoken/CLI {c['tiktoken']/c['cli']:.2f}x ({'meets' if c['tiktoken'] / c['cli'] >= 3 else 'below'} 3x); "
              f"ids identical: {c['same_ids']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
