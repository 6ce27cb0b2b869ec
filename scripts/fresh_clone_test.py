#!/usr/bin/env python3
"""A newcomer's first hour, automated: the README on a fresh clone without ../shared.

Clones this repository's HEAD into a temporary directory (``$TMP/tokenkit-fresh-*/repo``, so
there is no ``../shared`` beside it), then in the clone:

1. runs the README's Set-up command (``scripts/setup.sh``) with the already-built parts reused
   (``SKIP_BUILD=1 SKIP_PYTHON_PACKAGE=1``, ``.venv`` linked to this checkout's, which has the
   tokenkit package) so the fixtures step runs for real: registry downloads, no ../shared. The
   cache directory (``XDG_CACHE_HOME``) is a temporary one, so the user's
   ``~/.cache/tokenkit/tiktoken`` link is left alone;
2. checks the fixture state: nothing links outside the clone, the Hub files only ../shared has are
   recorded as absent in MANIFEST.json, the two a registry ships are present;
3. runs every example of README.md, taken from the README itself so they cannot drift: every
   command of the ```sh blocks of "Use", "Train" and "Prepare a pre-training dataset"
   (``target/release/tokenkit`` is the built
   binary), the inline ``tokenkit ... .fixtures/...`` commands of the prose, and the ```python
   block with ``.venv/bin/python``; each must exit 0 and print something sane (a JSON result
   where the command prints one, the output a ``# {...}`` comment promises, a file written with
   ``-o``). The Train examples' own data (corpus.txt, data.jsonl, pretrain.jsonl, chat.json) are
   made from the repository's text first. The Benchmarks block is only checked for existing
   benchmark targets and scripts (timing runs take too long for a test);
4. runs the README's Test command, ``scripts/test.sh``, with a conformance subset
   (``--conformance-k``; the full suite runs in the main checkout): the Rust tests
   (``cargo test --release``; the target directory is this checkout's, so only the workspace
   crates are rebuilt, from the clone's sources), the conformance subset and the Python tests,
   all in the fixture state made without ../shared.

Exit status 0 when everything passed; a summary line ``N passed, N failed`` at the end.

Usage: .venv/bin/python scripts/fresh_clone_test.py [--keep] [--no-test-sh] [--conformance-k EXPR] [--venv DIR]

Environment: CARGO_TARGET_DIR (the target directory reused; default <repo>/target),
TOKENKIT_BIN (the binary for the examples; default $CARGO_TARGET_DIR/release/tokenkit).
Note: the clone's `cargo test --release` rebuilds $CARGO_TARGET_DIR/release/tokenkit from HEAD;
with uncommitted changes, build again afterwards.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The hub files only ../shared has, and the two that registries ship (scripts/fetch_fixtures.py).
HUB_ABSENT = ["hub/gpt2.json", "hub/bert_base_cased.json", "hub/llama2.json", "hub/mistral03.json",
              "hub/xlnet_base_cased.json", "hub/xlnet_base_cased.model"]
HUB_FROM_REGISTRY = ["hub/llama2.model", "hub/mistral03.model"]
# Conformance subset: every fixture tokenizer and SentencePiece model (present ones run, absent
# hub ones skip by the manifest), the formats, the tiktoken files and the CLI's error paths.
DEFAULT_K = "test_fixtures or test_sentencepiece or test_formats or test_tiktoken or test_errors"

results: list[tuple[str, bool, str]] = []


def log(msg: str) -> None:
    print(f"[fresh-clone] {msg}", flush=True)


def record(name: str, ok: bool, detail: str = "") -> bool:
    results.append((name, ok, detail))
    log(f"{'PASS' if ok else 'FAIL'} {name}" + (f": {detail}" if detail and not ok else ""))
    return ok


# --------------------------------------------------------------------------------------------
# README parsing


def readme_blocks(text: str) -> list[tuple[str, str, str]]:
    """(section heading, fence language, body) of every fenced block."""
    blocks, section = [], ""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            section = line[3:].strip()
        m = re.match(r"^```(\w*)\s*$", line)
        if m:
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            blocks.append((section, m.group(1), "\n".join(lines[i + 1:j])))
            i = j
        i += 1
    return blocks


def sh_commands(body: str) -> list[tuple[str, str]]:
    """(command, the comment just above it) of a ```sh block: continuation lines joined."""
    out, comment, buf = [], "", ""
    for line in body.split("\n"):
        if not buf and (not line.strip() or line.lstrip().startswith("#")):
            comment = line.strip().lstrip("#").strip() if line.strip() else comment
            continue
        buf += line.rstrip()
        if buf.endswith("\\"):
            buf = buf[:-1] + " "
            continue
        out.append((buf.strip(), comment))
        buf = ""
    if buf:
        out.append((buf.strip(), comment))
    return out


def inline_commands(text: str) -> list[str]:
    """Inline code spans of the prose that are complete commands on the fixtures."""
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    spans = [" ".join(c.split()) for c in re.findall(r"`([^`]+)`", prose)]
    return [c for c in spans if re.match(r"^tokenkit \w+ .*\.fixtures/", c)]


def trailing_comment(cmd: str) -> tuple[str, str | None]:
    """Split `cmd  # {"ids":[...]}` into the command and the output it promises."""
    m = re.match(r"^(.*?)\s+#\s*(\{.*\})\s*$", cmd)
    if m and "'" not in m.group(2):
        return m.group(1), m.group(2)
    return cmd, None


# --------------------------------------------------------------------------------------------
# Steps


def run(cmd, cwd: Path, env: dict, timeout: float = 3600, input: str | None = None) -> subprocess.CompletedProcess:
    if isinstance(cmd, str):
        cmd = "set -o pipefail; " + cmd
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                          input=input, shell=isinstance(cmd, str), executable="/bin/bash" if isinstance(cmd, str) else None)


def serve_example(cmd: str, clone: Path, binary: Path, env: dict) -> str | None:
    """A `tokenkit serve` example, run on a free port (`--port 0`): its page and an encode of
    every tokenizer answered, then stopped. Returns what went wrong, or None."""
    import threading
    import urllib.request

    argv = shlex.split(cmd.replace("target/release/tokenkit", str(binary)))
    if "--port" in argv:
        argv[argv.index("--port") + 1] = "0"
    p = subprocess.Popen(argv, cwd=clone, env=env, stderr=subprocess.PIPE, text=True)
    watchdog = threading.Timer(300, p.kill)
    watchdog.start()
    try:
        line = p.stderr.readline()
        m = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
        if not m:
            return f"no address printed: {line}{p.stderr.read() if p.poll() is not None else ''}"
        page = urllib.request.urlopen(m.group(1), timeout=60).read().decode()
        listed = json.loads(urllib.request.urlopen(m.group(1) + "api/tokenizers", timeout=60).read())
        req = urllib.request.Request(m.group(1) + "api/encode", data=json.dumps({"text": "Hello, 東京 🦀"}).encode(),
                                     headers={"content-type": "application/json"})
        answer = json.loads(urllib.request.urlopen(req, timeout=60).read())
        if "tokenkit playground" not in page:
            return "the page is not the playground"
        if len(answer) != len(listed) or not all(a.get("tokens", 0) > 0 and a.get("html") for a in answer):
            return f"encode answered {answer}"
        return None
    except Exception as e:  # noqa: BLE001 -- reported as the check's failure
        return f"{type(e).__name__}: {e}"
    finally:
        watchdog.cancel()
        p.terminate()
        p.wait(timeout=30)


def make_train_data(clone: Path) -> None:
    """The Train examples' inputs: text of the repository (sources and docs, ~1 MB)."""
    texts = []
    for p in sorted(clone.rglob("*")):
        if p.is_file() and p.suffix in (".rs", ".md", ".py") and ".fixtures" not in p.parts and ".venv" not in p.parts:
            texts.append(p.read_text(encoding="utf-8", errors="replace"))
    corpus = "\n".join(texts)[:1_000_000]
    (clone / "corpus.txt").write_text(corpus, encoding="utf-8")
    lines = [l for l in corpus.split("\n") if l.strip()]
    jsonl = "".join(json.dumps({"text": l}, ensure_ascii=False) + "\n" for l in lines)
    (clone / "data.jsonl").write_text(jsonl, encoding="utf-8")
    (clone / "pretrain.jsonl").write_text(jsonl, encoding="utf-8")
    (clone / "chat.json").write_text(json.dumps([
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "what is a tokenizer?"},
    ]), encoding="utf-8")


