"""Random small models checked against HF tokenizers (0.23.3), used by
`models::tests::oracle_random` through `$TOKENKIT_MODELS_ORACLE/random.jsonl`.

Each line: {"model": <HF's JSON of the model, as a string>, "cases": [{"p", "ids", "tokens", "offsets"} or {"p", "err"}]}
(offsets in chars as HF reports them to Python).

usage: python oracle_random.py OUT_DIR [N_MODELS_PER_KIND] [SEED]
"""
import json, os, random, sys
from tokenizers import Tokenizer, models

out_dir = sys.argv[1]
n_models = int(sys.argv[2]) if len(sys.argv) > 2 else 150
rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 0)
ALPHA = list("abcdeé日本😀 ")


def rand_str(maxlen):
    return "".join(rng.choice(ALPHA) for _ in range(rng.randint(1, maxlen)))


def model_json(tok):
    """HF's serialization of the model, as the exact string it writes."""
    s = tok.to_str()
    return s[s.index('"model":') + len('"model":'):-1]


def cases(tok, n, maxlen):
    out = []
    for _ in range(n):
        p = rand_str(maxlen)
        try:
            e = tok.encode(p, add_special_tokens=False)
            out.append({"p": p, "ids": e.ids, "tokens": e.tokens, "offsets": e.offsets})
        except Exception as ex:
            out.append({"p": p, "err": str(ex)})
    return out


def rand_bpe():
    prefix = rng.choice([None, None, "##", ""])
    suffix = rng.choice([None, None, "</w>", ""])
    chars = [c for c in ALPHA if rng.random() < 0.8]
    vocab = {}
    def add(t):
        if t not in vocab:
            vocab[t] = len(vocab)
    for c in chars:
        add(c)
        if prefix: add(prefix + c)
        if suffix: add(c + suffix)
        if prefix and suffix: add(prefix + c + suffix)
    unk = rng.choice([None, "<unk>", "<unk>"])
    if unk: add(unk)
    byte_fallback = rng.random() < 0.3
    if byte_fallback:
        for b in range(256):
            if rng.random() < 0.9: add(f"<0x{b:02X}>")
    merges = []
    toks = list(vocab)
    for _ in range(rng.randint(0, 40)):
        a = rng.choice(toks)
        b = rng.choice(toks)
        if a.startswith("<") or b.startswith("<"):
            continue
        if prefix and not b.startswith(prefix):
            continue
        if suffix and a.endswith(suffix):
            continue
        new = a + b[len(prefix or ""):]
        if (a, b) in merges:
            continue
        merges.append((a, b))
        add(new)
        toks.append(new)
    kw = dict(unk_token=unk, continuing_subword_prefix=prefix, end_of_word_suffix=suffix)
    m = models.BPE(vocab=vocab, merges=merges, fuse_unk=rng.random() < 0.5, byte_fallback=byte_fallback,
                   ignore_merges=rng.random() < 0.3, **{k: v for k, v in kw.items() if v is not None})
    return Tokenizer(m)


def rand_wordpiece():
    prefix = rng.choice(["##", "##", "", "@@"])
    vocab = {"[UNK]": 0}
    for _ in range(rng.randint(5, 60)):
        t = rand_str(4)
        if rng.random() < 0.5: t = prefix + t
        vocab.setdefault(t, len(vocab))
    if rng.random() < 0.2: del vocab["[UNK]"]
    m = models.WordPiece(vocab=vocab, unk_token="[UNK]", continuing_subword_prefix=prefix,
                         max_input_chars_per_word=rng.choice([3, 8, 100]))
    return Tokenizer(m)


def rand_unigram():
    pieces = [("<unk>", 0.0)]
    scores = [-1.0, -2.0, -1.5, -3.25, -0.5, 2.0, -10.0]
    for _ in range(rng.randint(3, 60)):
        pieces.append((rand_str(4), rng.choice(scores) if rng.random() < 0.7 else -rng.random() * 12))
    byte_fallback = rng.random() < 0.4
    if byte_fallback:
        for b in range(256):
            if rng.random() < 0.9: pieces.append((f"<0x{b:02X}>", -5.0))
    unk_id = rng.choice([0, 0, 0, None])
    rng.shuffle(pieces)
    if unk_id is not None:
        unk_id = [p for p, _ in pieces].index("<unk>")
    m = models.Unigram(pieces, unk_id, byte_fallback)
    return Tokenizer(m)


os.makedirs(out_dir, exist_ok=True)
with open(f"{out_dir}/random.jsonl", "w", encoding="utf-8") as out:
    for make in [rand_bpe, rand_wordpiece, rand_unigram]:
        for _ in range(n_models):
            # Reload from HF's own JSON: scores then go through the same float parsing as a
            # tokenizer.json loaded from disk.
            tok = Tokenizer.from_str(make().to_str())
            rec = {"model": model_json(tok), "cases": cases(tok, 60, 12)}
            out.write(json.dumps(rec, ensure_ascii=False) + "\n")
print("ok")
