#!/usr/bin/env bash
# The project's test command: Rust unit/integration tests, then the conformance suites.
# Extra arguments are passed to pytest (e.g. scripts/test.sh -k gpt2 -x).
#   TOKENKIT_CONFORMANCE_FULL=1  every corpus line instead of the default sample
#   PYTEST_WORKERS=N             pytest-xdist workers (default: auto = one per core; 0 = no xdist)
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test --workspace --release

xdist=()
if [ "${PYTEST_WORKERS:-auto}" != "0" ] && .venv/bin/python -c "import xdist" 2>/dev/null; then
    xdist=(-n "${PYTEST_WORKERS:-auto}")
fi
.venv/bin/python -m pytest tests/conformance -q "${xdist[@]}" "$@"
