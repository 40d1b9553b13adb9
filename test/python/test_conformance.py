"""The public StableHLO conformance suite through xlac's public API.

Prints the pass rate by suite and the unweighted mean over op groups, and
fails only if the rate drops below the floor recorded in
``test/conformance_floor.json`` (raise the floor as coverage grows).
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import require_shared

FLOOR = Path(__file__).resolve().parents[1] / "conformance_floor.json"


def run_suite(tmp_path: Path) -> list[dict]:
    runner = require_shared("conformance", "run_conformance.py")
    out = tmp_path / "conformance.json"
    jobs = str(max(1, min(4, os.cpu_count() or 1)))
    done = subprocess.run(
        [sys.executable, str(runner), str(runner.parent / "public"), "--backend",
         str(runner.parent / "xlac_backend.py") + ":run", "-j", jobs, "--timeout", "120",
         "--json", str(out)],
        capture_output=True, text=True, timeout=1800)
    assert out.exists(), done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(out.read_text())["results"]


def summarize(results: list[dict]) -> dict:
    runnable = [r for r in results if r["status"] != "skip"]
    passed = [r for r in runnable if r["status"] == "pass"]
    by_suite = collections.defaultdict(lambda: [0, 0])
    by_group = collections.defaultdict(lambda: [0, 0])
    for r in runnable:
        for table, key in ((by_suite, r["suite"]), (by_group, r["group"])):
            table[key][0] += r["status"] == "pass"
            table[key][1] += 1
    return {
        "passed": len(passed), "runnable": len(runnable),
        "rate": len(passed) / max(1, len(runnable)),
        "group_mean": sum(p / n for p, n in by_group.values()) / max(1, len(by_group)),
        "by_suite": {k: f"{p}/{n}" for k, (p, n) in sorted(by_suite.items())},
    }


@pytest.mark.slow
def test_public_conformance_rate_does_not_drop(tmp_path):
    summary = summarize(run_suite(tmp_path))
    floor = json.loads(FLOOR.read_text())
    print(f"\nconformance: {summary['passed']}/{summary['runnable']} runnable tests pass "
          f"({100 * summary['rate']:.1f}%), per-op-group mean {100 * summary['group_mean']:.1f}%, "
          f"by suite {summary['by_suite']}")
    assert summary["rate"] >= floor["rate"], summary
    assert summary["group_mean"] >= floor["group_mean"], summary
