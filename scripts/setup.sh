#!/usr/bin/env bash
# Idempotent developer/CI set-up: Python venv with the oracle libraries, a Java runtime for PySpark
# (apt-get, when missing), release build of the `tokenkit` CLI, and the fixture files in .fixtures/
# (see scripts/fetch_fixtures.py).
#
# Environment:
#   PYTHON            interpreter used to create .venv (default: python3)
#   CARGO_TARGET_DIR  honoured by cargo as usual (the conformance suite finds the binary through
#                     TOKENKIT_BIN, else $CARGO_TARGET_DIR/release/tokenkit, else target/release/tokenkit)
#   SKIP_BUILD=1      do not build the CLI
#   SKIP_PYTHON_PACKAGE=1  do not build and install the Python package
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    echo "[setup] creating .venv with $PYTHON"
    "$PYTHON" -m venv .venv
fi

# pip is a no-op when the pinned versions are already installed.
if ! .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements-test.txt; then
    echo "[setup] pip install -r requirements-test.txt failed" >&2
    exit 1
fi

# PySpark's local mode (tests/python/test_data_engines.py, the README's Spark recipe) runs on a
# Java runtime (17 or 21): installed from the Debian archive when there is none.
if ! command -v java >/dev/null 2>&1; then
    echo "[setup] no java on PATH: installing a headless JRE with apt-get (PySpark local mode)"
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    if ! command -v apt-get >/dev/null 2>&1 || ! $sudo apt-get update -q \
        || ! { $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends openjdk-17-jre-headless \
               || $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends default-jre-headless; }; then
        echo "[setup] could not install Java (openjdk-17-jre-headless): install a Java 17 runtime for PySpark" >&2
        exit 1
    fi
fi

# Browser tests of the HTML visualiser (tests/python/test_tools.py): Debian's Chromium and its
# ChromeDriver, driven headless by selenium, with CJK and emoji fonts so screenshots show the text.
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1 \
    || [ ! -d /usr/share/fonts/opentype/noto ]; then
    echo "[setup] installing chromium, chromium-driver and Noto CJK/emoji fonts with apt-get (browser tests)"
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    if ! command -v apt-get >/dev/null 2>&1 || ! $sudo apt-get update -q \
        || ! $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
               chromium chromium-driver fonts-noto-cjk fonts-noto-color-emoji; then
        echo "[setup] could not install chromium and chromium-driver (the browser tests need them)" >&2
        exit 1
    fi
fi

if [ "${SKIP_BUILD:-0}" != "1" ]; then
    echo "[setup] cargo build --release -p tokenkit-cli"
    cargo build --release -p tokenkit-cli
fi

if [ "${SKIP_PYTHON_PACKAGE:-0}" != "1" ]; then
    echo "[setup] pip install ./bindings/python (the tokenkit Python package)"
    .venv/bin/python -m pip install -q --disable-pip-version-check ./bindings/python
fi

echo "[setup] fetching fixtures"
.venv/bin/python scripts/fetch_fixtures.py
# tiktoken rank files: `tokenkit encode -e cl100k_base` looks in $TOKENKIT_TIKTOKEN_DIR, then
# ${XDG_CACHE_HOME:-~/.cache}/tokenkit/tiktoken, then ./.fixtures/tiktoken; link the fetched
# files into the default cache location unless something is there already.
tk_cache="${XDG_CACHE_HOME:-$HOME/.cache}/tokenkit"
# A link left by an earlier checkout (perhaps dangling) is replaced; a real directory is kept.
if [ -d .fixtures/tiktoken ] && { [ -L "$tk_cache/tiktoken" ] || [ ! -e "$tk_cache/tiktoken" ]; }; then
    mkdir -p "$tk_cache" && ln -sfn "$(cd .fixtures/tiktoken && pwd -P)" "$tk_cache/tiktoken" \
        && echo "[setup] linked $tk_cache/tiktoken -> .fixtures/tiktoken"
fi
echo "[setup] done"
