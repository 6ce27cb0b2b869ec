"""Nothing lost on a crash, and no abort on sizes that cannot be allocated.

Every file the CLI writes goes to a temporary name beside the final one and is renamed once
complete (crates/tokenkit/src/utils/atomic_file.rs). The tests kill the process in the middle
of its write (`prlimit --fsize`: SIGXFSZ once a file passes 64 KiB) and check that the previous
good file is byte-identical under its name, for `save` (tokenizer.json and a .tiktoken rank
file), `train -o` and `train --recipe minimind` (five files). Sizes that come from input (a
padding length in tokenizer.json, a "line" with no end) give an error under an address-space
limit (`prlimit --as`), never an abort.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

import harness as h

GROUP = "crash-safety"
KILL_AT = 65536  # bytes: every output below is larger

pytestmark = pytest.mark.skipif(shutil.which("prlimit") is None, reason="needs prlimit (util-linux)")


def run(args: list[str], *, limit: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """The CLI with `args`, under `prlimit --<limit>` when given."""
    cmd = [*h.cli_prefix(h.require_cli()), *args]
    if limit:
        cmd = ["prlimit", f"--{limit}", "--", *cmd]
    env = dict(os.environ, RUST_BACKTRACE="0")
    return subprocess.run(cmd, capture_output=True, timeout=timeout, env=env)


def snapshot(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file()}


def assert_killed_and_intact(r: subprocess.CompletedProcess, d: Path, before: dict[str, bytes], what: str) -> None:
    assert r.returncode == -signal.SIGXFSZ, f"{what}: expected the write to be cut short, got {r.returncode}: {r.stderr[-500:]!r}"
    after = snapshot(d)
    for name, data in before.items():
        assert after.get(name) == data, f"{what}: {name} changed after a write cut short"
    # What a killed run may leave is its hidden temporary file, never a new visible name.
    extra = sorted(set(after) - set(before))
    assert all(n.startswith(".") and ".tmp" in n for n in extra), f"{what}: unexpected files {extra}"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    if not h.corpus_files():
        pytest.skip("no corpora")
    out = tmp_path_factory.mktemp("crash-corpus") / "corpus.jsonl"
    lines = [l for rel in h.corpus_rels(("en/pride_and_prejudice.txt", "zh/lunyu.txt"))
             for l in h.corpus_lines(rel)[:1500]]
    out.write_text("".join(json.dumps({"text": l}, ensure_ascii=False) + "\n" for l in lines), encoding="utf-8")
    return out


def test_save_killed_mid_write_keeps_the_previous_file(tmp_path):
    src = h.fixture_path("hub/gpt2.json")
    if src is None:
        pytest.skip("no gpt2.json fixture")
    for name, args in (("tokenizer.json", ["save", "-t", str(src)]), ("r50k.tiktoken", ["save", "-t", str(src)])):
        out = tmp_path / name
        good = run([*args, "-o", str(out)])
        assert good.returncode == 0, good.stderr
        assert out.stat().st_size > KILL_AT
        out.write_bytes(out.read_bytes()[: KILL_AT // 2])  # a previous file, distinct from the new one
        before = snapshot(tmp_path)
        r = run([*args, "-o", str(out)], limit=f"fsize={KILL_AT}")
        assert_killed_and_intact(r, tmp_path, before, f"save -o {name}")
        # And without the limit the new file replaces it whole.
        assert run([*args, "-o", str(out)]).returncode == 0
        assert out.stat().st_size > KILL_AT


def test_train_killed_mid_write_keeps_the_previous_file(tmp_path, corpus):
    out = tmp_path / "tok.json"
    args = lambda vocab: ["train", "-q", "-p", "byte-level", "-v", vocab, "--jsonl-field", "text", "-o", str(out), str(corpus)]
    assert run(args("3000")).returncode == 0
    assert out.stat().st_size > KILL_AT
    before = snapshot(tmp_path)
    r = run(args("3500"), limit=f"fsize={KILL_AT}")
    assert_killed_and_intact(r, tmp_path, before, "train -o")
    assert json.loads(out.read_bytes())["model"]["type"] == "BPE"


def test_recipe_killed_mid_write_keeps_the_previous_directory(tmp_path, corpus):
    d = tmp_path / "minimind"
    args = ["train", "-q", "--recipe", "minimind", "-o", str(d)]
    assert run([*args, str(corpus)]).returncode == 0
    before = snapshot(d)
    assert set(before) == {"tokenizer.json", "vocab.json", "merges.txt", "tokenizer_config.json", "special_tokens_map.json"}
    # A different run (a smaller vocabulary), cut short: all five files stay the first run's.
    r = run([*args, "-v", "3000", str(corpus)], limit=f"fsize={KILL_AT}")
    assert_killed_and_intact(r, d, before, "train --recipe minimind")


def test_train_checks_the_output_before_training(tmp_path):
    # /dev/zero as input: had training started, it would fail on the endless line instead.
    for out, expected in ((tmp_path / "missing" / "tok.json", "cannot use the directory"),
                          (tmp_path, "is a directory")):
        r = run(["train", "-q", "-o", str(out), "/dev/zero"], limit="as=3000000000", timeout=60)
        err = r.stderr.decode("utf-8", "replace")
        assert r.returncode == 1, err
        assert str(out) in err and expected in err, err
        assert "line longer" not in err


def test_train_on_an_endless_line_is_an_error(tmp_path):
    r = run(["train", "-q", "-o", str(tmp_path / "tok.json"), "/dev/zero"], limit="as=3000000000", timeout=120)
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode == 1, (r.returncode, err[-2000:])
    assert "/dev/zero:1: a line longer than 268435456 bytes" in err, err
    assert not (tmp_path / "tok.json").exists()


def test_padding_that_cannot_be_allocated_is_an_error(tmp_path):
    src = h.fixture_path("registry/bert_uncased/tokenizer.json")
    if src is None:
        pytest.skip("no bert_uncased fixture")
    doc = json.loads(src.read_text(encoding="utf-8"))
    doc["padding"] = {"strategy": {"Fixed": 1_000_000_000}, "direction": "Right", "pad_to_multiple_of": None,
                      "pad_id": 0, "pad_type_id": 0, "pad_token": "[PAD]"}
    path = tmp_path / "fixed_1e9.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    r = subprocess.run(["prlimit", "--as=3000000000", "--", *h.cli_prefix(h.require_cli()), "encode", "-t", str(path), "--jsonl"],
                       input=b'"hello"\n', capture_output=True, timeout=120, env=dict(os.environ, RUST_BACKTRACE="0"))
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode == 1, (r.returncode, err[-2000:])
    assert "padding to 1000000000 tokens: cannot allocate memory" in err, err
    # A length no one could mean is refused when the file is loaded.
    doc["padding"]["strategy"] = {"Fixed": 10**12}
    path.write_text(json.dumps(doc), encoding="utf-8")
    r = run(["encode", "-t", str(path), "hello"], timeout=60)
    assert r.returncode == 1 and b"at most 4294967295 are allowed" in r.stderr, r.stderr
