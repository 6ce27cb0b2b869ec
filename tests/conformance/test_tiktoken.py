"""tiktoken encodings: `tokenkit encode -e NAME` / `-t x.tiktoken` against the `tiktoken` package
(0.14.0, rank files from .fixtures/tiktoken, nothing downloaded) on every corpus (lines and
multi-line chunks), every special-token policy and error case, counts and decode; and the
tokenizer.json conversions (`tokenkit save -e NAME`) loaded by HF `tokenizers`, which must give
tiktoken's ids."""
from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path

import pytest

import harness as h

tiktoken = pytest.importorskip("tiktoken")
import tiktoken.load  # noqa: E402
from tiktoken_ext import openai_public  # noqa: E402

FILES = {"r50k_base": "r50k_base", "p50k_base": "p50k_base", "p50k_edit": "p50k_base",
         "cl100k_base": "cl100k_base", "o200k_base": "o200k_base", "o200k_harmony": "o200k_base"}
MAIN = ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"]
CORPORA = h.corpus_files() or ["<no corpora>"]
TIKTOKEN_DIR = h.FIXTURES / "tiktoken"


def rank_file(name: str) -> Path:
    p = TIKTOKEN_DIR / f"{FILES[name]}.tiktoken"
    if not p.is_file():
        pytest.skip(f"{p} not present (run scripts/fetch_fixtures.py)")
    return p


@lru_cache(maxsize=None)
def oracle(name: str):
    """tiktoken's encoding `name`, its ranks read from the fixture file."""
    path = rank_file(name)
    ctor = openai_public.ENCODING_CONSTRUCTORS[name]
    saved = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = lambda *a, **k: tiktoken.load.load_tiktoken_bpe(str(path))
    try:
        spec = ctor()
    finally:
        openai_public.load_tiktoken_bpe = saved
    spec.pop("explicit_n_vocab", None)
    return tiktoken.Encoding(spec["name"], pat_str=spec["pat_str"], mergeable_ranks=spec["mergeable_ranks"],
                             special_tokens=spec["special_tokens"])


def cli(args: list[str], stdin: bytes = b"", check: bool = True, data_dir: Path = TIKTOKEN_DIR):
    env_dir = os.environ.get("TOKENKIT_TIKTOKEN_DIR")
    os.environ["TOKENKIT_TIKTOKEN_DIR"] = str(data_dir)
    try:
        return h.run_cli(args, stdin, check=check)
    finally:
        if env_dir is None:
            os.environ.pop("TOKENKIT_TIKTOKEN_DIR", None)
        else:
            os.environ["TOKENKIT_TIKTOKEN_DIR"] = env_dir


def cli_ids(name: str, texts: list[str], extra: list[str] = (), by_file: bool = False) -> list:
    src = ["-t", str(rank_file(name))] + (["-e", name] if name != FILES[name] else []) if by_file else ["-e", name]
    r = cli(["encode", *src, "--jsonl", *extra], h.to_jsonl(texts))
    return [row.get("ids", row.get("count")) for row in h.parse_jsonl(r.stdout, len(texts), "encode")]


def compare_ids(name: str, corpus: str, kind: str, texts: list[str], expected: list, extra: list[str] = (),
                by_file: bool = False):
    with h.recording_cli_errors("tiktoken", name, corpus, kind, len(texts)):
        got = cli_ids(name, texts, extra, by_file)
    h.compare("tiktoken", name, corpus, kind, texts, expected, got)


@pytest.mark.parametrize("corpus", CORPORA)
@pytest.mark.parametrize("name", MAIN)
def test_encode_ordinary_like_tiktoken(name, corpus):
    if not h.corpus_files():
        pytest.skip("no corpora in .fixtures")
    enc = oracle(name)
    lines = h.sample_lines(corpus, 300)
    compare_ids(name, corpus, "lines", lines, [enc.encode_ordinary(t) for t in lines], ["--disallowed-special", "none"])
    chunks = h.sample_chunks(corpus, 60)
    compare_ids(name, corpus, "chunks", chunks, [enc.encode(t, disallowed_special=()) for t in chunks],
                ["--disallowed-special", "none"], by_file=True)


SPECIAL_TEXTS = [
    "plain text", "<|endoftext|>", "a<|endoftext|>b", "x <|endoftext|> y<|endoftext|>", "<|endoftext|",
    "<|fim_prefix|>a<|fim_middle|>b<|fim_suffix|>", "<|endofprompt|> q", "<|<|endoftext|>|>",
    "<|start|>user<|message|>hi<|end|>", "<|reserved_200100|>", "\n<|endoftext|>\n\n",
]


