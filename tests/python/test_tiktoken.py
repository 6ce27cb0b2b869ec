"""tokenkit.tiktoken against the tiktoken package on the four OpenAI encodings: ids of every
encode call and special-token policy (errors included), batches, numpy, counts, decoding in
every form, single tokens, vocabulary facts, pickling. Rank files come from .fixtures/tiktoken
(set-up links them into tokenkit's data directory); tiktoken reads the same files."""
from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

tiktoken = pytest.importorskip("tiktoken")

FIXTURES = Path(__file__).resolve().parents[2] / ".fixtures"
os.environ.setdefault("TOKENKIT_TIKTOKEN_DIR", str(FIXTURES / "tiktoken"))

from tokenkit import tiktoken as tk  # noqa: E402

NAMES = ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"]


def reference(name):
    import tiktoken.load
    import tiktoken_ext.openai_public as op

    path = FIXTURES / "tiktoken" / f"{name}.tiktoken"
    if not path.exists():
        pytest.skip(f"{path} missing")
    op.load_tiktoken_bpe = lambda *_a, **_k: tiktoken.load.load_tiktoken_bpe(str(path))
    return tiktoken.Encoding(**getattr(op, name)())


def texts():
    out = ["", "hello world", "Hello, 世界! 🤖 ça va?", "  leading and   multiple   spaces \n\n\t tabs",
           "<|endoftext|> in the middle <|endoftext|>", "don't I'LL we've 12345678 3.14159",
           "a\ud800b lone surrogate", "x" * 5000, "<|fim_prefix|>def f():<|fim_suffix|>", "<|endofprompt|>"]
    shared = [FIXTURES / rel for rel in ("corpora/en/botchan.txt", "corpora/ja/wagahai.txt",
                                          "corpora/code/cpython-3.11-stdlib.py.txt", "corpora/mixed/mixed_input.txt")]
    # Without ../shared: the fixture step's built-in sample corpus (tests below count on corpus texts).
    builtin = sorted((FIXTURES / "corpora/builtin").rglob("*.txt"))
    for p in [p for p in shared if p.exists()] or builtin:
        if p.exists():
            lines = p.read_text(encoding="utf-8").splitlines(keepends=True)
            out += lines[:60] + ["".join(lines[i:i + 5]) for i in range(100, 400, 50)]
    return out


TEXTS = texts()
POLICIES = [dict(), dict(allowed_special="all"), dict(disallowed_special=()), dict(allowed_special={"<|endoftext|>"}),
            dict(allowed_special={"<|endoftext|>"}, disallowed_special=()),
            dict(disallowed_special={"<|endoftext|>"}), dict(allowed_special="all", disallowed_special="all")]


def outcome(f):
    try:
        return f(), None
    except Exception as e:  # noqa: BLE001
        return None, e


@pytest.fixture(scope="module", params=NAMES)
def pair(request):
    return reference(request.param), tk.get_encoding(request.param)


def test_facts(pair):
    ref, ours = pair
    assert ours.name == ref.name and ours._pat_str == ref._pat_str
    assert (ours.n_vocab, ours.max_token_value, ours.eot_token) == (ref.n_vocab, ref.max_token_value, ref.eot_token)
    assert ours.special_tokens_set == ref.special_tokens_set and ours._special_tokens == ref._special_tokens
    assert ours.token_byte_values() == ref.token_byte_values()
    assert ours._mergeable_ranks == ref._mergeable_ranks
    assert all(ours.is_special_token(i) == ref.is_special_token(i) for i in list(ref._special_tokens.values()) + [0, 5])


