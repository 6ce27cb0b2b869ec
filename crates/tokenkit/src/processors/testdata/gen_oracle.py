"""Generates processors_oracle.json: HF tokenizers 0.23.3 post-processing results.

For each (fixture, processor, input, truncation, add_special_tokens) case we record the raw
encodings of both sequences (model output, no post-processing, char offsets) and the full
final Encoding HF produces, overflowing included. Run with /work/main/.venv/bin/python.
"""
import json, sys
from tokenizers import Tokenizer, processors

HUB = "/work/shared/fixtures/hub/"

def raw(tok, s):
    pp, tr = tok.post_processor, tok.truncation
    tok.post_processor = None
    tok.no_truncation()
    e = tok.encode(s, add_special_tokens=False)
    tok.post_processor = pp
    if tr: tok.enable_truncation(**tr)
    return {"ids": e.ids, "tokens": e.tokens, "offsets": e.offsets, "words": e.word_ids}

def full(e):
    return {"ids": e.ids, "type_ids": e.type_ids, "tokens": e.tokens, "offsets": e.offsets,
            "special_tokens_mask": e.special_tokens_mask, "attention_mask": e.attention_mask,
            "words": e.word_ids, "sequence_ids": e.sequence_ids,
            "overflowing": [full(o) for o in e.overflowing]}

bert = Tokenizer.from_file(HUB + "bert_base_cased.json")
gpt2 = Tokenizer.from_file(HUB + "gpt2.json")
bert_template = bert.post_processor
weird = processors.TemplateProcessing(
    single="[X]:2 $A:3 [Y] $A:1", pair="$B:2 [X] $A:5 [Y]:7",
    special_tokens=[{"id": "[X]", "ids": [7, 8], "tokens": ["x1", "x2"]}, ("[Y]", 9)])
setups = [
    ("bert", bert, bert_template),
    ("bert", bert, processors.BertProcessing(("[SEP]", 102), ("[CLS]", 101))),
    ("bert", bert, weird),
    ("bert", bert, processors.Sequence([processors.BertProcessing(("[SEP]", 102), ("[CLS]", 101)), weird])),
    ("gpt2", gpt2, processors.ByteLevel(trim_offsets=True, add_prefix_space=True)),
    ("gpt2", gpt2, processors.ByteLevel(trim_offsets=True, add_prefix_space=False)),
    ("gpt2", gpt2, processors.ByteLevel(trim_offsets=False)),
    ("gpt2", gpt2, processors.RobertaProcessing(("</s>", 2), ("<s>", 0))),
    ("gpt2", gpt2, processors.RobertaProcessing(("</s>", 2), ("<s>", 0), trim_offsets=True, add_prefix_space=False)),
    ("gpt2", gpt2, processors.RobertaProcessing(("</s>", 2), ("<s>", 0), trim_offsets=False)),
    ("gpt2", gpt2, processors.Sequence([processors.ByteLevel(trim_offsets=True), bert_template])),
    ("gpt2", gpt2, processors.Sequence([bert_template, processors.ByteLevel(trim_offsets=True)])),
    ("gpt2", gpt2, processors.Sequence([processors.RobertaProcessing(("</s>", 2), ("<s>", 0)), processors.ByteLevel(trim_offsets=True, add_prefix_space=False)])),
]
inputs = [
    ("Hello there, my friend!", None),
    ("  Hello   world  ", "  and   you \t\n"),
    ("", "x"),
    ("a", ""),
    ("Héllo 👋🏽 日本", "naïve مرحبا 12"),
    ("The quick brown fox jumps over the lazy dog.", "What?  Is it   so"),
]
truncs = [None,
          dict(max_length=24, stride=2, strategy="longest_first"),
          dict(max_length=16, stride=0, strategy="only_second"),
          dict(max_length=15, stride=1, strategy="only_first", direction="left"),
          dict(max_length=22, stride=1, strategy="longest_first", direction="left")]
cases = []
raws = {"bert": {}, "gpt2": {}}
for setup_index, (name, tok, proc) in enumerate(setups):
    tok.post_processor = proc
    for a, b in inputs:
        for tr in truncs:
            for add in (True, False):
                for pair in ([False, True] if b is not None else [False]):
                    if tr: tok.enable_truncation(**tr)
                    else: tok.no_truncation()
                    try:
                        e = tok.encode(a, b if pair else None, add_special_tokens=add)
                        out = full(e)
                    except BaseException as ex:
                        out = {"error": str(ex)}
                    tok.no_truncation()
                    for s in (a, b):
                        if s is not None: raws[name][s] = raw(tok, s)
                    if len(json.dumps(out)) > 3000:
                        continue  # a few overflow cross-products are huge; keep the file small
                    cases.append({"fixture": name, "processor": setup_index,
                                  "truncation": tr, "add_special_tokens": add,
                                  "a": a, "b": b if pair else None,
                                  "n_added": [proc.num_special_tokens_to_add(False), proc.num_special_tokens_to_add(True)],
                                  "expected": out})
json.dump({"raw": raws, "processors": [json.loads(p.__getstate__()) for _, _, p in setups], "cases": cases}, open(sys.argv[1], "w"), ensure_ascii=False, separators=(",", ":"))
print(len(cases), "cases;", sum("error" in c["expected"] for c in cases), "errors")
