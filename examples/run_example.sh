#!/usr/bin/env bash
# The README's first command: install xlac into .venv and run the bundled example.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/pip install -q -e .
.venv/bin/xla-run examples/softmax.mlir --input="4x8xf32=[0 1 2 3 4 5 6 7][1 1 1 1 1 1 1 1][-1 0 1 0 -1 0 1 0][8 7 6 5 4 3 2 1]" --reference
