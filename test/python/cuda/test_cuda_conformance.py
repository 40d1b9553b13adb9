"""Every public conformance program the cuda target supports gives PTX that
ptxas accepts for sm_90 and the right numbers when its kernels run in the
SIMT emulator (no GPU needed for either); the rate may not drop below the
floor in test/conformance_floor.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import FLOOR, progress_printer, run_conformance, summarize

pytest.importorskip("llvmlite", reason="the cuda extra is not installed: pip install 'xlac[cuda]'")

HERE = Path(__file__).parent


@pytest.mark.slow
@pytest.mark.heavy
def test_public_conformance_ptx_is_valid_and_emulated_kernels_compute_the_expected_values(
        tmp_path, pytestconfig):
    from xlac.targets.cuda.ptx import wheel_file
    if wheel_file("bin/ptxas") is None:
        pytest.skip("ptxas not found: pip install 'xlac[cuda]'")
    summary = summarize(run_conformance(HERE / "cuda_conformance_backend.py", tmp_path / "cuda.json",
                                        progress=progress_printer(pytestconfig, "conformance (cuda, emulated)")))
    print(f"\ncuda: PTX valid (ptxas sm_90) and kernels right in the SIMT emulator: "
          f"{summary['passed']}/{summary['runnable']} ({100 * summary['rate']:.1f}%), "
          f"by suite {summary['by_suite']}")
    assert summary["rate"] >= json.loads(FLOOR.read_text())["cuda_rate"], summary
