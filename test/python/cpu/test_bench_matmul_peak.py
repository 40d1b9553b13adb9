"""Smoke test of bench/matmul_peak.py: a tiny matmul, one round, in processes of its own."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO


def test_matmul_peak_reports_xlac_from_two_trees_and_the_peak(tmp_path):
    """xlac at AVX2 from this checkout and again through --tree (the overlay
    that imports another tree's xlac, here this one), and the ymm FMA loop:
    one row each, the matmul's with a share of the peak."""
    done = subprocess.run([sys.executable, str(REPO / "bench" / "matmul_peak.py"), "--shape", "64x64x64",
                           "--rounds", "1", "--calls", "2", "--only", "xlac,peak", "--levels", "x86-64-v3",
                           "--tree", f"again={REPO}", "--cache-dir", str(tmp_path / "cache")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = {line.split("|")[1].strip(): line for line in done.stdout.splitlines() if line.startswith("| ")}
    assert {"xlac x86-64-v3", "xlac-again x86-64-v3", "peak ymm"} <= set(rows), done.stdout
    assert "failed" not in rows["xlac x86-64-v3"] and "%" in rows["xlac-again x86-64-v3"]
    assert "GHz" in rows["peak ymm"]
