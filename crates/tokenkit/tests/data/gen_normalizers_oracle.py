#!/usr/bin/env python3
"""Generate the expected output of HF tokenizers' normalizers for tokenkit's unit tests.

For every (normalizer config, input) pair it records the normalized string and, for each char
of it, the byte offsets in the input it is aligned with, as HF tokenizers reports them
(flattened: [start0, end0, start1, end1, ...]); `null` when the input is left unchanged.
The Rust test `normalizers::tests::oracle_file` replays the file; no Python needed at test time.

Usage: gen_normalizers_oracle.py [--per-corpus N] [--max-chars M] [--random K] [--out FILE]
           [--fixtures DIR] [--corpora DIR] [--all-lines FILE ...]
Run with the venv that has tokenizers==0.23.3 installed.
"""
import argparse
import json
import random
from pathlib import Path

import tokenizers
from tokenizers import NormalizedString, PreTokenizedString, Regex, normalizers

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[3]

# Configs: a name, and either an inline normalizer JSON or a fixture whose normalizer is used
# (optionally one element of its Sequence, by index).
CONFIGS = [
    ("bert_default", {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": None, "lowercase": True}),
    ("bert_cased", {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": None, "lowercase": False}),
    ("bert_strip_nolower", {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": True, "lowercase": False}),
    ("bert_lower_nostrip", {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": False, "strip_accents": False, "lowercase": True}),
    ("bert_raw", {"type": "BertNormalizer", "clean_text": False, "handle_chinese_chars": True, "strip_accents": None, "lowercase": True}),
    ("nfc", {"type": "NFC"}),
    ("nfd", {"type": "NFD"}),
    ("nfkc", {"type": "NFKC"}),
    ("nfkd", {"type": "NFKD"}),
    ("lowercase", {"type": "Lowercase"}),
    ("nmt", {"type": "Nmt"}),
    ("strip", {"type": "Strip", "strip_left": True, "strip_right": True}),
    ("lstrip", {"type": "Strip", "strip_left": True, "strip_right": False}),
    ("rstrip", {"type": "Strip", "strip_left": False, "strip_right": True}),
    ("strip_accents", {"type": "StripAccents"}),
    ("nfkd_strip_accents_lower", {"type": "Sequence", "normalizers": [{"type": "NFKD"}, {"type": "StripAccents"}, {"type": "Lowercase"}]}),
    ("replace_str", {"type": "Replace", "pattern": {"String": "  "}, "content": " "}),
    ("replace_space_meta", {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}),
    ("replace_empty", {"type": "Replace", "pattern": {"String": ""}, "content": "_"}),
    ("replace_regex_ws", {"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "}),
    ("replace_regex_star", {"type": "Replace", "pattern": {"Regex": "[a-z]*"}, "content": "<>"}),
    ("replace_regex_delete", {"type": "Replace", "pattern": {"Regex": "\\p{P}"}, "content": ""}),
    ("prepend", {"type": "Prepend", "prepend": "\u2581"}),
    ("byte_level", {"type": "ByteLevel"}),
    ("xlnet_precompiled", ("xlnet_base_cased.json", 4)),
    ("xlnet_full", ("xlnet_base_cased.json", None)),
    ("llama2_full", ("llama2.json", None)),
    ("bert_base_cased_full", ("bert_base_cased.json", None)),
]

TRICKY = [
    "", " ", "  ", "\n", "\t", "\n\t", " \t\n\r ", "\r\n", "a\r\nb", "Hello world", "  Hello  world  ",
    "HELLO World", "héllo", "he\u0301llo", "Ầ", "A\u0302\u0300", "A\u0302\u0300x", "a\u0302\u0300\u0300",
    "e\u0304\u0304\u0304o", "Me llamó", "Déjà vu", "ﬁ ﬂ ﬃ", "Ｈｅｌｌｏ　Ｗｏｒｌｄ", "ｶﾞｷﾞ", "①②③", "㍻", "㌀",
    "Ａ\u0301", "Å Å Å", "İstanbul", "ǅ ǈ", "ß ẞ", "ΣΑΣ", "Straße", "\u00a0non\u00a0breaking\u2009thin",
    "\u3000ideographic\u3000space", "zero\u200bwidth\u200cjoiner\u200d", "\ufeffbom", "a\u0000b", "a\ufffdb",
    "ctrl\u0001\u0002\u007f\u0085\u008f\u009f", "\u00ad soft hyphen", "\u2028line\u2029para", "\u2581meta",
    "\ue000private", "emoji 😀👍🏽 👨\u200d👩\u200d👧 🇫🇷", "❤️", "我今天能为你做什么", "今日は良い天気ですね。",
    "한국어 텍스트", "カタカナ ｶﾀｶﾅ", "𠀀𠀁 𪜀", "谢谢！（全角）", "مرحبا بالعالم", "نَصٌّ مُشَكَّلٌ",
    "हिन्दी पाठ", "क्षत्रिय", "ภาษาไทย ำน\u0e49ำ", "Tiếng Việt có dấu…", "ậ…", "1234567890 ½ ² ³",
    "punctuation!?.,;:'\"()[]{}", "``quoted''", "a  b   c", "tab\tsep\tvalues", "x" * 3 + "\u0301" * 3,
    "Ω Å K", "\u1e9b\u0323", "\u0958", "\u2126\u212b", "ﷺ", "ﷻ", "\u33c6", "⑴", "Ⅻ", "ℌ ℍ ℎ",
    "ǆ", "\U0001d400\U0001d5d4", "\u0f77", "\u2e9f", "\u0344", "\u1100\u1161\u11a8", "각",
    "Cụ thể, bạn sẽ tham gia một nhóm", "g̈", "ปีนัง", "\u0d4e", "a\u0308\u0301", "\u05d0\u05b7",
]


def normalizer_of(spec, fixtures):
    if isinstance(spec, tuple):
        fixture, index = spec
        js = json.loads((fixtures / fixture).read_text())["normalizer"]
        if index is not None:
            js = js["normalizers"][index]
        return js
    return spec


def build(js):
    tok = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": js,
           "pre_tokenizer": None, "post_processor": None, "decoder": None,
           "model": {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"}}
    return tokenizers.Tokenizer.from_str(json.dumps(tok)).normalizer


def run(normalizer, s):
    """Normalized string and the original byte offsets of each of its chars, as HF reports them."""
    ns = NormalizedString(s)
    normalizer.normalize(ns)
    pts = PreTokenizedString(s)
    pts.normalize(lambda n: normalizer.normalize(n))
    pts.split(lambda i, n: n.split(Regex(r"[\s\S]"), "isolated"))
    offsets = []
    for piece, (start, end), _ in pts.get_splits(offset_referential="original", offset_type="byte"):
        offsets += [start, end]
    assert len(offsets) == 2 * len(ns.normalized), (s, ns.normalized)
    if ns.normalized == s and offsets == identity_offsets(s):
        return None  # unchanged, offsets included
    return ns.normalized, offsets


def identity_offsets(s):
    out, b = [], 0
    for c in s:
        n = len(c.encode("utf-8"))
        out += [b, b + n]
        b += n
    return out


def sample_corpora(corpora, per_file, max_chars, rng):
    lines = []
    for path in sorted(corpora.glob("*/*")):
        text = path.read_text(encoding="utf-8").splitlines()
        text = [l for l in text if l.strip()]
        for l in rng.sample(text, min(per_file, len(text))):
            lines.append(l[:max_chars])
    return lines


# Chars that exercise the alignment logic: controls, deletions, expansions, combining marks,
# ligatures, half/full width, jamo, emoji sequences, CJK, RTL, surrogate-free astral chars.
POOL = ("a b\tZ\n\r\x00\x01\x1e\x7f\x85\x8f\xa0\xad\u0300\u0301\u0302\u0308\u0323\u0345\u034f"
        "\u0e33\u0e49\u093c\u0958\u200b\u200c\u200d\u2028\u2581\u3000\u3099\u309a\ufeff\ufe0f\ufffd"
        "ﬁﬃ™½①㍻㌀ｶﾞﾟＡａ！ǅİßΣς한\u1100\u1161\u11a8각我們𠀀😀👍🏽🇫🇷\U000e0001\ue000éÅΩ…‥ـﷺ")


def random_inputs(n, rng):
    out = []
    for _ in range(n):
        k = rng.randint(1, 12)
        chars = [rng.choice(POOL) if rng.random() < 0.8 else chr(rng.choice([rng.randint(0x20, 0x2FFF), rng.randint(0x3000, 0xFFFD), rng.randint(0x10000, 0x2FFFF)]))
                 for _ in range(k)]
        out.append("".join(c for c in chars if not 0xD800 <= ord(c) <= 0xDFFF))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-corpus", type=int, default=2)
    ap.add_argument("--max-chars", type=int, default=100)
    ap.add_argument("--fixtures", type=Path, default=REPO.parent / "shared" / "fixtures" / "hub")
    ap.add_argument("--corpora", type=Path, default=REPO.parent / "shared" / "corpora")
    ap.add_argument("--all-lines", type=Path, nargs="*", default=[], help="files whose every line is an input")
    ap.add_argument("--random", type=int, default=40, help="number of random strings")
    ap.add_argument("--out", type=Path, default=HERE / "normalizers_oracle.json")
    args = ap.parse_args()
    rng = random.Random(20240601)
    inputs = TRICKY + sample_corpora(args.corpora, args.per_corpus, args.max_chars, rng) + random_inputs(args.random, rng)
    for f in args.all_lines:
        inputs += [l for l in f.read_text(encoding="utf-8").splitlines()]
    configs, expected = [], {}
    for name, spec in CONFIGS:
        js = normalizer_of(spec, args.fixtures)
        entry = {"name": name}
        if isinstance(spec, tuple):
            entry["fixture"], entry["index"] = spec
        else:
            entry["normalizer"] = js
        configs.append(entry)
        normalizer = build(js)
        expected[name] = [run(normalizer, s) for s in inputs]
    out = {"generated_by": f"tokenizers {tokenizers.__version__}", "configs": configs, "inputs": inputs, "expected": expected}
    args.out.write_text(json.dumps(out, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"{args.out}: {len(configs)} configs x {len(inputs)} inputs")


if __name__ == "__main__":
    main()
