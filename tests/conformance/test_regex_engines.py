"""The regex engines of tokenkit's split (`utils::regex`) against HF tokenizers' Oniguruma, on real
tokenizer.json files whose split pattern is edited so that no hand-written lexer recognises it
(the same meaning, written differently): the pattern then runs on the finite automaton (the Rust
test `patterns_the_engines_may_read_differently_stay_on_oniguruma` checks these exact edits take
that path). Ids compared on whole corpus files and on texts made to reach every corner of the
classes: every code point (surrogates aside) in order, runs of every Unicode general category,
and random mixes of all scripts, whitespace and punctuation.
"""
from __future__ import annotations

import json
import random
import unicodedata

import pytest

import harness as h

# (fixture, the pattern as the file has it, the edit) — both readings mean the same.
EDITS = {
    "llama3": ("registry/llama3/tokenizer.json", r"\p{N}{1,3}", r"[\p{N}]{1,3}"),
    "qwen3": ("registry/qwen3/tokenizer.json", r"|\p{N}|", r"|[\p{N}]|"),
    "deepseek_v3": ("registry/deepseek_v3/tokenizer.json", r"[\p{L}\p{M}]+", r"[\p{M}\p{L}]+"),
}


def _edited(name: str, work_dir) -> str:
    rel, old, new = EDITS[name]
    p = h.fixture_path(rel)
    if p is None:
        pytest.skip(f"{rel} absent on this machine (see .fixtures/MANIFEST.json)")
    text = p.read_text(encoding="utf-8")
    old_json, new_json = json.dumps(old)[1:-1], json.dumps(new)[1:-1]
    assert text.count(old_json) == 1, f"{rel}: the pattern to edit ({old}) is not there once"
    out = work_dir / f"regex_engine_{name}.json"
    out.write_text(text.replace(old_json, new_json), encoding="utf-8")
    return str(out)


def _corner_texts() -> list[str]:
    texts = []
    # Every code point, 2,000 at a time, with and without spaces between them.
    cps = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    for i in range(0, len(cps), 2000):
        chunk = cps[i:i + 2000]
        texts.append("".join(chunk))
        texts.append(" ".join(chunk))
    # Runs of each general category (BMP and the first planes), alone and after a space/letter.
    by_cat: dict[str, list[str]] = {}
    for c in range(0x30000):
        if not 0xD800 <= c <= 0xDFFF:
            by_cat.setdefault(unicodedata.category(chr(c)), []).append(chr(c))
    rng = random.Random(17)
    for cat, chars in sorted(by_cat.items()):
        run = "".join(rng.choice(chars) for _ in range(300))
        texts += [run, " " + run, "a" + run + "\n", " ".join(run[:100]), "  \t".join(run[:50])]
    # Random mixes of everything the patterns tell apart.
    alphabet = (" \t\n\r\x0b\x0c\x85\xa0\u1680\u2000\u2028\u2029\u3000'sStTdDlLmMrReEvVſK"
                "aZéß日本ア😀👍🏽1٣३²_-./,!?«»。€©\u0301\u0300\u093fक한Ω\u01c5\u02b0\x00\x1b\u200d\ufeff")
    for _ in range(400):
        texts.append("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 200))))
        limits = [0x80, 0x800, 0x10000, 0x110000]
        cps = (rng.randrange(rng.choice(limits)) for _ in range(200))
        texts.append("".join(chr(c) for c in cps if not 0xD800 <= c <= 0xDFFF))
    return texts


@pytest.mark.parametrize("name", sorted(EDITS))
def test_automaton_split_encodes_like_hf(name, work_dir):
    import tokenkit

    path = _edited(name, work_dir)
    ours = tokenkit.Tokenizer.from_file(path)
    hf = h.load_hf(path)
    files = h.corpus_files()
    assert files, "no corpora in .fixtures (run scripts/fetch_fixtures.py)"
    texts = [(h.corpus_dir() / f).read_text(encoding="utf-8") for f in files]
    texts += _corner_texts()
    total = 0
    for i, t in enumerate(texts):
        want = hf.encode(t, add_special_tokens=False).ids
        got = ours.encode(t, add_special_tokens=False).ids
        if got != want:
            j = next((k for k, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
            pytest.fail(f"{name}: text {i} differs at id {j}: ours {got[j:j + 5]} HF {want[j:j + 5]} "
                        f"(text starts {t[:40]!r})")
        total += len(want)
    print(f"{name}: {len(texts)}/{len(texts)} texts, {total} ids identical to HF")
    assert total > 100_000