def test_encode_every_policy(pair):
    ref, ours = pair
    same = 0
    for text in TEXTS:
        assert ours.encode_ordinary(text) == ref.encode_ordinary(text), text[:80]
        for kw in POLICIES:
            r, err = outcome(lambda: ref.encode(text, **kw))
            if err is not None:
                with pytest.raises(type(err)) as got:
                    ours.encode(text, **kw)
                assert str(got.value) == str(err), (text[:80], kw)
                with pytest.raises(type(err)):
                    ours.count(text, **kw)
            else:
                assert ours.encode(text, **kw) == r, (text[:80], kw)
                assert ours.count(text, **kw) == len(r)
            same += 1
    assert same == len(TEXTS) * len(POLICIES)


def test_batches_and_numpy(pair):
    ref, ours = pair
    batch = [t for t in TEXTS if "<|" not in t]
    assert ours.encode_ordinary_batch(batch) == ref.encode_ordinary_batch(batch)
    assert ours.encode_batch(TEXTS, allowed_special="all") == ref.encode_batch(TEXTS, allowed_special="all")
    with pytest.raises(ValueError):
        ours.encode_batch(TEXTS)
    import numpy as np
    for text in [t for t in TEXTS[:12] if "\ud800" not in t]:  # tiktoken's encode_to_numpy rejects surrogates
        got = ours.encode_to_numpy(text, disallowed_special=())
        assert got.dtype == np.uint32 and got.tolist() == ref.encode_to_numpy(text, disallowed_special=()).tolist()


def test_decoding(pair):
    ref, ours = pair
    id_lists = [ref.encode(t, allowed_special="all") for t in TEXTS]
    # Token boundaries inside chars: lossy and strict decoding of cut sequences.
    id_lists += [ids[1:] for ids in id_lists if len(ids) > 1] + [[ref.encode_single_token("é".encode()[:1]) if False else 1, 2]]
    for ids in id_lists:
        assert ours.decode_bytes(ids) == ref.decode_bytes(ids)
        assert ours.decode(ids) == ref.decode(ids)
        assert ours.decode_tokens_bytes(ids) == ref.decode_tokens_bytes(ids)
        r, err = outcome(lambda: ref.decode(ids, errors="strict"))
        if err is None:
            assert ours.decode(ids, errors="strict") == r
            assert ours.decode_with_offsets(ids) == ref.decode_with_offsets(ids)
        else:
            with pytest.raises(UnicodeDecodeError):
                ours.decode(ids, errors="strict")
    assert ours.decode_batch(id_lists) == ref.decode_batch(id_lists)
    assert ours.decode_bytes_batch(id_lists) == ref.decode_bytes_batch(id_lists)
    for bad in ([ref.n_vocab + 5], [ref.n_vocab]):
        with pytest.raises(KeyError):
            ours.decode(bad)
        with pytest.raises(KeyError):
            ours.decode_bytes(bad)
    with pytest.raises(KeyError):
        ours.decode_single_token_bytes(ref.n_vocab + 5)


UNSTABLE_TEXTS = ["hello fanta", "hello", "", "a \n\n  ", "x<|endoftext|>", "x<|endoftext|>y", "price: 3.1", "don't",
                  "日本語の", "  indented\n    ", "tabs\t\t", "emoji 🤖", "fo", "def f(x):\n    return x +", "é"]


def test_encode_with_unstable(pair):
    """Stable ids equal, completions equal as sets (tiktoken returns them in hash order)."""
    ref, ours = pair
    compared = 0
    for text in UNSTABLE_TEXTS + [t[:40] for t in TEXTS[10:30]]:
        for kw in (dict(), dict(allowed_special="all"), dict(disallowed_special=())):
            r, err = outcome(lambda: ref.encode_with_unstable(text, **kw))
            if err is not None:
                with pytest.raises(type(err)):
                    ours.encode_with_unstable(text, **kw)
                continue
            stable, completions = ours.encode_with_unstable(text, **kw)
            assert stable == r[0], (text, kw)
            assert sorted(map(tuple, completions)) == sorted(map(tuple, r[1])), (text, kw)
            compared += 1
    assert compared > 60


