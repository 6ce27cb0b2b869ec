"""The Python package under concurrency, interruption and sizes that cannot be allocated.

Threads, fork and pickling of `Tokenizer` are also covered in test_api.py
(test_threads_encode_batch, test_fork_after_parallel_use, test_serialization_and_pickle) and of
tiktoken `Encoding` in test_tiktoken.py (test_pickle_and_custom_encoding); this file adds one
tokenizer and one tiktoken encoding used by 8 threads at once with single and batch calls,
Ctrl-C during a long batch, padding and truncation sizes, and atomic `Model.save`.
"""
from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

tokenizers = pytest.importorskip("tokenizers")
import tokenkit  # noqa: E402
from test_api import TEXTS  # noqa: E402  (the samples and corpus lines the API tests use)

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(os.environ.get("TOKENKIT_FIXTURES", ROOT / ".fixtures"))
GPT2 = FIXTURES / "hub" / "gpt2.json"
BERT = FIXTURES / "registry" / "bert_uncased" / "tokenizer.json"
TIKTOKEN_DIR = FIXTURES / "tiktoken"


def need(path: Path) -> str:
    if not path.exists():
        pytest.skip(f"{path} missing")
    return str(path)


# --------------------------------------------------------------------------------------------
# One object, many threads


def run_threads(work, n=8, timeout=180):
    errors, results = [], {}

    def target(k):
        try:
            results[k] = work(k)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=target, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=timeout)
        assert not t.is_alive(), "a thread hung"
    assert not errors, errors
    return results


def test_one_tokenizer_from_8_threads_equals_sequential():
    t = tokenkit.Tokenizer.from_file(need(GPT2))
    pairs = list(zip(TEXTS[::2], TEXTS[1::2]))
    expected_single = [(e.ids, e.offsets) for e in (t.encode(x) for x in TEXTS)]
    expected_pairs = [e.ids for e in t.encode_batch(pairs)]
    expected_decoded = t.decode_batch([ids for ids, _ in expected_single])

    def work(k):
        # Each thread interleaves single calls, batches and decodes in its own order.
        order = TEXTS[k:] + TEXTS[:k]
        single = {x: (e.ids, e.offsets) for x, e in zip(order, (t.encode(x) for x in order))}
        return ([single[x] for x in TEXTS], [e.ids for e in t.encode_batch(pairs)],
                t.decode_batch([ids for ids, _ in expected_single]))

    for k, (single, batch, decoded) in run_threads(work).items():
        assert single == expected_single, f"thread {k}: encode"
        assert batch == expected_pairs, f"thread {k}: encode_batch of pairs"
        assert decoded == expected_decoded, f"thread {k}: decode_batch"


def test_one_tiktoken_encoding_from_8_threads_equals_sequential():
    need(TIKTOKEN_DIR / "cl100k_base.tiktoken")
    os.environ.setdefault("TOKENKIT_TIKTOKEN_DIR", str(TIKTOKEN_DIR))
    from tokenkit import tiktoken as tk

    enc = tk.get_encoding("cl100k_base")
    expected = [enc.encode(x, allowed_special="all") for x in TEXTS]
    expected_batch = enc.encode_batch(TEXTS, allowed_special="all")
    assert expected_batch == expected

    def work(k):
        return [enc.encode(x, allowed_special="all") for x in TEXTS], enc.encode_batch(TEXTS, allowed_special="all"), enc.decode_batch(expected)

    for k, (single, batch, decoded) in run_threads(work).items():
        assert single == expected and batch == expected_batch, f"thread {k}"
        assert decoded == TEXTS, f"thread {k}: decode_batch"
    again = pickle.loads(pickle.dumps(enc))
    assert [again.encode(x, allowed_special="all") for x in TEXTS] == expected


# --------------------------------------------------------------------------------------------
# Ctrl-C during a long batch

