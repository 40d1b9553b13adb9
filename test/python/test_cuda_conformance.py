"""Every public conformance program the cuda target supports gives PTX that
ptxas accepts for sm_90 (no GPU needed); the rate may not drop below the
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

BACKEND = Path(__file__).with_name("ptx_conformance_backend.py")


@pytest.mark.slow
def test_public_conformance_ptx_is_valid(tmp_path):
    from xlac.cuda_ptx import wheel_file
    if wheel_file("bin/ptxas") is None:
        pytest.skip("ptxas not found: pip install 'xlac[cuda]'")
    runner = require_shared("conformance", "run_conformance.py")
    out = tmp_path / "ptx.json"
    subprocess.run([sys.executable, str(runner), str(runner.parent / "public"), "--backend",
                    f"{BACKEND}:run", "-j", "2", "--timeout", "120", "--json", str(out)],
                   capture_output=True, text=True, timeout=2400)
    summary = summarize(json.loads(out.read_text())["results"])
    print(f"\ncuda PTX (ptxas sm_90) + CPU numbers: {summary['passed']}/{summary['runnable']} "
          f"({100 * summary['rate']:.1f}%), by suite {summary['by_suite']}")
    assert summary["rate"] >= json.loads(FLOOR.read_text())["cuda_ptx_rate"], summary
