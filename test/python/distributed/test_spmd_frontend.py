"""SPMD programs as JAX writes them, read into the program one device runs;
the parallel reference interpreter against JAX; what is refused, and why.
None of these needs MPI."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import xlac
from conftest import require_shared
from xlac.context import new_context
from xlac.errors import CompileError
from xlac.frontend.parse import parse_module
from xlac.options import Options
from xlac.reference.parallel import run_reference_parallel
from xlac.spmd.grid import declared_grid

EXPORTS = ["shard_map_psum", "shard_map_all_gather", "shard_map_psum_scatter",
           "shard_map_all_to_all", "shard_map_ppermute", "shard_map_axis_index"]


def _parse(text: str | bytes):
    return parse_module(new_context(), text.encode() if isinstance(text, str) else text, "<test>")


@pytest.mark.parametrize("name", EXPORTS)
def test_shardy_pretty_and_generic_forms_give_the_same_per_device_program(name):
    shared = require_shared("distributed")
    pretty = _parse((shared / f"{name}.mlir").read_bytes())
    generic = _parse((shared / f"{name}.generic.mlir").read_bytes())
    assert str(pretty) == str(generic)
    assert "sdy" not in str(pretty)
    assert declared_grid(pretty.operation).partitions == 4
    local = np.load(shared / f"{name}.npz")["in0_dev0"].shape          # each device's shard
    assert f"func.func public @main(%arg0: tensor<{local[0]}x{local[1]}xf32>)" in str(pretty)


def test_the_gspmd_form_gives_the_shard_map_body():
    shared = require_shared("distributed")
    gspmd = str(_parse((shared / "shard_map_psum.gspmd.mlir").read_bytes()))
    shardy = str(_parse((shared / "shard_map_psum.mlir").read_bytes()))
    assert "custom_call" not in gspmd and "mhlo.sharding" not in gspmd
    assert re.sub(r"jax.result_info = \"[^\"]*\"", "", gspmd) == \
        re.sub(r"jax.result_info = \"[^\"]*\"", "", shardy)


@pytest.mark.parametrize("name", EXPORTS + ["shard_map_psum.gspmd"])
def test_the_parallel_interpreter_agrees_with_jax(name):
    shared = require_shared("distributed")
    data = np.load(shared / f"{name.split('.')[0]}.npz")
    got = run_reference_parallel((shared / f"{name}.mlir").read_bytes(),
                                 [[data[f"in0_dev{d}"]] for d in range(4)])
    for d in range(4):
        np.testing.assert_allclose(got[d][0], data[f"out0_dev{d}"], rtol=1e-6, atol=1e-6)


_ANNOTATED = """
module @jit_f attributes {mhlo.num_partitions = PARTS : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=AXIS]> {stablehlo.mesh = {axes = [{name = "x", size = AXIS : i64}]}}
  func.func public @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
      -> (tensor<8x4xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %0 = stablehlo.sine %arg0 : tensor<8x4xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<8x4xf32>
    return %1 : tensor<8x4xf32>
  }
}
"""


def test_a_shardy_annotated_single_device_program_runs():
    exe = xlac.compile(_ANNOTATED.replace("PARTS", "1").replace("AXIS", "1"))
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(8, 4)
    np.testing.assert_allclose(exe(x), np.sin(x), rtol=1e-6)


def test_sharding_annotations_without_collectives_are_refused_on_several_devices():
    with pytest.raises(CompileError, match="annotated for 4 devices .* no collectives") as info:
        xlac.compile(_ANNOTATED.replace("PARTS", "4").replace("AXIS", "4"))
    assert "jax.shard_map" in str(info.value)


def test_a_mesh_of_several_devices_on_one_device_is_refused():
    with pytest.raises(CompileError, match="mesh has 4 devices but it is compiled for one"):
        xlac.compile(_ANNOTATED.replace("PARTS", "1").replace("AXIS", "4"))


def test_a_shard_map_over_part_of_the_mesh_is_refused():
    shared = require_shared("distributed")
    text = (shared / "shard_map_psum.mlir").read_text()
    text = text.replace('<["x"=4]>', '<["x"=4, "y"=2]>')
    with pytest.raises(CompileError, match=r"leaves mesh axes \['y'\] automatic"):
        _parse(text)


def test_ops_around_the_manual_computation_are_refused():
    shared = require_shared("distributed")
    text = (shared / "shard_map_psum.mlir").read_text()
    text = text.replace("    return %0 : tensor<4x8xf32>",
                        "    %9 = stablehlo.negate %0 : tensor<4x8xf32>\n    return %9 : tensor<4x8xf32>")
    with pytest.raises(CompileError, match="need XLA's SPMD partitioner"):
        _parse(text)


def test_an_unknown_shardy_op_is_named():
    text = _ANNOTATED.replace("sdy.sharding_constraint %0", "sdy.propagation_barrier %0")
    with pytest.raises(CompileError, match="'sdy.propagation_barrier' is not supported"):
        _parse(text.replace("PARTS", "1").replace("AXIS", "1"))


def test_an_spmd_program_outside_mpiexec_says_how_to_start_it():
    shared = require_shared("distributed")
    from mpi_jobs import tool
    if not tool("mpicc"):
        pytest.skip("no mpicc: pip install -e '.[distributed]'")
    done = subprocess.run([sys.executable, "-c", "import xlac, sys; "
                           f"xlac.compile(open({str(shared / 'shard_map_psum.mlir')!r}).read())"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "this MPI job has 1 rank(s)" in done.stderr and "mpiexec -n 4" in done.stderr


def test_threads_are_shared_among_the_ranks_of_a_host():
    single = Options.from_env({}).threads()
    assert Options.from_env({"MPI_LOCALNRANKS": "2"}).threads() == max(1, single // 2)
    assert Options.from_env({"OMPI_COMM_WORLD_LOCAL_SIZE": "64"}).threads() == 1
    assert Options.from_env({"MPI_LOCALNRANKS": "2", "XLAC_NUM_THREADS": "3"}).threads() == 3


def test_the_shim_and_the_pass_agree_on_codes():
    from xlac.passes.cpu.builders import mpi_text
    source = (Path(xlac.__file__).parent / "spmd" / "xlac_mpi.c").read_text()
    dtypes = re.search(r"enum \{ (DT_F32.*?) \};", source, re.S).group(1).replace("\n", " ")
    names = [n.strip() for n in dtypes.split(",")]
    assert names.index("DT_BYTES") == mpi_text.BYTES_CODE
    assert names.index("DT_BF16") == mpi_text.DTYPE_CODES["bf16"]
    assert names.index("DT_C128") == mpi_text.DTYPE_CODES["complex<f64>"]
    ops = re.search(r"enum \{ (OP_SUM.*?) \};", source).group(1).split(", ")
    assert ops.index("OP_XOR") == mpi_text.OP_CODES["xor"]
