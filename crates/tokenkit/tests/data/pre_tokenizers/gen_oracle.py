"""Dumps HF tokenizers' pre-tokenizer output on corpus lines, for the ignored Rust test
`pre_tokenizers::oracle_tests` to compare against.

Usage: python gen_oracle.py [OUT]   (default /tmp/tokenkit_pretok_oracle.jsonl)
Then:  TOKENKIT_PRETOK_ORACLE=OUT cargo test -p tokenkit --lib oracle -- --ignored --nocapture

Line 1 is {"texts": [...]}; every other line is {"pt": <pre-tokenizer JSON as HF writes it>,
"source": <JSON it was loaded from>, "results": [[[piece, start, end], ...] per text]} (and its own "texts" when it has them) with char
offsets into the original text, exactly what `pre_tokenize_str` returns.
"""
import glob
import json
import os
import random
import sys

from tokenizers import Regex, Tokenizer
from tokenizers import pre_tokenizers as pt

CORPORA = "/work/shared/corpora"
FIXTURES = "/work/shared/fixtures/hub"
CL100K = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+"""
O200K = r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"""

TRICKY = [
    "", " ", "   ", "\n\t", " \n \t x", "a", "Hello world", "  Hello   world  ", "it's I'm we'll they've",
    "naïve café résumé", "e\u0301\u0301", "日本語のテキスト、です。", "中文，标点！", "한국어 텍스트",
    "مرحبا بالعالم", "नमस्ते दुनिया", "🥰😀👍🏽 emoji 🇫🇷", "123 4567 3.14 ²³ ½ Ⅻ ٣٤", "a-b_c.d,e;f:g!h?i",
    "tab\there", "line1\r\nline2\rline3", "\u00a0nbsp\u2003em\u3000ideo", "x▁y▁ z", "<s>tag</s>",
    "ｆｕｌｌｗｉｄｔｈ", "ÀÉÎÕÜ ß ſ", "\u200bzero\u200dwidth", "Ωmega Ελληνικά", "Кириллица текст",
    "ー゛゜ヽヾ", "$^`|~+=<>", "«quotes» „low“ ‹x›", "\U0001F970\U00010000\U0010FFFD", "a" * 300,
]


def corpus_texts():
    rng = random.Random(0)
    texts = list(TRICKY)
    for path in sorted(glob.glob(f"{CORPORA}/*/*")):
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = [l.rstrip("\n") for l in f]
        if "/mixed/" in path:
            texts += lines
            texts.append("\n".join(lines))
            continue
        nonempty = [l for l in lines if l.strip()]
        texts += nonempty[:75]
        texts += rng.sample(nonempty, min(75, len(nonempty)))
        for _ in range(50):
            i = rng.randrange(max(1, len(lines) - 5))
            texts.append("\n".join(lines[i : i + 5]))
    return texts


def configs():
    B = ["removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"]
    out = [
        pt.BertPreTokenizer(),
        pt.ByteLevel(add_prefix_space=True),
        pt.ByteLevel(add_prefix_space=False),
        pt.ByteLevel(add_prefix_space=True, use_regex=False),
        pt.Whitespace(),
        pt.WhitespaceSplit(),
        pt.Split(Regex(CL100K), "isolated"),
        pt.Split(Regex(O200K), "isolated"),
        pt.Split(Regex(r"\s+"), "removed", invert=True),
        pt.Split(Regex(r"\d"), "merged_with_previous"),
        pt.Split("", "isolated"),
        pt.Split("the", "contiguous", invert=True),
        pt.Digits(individual_digits=False),
        pt.Digits(individual_digits=True),
        pt.UnicodeScripts(),
        pt.CharDelimiterSplit(" "),
        pt.CharDelimiterSplit("e"),
        pt.FixedLength(5),
        pt.FixedLength(1),
        pt.Sequence([pt.WhitespaceSplit(), pt.Metaspace(prepend_scheme="first")]),
        pt.Sequence([pt.Split(Regex(r"<s>|\n"), "isolated"), pt.Metaspace(prepend_scheme="first", split=False)]),
        pt.Sequence([pt.Punctuation(), pt.Digits(True), pt.ByteLevel(add_prefix_space=False)]),
        pt.Sequence([pt.UnicodeScripts(), pt.Metaspace()]),
    ]
    out += [pt.Split(" ", b) for b in B]
    out += [pt.Punctuation(b) for b in B]
    for scheme in ["always", "first", "never"]:
        for split in [True, False]:
            out.append(pt.Metaspace(prepend_scheme=scheme, split=split))
    out.append(pt.Metaspace(replacement="_", prepend_scheme="always"))
    sources = [json.loads(p.__getstate__()) for p in out]
    for f in sorted(glob.glob(f"{FIXTURES}/*.json")):
        p = json.load(open(f, encoding="utf-8"))["pre_tokenizer"]
        if p is not None:
            sources.append(p)
    return sources


def load(source):
    d = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
         "pre_tokenizer": source, "post_processor": None, "decoder": None,
         "model": {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"}}
    tok = Tokenizer.from_str(json.dumps(d))
    return tok.pre_tokenizer, json.dumps(json.loads(tok.to_str())["pre_tokenizer"], ensure_ascii=False, separators=(",", ":"))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/tokenkit_pretok_oracle.jsonl"
    texts = corpus_texts()
    with open(out, "w", encoding="utf-8") as f:
        f.write(json.dumps({"texts": texts}, ensure_ascii=False) + "\n")
        for source in configs():
            p, written = load(source)
            results = [[[s, a, b] for s, (a, b) in p.pre_tokenize_str(t)] for t in texts]
            f.write(json.dumps({"pt": written, "source": source, "results": results}, ensure_ascii=False) + "\n")
        # Every code point, alone and interleaved with chars of known scripts: checks the whole
        # UnicodeScripts table (such a record carries its own "texts").
        every = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
        big = ["".join(every), "".join(reversed(every))] + ["".join(k + c for c in every) for k in "a\u4e000 \u0300"]
        source = {"type": "UnicodeScripts"}
        p, written = load(source)
        results = [[[s, a, b] for s, (a, b) in p.pre_tokenize_str(t)] for t in big]
        f.write(json.dumps({"pt": written, "source": source, "texts": big, "results": results}) + "\n")
    print(f"{len(texts)} texts, wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
