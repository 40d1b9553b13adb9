"""One MPI rank of the distributed tests: `mpiexec -n N python rank_main.py JOB_DIR`.

``JOB_DIR/job.json`` lists programs ({"name", "source" or "library"}); each
rank compiles (or loads) each, runs it on its own inputs
(``JOB_DIR/<name>.inputs.npz``: ``in<i>_dev<d>``) and writes its results to
``JOB_DIR/<name>.rank<r>.npz`` (``out<k>``); the test compares them.
``"break"`` ({"rank", "how"}) makes one rank fail on purpose: "compile" (the
collective lowering disabled), "parse" (a truncated program) or "input"
(an argument of the wrong shape, after every rank compiled); with "catch", the
ranks catch compile errors and exit (the agreement alone must stop them).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np

import xlac
from xlac.options import Options


def main(job_dir: Path) -> None:
    job = json.loads((job_dir / "job.json").read_text())
    rank = int(os.environ.get("PMI_RANK", os.environ.get("OMPI_COMM_WORLD_RANK", "0")))
    breaking = job.get("break", {})
    how = breaking.get("how") if breaking.get("rank") == rank else None
    for program in job["programs"]:
        try:
            exe = _executable(program, how)
        except xlac.CompileError as exc:
            if not breaking.get("catch"):
                raise
            # no abort: each rank says why, in one write: print() writes the text and its
            # newline apart, and the other rank's line could land between them
            sys.stdout.write(f"rank {rank}: caught: {exc}\n")
            sys.stdout.flush()
            sys.exit(3)
        data = np.load(job_dir / f"{program['name']}.inputs.npz")
        inputs = [_typed(data[f"in{i}_dev{rank}"], spec.dtype)
                  for i, spec in enumerate(exe.signature.inputs)]
        if how == "input":
            inputs[0] = inputs[0][:1]
        outputs = exe.run(*inputs)
        np.savez(job_dir / f"{program['name']}.rank{rank}.npz",
                 **{f"out{k}": _savable(v) for k, v in enumerate(outputs)})
    print(f"rank {rank}: done", flush=True)


def _executable(program: dict, how: str | None):
    if "library" in program:
        return xlac.load(program["library"])
    text = Path(program["source"]).read_text()
    options = Options.from_env()
    if how == "compile":
        options = options.replace(disable_passes=("xla-lower-collectives",))
    if how == "parse":
        text = text[:len(text) // 2]
    if program.get("target") == "cuda":
        return _on_fake_gpus(text, options)
    if program.get("target") == "cuda-gpu":               # this rank's GPU and the real NCCL
        return xlac.compile(text, target="cuda", options=options)
    return xlac.compile(text, options=options)


def _on_fake_gpus(text: str, options):
    """target="cuda" with the fake driver (kernels on the SIMT emulator) and fake NCCL."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "support"))
    from xlac.compiler import compile_bytes
    from xlac.spmd.start import start_on_every_rank
    from xlac_emulator.fake_cuda import FakeDriver
    from xlac_emulator.fake_nccl import FakeNccl
    exe = compile_bytes(text.encode(), "<program>", target="cuda", options=options, start=False)
    function = exe.function
    fake = function.with_driver(FakeDriver(execute=True, kernels=function.kernels), FakeNccl())
    return start_on_every_rank(function.grid, lambda: exe.with_function(fake), "<program>", options)


def _typed(array: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """np.savez keeps bfloat16 and fp8 as raw bytes ("V2"): view them as the program's type."""
    return array.view(dtype) if array.dtype.kind == "V" else array


def _savable(array: np.ndarray) -> np.ndarray:
    """np.savez keeps bfloat16 and fp8 as raw bytes: store their bits instead."""
    if array.dtype.kind == "V" or array.dtype.name in ("bfloat16", "float8_e4m3fn"):
        return array.view(f"u{array.dtype.itemsize}")
    return array


if __name__ == "__main__":
    main(Path(sys.argv[1]))