def test_private_piece_encoders(pair):
    """tiktoken's `_encode_single_piece`, `_encode_bytes` (bytes cut inside a char) and
    `_encode_only_native_bpe`, used by some downstream libraries."""
    import random

    ref, ours = pair
    rng = random.Random(7)
    for text in TEXTS[:40]:
        data = text.encode("utf-8", "surrogatepass") if "\ud800" not in text else b"a\xed\xa0\x80b"
        for cut in sorted({len(data), *(rng.randrange(len(data) + 1) for _ in range(3))}):
            part = data[:cut]
            assert ours._encode_bytes(part) == ref._encode_bytes(part), part[-20:]
            if part:  # tiktoken panics on an empty piece; tokenkit gives []
                assert ours._encode_single_piece(part[:60]) == ref._encode_single_piece(part[:60])
        if "\ud800" not in text:
            assert ours._encode_only_native_bpe(text) == ref._encode_only_native_bpe(text)


def test_single_tokens(pair):
    ref, ours = pair
    for tok in ["hello", " world", "<|endoftext|>", b"\xe4\xb8", "!"]:
        assert ours.encode_single_token(tok) == ref.encode_single_token(tok)
    for i in list(range(0, 300)) + [ref.eot_token]:
        assert ours.decode_single_token_bytes(i) == ref.decode_single_token_bytes(i)
    with pytest.raises(KeyError):
        ours.encode_single_token("qqqqqqqqqqqqqqqqqzzz")


def test_pickle_and_custom_encoding(pair):
    ref, ours = pair
    again = pickle.loads(pickle.dumps(ours))
    assert again.encode(TEXTS[2]) == ref.encode(TEXTS[2])
    custom = tk.Encoding(ours.name + "_im", pat_str=ref._pat_str, mergeable_ranks=ref._mergeable_ranks,
                         special_tokens={**ref._special_tokens, "<|im_start|>": ref.n_vocab + 10})
    theirs = tiktoken.Encoding(ref.name + "_im", pat_str=ref._pat_str, mergeable_ranks=ref._mergeable_ranks,
                               special_tokens={**ref._special_tokens, "<|im_start|>": ref.n_vocab + 10})
    text = "<|im_start|>user hi<|endoftext|>"
    assert custom.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")
    assert custom.n_vocab == theirs.n_vocab
    assert pickle.loads(pickle.dumps(custom)).encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")


def test_registry():
    assert tk.encoding_name_for_model("gpt-4o-mini") == tiktoken.encoding_name_for_model("gpt-4o-mini") == "o200k_base"
    assert tk.encoding_name_for_model("gpt-3.5-turbo") == "cl100k_base"
    assert tk.encoding_name_for_model("text-davinci-003") == "p50k_base"
    with pytest.raises(KeyError):
        tk.encoding_name_for_model("no-such-model")
    with pytest.raises(ValueError, match="Unknown encoding"):
        tk.get_encoding("no_such_encoding")
    assert "cl100k_base" in tk.list_encoding_names()


# ---- tokenkit.tiktoken.load and the llama3 encoding ----

