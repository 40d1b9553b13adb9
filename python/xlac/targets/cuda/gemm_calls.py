"""A program's ``Gemm`` steps (``schedule.Gemm``) run as ``cublasLtMatmul`` calls.

cuBLASLt is column-major; xlac's buffers are row-major. A row-major C (m x n)
is a column-major C^T (n x m) with the same leading dimension, and
C^T = B^T A^T: so the library's A is our B and its B our A, each read as it
lies (no copy): an operand whose columns are contiguous is that matrix's
transpose in column-major (``CUBLAS_OP_N``), one whose rows are contiguous
(a transpose read in place) is the matrix itself (``CUBLAS_OP_T``). Batches
are strided (one stride per operand, 0 for a matrix every batch shares).

Descriptors and the algorithm are made once per step; each call sets the
pointers. The workspace is one buffer from the device's stream-ordered pool,
held by the program, so a CUDA graph captures the calls as it captures kernels
(cuBLASLt enqueues its kernels on the given stream).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

from xlac.dtypes import numpy_dtype
from xlac.targets.cuda import cublaslt as lt
from xlac.targets.cuda.control_flow import walk_steps
from xlac.targets.cuda.memory import device_context

_COMPUTE = {"tf32": (lt.COMPUTE_32F_FAST_TF32, "f32"), "f32": (lt.COMPUTE_32F, "f32"),
            "f64": (lt.COMPUTE_64F, "f64")}
_SCALARS = {"f32": ctypes.c_float, "f64": ctypes.c_double}


@dataclass(frozen=True)
class Operand:
    """One matrix as the library reads it: its op and column-major layout."""
    op: int
    rows: int
    cols: int
    ld: int
    stride: int


def column_major(rows: int, cols: int, strides: tuple[int, int, int]) -> Operand | None:
    """The library's view of a row-major-indexed ``rows x cols`` matrix with
    element ``strides`` (batch, row, col) that it must read transposed (our
    operands and C enter the column-major product as their transposes); None
    when neither its rows nor its columns are contiguous."""
    batch, row, col = strides
    if col == 1 or cols == 1:                  # rows contiguous: column-major (cols x rows)
        return Operand(lt.OP_N, cols, rows, max(row, cols, 1), batch)
    if row == 1 or rows == 1:                  # columns contiguous: the matrix itself
        return Operand(lt.OP_T, rows, cols, max(col, rows, 1), batch)
    return None


def operands(step) -> tuple[Operand, Operand, Operand]:
    """The library's A (our B), B (our A) and C/D for ``step`` (C^T = B^T A^T)."""
    first = column_major(step.k, step.n, step.b_strides)
    second = column_major(step.m, step.k, step.a_strides)
    out = column_major(step.m, step.n, step.c_strides)
    assert first and second and out and out.op == lt.OP_N, "checked when compiled"
    return first, second, out


def _alignment(offset_bytes: int) -> int:
    """The alignment of a view ``offset_bytes`` into a buffer (buffers from the pool,
    or another library's, start 256-byte aligned)."""
    return min(256, offset_bytes & -offset_bytes) if offset_bytes else 256


class GemmCalls:
    """The Gemm steps of one program on one stream: descriptors, algorithms and
    the workspace made on first use, freed by ``close``."""

    def __init__(self, steps: list, blas: lt.CublasLt, driver, stream: int):
        self._blas, self._stream = blas, stream
        self._plans: dict[int, tuple] = {}
        gemms = [s for s in walk_steps(steps) if type(s).__name__ == "Gemm"]
        self._workspace = device_context(driver).allocate(lt.WORKSPACE_BYTES, stream) \
            if gemms else None

    def run(self, step, env: dict[str, int]) -> None:
        desc, layouts, algo = self._plan(step)
        blas = self._blas
        a, b, c = (env[name] + offset * numpy_dtype(element).itemsize
                   for name, offset, element in zip((step.a, step.b, step.c), step.offsets,
                                                    step.elements))
        if step.bias:
            bias = env[step.bias] + step.offsets[3] * numpy_dtype(step.elements[2]).itemsize
            blas.set_attribute("cublasLtMatmulDescSetAttribute", desc, lt.DESC_BIAS_POINTER,
                               ctypes.c_void_p(bias))
        scalar = _SCALARS[_COMPUTE[step.compute][1]]
        alpha, beta = scalar(1.0), scalar(step.beta)
        first, second, out = layouts
        blas.check("cublasLtMatmul", ctypes.c_void_p(blas.handle), ctypes.c_void_p(desc),
                   ctypes.byref(alpha), ctypes.c_void_p(b), ctypes.c_void_p(first),
                   ctypes.c_void_p(a), ctypes.c_void_p(second), ctypes.byref(beta),
                   ctypes.c_void_p(c), ctypes.c_void_p(out), ctypes.c_void_p(c),
                   ctypes.c_void_p(out), ctypes.byref(algo),
                   ctypes.c_void_p(self._workspace.pointer), ctypes.c_size_t(lt.WORKSPACE_BYTES),
                   ctypes.c_void_p(self._stream))

    def _plan(self, step) -> tuple:
        plan = self._plans.get(id(step))
        if plan is None:
            plan = self._plans[id(step)] = self._make_plan(step)
        return plan

    def _make_plan(self, step) -> tuple:
        blas = self._blas
        compute, scale = _COMPUTE[step.compute]
        desc = blas.create("cublasLtMatmulDescCreate", ctypes.c_int(compute),
                           ctypes.c_int(lt.DATA_TYPES[scale]))
        first, second, out = operands(step)
        set_desc = "cublasLtMatmulDescSetAttribute"
        blas.set_attribute(set_desc, desc, lt.DESC_TRANSA, ctypes.c_int32(first.op))
        blas.set_attribute(set_desc, desc, lt.DESC_TRANSB, ctypes.c_int32(second.op))
        if step.epilogue:
            blas.set_attribute(set_desc, desc, lt.DESC_EPILOGUE,
                               ctypes.c_uint32(lt.EPILOGUES[step.epilogue]))
        b_type, a_type, c_type = step.elements[1], step.elements[0], step.elements[2]
        layouts = [blas.layout(element, o.rows, o.cols, o.ld, step.batch, o.stride)
                   for element, o in ((b_type, first), (a_type, second), (c_type, out))]
        aligned = [_alignment(offset * numpy_dtype(element).itemsize)
                   for offset, element in zip(step.offsets, step.elements)]
        algo = blas.heuristic(desc, [layouts[0], layouts[1], layouts[2], layouts[2]],
                              lt.WORKSPACE_BYTES, (aligned[1], aligned[0], aligned[2], aligned[2]))
        return desc, layouts, algo

    def close(self) -> None:
        for desc, layouts, _ in self._plans.values():
            for layout in layouts:
                self._blas.destroy("cublasLtMatrixLayoutDestroy", layout)
            self._blas.destroy("cublasLtMatmulDescDestroy", desc)
        self._plans = {}
        if self._workspace is not None:
            self._workspace.release()
            self._workspace = None
