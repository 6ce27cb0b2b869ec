"""Worst-case inputs against the reference libraries (issue 17): tokenkit gives tiktoken's and
tokenizers' ids on a long run of every char class of every fast lexer's pattern and on random
mixes (the texts of crates/tokenkit/src/utils/lexers/adversarial.rs, read from that
file so that the Rust tests, the `linear` benchmark and this test share one list); long
added tokens, sparse special-token ids and a backtracking Split regex load or fail cleanly.
Timing is the benchmark's job (`cargo bench -p tokenkit-bench --bench linear`), not this one's.
"""
from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / ".fixtures"
os.environ.setdefault("TOKENKIT_TIKTOKEN_DIR", str(FIXTURES / "tiktoken"))

import tokenkit  # noqa: E402
from tokenkit import tiktoken as tk  # noqa: E402

SIZE = 4000


def _unescape(s: str) -> str:
    s = re.sub(r"\\u\{([0-9a-fA-F]+)\}", lambda m: chr(int(m.group(1), 16)), s)
    return s.replace("\\t", "\t").replace("\\n", "\n").replace("\\r", "\r").replace("\\'", "'").replace("\\\\", "\\")


def adversarial_texts(size: int) -> list[tuple[str, str]]:
    """The runs and mixes of adversarial.rs (runs repeated to `size` bytes, mixes drawn at
    random with a fixed seed; Python's draws differ from Rust's, the alphabets do not)."""
    src = (ROOT / "crates/tokenkit/src/utils/lexers/adversarial.rs").read_text(encoding="utf-8")
    tuples = re.findall(r'\("([a-z0-9-]+)",\s*"((?:[^"\\]|\\.)*)"\)', src)
    rng = random.Random(17)
    out = []
    for name, unit in tuples:
        unit = _unescape(unit)
        if name.startswith("mix-"):
            chars = list(unit)
            s = ""
            while len(s.encode()) < size:
                s += rng.choice(chars)
            out.append((name, s))
        else:
            out.append((name, unit * max(1, size // len(unit.encode()))))
    out.append(("mix-printable-ascii", "".join(chr(32 + rng.randrange(95)) for _ in range(size))))
    assert len(out) > 50, "adversarial.rs's lists were not found"
    return out


TEXTS = adversarial_texts(SIZE)


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
def test_tiktoken_ids_on_adversarial_texts(name):
    tiktoken = pytest.importorskip("tiktoken")
    import tiktoken.load
    import tiktoken_ext.openai_public as op

    path = FIXTURES / "tiktoken" / f"{name}.tiktoken"
    if not path.exists():
        pytest.skip(f"{path} missing")
    op.load_tiktoken_bpe = lambda *_a, **_k: tiktoken.load.load_tiktoken_bpe(str(path))
    ref = tiktoken.Encoding(**getattr(op, name)())
    ours = tk.get_encoding(name)
    differ = [label for label, t in TEXTS if ours.encode_ordinary(t) != ref.encode_ordinary(t)]
    assert not differ, f"{len(TEXTS) - len(differ)}/{len(TEXTS)} identical; differ: {differ}"


JSON = ["hub/gpt2.json", "registry/llama3/tokenizer.json", "registry/qwen3/tokenizer.json",
        "registry/deepseek_v3/tokenizer.json"]


@pytest.mark.parametrize("rel", JSON)
def test_tokenizer_json_ids_on_adversarial_texts(rel):
    tokenizers = pytest.importorskip("tokenizers")
    path = FIXTURES / rel
    if not path.exists():
        pytest.skip(f"{path} missing")
    ref = tokenizers.Tokenizer.from_file(str(path))
    ours = tokenkit.Tokenizer.from_file(str(path))
    differ = [label for label, t in TEXTS
              if ours.encode(t, add_special_tokens=False).ids != ref.encode(t, add_special_tokens=False).ids]
    assert not differ, f"{len(TEXTS) - len(differ)}/{len(TEXTS)} identical; differ: {differ}"


def test_general_regex_path_ids_on_adversarial_texts():
    """Llama-3 with its digit group written `[\\p{N}]{1,3}`: no fast lexer, Oniguruma runs."""
    tokenizers = pytest.importorskip("tokenizers")
    path = FIXTURES / "registry/llama3/tokenizer.json"
    if not path.exists():
        pytest.skip(f"{path} missing")
    s = path.read_text(encoding="utf-8").replace(r"\\p{N}{1,3}", r"[\\p{N}]{1,3}")
    ref, ours = tokenizers.Tokenizer.from_str(s), tokenkit.Tokenizer.from_str(s)
    differ = [label for label, t in TEXTS
              if ours.encode(t, add_special_tokens=False).ids != ref.encode(t, add_special_tokens=False).ids]
    assert not differ, f"{len(TEXTS) - len(differ)}/{len(TEXTS)} identical; differ: {differ}"


def _wordlevel_json(pre_tokenizer=None):
    return json.dumps({"version": "1.0", "added_tokens": [], "normalizer": None, "pre_tokenizer": pre_tokenizer,
                       "model": {"type": "WordLevel", "vocab": {"<unk>": 0, "a": 1, "b": 2}, "unk_token": "<unk>"}})


def test_a_backtracking_split_regex_is_an_error_not_a_panic():
    """HF panics (PanicException); tokenkit raises an ordinary exception naming the pattern,
    and gives HF's pieces where Oniguruma finishes."""
    tokenizers = pytest.importorskip("tokenizers")
    split = {"type": "Split", "pattern": {"Regex": "(a|aa)+$"}, "behavior": "Isolated", "invert": False}
    ours = tokenkit.Tokenizer.from_str(_wordlevel_json(split))
    ref = tokenizers.Tokenizer.from_str(_wordlevel_json(split))
    for short in ["ab", "ba", "b" * 50]:
        assert ours.encode(short).ids == ref.encode(short).ids
    with pytest.raises(Exception) as info:
        ours.encode("a" * 200 + "b")
    assert type(info.value).__name__ != "PanicException"
    assert "(a|aa)+$" in str(info.value) and "backtracks" in str(info.value)


def test_a_split_regex_that_scans_ahead_is_an_error_in_bounded_time():
    """`a(?=.*z)` scans to the end of the text from every `a`: quadratic in HF (about 70 s
    for 200 KB of `a`), an error naming the pattern in well under a second in tokenkit, and
    HF's pieces on short texts; `a.*z` runs on the finite automaton, linear, no error."""
    import time
    tokenizers = pytest.importorskip("tokenizers")
    for pattern in ["a(?=.*z)", "a.*z"]:
        split = {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False}
        ours = tokenkit.Tokenizer.from_str(_wordlevel_json(split))
        ref = tokenizers.Tokenizer.from_str(_wordlevel_json(split))
        for short in ["ab", "aazb", "b" * 50, "a" * 100 + "z"]:
            assert ours.encode(short).ids == ref.encode(short).ids
        start = time.process_time()
        if pattern == "a.*z":
            # Reads the same to the finite automaton, which runs it in linear time: no error.
            long = ours.encode("a" * 200_000).ids
            assert long == ours.encode("a" * 2_000).ids == ref.encode("a" * 2_000).ids
        else:
            with pytest.raises(Exception) as info:
                ours.encode("a" * 200_000)
            assert type(info.value).__name__ != "PanicException"
            assert pattern in str(info.value) and "regex too expensive on this input" in str(info.value)
        secs = time.process_time() - start
        assert secs < 1.0, f"{pattern}: {secs:.2f} s"


def test_a_megabyte_added_token_loads_and_matches_like_hf():
    tokenizers = pytest.importorskip("tokenizers")
    ours = tokenkit.Tokenizer.from_str(_wordlevel_json({"type": "WhitespaceSplit"}))
    ref = tokenizers.Tokenizer.from_str(_wordlevel_json({"type": "WhitespaceSplit"}))
    long = "x" * 1_000_000
    assert ours.add_tokens([long]) == ref.add_tokens([long]) == 1
    text = f"a {long} b {long[:-1]}"
    assert ours.encode(text).ids == ref.encode(text).ids


def test_a_sparse_special_token_id_like_tiktoken():
    tiktoken = pytest.importorskip("tiktoken")
    ranks = {bytes([i]): i for i in range(256)}
    ranks[b"ab"] = 256
    args = dict(name="sparse", pat_str=r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
                mergeable_ranks=ranks, special_tokens={"<|x|>": 2**32 - 1})
    ref, ours = tiktoken.Encoding(**args), tk.Encoding(**args)
    text = "ab <|x|> ab"
    assert ours.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
    assert ours.n_vocab == ref.n_vocab == 2**32
    assert ours.decode([256, 2**32 - 1]) == ref.decode([256, 2**32 - 1])