@pytest.mark.parametrize("name", NAMES)
def test_load_tiktoken_bpe(name, tmp_path, monkeypatch):
    """load_tiktoken_bpe gives tiktoken's dict for every rank file, checks expected_hash, reads
    a URL only from a local copy (tiktoken's cache entry or the data directory), and names where
    it looked otherwise."""
    import hashlib

    import tiktoken.load as ref_load

    from tokenkit.tiktoken import load

    path = FIXTURES / "tiktoken" / f"{name}.tiktoken"
    if not path.exists():
        pytest.skip(f"{path} missing")
    ranks = load.load_tiktoken_bpe(str(path))
    assert ranks == ref_load.load_tiktoken_bpe(str(path))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert load.load_tiktoken_bpe(str(path), expected_hash=digest) == ranks
    with pytest.raises(ValueError, match="Hash mismatch"):
        load.load_tiktoken_bpe(str(path), expected_hash="0" * 64)
    assert load.load_tiktoken_bpe(f"file://{path}") == ranks
    url = f"https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert load.load_tiktoken_bpe(url) == ranks  # found in TOKENKIT_TIKTOKEN_DIR by file name
    monkeypatch.setenv("TOKENKIT_TIKTOKEN_DIR", str(tmp_path / "nowhere"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "nocache"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="does not download") as e:
        load.load_tiktoken_bpe(url)
    assert str(tmp_path / "nowhere") in str(e.value) and hashlib.sha1(url.encode()).hexdigest() in str(e.value)
    (tmp_path / hashlib.sha1(url.encode()).hexdigest()).write_bytes(path.read_bytes())  # tiktoken's cache entry
    assert load.load_tiktoken_bpe(url, expected_hash=digest) == ranks
    out = tmp_path / "dumped.tiktoken"
    load.dump_tiktoken_bpe(ranks, str(out))
    assert out.read_bytes() == path.read_bytes()
    bad = tmp_path / "bad.tiktoken"
    bad.write_bytes(b"aGVsbG8= 0\nnot base64! 1\n")
    with pytest.raises(ValueError, match="bad.tiktoken:2"):
        load.load_tiktoken_bpe(str(bad))
    with pytest.raises(ValueError):
        ref_load.load_tiktoken_bpe(str(bad))


LLAMA3_MODEL = FIXTURES / "registry" / "llama3" / "tokenizer.model"


def llama3_reference():
    """tiktoken's Encoding with Meta's Llama-3 pattern and special tokens (llama_models' tokenizer)."""
    import tiktoken.load

    pat = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|"
           r"\s+(?!\S)|\s+")
    ranks = tiktoken.load.load_tiktoken_bpe(str(LLAMA3_MODEL))
    names = ["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>", "<|reserved_special_token_1|>",
             "<|finetune_right_pad_id|>", "<|step_id|>", "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>",
             "<|eot_id|>", "<|python_tag|>", "<|image|>"]
    names += [f"<|reserved_special_token_{2 + i}|>" for i in range(256 - len(names))]
    return tiktoken.Encoding("llama3", pat_str=pat, mergeable_ranks=ranks,
                             special_tokens={t: len(ranks) + i for i, t in enumerate(names)})


