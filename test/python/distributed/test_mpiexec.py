"""SPMD programs on several processes: `mpiexec -n 2` and `-n 4` on this machine.

Every rank's results are compared with the reference interpreter's parallel
run (xlac.reference.parallel) and, for JAX's shard_map exports, with JAX's
own per-device results. Every mpiexec runs under a hard timeout; the failure
tests check that one rank's error stops every rank quickly, with its message.
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import numpy as np
import pytest
import spmd_programs
from mpi_jobs import mpiexec, rank_results, require_mpi, run_job, same, tool, write_job

from conftest import require_shared
from xlac.reference.parallel import run_reference_parallel

EXPORTS = ["shard_map_psum", "shard_map_all_gather", "shard_map_psum_scatter",
           "shard_map_all_to_all", "shard_map_ppermute", "shard_map_axis_index"]
# (program name in the job, file under ../shared/distributed, expected values)
FORMS = [(name, f"{name}.mlir", name) for name in EXPORTS] + [
    ("psum_generic", "shard_map_psum.generic.mlir", "shard_map_psum"),
    ("psum_gspmd", "shard_map_psum.gspmd.mlir", "shard_map_psum")]


@pytest.fixture(autouse=True)
def _mpi():
    require_mpi()


def test_jax_shard_map_exports_on_4_ranks(tmp_path):
    """Shardy (pretty and generic) and GSPMD exports, and one xla-compile library
    loaded with xlac.load, each rank against JAX's result for its device."""
    shared = require_shared("distributed")
    library = tmp_path / "libpsum.so"
    from xlac.aot import compile_library
    compile_library((shared / "shard_map_psum.mlir").read_bytes(), "psum", library)
    programs, inputs, expected = [], {}, {}
    for name, file, values in FORMS + [("psum_library", None, "shard_map_psum")]:
        programs.append({"name": name, "library": str(library)} if file is None
                        else {"name": name, "source": str(shared / file)})
        data = np.load(shared / f"{values}.npz")
        inputs[name] = [[data[f"in0_dev{d}"]] for d in range(4)]
        expected[name] = [data[f"out0_dev{d}"] for d in range(4)]
    job = write_job(tmp_path / "job", programs, inputs)
    done = run_job(job, 4)
    assert done.returncode == 0, done.stdout[-3000:]
    wrong = [f"{name} rank {r}" for name in expected
             for r, outs in enumerate(rank_results(job, name, 4, ["f32"]))
             if not same(outs[0], expected[name][r], "f32")]
    assert wrong == []


def _check_program(tmp_path, program: spmd_programs.Program, env: dict | None = None) -> None:
    text, devices = program.text(), program.inputs()
    oracle = run_reference_parallel(text.encode(), devices)
    source = tmp_path / "program.mlir"
    source.write_text(text)
    job = write_job(tmp_path / "job", [{"name": "p", "source": str(source)}], {"p": devices})
    ranks = program.replicas * program.partitions
    done = run_job(job, ranks, env=env)
    assert done.returncode == 0, done.stdout[-3000:]
    elements = [t.rsplit("x", 1)[-1].rstrip(">").replace("tensor<", "") for _, _, t in program.results]
    got = rank_results(job, "p", ranks, elements)
    wrong = [f"{name} rank {r}" for k, (name, element) in enumerate(zip(program.names(), elements))
             for r in range(ranks) if not same(got[r][k], oracle[r][k], element)]
    print(f"\n{len(program.names())} results x {ranks} ranks checked against the interpreter")
    assert wrong == []


def test_every_collective_and_element_type_on_2_ranks(tmp_path):
    """Collectives as compiled by default: started early, waited for late."""
    _check_program(tmp_path, spmd_programs.element_types_program())


@pytest.mark.parametrize("env", [{"XLAC_OVERLAP_COLLECTIVES": "always"},
                                 {"XLAC_OVERLAP_COLLECTIVES": "0"},
                                 {"XLAC_COLLECTIVE_BUCKET_BYTES": "4096"}],
                         ids=["started", "blocking", "buckets"])
def test_every_collective_blocking_or_bucketed_on_2_ranks(tmp_path, env):
    """The same with every collective started and waited for (MPI_I* and
    MPI_Waitall, even where no computation lies between), with one blocking MPI
    call each, and with the all-reduces of one element type and reduction
    combined into 4 KiB buckets."""
    _check_program(tmp_path, spmd_programs.element_types_program(), env)


def test_a_training_step_overlapped_blocking_and_bucketed_on_2_ranks(tmp_path):
    """Gradient all-reduces between the backward pass's matmuls (the schedule
    xla-overlap-collectives moves), each way, against the interpreter."""
    ways = ({}, {"XLAC_OVERLAP_COLLECTIVES": "0"}, {"XLAC_COLLECTIVE_BUCKET_BYTES": "65536"},
            {"XLAC_OVERLAP_COLLECTIVES": "always", "XLAC_COLLECTIVE_BUCKET_BYTES": "65536"})
    for index, env in enumerate(ways):
        (tmp_path / str(index)).mkdir()
        _check_program(tmp_path / str(index), spmd_programs.training_step_program(), env)


def test_a_gradient_all_reduced_and_summed_on_2_ranks(tmp_path):
    """A matmul's result all-reduced and, summed over its rows, all-reduced
    again: the fused program (it once had a cycle) against the interpreter."""
    _check_program(tmp_path, spmd_programs.gradient_and_bias_step_program())


@pytest.mark.parametrize("ranks", [4, 8])
def test_a_training_step_on_4_and_8_ranks(tmp_path, ranks):
    """The overlapped step on more ranks; only where each rank has a core of its
    own (test/support/distributed_check.sh runs it on a 16-core machine):
    oversubscribed, MPI's busy waiting makes it take minutes."""
    if len(os.sched_getaffinity(0)) < ranks:
        pytest.skip(f"{ranks} ranks need {ranks} cores; this machine has "
                    f"{len(os.sched_getaffinity(0))}")
    _check_program(tmp_path, spmd_programs.training_step_program(ranks))