def check_output(cmd: str, out: str, promised: str | None, clone: Path, binary: Path) -> str | None:
    """Why the output of a README command is not sane, or None."""
    if promised is not None:
        got = out.strip()
        return None if json.loads(got) == json.loads(promised) else f"printed {got}, README says {promised}"
    words = shlex.split(cmd)
    sub = next((w for w in words[1:] if not w.startswith("-")), "")
    if "-o" in words:
        target = clone / words[words.index("-o") + 1] if not words[words.index("-o") + 1].startswith("/") \
            else Path(words[words.index("-o") + 1])
        if "--format" in words and words[words.index("--format") + 1] == "sentencepiece":
            target = target.with_name(target.name + ".model")  # -o is a prefix: PREFIX.model, PREFIX.vocab
        if sub == "tokenize":
            target = target.with_name(target.name + ".json")  # -o is a prefix: PREFIX.bin/.idx/.parquet, PREFIX.json
        if not target.exists() or (target.is_file() and target.stat().st_size == 0) \
                or (target.is_dir() and not any(target.iterdir())):
            return f"{target} not written"
        if sub == "train":  # the trained tokenizer loads and encodes
            tok = target / "tokenizer.json" if target.is_dir() else target
            r = subprocess.run([str(binary), "encode", "-t", str(tok), "hello world"], capture_output=True, text=True)
            if r.returncode or '"ids"' not in r.stdout:
                return f"{tok} does not encode: {r.stderr.strip()[-300:]}"
        return None
    if sub in ("encode", "decode", "chat", "inspect") and not out.strip():
        return "printed nothing"
    if sub == "encode" or "--jsonl" in words:  # JSON lines (decode without --jsonl prints text)
        for line in out.strip().split("\n"):
            try:
                json.loads(line)
            except ValueError:
                return f"not JSON: {line[:200]}"
    if sub == "encode" and "--count" not in words:
        # Every encode prints ids.
        if '"ids"' not in out:
            return f"no ids in {out[:200]}"
    return None


