"""Shared fixtures: where ../shared is, and the benchmark workloads."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
SUITE = SHARED / "bench" / "suite"
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