@pytest.mark.parametrize("name", list(FILES))
def test_special_token_policies(name):
    enc = oracle(name)
    specials = sorted(enc.special_tokens_set)
    one = specials[0]
    policies = [
        ("allowed=all", ["--allowed-special", "all"], dict(allowed_special="all")),
        ("disallowed=none", ["--disallowed-special", "none"], dict(disallowed_special=())),
        (f"allowed={one}", ["--allowed-special", one, "--disallowed-special", "none"],
         dict(allowed_special={one}, disallowed_special=())),
        (f"allowed={one},disallowed=all", ["--allowed-special", one], dict(allowed_special={one})),
        ("disallowed=one", ["--disallowed-special", one], dict(disallowed_special={one})),
    ]
    for label, flags, kw in policies:
        ok_texts, expected = [], []
        for t in SPECIAL_TEXTS:
            try:
                expected.append(enc.encode(t, **kw))
                ok_texts.append(t)
            except ValueError:
                # an error case: the CLI must fail with tiktoken's message
                r = cli(["encode", "-e", name, *flags, t], check=False)
                assert r.returncode != 0, f"{name} {label}: {t!r} should be an error"
                with pytest.raises(ValueError) as ei:
                    enc.encode(t, **kw)
                assert_cli_disallowed_message(str(ei.value), r.stderr.decode())
        compare_ids(name, "special", label, ok_texts, expected, flags)
        counts = [len(e) for e in expected]
        compare_ids(name, "special", label + " count", ok_texts, counts, [*flags, "--count"])


def assert_cli_disallowed_message(tiktoken_message: str, stderr: str):
    """The CLI names the token tiktoken names, and its own options instead of tiktoken's Python
    arguments."""
    import re

    token = re.search(r"disallowed special token '(.*?)'\.", tiktoken_message).group(1)
    assert f'"{token}"' in stderr and "--allowed-special" in stderr and "--disallowed-special none" in stderr, stderr
    assert "allowed_special=" not in stderr and "disallowed_special=" not in stderr, stderr


def test_default_policy_rejects_special_text():
    enc = oracle("cl100k_base")
    r = cli(["encode", "-e", "cl100k_base", "hi <|endoftext|>"], check=False)
    assert r.returncode != 0
    with pytest.raises(ValueError) as ei:
        enc.encode("hi <|endoftext|>")
    assert_cli_disallowed_message(str(ei.value), r.stderr.decode())
    r = cli(["encode", "-e", "cl100k_base", "hello world"])
    assert json.loads(r.stdout) == {"ids": enc.encode("hello world")}