def readme_examples(clone: Path, binary: Path, env: dict) -> None:
    text = (clone / "README.md").read_text(encoding="utf-8")
    blocks = readme_blocks(text)
    sections = {s for s, _, _ in blocks}
    record("README has Set-up, Use, Train, Test sections with code", {"Set-up", "Use", "Train", "Test"} <= sections,
           f"sections with code: {sorted(sections)}")
    make_train_data(clone)
    n_sh = n_py = 0
    for section, lang, body in blocks:
        if lang == "sh" and section in ("Use", "Train", "Prepare a corpus", "Prepare a pre-training dataset",
                                           "Compare tokenizers"):
            for cmd, comment in sh_commands(body):
                cmd, promised = trailing_comment(cmd)
                real = cmd.replace("target/release/tokenkit", shlex.quote(str(binary)))
                t = time.time()
                if cmd.startswith("target/release/tokenkit serve "):
                    why = serve_example(cmd, clone, binary, env)
                    n_sh += 1
                    record(f"README {section}: {cmd} (--port 0; page and encode answered, {time.time() - t:.1f}s)", why is None, why or "")
                    continue
                r = run(real, clone, env, timeout=900)
                n_sh += 1
                why = f"exit {r.returncode}: {r.stderr.strip()[-800:]}" if r.returncode else check_output(cmd, r.stdout, promised, clone, binary)
                record(f"README {section}: {cmd} ({time.time() - t:.1f}s)", why is None, why or "")
        elif lang == "python":
            script = clone / ".readme_example.py"
            script.write_text(body + "\n", encoding="utf-8")
            r = run([str(clone / ".venv/bin/python"), str(script)], clone, env, timeout=600)
            n_py += 1
            lines = [l for l in r.stdout.split("\n") if l.strip()]
            n_prints = len(re.findall(r"^\s*print\(", body, flags=re.M))
            why = (f"exit {r.returncode}: {r.stderr.strip()[-1500:]}" if r.returncode
                   else None if len(lines) >= n_prints else f"{len(lines)} lines printed, {n_prints} print calls")
            record(f"README {section}: the python example", why is None, why or "")
            if r.returncode == 0:
                log("  python example printed:\n    " + "\n    ".join(l[:160] for l in lines))
        elif lang == "sh" and section == "Benchmarks":
            bench_cargo = (clone / "benches/Cargo.toml").read_text(encoding="utf-8")
            for cmd, _ in sh_commands(body):
                cmd = cmd.split("#")[0].strip()
                w = shlex.split(cmd)
                if w[:2] == ["cargo", "bench"]:
                    name = w[w.index("--bench") + 1]
                    record(f"README Benchmarks: bench target {name} exists", f'name = "{name}"' in bench_cargo)
                elif w[0].endswith("python"):
                    record(f"README Benchmarks: {w[1]} exists", (clone / w[1]).is_file())
    for cmd in inline_commands(text):
        real = re.sub(r"^tokenkit ", shlex.quote(str(binary)) + " ", cmd)
        r = run(real, clone, env, timeout=300)
        n_sh += 1
        why = f"exit {r.returncode}: {r.stderr.strip()[-800:]}" if r.returncode else check_output(cmd, r.stdout, None, clone, binary)
        record(f"README prose: {cmd}", why is None, why or "")
    record("README examples found", n_sh >= 10 and n_py >= 1, f"{n_sh} commands, {n_py} python blocks")


