"""Memory-bound CUDA kernels at the bandwidth: 16-byte vector accesses in loop kernels
and row reductions, column reductions with outputs on threads, transposes through
shared-memory tiles (passes/gpu/gpu_kernel_vector.py, gpu_kernel_columns.py,
gpu_kernel_transpose.py). The PTX shows the accesses (through ptxas for sm_90 where
it is installed); the SIMT emulator runs every kind against the CPU target over
element types, tails and views, and faults on a misaligned vector access."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

import numpy as np
import pytest

import xlac
from conftest import REPO
from xlac.targets.cuda import in_place
from xlac.targets.cuda.ptx import ptxas, wheel_file
from xlac_emulator.simt import EmulationError, Emulator, run_emulated

HAS_PTXAS = wheel_file("bin/ptxas") is not None        # else the PTX is checked by its text alone


def _compiled(text: str):
    exe = xlac.compile(text, target="cuda")
    if HAS_PTXAS:
        ptxas(exe.as_text("ptx"))
    return exe


def _launches(exe) -> list[tuple[int, int]]:
    """(grid x, threads per block) of each launch, in order."""
    gpu = exe.as_text("gpu")
    constants = dict(re.findall(r"(%c\w*) = arith.constant (\d+) : index", gpu))
    value = lambda name: int(constants[name.strip()])  # noqa: E731
    found = re.findall(r"blocks in \(([^,]+),[^)]*\) threads in \(([^,]+), ([^,]+),", gpu)
    return [(value(g), value(x) * value(y)) for g, x, y in found]


def _inputs(exe, seed: int = 0) -> list[np.ndarray]:
    """Small integers for every type: sums stay exact in f16/bf16 (under 256), so any
    order of folding agrees."""
    rng = np.random.default_rng(seed)
    arrays = []
    for spec in exe.signature.inputs:
        dtype = np.dtype(spec.dtype)
        if dtype == np.bool_:
            arrays.append(rng.integers(0, 2, spec.shape).astype(dtype))
        elif dtype.kind == "c":
            arrays.append((rng.integers(-8, 8, spec.shape) + 1j * rng.integers(-8, 8, spec.shape))
                          .astype(dtype))
        else:
            low = 8 if dtype.itemsize > 2 else 2
            arrays.append(rng.integers(-low, low, spec.shape).astype(dtype))
    return arrays


def _check(text: str, rtol: float = 1e-6):
    """The cuda target, emulated, against the cpu target; returns the cuda executable."""
    cpu, cuda = xlac.compile(text), _compiled(text)
    inputs = _inputs(cpu)
    got, want = run_emulated(cuda, *inputs), cpu.run(*inputs)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        if w.dtype.kind in "iub":
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(np.asarray(g, np.complex128), np.asarray(w, np.complex128),
                                       rtol=rtol, atol=rtol)
    return cuda


# ---- loop kernels: elementwise, broadcasts, converts, fills, copies --------------------------

# (element type, its numpy dtype's PTX vector access when the innermost extent allows one)
TYPES = {"f32": "v4.b32", "f16": "v4.b32", "bf16": "v4.b32", "f64": "v2.b64", "i8": "v4.b32",
         "i64": "v2.b64", "i32": "v4.b32"}


def _elementwise(shape, element: str, op: str = "add") -> str:
    t = f"tensor<{'x'.join(map(str, shape))}x{element}>"
    row = f"tensor<{shape[-1]}x{element}>"
    return f"""
