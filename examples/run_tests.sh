#!/usr/bin/env bash
# The README's second command: install xlac with its test tools and run the tests
# (lit + pytest), one line per test, the conformance suite counting as it goes.
# Most tests run on two pytest workers (pytest-xdist): a test spends much of its
# time in one Python thread, so two cores finish them in a little over half the
# time. The tests marked slow (the conformance suite, which runs its own two
# processes and prints its progress) run after them on their own.
# The heaviest checks (pytest -m heavy: full-size benchmark programs, the
# conformance suite through the cuda emulator) are CI's second step (.ci/run);
# run them here with: bash examples/run_tests.sh -m heavy
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/pip install -q -e '.[test,bench,cuda,lapack,distributed,gpu-bench]'
pytest=(.venv/bin/python -m pytest test/python -v --durations=5)
for arg in "$@"; do
    if [[ "$arg" == -m* || "$arg" == -k* ]]; then      # a selection of the caller's: as asked
        exec "${pytest[@]}" "$@"
    fi
done
workers=$(( $(nproc) < 4 ? $(nproc) : 4 ))
"${pytest[@]}" -m "not heavy and not slow" -n "$workers" "$@"
exec "${pytest[@]}" -m "slow and not heavy" "$@"