@pytest.mark.parametrize("layout", ["llama3.tiktoken", "tokenizer.model", "fixtures"])
def test_get_encoding_llama3(layout, tmp_path):
    """get_encoding("llama3") finds Meta's model as llama3.tiktoken or tokenizer.model in the
    data directory, or in ./.fixtures/registry/llama3, and encodes as tiktoken with Llama-3's
    pattern and special tokens; without the file the error names every path looked at. Each
    layout runs in a fresh interpreter (encodings are cached per process)."""
    import subprocess
    import sys

    if not LLAMA3_MODEL.exists():
        pytest.skip(f"{LLAMA3_MODEL} missing")
    data = tmp_path / "data"
    data.mkdir()
    cwd = tmp_path
    if layout == "fixtures":
        cwd = FIXTURES.parent
    else:
        (data / layout).symlink_to(LLAMA3_MODEL)
    env = {**os.environ, "TOKENKIT_TIKTOKEN_DIR": str(data), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    script = ("import json, sys\nfrom tokenkit import tiktoken\nenc = tiktoken.get_encoding('llama3')\n"
              "texts = json.load(open(sys.argv[1]))\n"
              "print(json.dumps([enc.encode(t, allowed_special='all') for t in texts]))\n")
    texts = TEXTS[:200]
    (tmp_path / "texts.json").write_text(__import__("json").dumps(texts))
    r = subprocess.run([sys.executable, "-c", script, str(tmp_path / "texts.json")], cwd=cwd, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    ours = __import__("json").loads(r.stdout)
    ref = llama3_reference()
    theirs = [ref.encode(t.encode("utf-16", "surrogatepass").decode("utf-16", "replace"), allowed_special="all")
              for t in texts]
    identical = sum(a == b for a, b in zip(ours, theirs))
    print(f"llama3 ({layout}): {identical}/{len(texts)} texts identical to tiktoken")
    assert identical == len(texts)


def test_get_encoding_llama3_missing(tmp_path):
    import subprocess
    import sys

    env = {**os.environ, "TOKENKIT_TIKTOKEN_DIR": str(tmp_path / "data"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    r = subprocess.run([sys.executable, "-c", "from tokenkit import tiktoken; tiktoken.get_encoding('llama3')"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode != 0
    for place in (tmp_path / "data" / "llama3.tiktoken", tmp_path / "data" / "tokenizer.model",
                  tmp_path / "cache" / "tokenkit" / "tiktoken" / "llama3.tiktoken",
                  Path(".fixtures") / "registry" / "llama3" / "tokenizer.model"):
        assert str(place) in r.stderr, (place, r.stderr)
    assert "llama3" in tk.list_encoding_names()


# ---- rank tables tiktoken accepts: sparse ranks, far ids, missing bytes (issue 17) ----

def _outcome_any(f):
    """The result of `f`, or the error's kind: tiktoken raises a Rust panic (a BaseException)
    where a byte has no rank; tokenkit a ValueError."""
    try:
        return f()
    except BaseException as e:  # noqa: BLE001
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        return "error"


def _sparse_variants(ranks: dict, specials: dict):
    """(name, mergeable_ranks, special_tokens) variants of a real table that tiktoken accepts."""
    far = {t: r * 4096 + 3 for t, r in ranks.items()}
    holes = {t: r for t, r in ranks.items() if r < 256 or r % 7}
    top = dict(ranks)
    top[b" the"] = 2**32 - 1  # tiktoken never merges into its "no merge" rank
    no_q = {t: r for t, r in ranks.items() if t != b"Q"}  # a missing byte: fine where it merges
    far_specials = {**specials, "<|endoftext|>": 2**32 - 1}
    clash = {**specials, "<|endoftext|>": ranks[b"hello"]}  # a special id that is also a rank
    return [("far ranks", far, specials), ("holes", holes, specials), ("rank 2**32-1", top, specials),
            ("missing byte", no_q, specials), ("special at 2**32-1", ranks, far_specials),
            ("special on a rank", ranks, clash), ("far ranks and specials", far,
                                                   {"<|endoftext|>": 7, "<|x|>": 2**31 + 5})]


def test_sparse_rank_tables_encode_and_decode_like_tiktoken():
    ref = reference("cl100k_base")
    texts = TEXTS + ["Q", "Question Q. QQ", "the theory there", " the", "<|endoftext|>hello<|x|>"]
    same = total = 0
    for label, ranks, specials in _sparse_variants(ref._mergeable_ranks, ref._special_tokens):
        theirs = tiktoken.Encoding("v", pat_str=ref._pat_str, mergeable_ranks=ranks, special_tokens=specials)
        ours = tk.Encoding("v", pat_str=ref._pat_str, mergeable_ranks=ranks, special_tokens=specials)
        assert (ours.n_vocab, ours.max_token_value) == (theirs.n_vocab, theirs.max_token_value), label
        for text in texts:
            want = _outcome_any(lambda: theirs.encode(text, allowed_special="all"))
            got = _outcome_any(lambda: ours.encode(text, allowed_special="all"))
            total += 1
            same += got == want
            assert got == want, (label, text[:60], got if got == "error" else got[:20], want if want == "error" else want[:20])
            if want != "error":
                assert ours.decode_bytes(want) == theirs.decode_bytes(want), (label, text[:60])
                assert ours.encode_ordinary(text) == theirs.encode_ordinary(text), (label, text[:60])
        probe = [next(iter(ranks.values())), max(ranks.values()), *specials.values()]
        for i in probe:
            assert _outcome_any(lambda: ours.decode_single_token_bytes(i)) == \
                _outcome_any(lambda: theirs.decode_single_token_bytes(i)), (label, i)
    print(f"sparse rank tables: {same}/{total} encodings identical to tiktoken")
    assert same == total > 0


def test_far_rank_memory_is_bounded(tmp_path):
    """A 20 KB rank file whose ranks reach 2**32 - 1 loads without a table sized by its largest
    rank (tiktoken accepts it); under a 1 GB address-space limit in a child process."""
    import base64
    import subprocess
    import sys

    import tiktoken.load

    path = tmp_path / "far.tiktoken"
    lines = [f"{base64.b64encode(bytes([b])).decode()} {(b << 24) | 1}" for b in range(256)]
    lines += [f"{base64.b64encode(t).decode()} {4294967295 - i}" for i, t in enumerate([b"ab", b"cd", b"abcd"])]
    path.write_text("\n".join(lines) + "\n")
    code = f"""
import resource; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from tokenkit import tiktoken as tk
from tokenkit.tiktoken import load
ranks = load.load_tiktoken_bpe({str(path)!r})
enc = tk.Encoding("far", pat_str=r"\\S+|\\s+", mergeable_ranks=ranks, special_tokens={{"<|e|>": 2**32 - 4}})
print(enc.encode("abcd ab<|e|>", allowed_special="all"))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    theirs = tiktoken.Encoding("far", pat_str=r"\S+|\s+", mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(path)),
                               special_tokens={"<|e|>": 2**32 - 4})
    assert out.stdout.strip() == str(theirs.encode("abcd ab<|e|>", allowed_special="all"))


FUZZ_REGRESSIONS = Path(__file__).resolve().parents[2] / "crates" / "tokenkit" / "tests" / "data" / "fuzz" / "tiktoken"


def _fuzz_reference(path: Path):
    """tiktoken's encoding for a regression rank file, named by its file name (as the
    differential fuzz builds it)."""
    import tiktoken.load
    import tiktoken_ext.openai_public as op

    ranks = tiktoken.load.load_tiktoken_bpe(str(path))
    op.load_tiktoken_bpe = lambda *_a, **_k: ranks
    return tiktoken.Encoding(**getattr(op, path.stem)())


def test_fuzz_rank_file_regressions_like_tiktoken():
    """The mutated rank files of the differential fuzz that tiktoken loads (sparse ranks, a
    missing byte, a token at 2**32 - 1, a special id on a rank, Python's base64 and int
    readings) load in tokenkit too and give tiktoken's ids on the fuzz texts and the corpus
    lines."""
    from tokenkit._tokenkit import TiktokenCore

    files = sorted(p for p in FUZZ_REGRESSIONS.glob("*/*.tiktoken") if p.stem != "llama3")
    assert files, f"no regression rank files under {FUZZ_REGRESSIONS}"
    texts = TEXTS + ["Hello, world! The year 2024: naïve café, ÀÉÎ ß.", "1234567890 3.14159 \0 \r\n a\u0301"]
    same = total = 0
    for path in files:
        theirs = _outcome_any(lambda: _fuzz_reference(path))
        ours = _outcome_any(lambda: tk.Encoding._from_core(TiktokenCore.from_file(str(path), path.stem), False))
        if theirs == "error":  # e.g. r50k's vocabulary size check
            total += 1
            same += ours == "error"
            assert ours == "error", path.parent.name
            continue
        for text in texts:
            want = _outcome_any(lambda: theirs.encode(text, allowed_special="all"))
            got = _outcome_any(lambda: ours.encode(text, allowed_special="all"))
            total += 1
            same += got == want
            assert got == want, (path.parent.name, text[:60])
    print(f"fuzz rank-file regressions: {same}/{total} encodings identical to tiktoken ({len(files)} files)")
    assert same == total
