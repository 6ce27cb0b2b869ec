"""pytest wiring for the conformance suite: session fixtures and the end-of-session summary."""
from __future__ import annotations

import json
import os
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
os.environ.setdefault("TOKENIZERS_PARALLELISM", "true")  # no fork warnings from subprocess
# HF tokenizers panics on some truncation configs (stride >= room left); with RUST_BACKTRACE=1
# every such oracle panic captures a backtrace, which is slow. The CLI keeps the caller's value.
os.environ.setdefault("TOKENKIT_CLI_RUST_BACKTRACE", os.environ.get("RUST_BACKTRACE", ""))
os.environ["RUST_BACKTRACE"] = "0"

import harness  # noqa: E402


def pytest_configure(config):
    # Results are appended to a file so that the controller can summarise pytest-xdist runs too.
    if not hasattr(config, "workerinput") and "TOKENKIT_CONFORMANCE_RESULTS" not in os.environ:
        fd, path = tempfile.mkstemp(prefix="tokenkit-conformance-", suffix=".jsonl")
        os.close(fd)
        os.environ["TOKENKIT_CONFORMANCE_RESULTS"] = path
        config._tokenkit_results = path


def pytest_report_header(config):
    return [f"tokenkit binary: {harness.tokenkit_bin()} (exists: {harness.tokenkit_bin().exists()})",
            f"fixtures: {harness.FIXTURES}; corpora: {harness.corpus_dir()}; "
            f"mode: {'FULL' if harness.FULL else 'sample'}"]


@pytest.fixture(scope="session")
def work_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("tokenkit-conformance")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    path = getattr(config, "_tokenkit_results", None)
    recs = []
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            recs = [json.loads(l) for l in f if l.strip()]
        os.unlink(path)
    if not recs:
        return
    tr = terminalreporter
    tr.section("tokenkit conformance summary")
    agg = defaultdict(lambda: [0, 0, 0, 0, 0])  # identical, total, checks, failing checks, CLI errors
    for r in recs:
        a = agg[(r["group"], r["tokenizer"])]
        a[0] += r["identical"]
        a[1] += r["total"]
        a[2] += 1
        a[3] += r["identical"] != r["total"]
        a[4] += bool(r.get("cli_error"))
    w = max(len(f"{g}/{t}") for g, t in agg) + 2
    tr.write_line(f"{'group/tokenizer':<{w}} {'identical':>10} {'total':>8} {'%':>7} {'checks':>7} {'failing':>8} {'cli-err':>8}")
    tot = [0, 0, 0, 0, 0]
    for (g, t), (ok, n, c, bad, ce) in sorted(agg.items()):
        pct = 100.0 * ok / n if n else 100.0
        tr.write_line(f"{g + '/' + t:<{w}} {ok:>10,} {n:>8,} {pct:>6.2f}% {c:>7} {bad:>8} {ce:>8}")
        tot = [tot[0] + ok, tot[1] + n, tot[2] + c, tot[3] + bad, tot[4] + ce]
    pct = 100.0 * tot[0] / tot[1] if tot[1] else 100.0
    tr.write_line(f"{'TOTAL':<{w}} {tot[0]:>10,} {tot[1]:>8,} {pct:>6.2f}% {tot[2]:>7} {tot[3]:>8} {tot[4]:>8}")
    bad = [r for r in recs if r["identical"] != r["total"]]
    if bad:
        tr.write_line("")
        tr.write_line("failing checks (first 40):")
        for r in bad[:40]:
            why = " (CLI error)" if r.get("cli_error") else ""
            tr.write_line(f"  {r['group']}/{r['tokenizer']} / {r['corpus']} {r['kind']}: "
                          f"{r['identical']}/{r['total']} identical{why}")