func.func @main(%a: {t}, %b: {t}, %r: {row}) -> {t} {{
  %rb = stablehlo.broadcast_in_dim %r, dims = [{len(shape) - 1}] : ({row}) -> {t}
  %0 = stablehlo.{op} %a, %b : {t}
  %1 = stablehlo.{op} %0, %rb : {t}
  return %1 : {t}
}}"""


@pytest.mark.parametrize("element", sorted(TYPES))
def test_elementwise_reads_and_writes_16_bytes_a_thread(element):
    exe = _check(_elementwise((6, 64), element, "add" if element != "i8" else "xor"))
    ptx = exe.as_text("ptx")
    assert f"ld.global.{TYPES[element]}" in ptx and f"st.global.{TYPES[element]}" in ptx


@pytest.mark.parametrize("shape,vector", [((5, 37), None), ((3, 6), "v2.b32"), ((7, 1), None)])
def test_innermost_extents_the_width_does_not_divide_narrow_or_stay_scalar(shape, vector):
    ptx = _check(_elementwise(shape, "f32")).as_text("ptx")
    assert (vector in ptx) if vector else "ld.global.v" not in ptx


def test_i1_and_complex_stay_scalar_and_right():
    assert "ld.global.v" not in _check(_elementwise((4, 64), "i1", "xor")).as_text("ptx")
    _check(_elementwise((4, 16), "complex<f32>", "multiply"))


def test_a_broadcast_along_the_innermost_dim_is_one_scalar_load():
    text = """
func.func @main(%a: tensor<8x64xf32>, %c: tensor<8xf32>) -> tensor<8x64xf32> {
  %cb = stablehlo.broadcast_in_dim %c, dims = [0] : (tensor<8xf32>) -> tensor<8x64xf32>
  %0 = stablehlo.multiply %a, %cb : tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}"""
    ptx = _check(text).as_text("ptx")
    assert ptx.count("ld.global.v4.b32") == 1 and "ld.global.b32" in ptx     # the column: a scalar


def test_converts_and_fills_move_16_bytes_of_the_widest_type():
    text = """
func.func @main(%a: tensor<4x64xf32>) -> (tensor<4x64xbf16>, tensor<4x64xf32>) {
  %0 = stablehlo.convert %a : (tensor<4x64xf32>) -> tensor<4x64xbf16>
  %c = stablehlo.constant dense<2.5> : tensor<4x64xf32>
  return %0, %c : tensor<4x64xbf16>, tensor<4x64xf32>
}"""
    ptx = _check(text).as_text("ptx")
    assert "ld.global.v4.b32" in ptx and "st.global.v2.b32" in ptx        # 4 bf16: 8 bytes


def test_views_at_odd_offsets_keep_scalar_accesses_and_aligned_ones_vectors():
    text = """
func.func @main(%a: tensor<9x64xf32>) -> (tensor<8x63xf32>, tensor<4x64xf32>) {
  %odd = stablehlo.slice %a [1:9, 1:64] : (tensor<9x64xf32>) -> tensor<8x63xf32>
  %0 = stablehlo.exponential %odd : tensor<8x63xf32>
  %rows = stablehlo.slice %a [2:6, 0:64] : (tensor<9x64xf32>) -> tensor<4x64xf32>
  %1 = stablehlo.exponential %rows : tensor<4x64xf32>
  return %0, %1 : tensor<8x63xf32>, tensor<4x64xf32>
}"""
    exe = _check(text, rtol=1e-5)
    kernels = exe.as_text("kernels")
    assert "vector.load" in kernels and kernels.count("vector.load") == 1    # the row slice only


def test_a_thread_per_vector_and_no_loop_so_donations_still_run_in_place():
    text = """
func.func @main(%a: tensor<4096x1024xf32>) -> tensor<4096x1024xf32> {
  %0 = stablehlo.exponential %a : tensor<4096x1024xf32>
  return %0 : tensor<4096x1024xf32>
}"""
    exe = xlac.compile(text, target="cuda")
    assert _launches(exe) == [(4096 * 1024 // 4 // 256, 256)]      # 4 kB a block each way
    assert "scf.for" not in exe.as_text("kernels")
    assert in_place.pointwise_in(exe.as_text("kernels"), "main_kernel", 0, 1)


# ---- transposes --------------------------------------------------------------------------------

@pytest.mark.parametrize("element", ["f32", "bf16", "f64", "i8", "i1"])
@pytest.mark.parametrize("shape,perm", [((40, 70), (1, 0)), ((5, 17, 9), (2, 0, 1)), ((3, 64, 33), (0, 2, 1))])
def test_transposes_go_through_padded_shared_tiles(element, shape, perm):
    out = [shape[p] for p in perm]
    t, o = (f"tensor<{'x'.join(map(str, s))}x{element}>" for s in (shape, out))
    text = f"""
