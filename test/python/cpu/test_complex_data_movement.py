"""Complex data movement on whole vectors (issue 39): a broadcast of a complex
vector and a complex iota write full registers of pairs, not 2 lanes (or a
scalar complex loop) per number (a concatenate's copies:
test_concatenate_copies.py). Checked in the LLVM IR at x86-64-v3 and
x86-64-v4, and the numbers against numpy bit for bit where the host runs
the level. Small shapes: the code is what is checked, not the speed
(bench/sweep.py --classes broadcast,iota,concatenate --types c64,c128)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import xlac
from conftest import runnable_levels

LEVELS = ("x86-64-v3", "x86-64-v4")
_TYPES = {"complex<f32>": (np.complex64, "f32", 4), "complex<f64>": (np.complex128, "f64", 8)}
_REGISTER = {"x86-64-v3": 32, "x86-64-v4": 64}


def _stored(exe: xlac.Executable) -> set[str]:
    """The types the kernels store (LLVM dialect): ``vector<8xf32>``, a struct ..."""
    return set(re.findall(r"llvm\.store %\S+, %\S+(?: \{[^}]*\})? : (.+), !llvm\.ptr", exe.as_text("llvm")))


def _full_registers(cpu: str, part_bytes: int) -> str:
    return f"vector<{_REGISTER[cpu] // part_bytes}xf{part_bytes * 8}>"


def _broadcast(element: str, rows: int, cols: int, dims: str) -> str:
    n = rows if dims == "0" else cols
    return f"""func.func @main(%v: tensor<{n}x{element}>) -> tensor<{rows}x{cols}x{element}> {{
  %0 = stablehlo.broadcast_in_dim %v, dims = [{dims}] : (tensor<{n}x{element}>) -> tensor<{rows}x{cols}x{element}>
  return %0 : tensor<{rows}x{cols}x{element}>
}}"""


def _iota(element: str, rows: int, cols: int, dim: int) -> str:
    return f"""func.func @main() -> tensor<{rows}x{cols}x{element}> {{
  %0 = stablehlo.iota dim = {dim} : tensor<{rows}x{cols}x{element}>
  return %0 : tensor<{rows}x{cols}x{element}>
}}"""


@pytest.mark.parametrize("element", sorted(_TYPES))
@pytest.mark.parametrize("dims", ["0", "1"])
@pytest.mark.parametrize("cpu", LEVELS)
def test_a_complex_broadcast_stores_whole_registers(cpu, dims, element):
    dtype, _, part_bytes = _TYPES[element]
    rows, cols = 64, 96
    exe = xlac.compile(_broadcast(element, rows, cols, dims), cpu=cpu, cache=False)
    assert _stored(exe) == {_full_registers(cpu, part_bytes)}
    if cpu not in runnable_levels(cpu):
        pytest.skip(f"this host cannot run {cpu} code")
    rng = np.random.default_rng(0)
    n = rows if dims == "0" else cols
    v = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    (got,) = exe.run(v)
    want = np.broadcast_to(v[:, None] if dims == "0" else v[None, :], (rows, cols))
    assert got.tobytes() == np.ascontiguousarray(want).tobytes()


@pytest.mark.parametrize("element", sorted(_TYPES))
@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("cpu", LEVELS)
def test_a_complex_iota_is_a_vector_kernel_of_pairs(cpu, dim, element):
    dtype, _, part_bytes = _TYPES[element]
    rows, cols = 48, 80
    exe = xlac.compile(_iota(element, rows, cols, dim), cpu=cpu, cache=False)
    assert "complex<" not in exe.as_text("bufferized"), "the iota stayed on complex elements"
    assert "scalar loops" not in (exe.fusion_report() or "")
    assert _stored(exe) == {_full_registers(cpu, part_bytes)}
    if cpu not in runnable_levels(cpu):
        pytest.skip(f"this host cannot run {cpu} code")
    (got,) = exe.run()
    line = np.arange(rows if dim == 0 else cols).astype(dtype)
    want = np.broadcast_to(line[:, None] if dim == 0 else line[None, :], (rows, cols))
    assert got.tobytes() == np.ascontiguousarray(want).tobytes()    # imaginary parts +0.0


def _minor_generic(minor: int, body: str = "linalg.yield %in : f64") -> str:
    """A generic writing 64 x 1024 x ``minor`` f64 from 64 x ``minor`` (a column broadcast of pairs)."""
    out, ins = f"tensor<64x1024x{minor}xf64>", f"tensor<64x{minor}xf64>"
    return f"""func.func @main(%v: {ins}, %init: {out}) -> {out} {{
  %r = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}}
      ins(%v : {ins}) outs(%init : {out}) {{
  ^bb0(%in: f64, %out: f64):
    {body}
  }} -> {out}
  return %r : {out}
}}"""


def _plan_of(text: str, machine):
    from xlac.context import new_context
    from xlac.mlir import ir
    from xlac.passes.cpu import apply_schedules
    from xlac.passes.cpu.plans.schedule_plan import plan_for

    with new_context():
        module = ir.Module.parse(text)
        [op] = [op for op in apply_schedules._linalg_ops(module.operation) if op.name == "linalg.generic"]
        return plan_for(op, machine)


@pytest.mark.parametrize("vector_bytes,rows", [(64, 4), (32, 2)])      # x86-64-v4, x86-64-v3
def test_rows_of_a_short_minor_dim_share_a_vector(vector_bytes, rows):
    from xlac.passes.cpu.plans.schedule_plan import Machine
    plan = _plan_of(_minor_generic(2), Machine(2, vector_bytes))
    assert plan.sequence == "xla_elementwise_minor_3d"
    assert plan.params[-2:] == (rows, 2)


def test_math_and_odd_minor_dims_keep_the_one_dim_plan():
    from xlac.passes.cpu.plans.schedule_plan import Machine
    exp = "%e = math.exp %in : f64\n    linalg.yield %e : f64"
    assert _plan_of(_minor_generic(2, exp), Machine(2, 64)).sequence == "xla_elementwise_3d"
    assert _plan_of(_minor_generic(3), Machine(2, 64)).sequence == "xla_elementwise_3d"
    assert _plan_of(_minor_generic(8), Machine(2, 64)).sequence == "xla_elementwise_3d"   # a whole register


@pytest.mark.parametrize("shape,dim", [((10,), 0), ((3, 5, 6), 1), ((3, 5, 6), 2), ((3, 5, 6), 0)])
def test_complex_iotas_of_any_rank_are_exact(shape, dim):
    t = f"tensor<{'x'.join(map(str, shape))}xcomplex<f64>>"
    exe = xlac.compile(f"func.func @main() -> {t} {{\n  %0 = stablehlo.iota dim = {dim} : {t}\n"
                       f"  return %0 : {t}\n}}", cpu="x86-64-v3", cache=False)
    assert "complex<" not in exe.as_text("bufferized")
    if "x86-64-v3" not in runnable_levels("x86-64-v3"):
        pytest.skip("this host cannot run x86-64-v3 code")
    (got,) = exe.run()
    want = np.indices(shape)[dim].astype(np.complex128)
    assert got.tobytes() == want.tobytes()
