"""Runs the lit + FileCheck IR tests (test/**/*.mlir) as part of pytest."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import REPO

TESTS = REPO / "test"


def test_lit_suite_passes():
    lit = Path(sys.executable).parent / "lit"
    done = subprocess.run([str(lit), str(TESTS), "-q", "--succinct"], capture_output=True,
                          text=True, timeout=1200)
    print(done.stdout[-4000:])
    assert done.returncode == 0, done.stdout[-8000:] + done.stderr[-4000:]
