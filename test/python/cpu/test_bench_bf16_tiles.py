"""Smoke test of bench/bf16_tiles.py: each way's tile runs, matches f32, and is tabled."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "bench"))
try:
    import bf16_tiles
finally:
    sys.path.remove(str(REPO / "bench"))


def test_bf16_tiles_reports_every_way_against_the_f32_micro_kernel(tmp_path):
    if bf16_tiles.missing_features():
        pytest.skip(f"this CPU lacks {', '.join(bf16_tiles.missing_features())} (AVX512-BF16 and AMX)")
    done = subprocess.run([sys.executable, str(REPO / "bench" / "bf16_tiles.py"), "--rounds", "1",
                           "--calls", "2000", "--cache-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = {line.split("|")[1].strip() for line in done.stdout.splitlines() if line.startswith("| ")}
    assert {"f32", "dpbf16", "amx", "amx-b"} <= rows, done.stdout