# Runs a batch sized to take ~8 s on one thread; prints "ready" just before it, then what happened.
INTERRUPTED_SCRIPT = """
import os, sys, threading, time
import tokenkit
kind, path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
text = open({corpus!r}, encoding="utf-8").read()[:20000]
if kind == "tiktoken":
    from tokenkit import tiktoken
    enc = tiktoken.get_encoding("cl100k_base")
    run = lambda batch: enc.encode_batch(batch)
    check = lambda: enc.encode("hello world")
    # One long punctuation piece: more work per id than prose, so a batch that runs for seconds
    # holds few ids.
    text = "/" * 20000
else:
    tok = tokenkit.Tokenizer.from_file(path)
    # The whole text is encoded, 16 ids are kept: a batch runs for seconds in little memory.
    tok.enable_truncation(16)
    run = tok.encode_batch if kind == "encode_batch" else tok.encode_batch_to_numpy
    check = lambda: tok.encode("hello world").ids
# A fixed size either ends before the signal on a fast idle machine or takes minutes on a slow
# one: size the batch from a timed warm-up to run ~8 s on one thread.
t0 = time.monotonic()
run([text] * 200)
n = max(n, min(400000, int(8.0 * 200 / max(time.monotonic() - t0, 1e-6))))
batch = [text] * n
if os.environ.get("FORK_FIRST"):
    tok.encode_batch(batch[:50])   # the parent's pool is running, then work in a forked child
    if os.fork() != 0:
        import signal
        signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is for the child
        _, status = os.waitpid(-1, 0)
        sys.exit(os.WEXITSTATUS(status))
print("ready", flush=True)
t0 = time.monotonic()
try:
    run(batch)
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted %.3f" % (time.monotonic() - t0), flush=True)
c0 = time.process_time()
time.sleep(1.0)
# No work left running: the process uses no CPU while the main thread sleeps.
print("idle_cpu %.3f" % (time.process_time() - c0), flush=True)
print("after", check(), flush=True)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGINT") or sys.platform == "win32", reason="needs POSIX signals")
@pytest.mark.parametrize("kind,env", [
    ("encode_batch", {}),
    ("encode_batch_to_numpy", {}),
    ("tiktoken", {}),
    ("encode_batch", {"TOKENIZERS_PARALLELISM": "false"}),   # a one-thread pool of the binding's own
    ("encode_batch", {"FORK_FIRST": "1"}),                   # in a forked child
], ids=["encode_batch", "numpy", "tiktoken", "sequential", "forked-child"])
def test_ctrl_c_stops_a_long_batch(kind, env, tmp_path):
    corpus = FIXTURES / "corpora" / "en" / "botchan.txt"
    need(corpus)
    need(TIKTOKEN_DIR / "cl100k_base.tiktoken") if kind == "tiktoken" else need(GPT2)
    script = tmp_path / "interrupted.py"
    script.write_text(INTERRUPTED_SCRIPT.format(corpus=str(corpus)), encoding="utf-8")
    # ~100 MB of text: tens of seconds on any thread count, far more than the latency allowed.
    n = 5000
    full_env = dict(os.environ, TOKENKIT_TIKTOKEN_DIR=str(TIKTOKEN_DIR), **env)
    p = subprocess.Popen([sys.executable, str(script), kind, str(GPT2), str(n)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=full_env, start_new_session=True)
    try:
        assert p.stdout.readline().strip() == "ready", p.stderr.read()
        time.sleep(1.0)   # well inside the batch
        sent = time.monotonic()
        os.killpg(p.pid, signal.SIGINT)   # as Ctrl-C does: to the whole process group
        line = p.stdout.readline().strip()
        latency = time.monotonic() - sent
        rest = p.stdout.read()
        p.wait(timeout=60)
    finally:
        p.kill()
    assert line.startswith("interrupted"), (line, p.stderr.read())
    # Promptly: one item (20 KB) per thread finishes after the signal; generous for a loaded machine.
    assert latency < 2.0, f"KeyboardInterrupt came {latency:.2f} s after SIGINT"
    lines = dict(l.split(" ", 1) for l in rest.splitlines())
    assert float(lines["idle_cpu"]) < 0.2, f"work went on after the interrupt: {lines['idle_cpu']} s of CPU while idle"
    assert lines["after"] in ("[31373, 995]", "[15339, 1917]"), rest   # the interpreter and tokenizer still work
    assert p.returncode == 0


# --------------------------------------------------------------------------------------------
# Sizes: padding and truncation


def test_padding_lengths_no_one_could_mean_are_refused_when_set():
    t = tokenkit.Tokenizer.from_file(need(BERT))
    t.no_padding()   # the file ships Fixed(128)
    for kwargs, field in ((dict(length=10**12), "strategy.Fixed"), (dict(pad_to_multiple_of=2**63), "pad_to_multiple_of")):
        with pytest.raises(Exception, match=f"padding `{field}` is .* at most 4294967295"):
            t.enable_padding(**kwargs)
        assert t.padding is None
    t.enable_padding(length=16, pad_to_multiple_of=8)
    h = tokenizers.Tokenizer.from_file(str(BERT))
    h.enable_padding(length=16, pad_to_multiple_of=8)
    assert t.encode("hello world").ids == h.encode("hello world").ids


def test_padding_that_cannot_be_allocated_raises_instead_of_aborting(tmp_path):
    t = tokenkit.Tokenizer.from_file(need(BERT))
    enc = t.encode("hello")
    with pytest.raises(Exception, match=r"padding to \d+ tokens: cannot allocate memory"):
        enc.pad(2**62)
    assert enc.ids == t.encode("hello").ids
    # Fixed(1e9) from a tokenizer.json, in a process limited to 3 GB of address space:
    # an exception (HF aborts the interpreter).
    doc = json.loads(BERT.read_text(encoding="utf-8"))
    doc["padding"] = {"strategy": {"Fixed": 1_000_000_000}, "direction": "Right", "pad_to_multiple_of": None,
                      "pad_id": 0, "pad_type_id": 0, "pad_token": "[PAD]"}
    path = tmp_path / "fixed_1e9.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    script = textwrap.dedent(f"""
        import resource, tokenkit
        resource.setrlimit(resource.RLIMIT_AS, (3_000_000_000, 3_000_000_000))
        t = tokenkit.Tokenizer.from_file({str(path)!r})
        try:
            t.encode("hello")
        except Exception as e:
            print("raised:", e)
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "raised: padding to 1000000000 tokens: cannot allocate memory" in r.stdout, r.stdout


