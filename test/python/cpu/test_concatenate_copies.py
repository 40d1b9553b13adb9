"""A concatenate's copies (issue 39): along the rows, every operand's row is
copied in one loop over the output rows (each output row filled in order,
one kernel, as XLA's concatenate), not one kernel per operand writing every
row in parts; with ``split_copy_bytes`` big copies run in chunks on the
threads. Checked in the LLVM dialect at x86-64-v3 and x86-64-v4, the numbers
against numpy bit for bit where the host runs the level (bench/sweep.py
--classes concatenate; bench/ab_concat_threads.py)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import xlac
from conftest import runnable_levels

LEVELS = ("x86-64-v3", "x86-64-v4")
_DTYPES = {"f32": np.float32, "i8": np.int8, "complex<f32>": np.complex64,
           "complex<f64>": np.complex128, "i1": np.bool_, "bf16": None}


def _concatenate(element: str, shapes: list[tuple[int, int]], dim: int) -> str:
    out = list(shapes[0])
    out[dim] = sum(shape[dim] for shape in shapes)
    types = [f"tensor<{r}x{c}x{element}>" for r, c in shapes]
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    names = ", ".join(f"%a{i}" for i in range(len(shapes)))
    result = f"tensor<{out[0]}x{out[1]}x{element}>"
    return f"""func.func @main({args}) -> {result} {{
  %0 = stablehlo.concatenate {names}, dim = {dim} : ({", ".join(types)}) -> {result}
  return %0 : {result}
}}"""


def _kernels(exe: xlac.Executable) -> int:
    return len(re.findall(r"llvm\.func @xla_kernel_\d+\(", exe.as_text("llvm")))


def _threaded(exe: xlac.Executable) -> bool:
    return "omp.parallel" in exe.as_text("llvm")


def _inputs(element: str, shapes, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    dtype = _DTYPES[element]
    if element == "bf16":
        import ml_dtypes
        dtype = ml_dtypes.bfloat16
    arrays = []
    for shape in shapes:
        if dtype is np.bool_:
            arrays.append(rng.random(shape) < 0.5)
        elif np.dtype(dtype).kind == "c":
            arrays.append((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype))
        elif np.dtype(dtype).kind == "i":
            arrays.append(rng.integers(-100, 100, shape).astype(dtype))
        else:
            arrays.append(rng.standard_normal(shape).astype(dtype))
    return arrays


def _check_bits(exe, element, shapes, dim, cpu):
    if cpu not in runnable_levels(cpu):
        pytest.skip(f"this host cannot run {cpu} code")
    arrays = _inputs(element, shapes)
    got = exe.run(*arrays)[0]
    want = np.concatenate(arrays, axis=dim)
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("element", sorted(_DTYPES))
@pytest.mark.parametrize("cpu", LEVELS)
def test_an_inner_concatenate_is_one_row_loop(cpu, element):
    shapes = [(48, 96), (48, 40), (48, 3)]           # whole vectors, a tail, a short row
    exe = xlac.compile(_concatenate(element, shapes, 1), cpu=cpu, cache=False)
    assert _kernels(exe) == 1 and not _threaded(exe)
    _check_bits(exe, element, shapes, 1, cpu)


@pytest.mark.parametrize("layout", ["inner", "outer"])
@pytest.mark.parametrize("element", ["f32", "complex<f64>"])
@pytest.mark.parametrize("cpu", LEVELS)
def test_big_copies_run_on_the_threads_when_asked(cpu, element, layout):
    shapes = [(64, 96), (64, 96)]
    dim = 1 if layout == "inner" else 0
    text = _concatenate(element, shapes, dim)
    options = xlac.Options.from_env().replace(cpu=cpu, cache_dir="", num_threads=2)
    assert not _threaded(xlac.compile(text, options=options))          # under the default 1 MiB: one thread
    split = xlac.compile(text, options=options.replace(split_copy_bytes=4096))
    assert _threaded(split)
    small = xlac.compile(text, options=options.replace(split_copy_bytes=1 << 30))
    assert not _threaded(small)                      # below the bytes asked for: one thread
    _check_bits(split, element, shapes, dim, cpu)


def test_the_split_is_an_option_of_the_pipeline():
    from xlac.targets.cpu import pipeline
    assert "xla-strided-copy-to-linalg" in pipeline.lower_to_llvm(split_copy_bytes=0)
    assert "xla-strided-copy-to-linalg{split-bytes=16777216 threads=0}" in pipeline.lower_to_llvm()
    assert "xla-strided-copy-to-linalg{split-bytes=1048576 threads=2}" in \
        pipeline.lower_to_llvm(threads=2, split_copy_bytes=1 << 20)
    assert xlac.Options.from_env({"XLAC_SPLIT_COPY_BYTES": "65536"}).split_copy_bytes == 65536
    assert xlac.Options.from_env({}).split_copy_bytes == 16 << 20


def test_copies_of_other_elements_are_left_alone_when_splitting():
    """A complex pad's interior copy (complex elements: no vector copy of its
    own) compiles with the split asked for, and keeps its numbers."""
    text = """func.func @main(%x: tensor<2x3xcomplex<f32>>, %p: tensor<complex<f32>>) -> tensor<4x7xcomplex<f32>> {
  %0 = stablehlo.pad %x, %p, low = [1, 2], high = [1, 2], interior = [0, 0] : (tensor<2x3xcomplex<f32>>, tensor<complex<f32>>) -> tensor<4x7xcomplex<f32>>
  return %0 : tensor<4x7xcomplex<f32>>
}"""
    options = xlac.Options.from_env().replace(cpu="x86-64-v3", cache_dir="", num_threads=2,
                                              split_copy_bytes=1)
    exe = xlac.compile(text, options=options)
    if "x86-64-v3" not in runnable_levels("x86-64-v3"):
        pytest.skip("this host cannot run x86-64-v3 code")
    x = (np.arange(6) + 1j * np.arange(6, 12)).reshape(2, 3).astype(np.complex64)
    p = np.complex64(-1 + 2j)
    want = np.pad(x, ((1, 1), (2, 2)), constant_values=p)
    assert exe.run(x, np.asarray(p))[0].tobytes() == want.tobytes()
