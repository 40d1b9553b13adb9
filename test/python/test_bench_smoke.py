"""Smoke test of the benchmark harness (bench/run.py --quick) in a subprocess."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO.parent / "shared" / "bench" / "suite"

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("jax") is None,
                       reason="the benchmark compares with XLA: pip install -e '.[bench]'"),
    pytest.mark.skipif(not (SUITE / "manifest.json").exists(),
                       reason=f"the benchmark suite is not at {SUITE}"),
]

TINY = """\
func.func public @main(%a: tensor<8x8xf32>, %b: tensor<8xi32>) -> (tensor<8x8xf32>, tensor<8xi32>) {
  %0 = stablehlo.multiply %a, %a : tensor<8x8xf32>
  %1 = stablehlo.add %b, %b : tensor<8xi32>
  return %0, %1 : tensor<8x8xf32>, tensor<8xi32>
}
"""


def _bench(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "run.py"), "--quick", *args],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def test_quick_gelu_writes_the_table(tmp_path):
    out = tmp_path / "PERFORMANCE.md"
    proc = _bench("--only", "gelu", "--out", str(out))
    assert "check gelu: xlac vs XLA" in proc.stdout
    row = next(line for line in proc.stdout.splitlines() if line.startswith("gelu "))
    assert "FAIL" not in row, proc.stdout
    assert "geometric mean xlac/XLA" in proc.stdout
    text = out.read_text()
    assert "| program | xlac ms | XLA ms |" in text and "| gelu |" in text


def test_extra_program_from_the_command_line(tmp_path):
    path = tmp_path / "tiny.mlir"
    path.write_text(TINY)
    proc = _bench("--only", "tiny", str(path))
    row = next(line for line in proc.stdout.splitlines() if line.startswith("tiny "))
    assert "n/a" in row          # no numpy version of a program from outside the suite
    assert "xlac vs XLA max rel err 0.0e+00" in proc.stdout


def test_unknown_program_is_a_clear_error():
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "run.py"), "--only", "nope"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "no program named nope" in proc.stderr