def test_a_50_mb_text_under_a_memory_limit_gives_results_or_memory_error(tmp_path):
    """Encoding 50 MB in a process limited to 3 GB of address space: every result either
    arrives or raises MemoryError (PyO3 panics where CPython cannot allocate a list; tokenkit
    turns that into MemoryError), and the interpreter lives on."""
    corpus = FIXTURES / "corpora" / "en" / "botchan.txt"
    need(corpus)
    script = textwrap.dedent(f"""
        import resource, tokenkit
        resource.setrlimit(resource.RLIMIT_AS, (3_000_000_000, 3_000_000_000))
        text = open({str(corpus)!r}, encoding="utf-8").read()
        text = (text * (50_000_000 // len(text) + 1))[:50_000_000]
        t = tokenkit.Tokenizer.from_file({need(GPT2)!r})
        for what in ("encode", "ids", "tokens", "offsets", "word_ids", "attention_mask"):
            try:
                enc = t.encode(text) if what == "encode" else enc
                n = len(getattr(enc, what)) if what != "encode" else len(enc)
                print(what, "ok", n)
            except MemoryError as e:
                print(what, "MemoryError")
        print("alive", t.encode("hello world").ids)
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = r.stdout.splitlines()
    assert lines[-1] == "alive [31373, 995]", r.stdout
    assert [l.split()[0] for l in lines[:-1]] == ["encode", "ids", "tokens", "offsets", "word_ids", "attention_mask"], r.stdout
    assert all(l.split()[1] in ("ok", "MemoryError") for l in lines[:-1]), r.stdout


def test_truncation_shorter_than_the_special_tokens():
    """HF computes `max_length - n_special` in usize: it wraps, and the whole text comes out
    untruncated. tokenkit raises instead (a documented deviation, README "Known deviations");
    where HF does not wrap, both agree."""
    t, h = tokenkit.Tokenizer.from_file(need(BERT)), tokenizers.Tokenizer.from_file(str(BERT))
    t.no_padding()
    h.no_padding()
    text, pair = "hello big wide world", "and more"
    for m in (0, 1):
        t.enable_truncation(m)
        h.enable_truncation(m)
        assert h.encode(text).ids == h.encode(text, add_special_tokens=True).ids
        assert len(h.encode(text).ids) == 6, "HF's wrap-around: nothing is truncated"
        with pytest.raises(Exception, match=f"truncation max_length {m} is smaller than the 2 special tokens"):
            t.encode(text)
        with pytest.raises(Exception, match="3 special tokens the post-processor adds to a pair"):
            t.encode_batch([(text, pair)])
        assert t.encode(text, add_special_tokens=False).ids == h.encode(text, add_special_tokens=False).ids
    for m in (2, 3, 5):
        t.enable_truncation(m)
        h.enable_truncation(m)
        assert t.encode(text).ids == h.encode(text).ids, m
        assert [o.ids for o in t.encode(text).overflowing] == [o.ids for o in h.encode(text).overflowing], m
        if m >= 3:
            assert t.encode(text, pair).ids == h.encode(text, pair).ids, m


# --------------------------------------------------------------------------------------------
# Model.save writes its files whole, and as HF writes them


def test_model_save_matches_hf_and_replaces_whole_files(tmp_path):
    t, h = tokenkit.Tokenizer.from_file(need(GPT2)), tokenizers.Tokenizer.from_file(str(GPT2))
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ours.mkdir()
    theirs.mkdir()
    (ours / "gpt2-merges.txt").write_text("previous", encoding="utf-8")
    got = t.model.save(str(ours), "gpt2")
    want = h.model.save(str(theirs), "gpt2")
    assert [Path(p).name for p in got] == [Path(p).name for p in want]
    for p in want:
        assert (ours / Path(p).name).read_bytes() == Path(p).read_bytes(), p
    assert sorted(os.listdir(ours)) == sorted(os.listdir(theirs)), "no temporary file left behind"
    t, h = tokenkit.Tokenizer.from_file(need(BERT)), tokenizers.Tokenizer.from_file(str(BERT))
    (want,), (got,) = h.model.save(str(theirs)), t.model.save(str(ours))
    assert Path(got).read_bytes() == Path(want).read_bytes(), "WordPiece vocab.txt"
    with pytest.raises(Exception, match="missing"):
        t.model.save(str(tmp_path / "missing"))
