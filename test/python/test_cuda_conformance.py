"""Every public conformance program the cuda target supports gives PTX that
ptxas accepts for sm_90 and the right numbers when its kernels run in the
SIMT emulator (no GPU needed for either); the rate may not drop below the
floor in test/conformance_floor.json."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import require_shared
from test_conformance import FLOOR, summarize

pytest.importorskip("llvmlite", reason="the cuda extra is not installed: pip install 'xlac[cuda]'")

HERE = Path(__file__).parent


def _conformance(backend: str, out: Path) -> dict:
    runner = require_shared("conformance", "run_conformance.py")
    subprocess.run([sys.executable, str(runner), str(runner.parent / "public"), "--backend",
                    f"{HERE / backend}:run", "-j", "2", "--timeout", "120", "--json", str(out)],
                   capture_output=True, text=True, timeout=2400)
    return summarize(json.loads(out.read_text())["results"])


@pytest.mark.slow
def test_public_conformance_ptx_is_valid_and_emulated_kernels_compute_the_expected_values(tmp_path):
    from xlac.cuda_ptx import wheel_file
    if wheel_file("bin/ptxas") is None:
        pytest.skip("ptxas not found: pip install 'xlac[cuda]'")
    summary = _conformance("cuda_conformance_backend.py", tmp_path / "cuda.json")
    print(f"\ncuda: PTX valid (ptxas sm_90) and kernels right in the SIMT emulator: "
          f"{summary['passed']}/{summary['runnable']} ({100 * summary['rate']:.1f}%), "
          f"by suite {summary['by_suite']}")
    assert summary["rate"] >= json.loads(FLOOR.read_text())["cuda_rate"], summary
