"""Smoke test of bench/matmul_peak.py: a tiny matmul, one round, in processes of its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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



def test_bf16_peaks_are_held_against_the_fma_peak():
    """--bf16-peaks: vdpbf16ps's loop (and AMX's, where the CPU has it) run, and
    each is printed as a multiple of the zmm FMA loop (in this process: quick)."""
    import pytest
    flags = Path("/proc/cpuinfo").read_text().split()
    if "avx512_bf16" not in flags:
        pytest.skip("this CPU has no AVX512-BF16 (vdpbf16ps)")
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import matmul_peak
    finally:
        sys.path.remove(str(REPO / "bench"))
    names = ["zmm", "bf16-zmm"] + (["amx-bf16"] if "amx_bf16" in flags else [])
    rows = []
    for name in names:
        run = matmul_peak.child("peak", name, (1, 1, 1), 2)
        best = run["flops"] / min(cpu for cpu, _ in run["times"] if cpu > 0) / 1e9
        rows.append({"kind": "peak", "vectors": name, "best": best})
    assert all("x the zmm FMA peak" in matmul_peak.peak_note(row, rows) for row in rows[1:])
