#!/usr/bin/env bash
# Instructions per call of one tokenkit Python batch method, by function (callgrind): the
# difference between a run making 3 calls and one making 1, halved, so that loading the
# tokenizer and starting Python cancel out. Single-threaded (RAYON_NUM_THREADS=1).
#
#   benches/python/callgrind_per_call.sh TOKENIZER CORPUS METHOD [TOP]
#   benches/python/callgrind_per_call.sh llama3 zh encode_batch_fast
#   benches/python/callgrind_per_call.sh o200k_base mixed encode_ordinary_batch
#   benches/python/callgrind_per_call.sh gemma ja encode      # one call per line, as bench_python.py's
#   benches/python/callgrind_per_call.sh r38 zh encode_doc    # `encode` and `encode_doc` (50 lines a call)
#
# TOKENIZER and CORPUS are names from bench_python.py (200,000 bytes of whole lines; a
# TOKENIZER may be one of its SHAPES).
set -euo pipefail
cd "$(dirname "$0")/../.."
tok=$1 corpus=$2 method=$3 top=${4:-25}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cat > "$out/run.py" <<'PY'
import sys
sys.path.insert(0, "benches/python")
import bench_python as b
tok_name, corpus, method, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
if tok_name in b.TOKENIZER_FILES or tok_name in b.SHAPES:
    import tokenkit
    tok = tokenkit.Tokenizer.from_str(b.tokenizer_json(tok_name))
else:
    tok = b.tokenkit_tiktoken(tok_name)
lines = b.corpus_lines(corpus, 200_000)
if method == "encode":
    call = lambda ls: [tok.encode(s) for s in ls]
elif method == "encode_doc":
    call = lambda ls: [tok.encode("".join(ls[i:i + 50])) for i in range(0, len(ls), 50)]
else:
    call = getattr(tok, method)
for _ in range(n):
    call(lines)
PY
for n in 1 3; do
    RAYON_NUM_THREADS=1 valgrind --tool=callgrind --callgrind-out-file="$out/cg.$n" \
        .venv/bin/python "$out/run.py" "$tok" "$corpus" "$method" "$n" >/dev/null 2>&1
    callgrind_annotate "$out/cg.$n" > "$out/a.$n"
done
python3 - "$out/a.1" "$out/a.3" "$top" <<'PY'
import re, sys
def parse(path):
    d = {}
    for line in open(path):
        m = re.match(r"\s*([\d,]+) \([\s\d.]+%\)\s+(.*)", line)
        if m:
            d[re.sub(r" \[.*", "", m.group(2))] = int(m.group(1).replace(",", ""))
    return d
one, three = parse(sys.argv[1]), parse(sys.argv[2])
per = {k: (three.get(k, 0) - one.get(k, 0)) / 2 for k in set(one) | set(three)}
print(f"per call: {per.pop('PROGRAM TOTALS') / 1e6:.1f}M instructions")
for k, v in sorted(per.items(), key=lambda kv: -kv[1])[: int(sys.argv[3])]:
    print(f"{v / 1e6:8.2f}M  {k[:140]}")
PY
