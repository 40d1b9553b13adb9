"""Shared fixtures: where ../shared is, and the benchmark workloads."""

from __future__ import annotations

import collections
import contextlib
import importlib.util
import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
sys.path.insert(0, str(REPO / "test" / "support"))     # xlac_emulator: cuda kernels on the CPU
SUITE = SHARED / "bench" / "suite"
# The cuda tests' kernel counts and schedules are the generated matmul kernels'
# wherever the suite runs: cuda_contractions=auto would pick cuBLASLt on a
# machine with libcublasLt. The cuBLASLt tests ask for it themselves
# (test/python/cuda/test_cuda_cublaslt.py); XLAC_CUDA_CONTRACTIONS set outside wins.
os.environ.setdefault("XLAC_CUDA_CONTRACTIONS", "generated")
BENCH_NAMES = ["gelu", "softmax", "layernorm", "matmul", "mlp", "attention", "conv2d",
               "reduce_sum", "transformer_block", "train_step"]


def require_shared(*parts: str) -> Path:
    """The path under ../shared, or skip the test saying why."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared benchmark/conformance data is not beside the repo")
    return path


def load_workloads():
    """The shared workload definitions (numpy references and input makers)."""
    path = require_shared("bench", "workloads.py")
    spec = importlib.util.spec_from_file_location("shared_workloads", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_TENSOR = re.compile(r"tensor<([0-9x]+)x([a-z][a-z0-9]*)>")
_SLICE = re.compile(r"(stablehlo\.slice %[\w#]+ )\[([0-9:, ]+)\]")


def shrink_program(text: str, divisor: int = 16, threshold: int = 64) -> str:
    """The same program with every dimension >= ``threshold`` divided by ``divisor``.

    Dimension sizes only appear inside tensor types, and the bench programs'
    reshapes split or merge dimensions that all shrink by the same factor, so
    the smaller program stays valid. Used to keep the reference interpreter fast.
    """
    def shrink(match: re.Match) -> str:
        dims = [int(d) for d in match.group(1).split("x")]
        small = [d // divisor if d >= threshold else d for d in dims]
        return "tensor<" + "x".join(str(d) for d in small) + "x" + match.group(2) + ">"
    def shrink_slice(match: re.Match) -> str:
        bounds = re.sub(r"\d+", lambda m: str(int(m.group()) // divisor)
                        if int(m.group()) >= threshold else m.group(), match.group(2))
        return match.group(1) + "[" + bounds + "]"
    return _SLICE.sub(shrink_slice, _TENSOR.sub(shrink, text))


@pytest.fixture(scope="session", autouse=True)
def private_compilation_cache(tmp_path_factory):
    """Every compile in the tests (subprocesses too) uses a cache of its own,
    never the user's ~/.cache/xlac; tests that need an empty one set theirs."""
    import os
    previous = os.environ.get("XLAC_CACHE_DIR")
    os.environ["XLAC_CACHE_DIR"] = str(tmp_path_factory.mktemp("xlac-cache"))
    yield os.environ["XLAC_CACHE_DIR"]
    if previous is None:
        os.environ.pop("XLAC_CACHE_DIR", None)
    else:
        os.environ["XLAC_CACHE_DIR"] = previous


@pytest.fixture(scope="session")
def workloads():
    return load_workloads()


# a row max over the entries a mask keeps (attention with a padding mask): no
# vector schedule reads i1 (test_parallel_loops.py, test_dump.py)
MASKED_ROW_MAX = """func.func @main(%x: tensor<512x256xf32>, %keep: tensor<512x256xi1>) -> tensor<512xf32> {
  %low = stablehlo.constant dense<0xFF800000> : tensor<512x256xf32>
  %m = stablehlo.select %keep, %x, %low : tensor<512x256xi1>, tensor<512x256xf32>
  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %r = stablehlo.reduce(%m init: %init) applies stablehlo.maximum across dimensions = [1]
      : (tensor<512x256xf32>, tensor<f32>) -> tensor<512xf32>
  return %r : tensor<512xf32>
}"""

FLOOR = REPO / "test" / "conformance_floor.json"


def run_conformance(backend: Path, out: Path, *extra: str, env: dict | None = None,
                    progress=None) -> list[dict]:
    """The public suite through ``backend`` (a file with ``run``), results as JSON records.

    ``extra``: more runner flags (``--filter REGEX``); ``env``: variables to set for it.
    The runner's "... N/1533" lines go to ``progress`` as they come (a test of
    many minutes must not look hung)."""
    runner = require_shared("conformance", "run_conformance.py")
    jobs = str(max(1, min(4, os.cpu_count() or 1)))
    command = [sys.executable, str(runner), str(runner.parent / "public"), "--backend",
               f"{backend}:run", "-j", jobs, "--timeout", "120", "--json", str(out), *extra]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env={**os.environ, **(env or {})}) as child:
        watchdog = threading.Timer(2400, child.kill)
        watchdog.start()
        lines = []
        try:
            for line in child.stdout:
                lines.append(line)
                if progress is not None and _PROGRESS.match(line):
                    progress(line.strip().lstrip(". "))
        finally:
            watchdog.cancel()
    assert out.exists(), "".join(lines)[-4000:]
    return json.loads(out.read_text())["results"]


_PROGRESS = re.compile(r"^\.\.\. \d+/\d+")


def progress_printer(config, label: str):
    """A function printing ``label: <text>`` on the terminal at once, past pytest's capture."""
    reporter = config.pluginmanager.getplugin("terminalreporter")
    capture = config.pluginmanager.getplugin("capturemanager")

    def show(text: str) -> None:
        if reporter is None:
            return
        with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
            reporter.write_line(f"    {label}: {text} programs done")
    return show


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


def runnable_levels(*levels: str) -> list[str]:
    """The CPU levels among ``levels`` whose code this host can run ("host"
    always): tests compile for every level but run only these, so they pass
    on an AVX2-only machine as on one with AVX-512."""
    from xlac.cpu_model import cpu_model
    host = cpu_model("host")
    return [level for level in levels
            if level == "host" or not host.lacks(cpu_model(level).features)]