func.func @main(%a: {t}) -> {o} {{
  %0 = stablehlo.transpose %a, dims = {list(perm)} : ({t}) -> {o}
  return %0 : {o}
}}"""
    exe = _check(text)
    kernels = exe.as_text("kernels")
    assert "gpu.barrier" in kernels and f"memref<32x33x{element}, #gpu.address_space<workgroup>>" in kernels
    assert "bar.sync" in exe.as_text("ptx")
    assert all(threads == 256 for _, threads in _launches(exe))


def test_a_transpose_fused_with_elementwise_work_is_one_tiled_kernel():
    text = """
func.func @main(%a: tensor<64x48xf32>, %b: tensor<48x64xf32>) -> tensor<48x64xf32> {
  %t = stablehlo.transpose %a, dims = [1, 0] : (tensor<64x48xf32>) -> tensor<48x64xf32>
  %0 = stablehlo.add %t, %b : tensor<48x64xf32>
  return %0 : tensor<48x64xf32>
}"""
    exe = _check(text)
    assert _launches(exe) == [(2 * 2, 256)] and "gpu.barrier" in exe.as_text("kernels")


# ---- reductions -----------------------------------------------------------------------------

def _reduce(shape, dims, element: str = "f32", op: str = "add") -> str:
    t = f"tensor<{'x'.join(map(str, shape))}x{element}>"
    kept = [n for d, n in enumerate(shape) if d not in dims]
    r = f"tensor<{'x'.join(map(str, kept))}x{element}>"
    init = "0.0" if element.startswith(("f", "bf")) else "0"
    return f"""
func.func @main(%a: {t}) -> {r} {{
  %z = stablehlo.constant dense<{init}> : tensor<{element}>
  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.{op} across dimensions = {list(dims)} : ({t}, tensor<{element}>) -> {r}
  return %0 : {r}
}}"""


@pytest.mark.parametrize("element", ["f32", "bf16", "f64", "i32"])
def test_row_reductions_read_vectors(element):
    ptx = _check(_reduce((6, 256), [1], element)).as_text("ptx")
    assert "ld.global.v" in ptx


def test_row_reductions_with_tails_or_many_rows_are_right():
    assert "ld.global.v" not in _check(_reduce((5, 129), [1])).as_text("ptx")
    exe = _check(_reduce((70000, 64), [1]))                 # a block per row all the same
    assert _launches(exe) == [(70000, 32)]


@pytest.mark.parametrize("element", ["f32", "bf16", "f64"])
@pytest.mark.parametrize("shape,dims", [((40, 2048), [0]), ((300, 1030), [0]), ((7, 16, 1024), [0, 1])])
def test_column_reductions_put_outputs_on_threads(element, shape, dims):
    exe = _check(_reduce(shape, dims, element))
    launches = _launches(exe)
    assert len(launches) == 2 and "ld.global.v" in exe.as_text("ptx")   # partials, then their fold


def test_softmax_and_layer_norm_rows_read_vectors():
    softmax = """
