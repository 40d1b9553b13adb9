"""xla-gpu-library-matmuls: matmuls cuBLASLt takes -> calls the host makes.

A `linalg.matmul` / `linalg.batch_matmul` on buffers of static layout, of
f32, f64, or bf16/f16 operands into f32 (xla-widen-contractions{keep-narrow}),
becomes a call of a declaration marked `xla.gemm` (its compute type); the
runtime reads it as a `Gemm` step and calls `cublasLtMatmul` on the program's
stream (python/xlac/targets/cuda/gemm_calls.py). As in
xla-gpu-matmul-kernels, a transpose that made A or B for the matmul alone is
read where it lies (the library's op attribute, no copy), a zero fill of C
before it becomes beta = 0, and an epilogue that writes C in place becomes
the library's own where it is exactly one of them (library_epilogues.py):
bias (a row vector added), relu, GELU's tanh form, or bias then either, on
f32 results. Anything else stays for the generated kernels.
"""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass
from xlac.passes.gpu.gpu_matmul_kernels import DEFAULT_MAPS, erase_transposed, static_layout, transposed_operand
from xlac.passes.gpu.launch_ops import OpOrder, fill_before
from xlac.passes.gpu.library_epilogues import is_zero, library_epilogue
from xlac.passes.gpu.matmul_epilogue import find_epilogue
from xlac.passes.helper_calls import fresh_symbol, replace_with_call
from xlac.record import record

_TYPES = {("f32", "f32"): "f32", ("f64", "f64"): "f64", ("bf16", "f32"): "f32", ("f16", "f32"): "f32"}


@record
class GpuLibraryMatmuls(ModulePass):
    """Matmuls cuBLASLt computes (f32, f64, bf16/f16 into f32) -> calls of
    `xla.gemm` declarations the cuda runtime makes with cuBLASLt.

    f32 dots compute in full f32 unless `tf32=true` (`matmul_precision =
    "tensorfloat32"`): then those at DEFAULT/HIGH precision compute in TF32, as
    XLA's do on a GPU, and only HIGHEST ones (xla-mark-contraction-precision)
    in f32. Full f32 is the default because xlac's results are the reference
    interpreter's: on the emulated conformance suite TF32 failed 7 of 1,493
    programs (f32 dots and convolutions checked to 3 ulp / 1e-3).
    """

    name = "xla-gpu-library-matmuls"

    tf32: bool = False

    def run(self, module: ir.Operation) -> None:
        order = OpOrder(module)
        for op in order.ops():
            if op.name in DEFAULT_MAPS and _compute(op, self.tf32) is not None:
                _replace(module, op, order, self.tf32)


def _compute(op: ir.Operation, tf32: bool) -> str | None:
    """The matmul's compute type (tf32, f32, f64), or None where cuBLASLt cannot
    take it as it lies."""
    maps = [str(ir.AffineMapAttr(a).value) for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    if maps != DEFAULT_MAPS[op.name] or "cast" in op.attributes \
            or not all(static_layout(v.type) for v in op.operands):
        return None
    a, b, c = (str(ir.MemRefType(v.type).element_type) for v in op.operands)
    accumulator = _TYPES.get((a, c)) if a == b else None
    if accumulator is None or not all(_readable(v) for v in op.operands) or not _rows_contiguous(op.operands[2]):
        return None
    if accumulator == "f32" and a == "f32" and tf32:     # XLA's DEFAULT on a GPU: TF32
        highest = "xla.precision" in op.attributes
        return "f32" if highest else "tf32"
    return accumulator


def _strides(value: ir.Value) -> list[int]:
    return list(ir.MemRefType(value.type).get_strides_and_offset()[0])


def _readable(value: ir.Value) -> bool:
    """Rows or columns contiguous (a matrix or its transpose, column-major)."""
    memref = ir.MemRefType(value.type)
    shape, strides = memref.shape[-2:], _strides(value)[-2:]
    return strides[1] == 1 or strides[0] == 1 or 1 in shape


def _rows_contiguous(value: ir.Value) -> bool:
    shape = ir.MemRefType(value.type).shape
    return _strides(value)[-1] == 1 or shape[-1] == 1


def _replace(module: ir.Operation, op: ir.Operation, order: OpOrder, tf32: bool) -> None:
    compute = _compute(op, tf32)
    transposed = []
    for index in (0, 1):                              # a transpose made for the matmul: read its source
        found = transposed_operand(op, order, index)
        if found is not None and _readable(found[1]):
            old = op.operands[index]
            op.operands[index] = found[1]
            erase_transposed(found[0], old, order)
        transposed.append(int(found is not None and op.operands[index] == found[1]))
    fill = fill_before(op, op.operands[2], order)
    zero = fill is not None and is_zero(fill.operands[0])
    epilogue = find_epilogue(op, 3, order)
    kind = library_epilogue(epilogue, op) if epilogue is not None else ""
    operands = list(op.operands) + (list(epilogue.extra) if kind.startswith("bias") else [])
    name = fresh_symbol(module, "xla_gemm")
    types = ", ".join(str(v.type) for v in operands)
    origin = f"xla.conv = {op.attributes['xla.conv']}, " if "xla.conv" in op.attributes else ""
    text = (f"func.func private @{name}({types}) attributes {{{origin}xla.gemm = \"{compute}\", "
            f"xla.epilogue = \"{kind or ''}\", xla.beta = {0.0 if zero else 1.0} : f64, "
            f"xla.transposed = array<i64: {transposed[0]}, {transposed[1]}>}}\n")
    key = order.key(op)
    call, _ = replace_with_call(module, op, text, name, operands=operands)
    order.replaced(key, call)
    if zero:
        order.erased(fill)
        fill.erase()
    if kind:
        order.erased(epilogue.op)
        epilogue.op.erase()
