"""Bad input gives a non-zero exit and a message naming the problem on stderr, never a panic."""
from __future__ import annotations

import json
import re

import pytest

import harness as h


def _small_bpe() -> dict:
    """A tiny valid BPE tokenizer.json (built with HF, so it is well-formed); no other components,
    so that these tests depend on as little of the pipeline as possible."""
    from tokenizers import Tokenizer, models

    tok = Tokenizer(models.BPE({"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4, "[UNK]": 5},
                               [("a", "b"), ("ab", "c")], unk_token="[UNK]"))
    return json.loads(tok.to_str())


_precondition_ok: dict[str, bool] = {}


def _require_loadable(path: str):
    """The valid base file must work, or every error test would pass for the wrong reason."""
    if path not in _precondition_ok:
        r = h.run_cli(["encode", "-t", path, "--jsonl"], b'"abc"\n', check=False, timeout=60)
        _precondition_ok[path] = r.returncode == 0
        _precondition_ok[path + "#err"] = r.stderr.decode("utf-8", "replace")[:300]
    if not _precondition_ok[path]:
        pytest.fail("precondition: tokenkit cannot encode with the small valid BPE tokenizer.json "
                    f"this test mutates: {_precondition_ok[path + '#err']}", pytrace=False)


def _write(work_dir, name, content) -> str:
    p = work_dir / name
    if isinstance(content, (dict, list)):
        content = json.dumps(content)
    if isinstance(content, str):
        content = content.encode("utf-8")
    p.write_bytes(content)
    return str(p)


def _expect_error(args, stdin: bytes, keywords: list[str], what: str):
    r = h.run_cli(args, stdin, check=False, timeout=60)
    err = r.stderr.decode("utf-8", "replace")
    problems = []
    if r.returncode == 0:
        problems.append("exit status 0")
    if r.returncode == 101 or "panicked" in err or "RUST_BACKTRACE" in err:
        problems.append("panic")
    if not err.strip():
        problems.append("empty stderr")
    elif not any(re.search(k, err, re.IGNORECASE) for k in keywords):
        problems.append(f"stderr names none of {keywords}")
    h.record("errors", what, "-", "error-handling", h.Outcome(identical=int(not problems), total=1))
    assert not problems, f"{what}: {', '.join(problems)}; exit={r.returncode}; stderr={err[:500]!r}"


def _hf_rejects(path):
    from tokenizers import Tokenizer

    with pytest.raises(Exception):
        Tokenizer.from_file(path)


def _bad_files():
    base = _small_bpe()
    text = json.dumps(base)
    cases = {}
    cases["truncated-json"] = (text[: len(text) // 2], [r"json", r"eof", r"parse", r"unexpected end", r"truncat"])
    cases["empty-file"] = ("", [r"json", r"eof", r"empty", r"parse", r"unexpected end"])
    cases["not-json"] = ("this is not json\n", [r"json", r"parse", r"expected", r"format", r"detect"])
    for field, value in [("normalizer", {"type": "FooBarNormalizer"}),
                         ("pre_tokenizer", {"type": "FooBarPreTokenizer"}),
                         ("post_processor", {"type": "FooBarProcessor"}),
                         ("decoder", {"type": "FooBarDecoder"})]:
        j = json.loads(text)
        j[field] = value
        cases[f"unknown-{field}-type"] = (j, [value["type"]])
    j = json.loads(text)
    j["model"]["type"] = "FooBarModel"
    cases["unknown-model-type"] = (j, [r"FooBarModel", r"model"])
    j = json.loads(text)
    j["model"]["merges"].append(["ab", "qqmissing"])
    cases["merge-missing-token"] = (j, [r"qqmissing", r"merge"])
    j = json.loads(text)
    j["model"]["merges"].append("a qqmissing")
    cases["merge-missing-token-str"] = (j, [r"qqmissing", r"merge"])
    j = json.loads(text)
    j["model"]["vocab"]["a"] = "zero"
    cases["vocab-id-not-int"] = (j, [r"vocab", r"integer", r"invalid type", r"expected"])
    return cases


BAD_FILES = _bad_files()


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_bad_tokenizer_file(case, work_dir):
    content, keywords = BAD_FILES[case]
    _require_loadable(_write(work_dir, "good-small-bpe.json", _small_bpe()))
    path = _write(work_dir, f"bad-{case}.json", content)
    _hf_rejects(path)  # the file really is invalid for the reference
    _expect_error(["encode", "-t", path, "--jsonl"], b'"abc"\n', keywords, case)


def test_missing_tokenizer_file(work_dir):
    path = str(work_dir / "does-not-exist.json")
    _expect_error(["encode", "-t", path, "--jsonl"], b'"abc"\n', [re.escape("does-not-exist.json"), r"no such file",
                                                                   r"not found"], "missing-file")


@pytest.fixture(scope="module")
def good(work_dir):
    p = _write(work_dir, "good-small-bpe.json", _small_bpe())
    _require_loadable(p)
    return p


@pytest.mark.parametrize("ids", [[1000000], [0, 1, 4294967295], [6], [2, 99999999999]], ids=str)
def test_decode_id_out_of_range(ids, good):
    big = str(max(ids))
    _expect_error(["decode", "-t", good, "--jsonl"], (json.dumps(ids) + "\n").encode(),
                  [re.escape(big), r"out of range", r"unknown id", r"invalid id", r"not in (the )?vocab"],
                  f"decode-id-out-of-range-{big}")


def test_decode_stream_id_out_of_range(good):
    _expect_error(["decode", "-t", good, "--jsonl", "--stream"], b"[0, 1000000]\n",
                  [r"1000000", r"out of range", r"unknown id", r"invalid id"], "decode-stream-id-out-of-range")


@pytest.mark.parametrize("stdin,kw,what", [
    pytest.param(b'"abc\xff\xfe def"\n', [r"utf-?8", r"unicode", r"invalid"], "encode-invalid-utf8", id="encode-invalid-utf8"),
    pytest.param(b'"ok"\n"\xc3\x28"\n', [r"utf-?8", r"unicode", r"invalid"], "encode-invalid-utf8-line2", id="encode-invalid-utf8-line2"),
    pytest.param(b'"unterminated\n', [r"json", r"line 1", r"eof", r"parse"], "encode-bad-json-line", id="encode-bad-json-line"),
    pytest.param(b'"ok"\n{"a": 1}\n', [r"line 2", r"expected", r"string", r"array", r"invalid"], "encode-wrong-json-type", id="encode-wrong-json-type"),
    pytest.param(b'["a", "b", "c"]\n', [r"pair", r"two", r"2", r"expected", r"invalid"], "encode-three-element-array", id="encode-three-element-array"),
    pytest.param(b'42\n', [r"expected", r"string", r"invalid"], "encode-number", id="encode-number"),
])
def test_encode_bad_stdin(stdin, kw, what, good):
    _expect_error(["encode", "-t", good, "--jsonl"], stdin, kw, what)


@pytest.mark.parametrize("stdin,kw,what", [
    pytest.param(b'[0, 1\n', [r"json", r"line 1", r"eof", r"parse"], "decode-bad-json", id="decode-bad-json"),
    pytest.param(b'["a"]\n', [r"expected", r"integer", r"id", r"invalid"], "decode-string-id", id="decode-string-id"),
    pytest.param(b'[-1]\n', [r"expected", r"integer", r"negative", r"invalid", r"-1", r"range"], "decode-negative-id", id="decode-negative-id"),
    pytest.param(b'[0]\n\xff\n', [r"utf-?8", r"unicode", r"invalid", r"json"], "decode-invalid-utf8", id="decode-invalid-utf8"),
])
def test_decode_bad_stdin(stdin, kw, what, good):
    _expect_error(["decode", "-t", good, "--jsonl"], stdin, kw, what)


def test_pretokenized_wrong_shape(good):
    _expect_error(["encode", "-t", good, "--jsonl", "--pretokenized"], b'"not an array"\n',
                  [r"expected", r"array", r"list", r"pretokenized", r"invalid"], "pretokenized-wrong-shape")
