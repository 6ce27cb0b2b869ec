"""NFC against Python's `unicodedata.normalize` and HF `tokenizers` (strings, ids and offsets).

The NFC normalizer on the real corpora and on random strings dense in the chars NFC acts on
(combining marks in and out of canonical order, Hangul jamo, decomposable and composing
chars): the normalized string equals `unicodedata.normalize("NFC", ...)` and HF's, and the
Qwen3 tokenizer.json (NFC + byte-level BPE) gives HF's ids and offsets.

Run: .venv/bin/python -m pytest tests/python/test_nfc.py -q (after installing the package).
"""
from __future__ import annotations

import os
import random
import unicodedata
from pathlib import Path

import pytest

tokenizers = pytest.importorskip("tokenizers")
import tokenkit  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(os.environ.get("TOKENKIT_FIXTURES", ROOT / ".fixtures"))
CORPORA = FIXTURES / "corpora"
QWEN3 = FIXTURES / "registry" / "qwen3" / "tokenizer.json"

# Chars NFC acts on, chosen from old Unicode versions (Python's tables and the library's agree
# there), and plain letters and spaces between them.
ALPHABET = (
    "aAeEoOuUnNcC  \n"
    "\u0301\u0300\u0308\u0323\u0302\u0315\u0345\u0327\u030a\u0303\u031b"  # combining marks, several classes
    "\u05b0\u05d0\u05bc"  # Hebrew point, letter, dagesh
    "\u093f\u0915\u094d\u093c\u0928\u0929"  # Devanagari (nukta composes with some letters only)
    "\u1100\u1161\u11a8\uac00\uac01"  # Hangul jamo and syllables
    "\u0b47\u0b3e\u0b57"  # Oriya vowel parts that compose
    "\u00c5\u212b\u00e9\u1e0a\u0344\u0f73\u2adc\uf900"  # composed, singletons, decompose-only
    "\u65e5\u3099\u304b\u309a"  # CJK, kana with (semi-)voiced marks
)


def random_strings(n, seed=17):
    rng = random.Random(seed)
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 60))) for _ in range(n)]


def corpus_texts():
    files = sorted(CORPORA.rglob("*.txt")) if CORPORA.is_dir() else []
    assert files, f"no corpora in {CORPORA}: run scripts/setup.sh"
    out = []
    for f in files:
        text = f.read_text(encoding="utf-8", errors="replace")[:200_000]
        out.append((f.name, text))
        # The same text decomposed: NFC has to compose it back.
        out.append((f"{f.name} (NFD)", unicodedata.normalize("NFD", text)))
    return out


def test_nfc_strings_as_unicodedata_and_hf():
    ours, hf = tokenkit.normalizers.NFC(), tokenizers.normalizers.NFC()
    compared = 0
    for s in random_strings(5000) + [t for _, t in corpus_texts()]:
        want = unicodedata.normalize("NFC", s)
        assert ours.normalize_str(s) == want, ascii(s[:200])
        assert hf.normalize_str(s) == want, ascii(s[:200])
        compared += 1
    assert compared > 5000


def test_qwen3_ids_and_offsets_as_hf_on_mark_heavy_text():
    assert QWEN3.is_file(), f"{QWEN3} missing: run scripts/setup.sh"
    ours, hf = tokenkit.Tokenizer.from_file(str(QWEN3)), tokenizers.Tokenizer.from_file(str(QWEN3))
    texts = random_strings(2000, seed=5) + ["".join(random_strings(400, seed=6))]
    texts += [t[:20_000] for _, t in corpus_texts()]
    changed = 0
    for s in texts:
        a, b = ours.encode(s), hf.encode(s)
        assert a.ids == b.ids, ascii(s[:200])
        assert a.offsets == b.offsets, ascii(s[:200])
        changed += unicodedata.normalize("NFC", s) != s
    # Most of the texts are ones NFC changes.
    assert changed > len(texts) // 2, changed