def fixture_state(clone: Path) -> None:
    fx = clone / ".fixtures"
    outside = [str(p) for p in fx.rglob("*") if p.is_symlink() and clone not in p.resolve().parents]
    record("no fixture links outside the clone (no ../shared)", not outside, ", ".join(outside[:5]))
    manifest = json.loads((fx / "MANIFEST.json").read_text())
    for rel in HUB_ABSENT:
        record(f"manifest: {rel} absent", "absent" in manifest.get(rel, {}) and not (fx / rel).exists())
    for rel in HUB_FROM_REGISTRY:
        e = manifest.get(rel, {})
        record(f"manifest: {rel} from a registry", "sha256" in e and (fx / rel).is_file(), str(e))
    # Every file fetch_fixtures.py pins by sha256 is there (registry files and the two hub ones).
    import runpy
    pinned = runpy.run_path(str(clone / "scripts/fetch_fixtures.py"))["SHA256"]
    present = [r for r, e in manifest.items() if "absent" not in e]
    missing = sorted(r for r in set(present) | set(pinned) if r not in present or not (fx / r).exists())
    record(f"manifest: {len(present)} fixtures present, every pinned one among them", not missing, ", ".join(missing))
    record("built-in corpus (no ../shared/corpora)", (fx / "corpora/builtin").is_dir())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keep", action="store_true", help="keep the temporary clone")
    ap.add_argument("--no-test-sh", action="store_true", help="skip step 4 (scripts/test.sh in the clone)")
    ap.add_argument("--conformance-k", default=DEFAULT_K, help="pytest -k for the conformance subset")
    ap.add_argument("--venv", type=Path, default=REPO / ".venv",
                    help="the venv the clone links as its .venv (needs the tokenkit package installed)")
    args = ap.parse_args()
    t0 = time.time()

    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target").resolve()
    binary = Path(os.environ.get("TOKENKIT_BIN") or target / "release/tokenkit").resolve()
    venv = args.venv
    for need, what in [(binary, "the tokenkit binary (scripts/setup.sh builds it)"),
                       (venv / "bin/python", "the venv (scripts/setup.sh makes it)")]:
        if not need.exists():
            log(f"{need} missing: {what}")
            return 2
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO, capture_output=True, text=True).stdout
    if dirty.strip():
        log("note: uncommitted changes are not in the clone (it is HEAD's)")

    tmp = Path(tempfile.mkdtemp(prefix="tokenkit-fresh-"))
    clone = tmp / "repo"
    try:
        log(f"cloning {REPO} @ {head[:12]} into {clone}")
        subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(REPO), str(clone)], check=True)
        subprocess.run(["git", "checkout", "--quiet", "--detach", head], cwd=clone, check=True)
        record("no ../shared beside the clone", not (clone.parent / "shared").exists())
        os.symlink(venv.resolve(), clone / ".venv")

        env = {k: v for k, v in os.environ.items() if not k.startswith(("TOKENKIT_", "PYTEST_"))}
        env.update(CARGO_TARGET_DIR=str(target), TOKENKIT_BIN=str(binary), XDG_CACHE_HOME=str(tmp / "cache"),
                   SKIP_BUILD="1", SKIP_PYTHON_PACKAGE="1", PYTHONDONTWRITEBYTECODE="1")

        # 1. The README's set-up command.
        setup = [sh_commands(b) for s, lang, b in readme_blocks((clone / "README.md").read_text()) if s == "Set-up" and lang == "sh"]
        setup_cmds = [c for cmds in setup for c, _ in cmds]
        record("README Set-up is scripts/setup.sh", setup_cmds == ["scripts/setup.sh"], str(setup_cmds))
        t = time.time()
        r = run("scripts/setup.sh", clone, env, timeout=1800)
        sys.stdout.write(r.stderr[-3000:] if r.returncode else "")
        record(f"scripts/setup.sh in the clone ({time.time() - t:.0f}s)", r.returncode == 0, r.stderr[-1500:])
        if r.returncode:
            return finish(t0)
        cache_link = tmp / "cache/tokenkit/tiktoken"
        record("set-up linked the tiktoken cache", cache_link.is_symlink() and (cache_link / "cl100k_base.tiktoken").is_file())

        # 2. The fixture state.
        fixture_state(clone)

        # 3. The README's examples.
        t = time.time()
        readme_examples(clone, binary, env)
        log(f"README examples: {time.time() - t:.0f}s")

        # 4. The README's test command, with a conformance subset.
        if not args.no_test_sh:
            # The section's first sh block is the test command (later ones are longer, documented runs).
            blocks = [b for s, lang, b in readme_blocks((clone / "README.md").read_text()) if s == "Test" and lang == "sh"]
            tests = [c for c, _ in sh_commands(blocks[0])] if blocks else []
            record("README Test is scripts/test.sh", tests == ["scripts/test.sh"], str(tests))
            t = time.time()
            env_t = dict(env, PYTHONDONTWRITEBYTECODE="1")
            r = subprocess.run(["scripts/test.sh", "-k", args.conformance_k], cwd=clone, env=env_t, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=5400)
            out = r.stdout
            log_file = tmp.parent / f"{tmp.name}-test.log"
            log_file.write_text(out, encoding="utf-8")
            summary = [l for l in out.split("\n") if re.match(r"^(test result:|=+ .*(passed|failed|error).* =+$|\d+ (passed|failed))", l)]
            log("scripts/test.sh in the clone:\n    " + "\n    ".join(summary[-40:]))
            cargo_ok = "test result: FAILED" not in out and out.count("test result: ok") >= 3
            record(f"scripts/test.sh in the clone ({time.time() - t:.0f}s; log {log_file})",
                   r.returncode == 0 and cargo_ok, out[-3000:])
        return finish(t0)
    finally:
        if args.keep:
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def finish(t0: float) -> int:
    failed = [r for r in results if not r[1]]
    log(f"done in {time.time() - t0:.0f}s")
    for name, _, detail in failed:
        log(f"FAILED: {name}\n{detail}")
    print(f"fresh-clone: {len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
