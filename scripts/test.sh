#!/usr/bin/env bash
# The project's test command: clippy, Rust unit/integration tests, the conformance suite (tokenkit CLI
# vs HF tokenizers) and the Python package's tests (tokenkit vs tokenizers, in Python).
# Extra arguments are passed to the conformance pytest run (e.g. scripts/test.sh -k gpt2 -x).
#   TOKENKIT_CONFORMANCE_FULL=1  every corpus line instead of the default sample
#   PYTEST_WORKERS=N             pytest-xdist workers (default: auto = one per core; 0 = no xdist)
set -euo pipefail
cd "$(dirname "$0")/.."

# Lints first (they fail fastest): clippy on every crate and target, warnings as errors.
cargo clippy --workspace --all-targets -- -D warnings
# Formatting (rustfmt.toml): the tree is formatted; a change that is not fails here.
cargo fmt --all --check

# The library and the CLI (the default workspace members; the benchmark crate and the Python
# extension are built by their own commands).
cargo test --release
# The conformance and Python tests run target/release/tokenkit, which `cargo test` does not
# rebuild.
cargo build --release -p tokenkit-cli

xdist=()
if [ "${PYTEST_WORKERS:-auto}" != "0" ] && .venv/bin/python -c "import xdist" 2>/dev/null; then
    xdist=(-n "${PYTEST_WORKERS:-auto}")
fi
.venv/bin/python -m pytest tests/conformance -q "${xdist[@]}" "$@"
.venv/bin/python -m pytest tests/python -q "${xdist[@]}"
