"""Running the distributed tests' MPI jobs: mpiexec under hard timeouts, one
job directory each (see rank_main.py), results read back per rank."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

RANK_MAIN = Path(__file__).with_name("rank_main.py")
_BITS = {"bf16": ml_dtypes.bfloat16, "f8E4M3FN": ml_dtypes.float8_e4m3fn}


def tool(name: str) -> str | None:
    """A tool next to this Python (the venv's wheels) or on PATH."""
    beside = Path(sys.executable).with_name(name)
    return str(beside) if beside.exists() else shutil.which(name)


def require_mpi() -> str:
    """mpiexec's path, or skip saying what is missing."""
    mpiexec, mpicc = tool("mpiexec"), tool("mpicc")
    if not mpiexec or not mpicc:
        pytest.skip("no MPI (mpiexec and mpicc): pip install -e '.[distributed]' to run "
                    "the multi-process tests")
    return mpiexec


def write_job(job_dir: Path, programs: list[dict], inputs: dict[str, list[list[np.ndarray]]],
              breaking: dict | None = None) -> Path:
    """job.json and each program's inputs (``inputs[name][device]``)."""
    job_dir.mkdir(parents=True, exist_ok=True)
    (job_dir / "job.json").write_text(json.dumps({"programs": programs, "break": breaking or {}}))
    for name, devices in inputs.items():
        arrays = {f"in{i}_dev{d}": x for d, device in enumerate(devices) for i, x in enumerate(device)}
        np.savez(job_dir / f"{name}.inputs.npz", **arrays)
    return job_dir


def mpiexec(ranks: int, command: list[str], timeout: float = 240,
            env: dict | None = None) -> subprocess.CompletedProcess:
    """``mpiexec -n ranks command`` that cannot outlive ``timeout``: coreutils
    timeout stops mpiexec (which stops its ranks), and the whole process group
    is killed if even that hangs."""
    launcher = require_mpi()
    full = ["timeout", "--kill-after=10", str(int(timeout)), launcher, "-n", str(ranks), *command]
    done = _launch(full, timeout, env)
    if done.returncode not in (0, 124, 137, -9) and not done.stdout.strip():   # no hang: retried
        # a failed launch that printed nothing at all, not even the ranks' own
        # errors (seen once in some fifty runs of the wrong-rank-count test, on a
        # clean CI clone): the launcher's, so once more
        done = _launch(full, timeout, env)
    return done


def _launch(full: list[str], timeout: float, env: dict | None) -> subprocess.CompletedProcess:
    process = subprocess.Popen(full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True, env=env or dict(os.environ))
    try:
        output, _ = process.communicate(timeout=timeout + 30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
    return subprocess.CompletedProcess(full, process.returncode, output, "")


def run_job(job_dir: Path, ranks: int, timeout: float = 240,
            env: dict | None = None) -> subprocess.CompletedProcess:
    """``env``: variables set for the ranks besides this process's own."""
    return mpiexec(ranks, [sys.executable, str(RANK_MAIN), str(job_dir)], timeout,
                   dict(os.environ, **env) if env else None)


def rank_results(job_dir: Path, name: str, ranks: int, elements: list[str]) -> list[list[np.ndarray]]:
    """Every rank's results of program ``name`` (element types to undo saved bits)."""
    found = []
    for rank in range(ranks):
        data = np.load(job_dir / f"{name}.rank{rank}.npz")
        found.append([_typed(data[f"out{k}"], e) for k, e in enumerate(elements)])
    return found


def _typed(array: np.ndarray, element: str) -> np.ndarray:
    return array.view(_BITS[element]) if element in _BITS else array


def same(got: np.ndarray, want: np.ndarray, element: str) -> bool:
    """Equal, up to the rounding of a different summation order for floats."""
    if got.shape != want.shape:
        return False
    if element in ("bf16", "f16", "f8E4M3FN"):
        return np.allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-2, atol=1e-2)
    if element.startswith(("f", "complex")):
        return np.allclose(got, want, rtol=1e-6, atol=1e-6)
    return np.array_equal(got, want)
