#!/usr/bin/env bash
# The project's test command: Rust unit/integration tests, then the conformance suites.
# Extra arguments are passed to pytest (e.g. scripts/test.sh -x -k gpt2).
# TOKENKIT_CONFORMANCE_FULL=1 runs every corpus line instead of the default sample.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test --workspace --release
.venv/bin/python -m pytest tests/conformance -q "$@"