def test_every_group_strategy_on_4_ranks(tmp_path):
    _check_program(tmp_path, spmd_programs.group_strategies_program())


def test_xla_run_gives_each_rank_its_inputs(tmp_path):
    shared = require_shared("distributed")
    data = np.load(shared / "shard_map_psum.npz")
    for d in range(4):
        np.save(tmp_path / f"x{d}.npy", data[f"in0_dev{d}"])
    done = mpiexec(4, [tool("xla-run"), str(shared / "shard_map_psum.mlir"),
                       f"--input=@{tmp_path}/x{{rank}}.npy", f"--output=@{tmp_path}/y{{rank}}.npy"])
    assert done.returncode == 0, done.stdout[-3000:]
    assert "[rank 3] result[0]: 4x8xf32=" in done.stdout
    for d in range(4):
        assert same(np.load(tmp_path / f"y{d}.npy"), data[f"out0_dev{d}"], "f32")


_C_DRIVER = r"""
#include <stdio.h>
#include "psum.h"
int main(void) {
  int rank = xlac_mpi_init();
  if (!xlac_mpi_agree(xlac_mpi_world_size() == PSUM_MAIN_NUM_PROCESSES)) return 1;
  psum_main_init();
  float x[32], y[32];
  for (int i = 0; i < 32; ++i) x[i] = (float)rank;
  const void *in[] = {x}; void *out[] = {y};
  int status = psum_main(in, out);
  printf("rank %d: status %d y[0] %g\n", rank, status, y[0]);
  xlac_mpi_finalize();
  return status;
}
"""


def test_an_xla_compile_library_runs_from_c_on_4_ranks(tmp_path):
    """No Python: a C program calls the library, which calls MPI through the shim."""
    shared = require_shared("distributed")
    done = subprocess.run([tool("xla-compile"), str(shared / "shard_map_psum.mlir"),
                           "-o", str(tmp_path / "libpsum.so"), "--header", str(tmp_path / "psum.h")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    (tmp_path / "driver.c").write_text(_C_DRIVER)
    build = subprocess.run(["cc", "-o", str(tmp_path / "driver"), str(tmp_path / "driver.c"),
                            f"-I{tmp_path}", f"-L{tmp_path}", "-lpsum", f"-Wl,-rpath,{tmp_path}",
                            "-Wl,--allow-shlib-undefined", *_shim_link_flags()],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    done = mpiexec(4, [str(tmp_path / "driver")], timeout=60)
    assert done.returncode == 0, done.stdout
    sums = [float(line.split("y[0] ")[1]) for line in done.stdout.splitlines() if "y[0]" in line]
    assert len(sums) == 4 and np.allclose(sums, np.sum(np.sin(np.arange(4.0))), atol=1e-5), \
        done.stdout


def _shim_link_flags() -> list[str]:
    from xlac.options import Options
    from xlac.spmd.mpi import shim_for
    library = shim_for(Options.from_env())
    return [library, f"-Wl,-rpath,{library.rsplit('/', 1)[0]}"]


def _small_job(tmp_path, how: str, rank: int = 1, partitions: int = 2):
    program = spmd_programs.Program(1, partitions, ["f32"])
    program.reducing("psum", "all_reduce", "f32", "add",
                     spmd_programs._attrs(groups=[list(range(partitions))], channel=1,
                                          global_ids=True))
    source = tmp_path / "psum.mlir"
    source.write_text(program.text())
    return write_job(tmp_path / "job", [{"name": "p", "source": str(source)}],
                     {"p": program.inputs()}, {"rank": rank, "how": how})


@pytest.mark.parametrize("how", ["compile", "parse", "input"])
def test_one_rank_failing_stops_every_rank(tmp_path, how):
    """Whichever rank's MPI_Abort comes first stops the job with its message: rank 1's
    own error, or (after the agreement) rank 0's "another rank failed ..."."""
    start = time.monotonic()
    done = run_job(_small_job(tmp_path, how), 2, timeout=120)
    assert done.returncode != 0
    assert "stopping every rank" in done.stdout, done.stdout[-3000:]
    assert "xlac: rank 1: uncaught" in done.stdout or \
        "another rank failed to compile or load this program" in done.stdout, done.stdout[-3000:]
    assert "rank 0: done" not in done.stdout
    assert time.monotonic() - start < 100, "the job should stop, not run into its timeout"


def test_ranks_agree_that_one_failed_to_compile(tmp_path):
    """Without any abort: the failing rank reports its error, the other learns of it
    in the agreement, before any collective, and both return."""
    job = _small_job(tmp_path, "compile")
    breaking = json.loads((job / "job.json").read_text())
    breaking["break"]["catch"] = True
    (job / "job.json").write_text(json.dumps(breaking))
    done = run_job(job, 2, timeout=120)
    assert done.returncode != 0
    caught = {line.split(":")[0]: line for line in done.stdout.splitlines() if ": caught:" in line}
    assert set(caught) == {"rank 0", "rank 1"}, done.stdout
    assert "another rank failed to compile" in caught["rank 0"], done.stdout
    assert "another rank" not in caught["rank 1"], done.stdout        # its own error


def test_the_wrong_number_of_ranks_is_a_clear_error(tmp_path):
    job = _small_job(tmp_path, "none", rank=-1, partitions=4)
    done = run_job(job, 2, timeout=120)
    assert done.returncode != 0
    assert "this MPI job has 2 rank(s)" in done.stdout and "-n 4" in done.stdout, done.stdout

