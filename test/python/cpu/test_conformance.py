"""The public StableHLO conformance suite through xlac's public API.

Prints the pass rate by suite and the unweighted mean over op groups, and
fails only if the rate drops below the floor recorded in
``test/conformance_floor.json`` (raise the floor as coverage grows).
"""

from __future__ import annotations

import json

import pytest

from conftest import FLOOR, progress_printer, require_shared, run_conformance, summarize


@pytest.mark.slow
def test_public_conformance_rate_does_not_drop(tmp_path, pytestconfig):
    runner = require_shared("conformance", "run_conformance.py")
    summary = summarize(run_conformance(runner.parent / "xlac_backend.py", tmp_path / "cpu.json",
                                        progress=progress_printer(pytestconfig, "conformance (cpu)")))
    floor = json.loads(FLOOR.read_text())
    print(f"\nconformance: {summary['passed']}/{summary['runnable']} runnable tests pass "
          f"({100 * summary['rate']:.1f}%), per-op-group mean {100 * summary['group_mean']:.1f}%, "
          f"by suite {summary['by_suite']}")
    assert summary["rate"] >= floor["rate"], summary
    assert summary["group_mean"] >= floor["group_mean"], summary
