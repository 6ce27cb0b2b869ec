#!/usr/bin/env python3
"""tokenkit against every Python tokenizer library that loads the same files, one run, side by
side, on distinct text per timed round (no call sees text an earlier call saw, so caches that
persist across calls help only as much as real text repeats itself).

Libraries (each used through the call its users make; a library that is not installed is left
out and named in the output):

  tokenkit      tokenkit.tiktoken.Encoding / tokenkit.Tokenizer
  tiktoken      tiktoken.Encoding (rank files from the fixtures)
  tokenizers    tokenizers.Tokenizer (HF)
  fastokens     fastokens.Tokenizer (.from_tiktoken / .from_file)      pip install fastokens==0.3.5
  tokie         tokie.Tokenizer.from_file                               pip install tokie==0.1.4
  riptoken      riptoken.CoreBPE (tiktoken encodings)                   pip install riptoken==0.2.4
  bpe-openai    bpe_openai.tokenizer_for_encoding (cl100k, o200k)       pip install bpe-openai==0.1.4

Cells (TOKENIZER x CORPUS x CALL):

  document   tiktoken encodings: `encode_ordinary(text)` of the whole slice, one call;
             tokenizer.json: `encode(text).ids` of the slice
  line       one call per line of the slice (`encode_ordinary(line)` / `encode(line).ids`)
  batch      tokenizer.json: `encode_batch(lines)` (ids of each), one call for the slice

Each cell: --rounds + 1 distinct slices of --bytes of whole lines from the corpus (the first
checks that every library gives the reference library's ids, tiktoken's or HF's, and warms it
up; a library with other ids is reported as "wrong ids" and not timed); each later round times
every library once on the same new slice, in turn. MB/s of UTF-8 input, the median of the
rounds; the ratio is tokenkit over the fastest other library with correct ids.

Everything runs in this one process on one core (the process is pinned to CPU 0 and every
library's thread pool is told to use one thread), so batch calls are single-threaded.

`--corpora udhr` stands for the twelve per-script corpora of the UDHR in 532 languages
(`udhr-latin`, `udhr-cyrillic`, ..., `udhr-other`; any corpus of bench_python.CORPORA can be
named); their rows end with a per-script summary of tokenkit's MB/s and its ratio to tiktoken /
tokenizers (the issue's "every script" check: at least 5x).

`--per-call` instead measures the fixed cost of a call: `encode_ordinary`/`encode` of distinct
short texts of 1, 16, 64 and 200 bytes (cut from the corpus at char boundaries), 2,000 calls a
size, the median per call of 5 rounds; a least-squares line through the four sizes gives the
fixed cost (ns per call) and the slope (ns per byte).

Usage:
  pip install fastokens==0.3.5 tokie==0.1.4 riptoken==0.2.4 bpe-openai==0.1.4   # the peers
  .venv/bin/python benches/python/bench_peers.py                        # the issue's table
  .venv/bin/python benches/python/bench_peers.py --tokenizers cl100k_base --corpora en code \\
      --calls document --bytes 500000 --rounds 5
  .venv/bin/python benches/python/bench_peers.py --per-call --tokenizers cl100k_base llama3
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

for _var in ("RAYON_NUM_THREADS", "RAYON_RS_NUM_CPUS", "OMP_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"
if hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_python as bp  # noqa: E402  (corpora, fixtures, tiktoken reference)

TIKTOKEN = ("cl100k_base", "o200k_base")
JSON_FILES = {
    "qwen3": "registry/qwen3/tokenizer.json",
    "llama3": "registry/llama3/tokenizer.json",
    "gemma": "registry/gemma/tokenizer.json",
    "bert_uncased": "registry/bert_uncased/tokenizer.json",
}


def corpus_text(name: str) -> str:
    return (bp.FIXTURES / bp.CORPORA[name]).read_text(encoding="utf-8")


def slices(text: str, size: int, n: int) -> list[list[str]]:
    """`n` distinct slices of whole lines, each about `size` UTF-8 bytes (smaller when the
    corpus cannot give `n` of that size), as lists of lines."""
    lines = text.splitlines(keepends=True)
    total = sum(len(s.encode()) for s in lines)
    size = min(size, total // n)
    out, cur, cur_bytes = [], [], 0
    for line in lines:
        cur.append(line)
        cur_bytes += len(line.encode())
        if cur_bytes >= size:
            out.append(cur)
            cur, cur_bytes = [], 0
            if len(out) == n:
                break
    return out


def tiktoken_libs(name: str) -> dict:
    """name -> (encode one text -> ids) for every library that has the encoding."""
    libs = {}
    ref = bp.tiktoken_reference(name)
    from tokenkit import tiktoken as tk
    ours = tk.get_encoding(name)
    libs["tokenkit"] = ours.encode_ordinary
    libs["tiktoken"] = ref.encode_ordinary
    rank_file = str(bp.FIXTURES / "tiktoken" / f"{name}.tiktoken")
    try:
        import fastokens
        fo = fastokens.Tokenizer.from_tiktoken(rank_file, encoding=name)
        libs["fastokens"] = lambda s, fo=fo: fo.encode_ordinary(s).ids
    except ImportError:
        pass
    try:
        import riptoken
        rt = riptoken.CoreBPE(ref._mergeable_ranks, {}, ref._pat_str)
        libs["riptoken"] = rt.encode_ordinary
    except ImportError:
        pass
    try:
        import bpe_openai
        libs["bpe-openai"] = bpe_openai.build_encoding_from_name(name).encode_ordinary
    except (ImportError, AttributeError):
        pass
    return libs


def json_libs(name: str) -> dict:
    path = bp.FIXTURES / JSON_FILES[name]
    if not path.exists():
        return {}
    import tokenizers
    import tokenkit
    libs = {}
    ours = tokenkit.Tokenizer.from_file(str(path))
    hf = tokenizers.Tokenizer.from_file(str(path))
    libs["tokenkit"] = ours
    libs["tokenizers"] = hf
    try:
        import fastokens
        libs["fastokens"] = fastokens.Tokenizer.from_file(str(path))
    except ImportError:
        pass
    try:
        import tokie
        libs["tokie"] = tokie.Tokenizer.from_file(str(path))
    except ImportError:
        pass
    return libs


def json_call(lib: str, tok, call: str):
    """The function of `lines` a user of `lib` calls for `call`, returning rows of ids."""
    if call == "batch":
        if lib in ("tokenkit", "tokenizers"):
            return lambda ls: [e.ids for e in tok.encode_batch_fast(ls)]
        return lambda ls: [e.ids for e in tok.encode_batch(ls)]
    if call == "line":
        return lambda ls: [tok.encode(s).ids for s in ls]
    return lambda ls: [tok.encode("".join(ls)).ids]


def run_cells(args) -> list[tuple]:
    rows = []
    for tname in args.tokenizers:
        is_tt = tname in TIKTOKEN
        libs = tiktoken_libs(tname) if is_tt else json_libs(tname)
        if not libs:
            print(f"# {tname}: fixture missing, skipped", file=sys.stderr)
            continue
        ref_name = "tiktoken" if is_tt else "tokenizers"
        calls = [c for c in args.calls if c != "batch" or not is_tt]
        for corpus in args.corpora:
            parts = slices(corpus_text(corpus), args.bytes, args.rounds + 1)
            for call in calls:
                if is_tt:
                    fns = {lib: (lambda ls, f=f: [f(s) for s in ls]) if call == "line" else (lambda ls, f=f: [f("".join(ls))])
                           for lib, f in libs.items()}
                else:
                    fns = {lib: json_call(lib, tok, call) for lib, tok in libs.items()}
                reference = fns[ref_name](parts[0])
                status = {}
                for lib, fn in fns.items():
                    status[lib] = "ok" if fn(parts[0]) == reference else "wrong ids"
                good = {lib: fn for lib, fn in fns.items() if status[lib] == "ok"}
                times = {lib: [] for lib in good}
                for part in parts[1:]:
                    for lib, fn in good.items():
                        t0 = time.perf_counter()
                        fn(part)
                        times[lib].append(time.perf_counter() - t0)
                nbytes = statistics.median(sum(len(s.encode()) for s in p) for p in parts[1:])
                mbs = {lib: nbytes / statistics.median(ts) / 1e6 for lib, ts in times.items()}
                rows.append((tname, corpus, call, int(nbytes), mbs, status))
                print_row(rows[-1])
    return rows


def print_row(row) -> None:
    tname, corpus, call, nbytes, mbs, status = row
    ours = mbs.get("tokenkit")
    peers = {lib: v for lib, v in mbs.items() if lib != "tokenkit"}
    best = max(peers, key=peers.get) if peers else None
    cells = "  ".join(f"{lib} {mbs[lib]:.1f}" if lib in mbs else f"{lib} {status[lib]}" for lib in status)
    ratio = f"{ours / peers[best]:.2f}x {best}" if ours and best else "-"
    print(f"{tname:<12} {corpus:<20} {call:<9} {nbytes:>8}  {cells}  | tokenkit / fastest: {ratio}", flush=True)


def per_call(args) -> None:
    sizes = (1, 16, 64, 200)
    for tname in args.tokenizers:
        is_tt = tname in TIKTOKEN
        libs = tiktoken_libs(tname) if is_tt else json_libs(tname)
        if not libs:
            continue
        fns = libs if is_tt else {lib: (lambda s, t=tok: t.encode(s).ids) for lib, tok in libs.items()}
        text = corpus_text(args.corpora[0])
        for lib, fn in fns.items():
            per = []
            for size in sizes:
                # Distinct snippets of `size` bytes (cut back to a char boundary).
                snippets, at = [], 0
                data = text.encode()
                while len(snippets) < 2000 * 6 and at + size < len(data):
                    s = data[at:at + size].decode("utf-8", "ignore")
                    if s:
                        snippets.append(s)
                    at += size + 7
                rounds = []
                for r in range(6):
                    batch = snippets[r * 2000:(r + 1) * 2000] or snippets[:2000]
                    t0 = time.perf_counter()
                    for s in batch:
                        fn(s)
                    rounds.append((time.perf_counter() - t0) / len(batch))
                per.append(statistics.median(rounds[1:]) * 1e9)
            n = len(sizes)
            mx, my = sum(sizes) / n, sum(per) / n
            slope = sum((x - mx) * (y - my) for x, y in zip(sizes, per)) / sum((x - mx) ** 2 for x in sizes)
            fixed = my - slope * mx
            print(f"{tname:<12} {lib:<11} ns per call at {sizes} bytes: "
                  + " ".join(f"{v:.0f}" for v in per) + f"  fixed {fixed:.0f} ns, {slope:.2f} ns/byte", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokenizers", nargs="+", default=["cl100k_base", "o200k_base", "qwen3", "llama3", "gemma", "bert_uncased"])
    ap.add_argument("--corpora", nargs="+", default=["en", "code", "ja", "zh"])
    ap.add_argument("--calls", nargs="+", default=["document", "line", "batch"])
    ap.add_argument("--bytes", type=int, default=300_000, help="UTF-8 bytes per slice (whole lines)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--per-call", action="store_true")
    args = ap.parse_args()
    args.corpora = [c for name in args.corpora
                    for c in ([f"udhr-{f}" for f in bp.UDHR_FAMILIES] if name == "udhr" else [name])]
    missing = [m for m in ("fastokens", "tokie", "riptoken", "bpe_openai") if not _importable(m)]
    if missing:
        print(f"# not installed (left out): {', '.join(missing)}", file=sys.stderr)
    if args.per_call:
        per_call(args)
        return 0
    print(f"# one core; {args.rounds} rounds of distinct slices of ~{args.bytes:,} bytes; MB/s of UTF-8 input, medians")
    rows = run_cells(args)
    ratios = []
    for _t, _c, _call, _n, mbs, _s in rows:
        peers = [v for lib, v in mbs.items() if lib != "tokenkit"]
        if "tokenkit" in mbs and peers:
            ratios.append(mbs["tokenkit"] / max(peers))
    script_summary(rows)
    if ratios:
        print(f"tokenkit / fastest correct peer: median {statistics.median(ratios):.2f}x, min {min(ratios):.2f}x over {len(ratios)} cells")
    return 0


def script_summary(rows) -> None:
    """Per tokenizer and call over the UDHR rows: tokenkit's MB/s and its ratio to the reference
    library (tiktoken or tokenizers) per script family, and the lowest ratio."""
    groups: dict[tuple, list] = {}
    for tname, corpus, call, _n, mbs, _s in rows:
        if corpus.startswith("udhr-") and "tokenkit" in mbs:
            ref = mbs.get("tiktoken", mbs.get("tokenizers"))
            groups.setdefault((tname, call), []).append((corpus.removeprefix("udhr-"), mbs["tokenkit"], ref))
    for (tname, call), cells in groups.items():
        ratios = [(fam, ours / ref) for fam, ours, ref in cells if ref]
        print(f"# per script, {tname} {call}: " + ", ".join(
            f"{fam} {ours:.0f} MB/s" + (f" ({ours / ref:.1f}x)" if ref else "") for fam, ours, ref in cells))
        if ratios:
            fam, worst = min(ratios, key=lambda r: r[1])
            print(f"# per script, {tname} {call}: lowest ratio to the reference {worst:.1f}x ({fam})")


def _importable(name: str) -> bool:
    import importlib.util
    return importlib.util.find_spec(name) is not None


if __name__ == "__main__":
    sys.exit(main())
