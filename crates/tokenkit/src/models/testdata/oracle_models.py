"""Writes the HF tokenizers (0.23.3) model-only oracle used by `models::tests::oracle_fixtures`.

For each hub fixture, pieces are produced by the fixture's own normalizer and pre-tokenizer
over samples of every corpus (plus some hand-picked strings), then encoded by the fixture's
model alone (no normalizer / pre-tokenizer / post-processor). One JSONL file per fixture:
{"p": piece, "ids": [...], "tokens": [...], "offsets": [[start, end], ...]} (char offsets)
or {"p": piece, "err": message}; and `<fixture>.model.json`, HF's serialization of the model.

usage: python oracle_models.py OUT_DIR [LINES_PER_CORPUS]
"""
import glob, json, os, sys
from tokenizers import Tokenizer

HUB = "/work/shared/fixtures/hub"
CORPORA = "/work/shared/corpora"
out_dir = sys.argv[1]
per_corpus = int(sys.argv[2]) if len(sys.argv) > 2 else 400
os.makedirs(out_dir, exist_ok=True)

EXTRA = ["", " ", "  \n\t", "\n", "😀👍🏽", "🇫🇷", "日本語のテキスト", "中文测试", "e\u0301", "ﬁ", "مرحبا", "नमस्ते",
         "Ångström", "0123456789", "!!??...", "a" * 300, "xyz" * 50, "\u200b", "\x00\x01", "Ω≈ç√∫", "𝔘𝔫𝔦"]

lines = []
for path in sorted(glob.glob(f"{CORPORA}/*/*")):
    with open(path, encoding="utf-8", errors="replace") as f:
        ls = [l.rstrip("\n") for l in f if l.strip()]
    step = max(1, len(ls) // per_corpus)
    lines.extend(ls[::step][:per_corpus])
lines.extend(EXTRA)

for name in ["gpt2", "bert_base_cased", "llama2", "mistral03", "xlnet_base_cased"]:
    full = Tokenizer.from_file(f"{HUB}/{name}.json")
    model_only = Tokenizer(full.model)
    # HF's own serialization of the model, byte for byte (the last field of to_str()).
    s = full.to_str()
    with open(f"{out_dir}/{name}.model.json", "w", encoding="utf-8") as out:
        out.write(s[s.index('"model":') + len('"model":'):-1])
    pieces, seen = [], set()
    for line in lines:
        s = full.normalizer.normalize_str(line) if full.normalizer else line
        ps = [p for p, _ in full.pre_tokenizer.pre_tokenize_str(s)] if full.pre_tokenizer else [s]
        for p in ps + [line]:
            if p not in seen:
                seen.add(p)
                pieces.append(p)
    n = 0
    with open(f"{out_dir}/{name}.jsonl", "w", encoding="utf-8") as out:
        for p in pieces:
            try:
                e = model_only.encode(p, add_special_tokens=False)
                rec = {"p": p, "ids": e.ids, "tokens": e.tokens, "offsets": e.offsets}
            except Exception as ex:
                rec = {"p": p, "err": str(ex)}
            out.write(json.dumps(rec, ensure_ascii=False) + "\n")
            n += 1
    print(name, n, "pieces")