@pytest.mark.parametrize("name", MAIN)
def test_decode_like_tiktoken(name):
    enc = oracle(name)
    texts = h.mixed_sample(5, 1)
    id_lists = [enc.encode_ordinary(t) for t in texts]
    # partial sequences cut inside multi-byte chars, and special ids
    id_lists += [ids[: max(1, len(ids) // 2 + 1)] for ids in id_lists if ids]
    id_lists += [[enc.eot_token, 0, 1]]
    r = cli(["decode", "-e", name, "--jsonl"], h.to_jsonl(id_lists))
    got = h.parse_jsonl(r.stdout, len(id_lists), "decode")
    h.compare("tiktoken", name, "mixed", "decode", id_lists, [enc.decode(x) for x in id_lists], got)
    bad = [enc.n_vocab + 5]
    r = cli(["decode", "-e", name, *map(str, bad)], check=False)
    assert r.returncode != 0 and "out of range" in r.stderr.decode()
    # strict decoding fails where tiktoken's errors="strict" fails
    for ids in id_lists[:20]:
        try:
            enc.decode(ids, errors="strict")
            strict_ok = True
        except UnicodeDecodeError:
            strict_ok = False
        r = cli(["decode", "-e", name, "--errors", "strict", *map(str, ids)], check=False)
        assert (r.returncode == 0) == strict_ok, ids


def test_bad_inputs():
    r = cli(["encode", "-e", "cl200k_base", "x"], check=False)
    assert r.returncode != 0 and "unknown tiktoken encoding" in r.stderr.decode()
    assert "panicked" not in r.stderr.decode()


def test_rank_file_hash_is_checked(work_dir):
    """A named encoding's rank file found in the data directory must have the published sha256
    (as tiktoken checks its cache): a file with one line dropped is refused, naming both hashes."""
    good = rank_file("r50k_base").read_bytes()
    bad_dir = work_dir / "corrupt_tiktoken"
    bad_dir.mkdir(exist_ok=True)
    (bad_dir / "r50k_base.tiktoken").write_bytes(good[: good.rindex(b"\n", 0, len(good) - 1) + 1])
    r = cli(["encode", "-e", "r50k_base", "hello"], check=False, data_dir=bad_dir)
    err = r.stderr.decode()
    assert r.returncode != 0 and "sha256" in err and "306cd27f" in err and "panicked" not in err, err


@pytest.mark.parametrize("name", MAIN)
def test_conversion_loads_in_hf(name, work_dir):
    tokenizers = pytest.importorskip("tokenizers")
    out = work_dir / f"{name}.tokenizer.json"
    cli(["save", "-e", name, "-o", str(out)])
    tok = tokenizers.Tokenizer.from_file(str(out))
    enc = oracle(name)
    texts = h.mixed_sample(20, 4)
    expected = [enc.encode(t, allowed_special="all") for t in texts]
    got = [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)]
    h.compare("tiktoken", name, "mixed", "HF on tokenizer.json conversion", texts, expected, got)
    # and back: the conversion as a rank file equals the original ranks
    back = work_dir / f"{name}.roundtrip.tiktoken"
    cli(["save", "-t", str(out), "-o", str(back)])
    original = tiktoken.load.load_tiktoken_bpe(str(rank_file(name)))
    assert tiktoken.load.load_tiktoken_bpe(str(back)) == original


# Llama-3's tiktoken-format `tokenizer.model` (from Meta's llama-models package), read with
# `-t tokenizer.model -e llama3`, against tiktoken configured the way Meta's own
# `llama_models/llama3/tokenizer.py` configures it (its pattern, 256 special tokens after the ranks).
LLAMA3_MODEL = h.FIXTURES / "registry" / "llama3" / "tokenizer.model"
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                  r"|\s*[\r\n]+|\s+(?!\S)|\s+")


@lru_cache(maxsize=None)
def llama3_oracle():
    if not LLAMA3_MODEL.is_file():
        pytest.skip(f"{LLAMA3_MODEL} not present (run scripts/fetch_fixtures.py)")
    ranks = tiktoken.load.load_tiktoken_bpe(str(LLAMA3_MODEL))
    named = ["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>", "<|reserved_special_token_1|>",
             "<|finetune_right_pad_id|>", "<|step_id|>", "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>",
             "<|eot_id|>", "<|python_tag|>", "<|image|>"]
    specials = named + [f"<|reserved_special_token_{2 + i}|>" for i in range(256 - len(named))]
    return tiktoken.Encoding("llama3", pat_str=LLAMA3_PATTERN, mergeable_ranks=ranks,
                             special_tokens={t: len(ranks) + i for i, t in enumerate(specials)})


def llama3_cli_ids(texts: list[str], flags: list[str]) -> list:
    r = cli(["encode", "-t", str(LLAMA3_MODEL), "-e", "llama3", "--jsonl", *flags], h.to_jsonl(texts))
    return [row["ids"] for row in h.parse_jsonl(r.stdout, len(texts), "encode")]


@pytest.mark.parametrize("corpus", CORPORA)
def test_llama3_model_file_like_meta(corpus):
    if not h.corpus_files():
        pytest.skip("no corpora in .fixtures")
    enc = llama3_oracle()
    lines, chunks = h.sample_lines(corpus, 300), h.sample_chunks(corpus, 60)
    for kind, texts in (("lines", lines), ("chunks", chunks)):
        with h.recording_cli_errors("tiktoken", "llama3.model", corpus, kind, len(texts)):
            got = llama3_cli_ids(texts, ["--disallowed-special", "none"])
        h.compare("tiktoken", "llama3.model", corpus, kind, texts, [enc.encode_ordinary(t) for t in texts], got)


def test_llama3_model_file_special_tokens():
    enc = llama3_oracle()
    texts = ["<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>", "a<|python_tag|>b",
             "<|reserved_special_token_250|>", "plain"]
    got = llama3_cli_ids(texts, ["--allowed-special", "all"])
    h.compare("tiktoken", "llama3.model", "special", "allowed=all", texts,
              [enc.encode(t, allowed_special="all") for t in texts], got)
    # Without a name, a rank file called tokenizer.model is refused with a clear error.
    r = cli(["encode", "-t", str(LLAMA3_MODEL), "hi"], check=False)
    assert r.returncode != 0 and "name it" in r.stderr.decode(), r.stderr.decode()