func.func @main(%x: tensor<6x256xf32>) -> tensor<6x256xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<6x256xf32>, tensor<f32>) -> tensor<6xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<6xf32>) -> tensor<6x256xf32>
  %d = stablehlo.subtract %x, %mb : tensor<6x256xf32>
  %e = stablehlo.exponential %d : tensor<6x256xf32>
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<6x256xf32>, tensor<f32>) -> tensor<6xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<6xf32>) -> tensor<6x256xf32>
  %r = stablehlo.divide %e, %sb : tensor<6x256xf32>
  return %r : tensor<6x256xf32>
}"""
    cpu, cuda = xlac.compile(softmax), _compiled(softmax)
    x = np.random.default_rng(0).standard_normal((6, 256)).astype(np.float32)
    np.testing.assert_allclose(run_emulated(cuda, x)[0], cpu.run(x)[0], rtol=1e-5, atol=1e-7)
    kernels = cuda.as_text("kernels")
    # one kernel (a block per row, row_chains.py) reading x once as 16-byte vectors
    assert kernels.count("gpu.func") == 1 and kernels.count("vector.load") == 1


# ---- the emulator faults where a GPU would ----------------------------------------------------

VECTOR_COPY = """
module attributes {gpu.container_module} {
  gpu.module @copy {
    gpu.func @main_kernel(%in: memref<64xf32>, %out: memref<64xf32>) kernel {
      %at = arith.constant AT : index
      %v = vector.load %in[%at] {alignment = 16 : i64} : memref<64xf32>, vector<4xf32>
      vector.store %v, %out[%at] {alignment = 16 : i64} : memref<64xf32>, vector<4xf32>
      gpu.return
    }
  }
}"""


@pytest.mark.parametrize("at", [4, 1, 62])
def test_vector_accesses_copy_lanes_and_fault_where_a_gpu_would(at):
    buffers = {}
    x = np.arange(64, dtype=np.float32)
    raws = [np.frombuffer(a.tobytes(), np.uint8).copy() for a in (x, np.zeros(64, np.float32))]
    for raw in raws:
        buffers[raw.ctypes.data] = raw
    args = [raw.ctypes.data for raw in raws]
    emulator = Emulator(VECTOR_COPY.replace("AT", str(at)))
    if at == 4:
        emulator.run("copy", (1, 1, 1), (1, 1, 1), args, buffers)
        np.testing.assert_array_equal(raws[1].view(np.float32)[4:8], x[4:8])
        return
    fault = "not aligned to 16 bytes" if at == 1 else "out of bounds"
    with pytest.raises(EmulationError, match=fault):
        emulator.run("copy", (1, 1, 1), (1, 1, 1), args, buffers)


# ---- the GPU-sized benchmark's memory-bound programs --------------------------------------------

MEMORY_BOUND = ("gelu", "bias_add", "transpose", "row_sum", "column_sum", "softmax", "layernorm")


@pytest.fixture(scope="module")
def gpu_sized(tmp_path_factory):
    if importlib.util.find_spec("jax") is None:
        pytest.skip("the benchmark exports with jax: pip install -e '.[bench]'")
    folder = tmp_path_factory.mktemp("gpu_sized")
    # 1/8 (f32[1024,1024]): at 1/256 rows of 32 are folded by a thread each, as they should be
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "export_gpu_sized.py"), "--scale", "1/8",
                           "--out", str(folder), "--only", ",".join(MEMORY_BOUND)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return folder


# what each program's PTX must show: 16-byte accesses, or the transpose's shared tile
SHAPES = {"gelu": ("ld.global.v4.b32", "st.global.v4.b32"), "bias_add": ("ld.global.v4.b32", "st.global.v4.b32"),
          "transpose": ("bar.sync", "st.shared.b32", "ld.shared.b32"), "row_sum": ("ld.global.v4.b32",),
          "column_sum": ("ld.global.v4.b32", "st.global.v4.b32"),
          "softmax": ("ld.global.v4.b32", "st.global.v4.b32"), "layernorm": ("ld.global.v4.b32", "st.global.v4.b32")}


@pytest.mark.parametrize("name", MEMORY_BOUND)
def test_gpu_sized_memory_bound_programs_move_16_bytes_a_thread(gpu_sized, name):
    exe = _compiled((gpu_sized / f"{name}.mlir").read_text())
    ptx = exe.as_text("ptx")
    for access in SHAPES[name]:
        assert access in ptx, access
    if name in ("gelu", "bias_add", "row_sum"):
        assert "ld.global.b32" not in ptx                  # every global read a vector
