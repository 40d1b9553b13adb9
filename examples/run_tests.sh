#!/usr/bin/env bash
# The README's second command: install xlac with its test tools and run the tests
# (lit + pytest), one line per test, the conformance suite counting as it goes.
# The heaviest checks (pytest -m heavy: full-size benchmark programs, the
# conformance suite through the cuda emulator) are CI's second step (.ci/run);
# run them here with: bash examples/run_tests.sh -m heavy
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/pip install -q -e '.[test,bench,cuda,lapack,distributed,gpu-bench]'
exec .venv/bin/python -m pytest test/python -v -m "not heavy" --durations=5 "$@"
