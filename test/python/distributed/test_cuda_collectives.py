"""Collectives on target="cuda": the host schedule's NCCL steps, run under
mpiexec against the fake CUDA driver (kernels on the SIMT emulator) and a
fake NCCL that carries the bytes over MPI. No GPU is needed; on a machine
with GPUs the same schedule runs with libnccl (docs/distributed.md)."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
import spmd_programs
from mpi_jobs import rank_results, require_mpi, run_job, same, write_job

from xlac.artifact.container import read_artifact
from xlac.compiler import compile_bytes
from xlac.errors import CompileError, XlacError
from xlac.options import Options
from xlac.reference.parallel import run_reference_parallel
from xlac.targets.cuda.runtime import load_function
from xlac.targets.cuda.schedule import Collective


def _compile(program: spmd_programs.Program):
    return compile_bytes(program.text().encode(), "<test>", target="cuda", cache=False, start=False)


def test_collectives_are_nccl_steps_between_the_kernels():
    program = spmd_programs.group_strategies_program()
    exe = _compile(program)
    steps = [s for s in exe.function.steps if isinstance(s, Collective)]
    assert {s.kind for s in steps} == {"all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                                       "collective_permute", "collective_broadcast",
                                       "partition_id", "replica_id"}
    assert exe.function.grid.size == 4
    blob = exe.function.serializer("main", exe.signature)()
    again = load_function(read_artifact(blob, "<test>", "cuda", "main"), Options())
    assert again.steps == exe.function.steps and again.grid == exe.function.grid


def test_a_reduction_nccl_lacks_is_refused_at_compile_time():
    program = spmd_programs.Program(1, 2, ["i32"])
    program.reducing("and", "all_reduce", "i32", "and",
                     spmd_programs._attrs(groups=[[0, 1]], channel=1, global_ids=True))
    with pytest.raises(CompileError, match="NCCL has no and reduction") as info:
        _compile(program)
    assert "target='cpu'" in str(info.value)


@pytest.mark.parametrize("program, ranks", [
    (spmd_programs.for_nccl(spmd_programs.element_types_program()), 2),
    (spmd_programs.group_strategies_program(), 4),
], ids=["element_types_2_ranks", "group_strategies_4_ranks"])
def test_collectives_on_fake_gpus(tmp_path, program, ranks):
    require_mpi()
    pytest.importorskip("mpi4py", reason="the fake NCCL carries bytes with mpi4py")
    text, devices = program.text(), program.inputs()
    oracle = run_reference_parallel(text.encode(), devices)
    (tmp_path / "p.mlir").write_text(text)
    job = write_job(tmp_path / "job", [{"name": "p", "source": str(tmp_path / "p.mlir"),
                                        "target": "cuda"}], {"p": devices})
    done = run_job(job, ranks, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:]
    elements = [t.rsplit("x", 1)[-1].rstrip(">").replace("tensor<", "") for _, _, t in program.results]
    got = rank_results(job, "p", ranks, elements)
    wrong = [f"{name} rank {r}" for k, (name, element) in enumerate(zip(program.names(), elements))
             for r in range(ranks) if not same(got[r][k], oracle[r][k], element)]
    assert wrong == []
    assert np.all([len(g) == len(elements) for g in got])


def test_nccl_one_rank_on_the_gpu(tmp_path):
    """The ctypes calls into the real libnccl, on a GPU: one rank (mpiexec -n 1), an
    all_reduce over a one-device grid (a Collective step all the same), against
    the reference interpreter."""
    require_mpi()
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError as error:
        pytest.skip(f"needs an NVIDIA GPU and its driver: {error}")
    from xlac.targets.cuda.nccl import NcclLibrary
    try:
        NcclLibrary()
    except (OSError, XlacError) as error:
        pytest.skip(f"no NCCL library (pip install 'xlac[cuda-nccl]'): {error}")
    program = spmd_programs.Program(1, 1, ["f32"])
    program.reducing("all_reduce:add:f32", "all_reduce", "f32", "add", spmd_programs._attrs(groups=[[0]]))
    text, devices = program.text(), program.inputs()
    assert any(isinstance(s, Collective) for s in _compile(program).function.steps)
    oracle = run_reference_parallel(text.encode(), devices)
    (tmp_path / "p.mlir").write_text(text)
    job = write_job(tmp_path / "job", [{"name": "p", "source": str(tmp_path / "p.mlir"),
                                        "target": "cuda-gpu"}], {"p": devices})
    done = run_job(job, 1, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:]
    (got,) = rank_results(job, "p", 1, ["f32"])
    assert same(got[0], oracle[0][0], "f32")
