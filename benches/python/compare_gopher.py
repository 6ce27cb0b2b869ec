"""`tokenkit corpus clean --quality --repetition` (the Gopher rules) against datatrove's
GopherQualityFilter and GopherRepetitionFilter on the same documents: how many each keeps, how
many decisions agree, and examples of the documents they decide differently, per rule.

    .venv/bin/python benches/python/compare_gopher.py --dt-python DTVENV/bin/python [--docs 4000] [--show 3] [--no-alpha]

The documents are drawn from the shared corpora (English prose, Python documentation, code,
Chinese): runs of 1-40 consecutive paragraphs, so that some are short, some are lists or code,
some repeat. Both sides see the text unchanged (no other cleaning step). datatrove cuts words with
its English word tokenizer (spaCy, punctuation split off); tokenkit with whitespace (and one word per
Han/kana character), the paper's "words". The differences that follow are listed, not hidden.
datatrove is a benchmark dependency: pip install 'datatrove[processing]' spacy, in a venv of its own.
"""
from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPORA = ROOT / ".fixtures" / "corpora"
SOURCES = ["en/bible-kjv.txt", "en/python-3.11-docs.rst.txt", "en/pride_and_prejudice.txt", "en/botchan.txt",
           "code/cpython-3.11-stdlib.py.txt", "zh/manpages-zh_CN.txt"]

DATATROVE = r'''
import json, sys
from datatrove.data import Document
from datatrove.pipeline.filters import GopherQualityFilter, GopherRepetitionFilter
docs = json.load(open(sys.argv[1], encoding="utf-8"))
q = GopherQualityFilter(max_non_alpha_words_ratio=None) if sys.argv[3] == "no-alpha" else GopherQualityFilter()
r = GopherRepetitionFilter()
out = []
for k, t in enumerate(docs):
    reason = None
    for f in (q, r):
        res = f.filter(Document(text=t, id=str(k)))
        if res is not True:
            reason = res[1] if isinstance(res, tuple) else "removed"
            break
    out.append(reason)
json.dump(out, open(sys.argv[2], "w"))
'''

# Our rule names against datatrove's, for the per-rule table.
SAME_RULE = {
    "gopher_min_words": "gopher_short_doc", "gopher_max_words": "gopher_long_doc",
    "gopher_min_mean_word_len": "gopher_below_avg_threshold", "gopher_max_mean_word_len": "gopher_above_avg_threshold",
    "gopher_bullet_lines": "gopher_too_many_bullets", "gopher_ellipsis_lines": "gopher_too_many_end_ellipsis",
    "gopher_alpha_words": "gopher_below_alpha_threshold", "gopher_stop_words": "gopher_enough_stop_words",
    "gopher_dup_paragraphs": "dup_para_frac", "gopher_dup_paragraph_chars": "dup_para_char_frac",
    "gopher_dup_lines": "dup_line_frac", "gopher_dup_line_chars": "dup_line_char_frac",
}


def documents(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    sources = []
    for rel in SOURCES:
        p = CORPORA / rel
        if p.is_file():
            paras = [x.strip("\n") for x in p.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n").split("\n\n")]
            sources.append([x for x in paras if x.strip()])
    if not sources:
        sys.exit(f"no corpora in {CORPORA}: run scripts/setup.sh")
    docs = []
    for _ in range(n):
        paras = rng.choice(sources)
        start = rng.randrange(len(paras))
        docs.append("\n\n".join(paras[start:start + rng.randint(1, 40)]))
    return docs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dt-python", required=True, help="the Python that has datatrove")
    ap.add_argument("--docs", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=2, help="examples of each kind of disagreement")
    ap.add_argument("--no-alpha", action="store_true",
                    help="both without the alphabetic-words rule (datatrove applies it to spaCy tokens, punctuation included)")
    args = ap.parse_args()
    import tokenkit.corpus as tc

    docs = documents(args.docs, args.seed)
    quality = {"min_alpha_words": 0.0} if args.no_alpha else True
    _, ours = tc.clean(docs, html=False, controls=False, normalize="none", whitespace=False, quality=quality, repetition=True)
    with tempfile.TemporaryDirectory() as d:
        src, dst = Path(d) / "docs.json", Path(d) / "out.json"
        src.write_text(json.dumps(docs), encoding="utf-8")
        (Path(d) / "dt.py").write_text(DATATROVE)
        subprocess.run([args.dt_python, str(Path(d) / "dt.py"), str(src), str(dst), "no-alpha" if args.no_alpha else "all"], check=True)
        theirs = json.loads(dst.read_text())
    n = len(docs)
    agree = sum((a is None) == (b is None) for a, b in zip(ours, theirs))
    print(f"{n:,} documents from {', '.join(SOURCES)} (seed {args.seed}){'; both without the alphabetic-words rule' if args.no_alpha else ''}")
    print(f"kept: tokenkit {sum(a is None for a in ours):,}, datatrove {sum(b is None for b in theirs):,}; "
          f"the same decision on {agree:,}/{n:,} ({agree / n:.2%})")
    pairs = Counter((a, b) for a, b in zip(ours, theirs) if (a is None) != (b is None) or (a and SAME_RULE.get(a, a) != b))
    print("where the decisions or the first rule differ (tokenkit rule, datatrove rule): count")
    for (a, b), c in pairs.most_common():
        print(f"  {a or 'kept'} / {b or 'kept'}: {c}")
        shown = 0
        for t, x, y in zip(docs, ours, theirs):
            if (x, y) == (a, b) and shown < args.show:
                print("      " + json.dumps(t[:160], ensure_ascii=False))
                shown += 1


if __name__ == "__main__":
    main()
