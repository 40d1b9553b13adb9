"""The numpy versions of the suite's workloads, read from ``../shared/bench/workloads.py``.

That file holds what a user would write by hand in numpy for each workload;
the harness uses it as it is rather than keeping a copy here.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

_WORKLOADS = Path(__file__).resolve().parents[1].parent / "shared" / "bench" / "workloads.py"


def _load() -> dict:
    if not _WORKLOADS.exists():
        return {}
    spec = importlib.util.spec_from_file_location("shared_bench_workloads", _WORKLOADS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {w["name"]: w["numpy"] for w in module.WORKLOADS}


IMPLS = _load()
