#!/usr/bin/env bash
# The README's second command: install xlac with its test tools and run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/pip install -q -e '.[test,bench,cuda,distributed]'
.venv/bin/python -m pytest test/python "$@"
