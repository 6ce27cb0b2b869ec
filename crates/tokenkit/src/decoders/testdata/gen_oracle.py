"""Generates decoders_oracle.json: HF tokenizers 0.23.3 decoder outputs.

Token lists come from encoding corpus lines with the hub fixtures (plus random slices of them,
which cut byte-level / byte-fallback characters in the middle); each list is decoded with the
fixture's own decoder and with other decoders that apply. Run with /work/main/.venv/bin/python.
"""
import json, random, sys
from tokenizers import Tokenizer, decoders

HUB = "/work/shared/fixtures/hub/"
C = "/work/shared/corpora/"
random.seed(1234)

def lines(path, n, maxlen=160):
    with open(path, encoding="utf-8") as f:
        ls = [l.rstrip("\n") for l in f if l.strip()]
    picked = random.sample(ls, min(n, len(ls)))
    return [l[:maxlen] for l in picked]

texts = (lines(C + "mixed/utf8_input.txt", 14) + lines(C + "mixed/mixed_input.txt", 10) + lines(C + "ja/wagahai.txt", 5)
         + lines(C + "zh/lunyu.txt", 5) + lines(C + "en/botchan.txt", 6) + lines(C + "code/rust-1.63-library-part.rs.txt", 5)
         + ["", " ", "  leading and trailing  ", "\n\t", "don't do not, it 's ok . Yes ! no ?", "emoji 👋🏽👨‍👩‍👧 é ü", "A  B   C"])

def token_lists(tok):
    out = []
    for t in texts:
        toks = tok.encode(t, add_special_tokens=False).tokens
        out.append(toks)
        if len(toks) > 3:
            i = random.randrange(len(toks)); j = random.randrange(i, len(toks) + 1)
            out.append(toks[i:j])
    return out

fixtures = {n: Tokenizer.from_file(HUB + n + ".json") for n in ["gpt2", "bert_base_cased", "llama2", "mistral03", "xlnet_base_cased"]}
extra = {
    "gpt2": [decoders.ByteLevel(), decoders.BPEDecoder(suffix="Ġ"), decoders.Sequence([decoders.ByteLevel(), decoders.Strip(" ", 1, 1)])],
    "bert_base_cased": [decoders.WordPiece(cleanup=False), decoders.WordPiece(prefix="", cleanup=True), decoders.CTC(pad_token="##s", word_delimiter_token=",", cleanup=True),
                        decoders.CTC(cleanup=False), decoders.BPEDecoder(suffix="##"), decoders.Sequence([decoders.WordPiece(), decoders.Replace(" ", "_")])],
    "llama2": [decoders.ByteFallback(), decoders.Metaspace(), decoders.Metaspace(prepend_scheme="never"), decoders.Metaspace(prepend_scheme="first", split=False),
               decoders.Sequence([decoders.Metaspace(), decoders.ByteFallback(), decoders.Fuse()]), decoders.Replace("▁", " "), decoders.Strip("▁", 2, 3),
               decoders.Sequence([decoders.ByteFallback(), decoders.Strip("▁", 1, 1), decoders.Fuse(), decoders.Strip(" ", 0, 2)])],
    "mistral03": [],
    "xlnet_base_cased": [decoders.Metaspace(replacement="_"), decoders.Sequence([decoders.Replace(decoders.Regex if False else "▁", "<sp>"), decoders.Fuse()])],
}
from tokenizers import Regex
extra["xlnet_base_cased"].append(decoders.Replace(Regex("▁+"), " "))
extra["xlnet_base_cased"].append(decoders.Replace(Regex("(?<=[a-z])▁"), "~"))

decs, cases, lists = [], [], []
def dec_index(d):
    s = json.loads(d.__getstate__())
    if s not in decs: decs.append(s)
    return decs.index(s)
for name, tok in fixtures.items():
    tl = token_lists(tok)
    base = len(lists); lists.extend(tl)
    for d in [tok.decoder] + extra[name]:
        k = dec_index(d)
        for n, toks in enumerate(tl):
            try: exp = d.decode(toks)
            except BaseException as e: exp = None  # HF panicked
            cases.append([k, base + n, exp])
json.dump({"decoders": decs, "token_lists": lists, "cases": cases}, open(sys.argv[1], "w"), ensure_ascii=False, separators=(",", ":"))
print(len(cases), "cases;", len(decs), "decoders;", sum(c[2] is None for c in cases), "errors")
