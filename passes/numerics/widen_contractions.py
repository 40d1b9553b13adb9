"""xla-widen-contractions: narrow and mixed-type dots and convolutions
computed in f32/f64 or i32/i64, the result rounded (or truncated) once."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops
from xlac.passes.fusion.op_classes import contracted_size
from xlac.passes.numerics.exact_integer_chunks import (
    chunk_plan,
    chunked_f32_dot,
    kernel_takes_whole_k,
    narrow_integer_source,
)
from xlac.passes.numerics.exact_integer_chunks import convert as _convert
from xlac.passes.numerics.exact_integer_chunks import retyped as _retyped
from xlac.passes.numerics.mark_contraction_precision import PRECISION
from xlac.record import record

_CONTRACTIONS = ("stablehlo.dot_general", "stablehlo.convolution")


@record
class WidenContractions(ModulePass):
    """Give each `dot_general` and `convolution` whose element types are not
    all its accumulator's (narrow floats: bf16, f16, f8, f6, f4; integers
    narrower than 32 bits, unsigned ones included; mixed operand types)
    operands of the accumulator type, and convert the result back once.
    The accumulator is f32 (f64 if any type is f64) for floats; for
    integers f32 where every sum is an integer f32 holds exactly (i8 x i8
    up to k = 1024), else i32 (i64 if any type is 64 bits).

    Why: XLA's CPU backend computes narrow floats in f32, so its results,
    which users compare with, are sums rounded once (a bf16 accumulator
    loses about three digits on a 1024-long dot); integer sums wrap the same
    in i32 as in i8 (truncation is a ring homomorphism), and exact f32 sums
    are the true ones (under 2^24, nothing wrapped): f32 FMAs run a quarter
    faster than AVX2's i32 multiplies (i8 1024^3). The wide contraction
    takes the f32/f64/i32/i64 matmul and convolution schedules, and the
    converts are elementwise ops that the matmul schedules fuse into their
    packing of B (transposed_b.b_producer): converting in registers at
    every read of a bf16 or i8 panel measured 1.6x (bf16) and 2x (i8)
    slower at 1024^3 (docs/pipeline.md). Upstream's lowering also
    sign-extends unsigned operands (its matmul has one cast for both);
    converted first, ui8 is zero-extended.
    An 8-bit dot_general past the exact bound has its k cut in chunks each
    within it (exact_integer_chunks): f32 dots whose exact sums are added in
    i32 (the same wrapped bits), not one i32 dot (`vpmulld`, 2-3x the time);
    an i32 dot of i8/ui8 extended to i32 (jnp's `astype`) is taken as the
    8-bit dot (not with ``keep_narrow``: cuda's dots are as they were).
    With ``integer-kernel`` (the CPU where an integer micro-kernel is:
    x86-64-v3/-v4) an 8-bit dot that kernel takes is one i32 dot over its
    whole k instead (exact_integer_chunks.kernel_takes_whole_k): the kernel
    sums i16 pairs into i32 exactly, so the chunks, their f32 round trip and
    their adds are only overhead there.
    Example: `dot_general(bf16, bf16) -> bf16` becomes `convert` to f32 of
    both operands, the f32 `dot_general`, and one `convert` back to bf16.
    """

    name = "xla-widen-contractions"
    # Keep a dot's bf16 or f16 operands (both of one type) as they are and widen
    # only its result to f32: for a target whose matmuls take them as they lie,
    # accumulating in f32 (cuBLASLt on cuda); the sum is still rounded once. A dot
    # widened otherwise (mixed types, integers) is marked xla.precision = "highest":
    # its f32 operands are conversions the program made exact, which the TF32 that
    # f32 dots get at DEFAULT there would round again (an i32 to 11 bits).
    keep_narrow: bool = False
    # A target with an integer micro-kernel (the CPU's at x86-64-v3/-v4:
    # xlac.targets.cpu.imad_kernels): an 8-bit integer dot that the kernel takes
    # (exact_integer_chunks.kernel_takes_whole_k) is one i32 dot over its whole k
    # of the 8-bit operands extended (xla-amx-contractions makes them i16): no
    # f32 chunks, no f32 round trip of C. Others keep the f32 paths.
    integer_kernel: bool = False

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name in _CONTRACTIONS:
                if not self.keep_narrow:
                    op = _on_narrow_integers(op)
                wide = accumulator(op)
                if wide is not None and self.integer_kernel and _on_integer_kernel(op):
                    _widen(op, ir.IntegerType.get_signless(32))
                    continue
                plan = None if wide is None or self.keep_narrow else _f32_chunks(op, wide)
                if wide is not None and self.keep_narrow and _narrow_operands(op, wide):
                    _widen_result(op, wide)
                elif plan is not None:
                    _widen_in_chunks(op, plan, wide)
                elif wide is not None:
                    _widen(op, wide, exact=self.keep_narrow)


def _element(value: ir.Value) -> ir.Type | None:
    if not isinstance(value.type, ir.RankedTensorType):
        return None
    return ir.RankedTensorType(value.type).element_type


def accumulator(op: ir.Operation) -> ir.Type | None:
    """The type ``op`` should compute in, when its own element types are not
    all that type; else None (f32, f64, i32, i64 alike, complex, quantized)."""
    types = [_element(v) for v in (*op.operands, *op.results)]
    if any(t is None for t in types):
        return None
    if all(isinstance(t, ir.FloatType) for t in types):
        wide = ir.F64Type.get() if 64 in _widths(types) else ir.F32Type.get()
        return wide if any(t != wide for t in types) else None
    if all(isinstance(t, ir.IntegerType) for t in types):
        # same-width signedness does not matter: ui32 x ui32 -> ui32 wraps as i32 does
        width = 64 if 64 in _widths(types) else 32
        if min(_widths(types)) >= width:
            return None
        return ir.F32Type.get() if _exact_in_f32(op) else ir.IntegerType.get_signless(width)
    return None


def _widths(types: list[ir.Type]) -> list[int]:
    return [t.width for t in types]


F32_INTEGERS = 1 << 24       # every integer up to 2^24 is an f32


def _exact_in_f32(op: ir.Operation) -> bool:
    """Whether every product of ``op``'s integer operands and every partial
    sum of them is an integer an f32 holds exactly (|sum| <= 2^24: an i8 x i8
    dot up to k = 1024, ui8 x i8 up to 512), so that f32 FMAs give the exact
    sum, which no wrapping can have touched (it is under 2^31)."""
    largest = [_largest(_element(v)) for v in op.operands]
    return contracted_size(op) * largest[0] * largest[1] <= F32_INTEGERS


def _largest_product(op: ir.Operation, operands: list[ir.Value] | None = None) -> int:
    largest = [_largest(_element(v)) for v in (operands or op.operands)]
    return largest[0] * largest[1]


def _f32_chunks(op: ir.Operation, wide: ir.Type) -> tuple[int, int, list[int]] | None:
    """How an integer dot past the f32 bound splits its k into chunks each
    summed exactly in f32 (exact_integer_chunks), or None (not an integer
    dot, or one whose chunks would be too short: i16 operands)."""
    if not isinstance(wide, ir.IntegerType) or \
            not all(isinstance(_element(v), ir.IntegerType) for v in op.operands):
        return None
    return chunk_plan(op, _largest_product(op), F32_INTEGERS)


def _on_integer_kernel(op: ir.Operation) -> bool:
    """Whether ``op`` is a dot of two 8-bit integer operands into integers
    that the integer kernel takes over its whole k (kernel_takes_whole_k)."""
    types = [_element(v) for v in (*op.operands, op.result)]
    if not all(isinstance(t, ir.IntegerType) for t in types) \
            or any(ir.IntegerType(t).width != 8 for t in types[:2]):
        return False
    return kernel_takes_whole_k(op, _largest_product(op), ir.IntegerType(types[2]).width)


def _on_narrow_integers(op: ir.Operation) -> ir.Operation:
    """An integer dot_general whose operands are extensions of narrower
    integers (``a.astype(jnp.int32) @ b.astype(jnp.int32)`` of i8 or ui8)
    made again on the narrow integers, where those are summed in f32 (exactly
    or in chunks); else ``op``. The extensions are exact, so the products are."""
    if op.name != "stablehlo.dot_general" or not isinstance(_element(op.result), ir.IntegerType):
        return op
    sources = [narrow_integer_source(v) for v in op.operands]
    if sources == list(op.operands):
        return op
    if contracted_size(op) * _largest_product(op, sources) > F32_INTEGERS and \
            chunk_plan(op, _largest_product(op, sources), F32_INTEGERS) is None:
        return op
    with ir.InsertionPoint(op), op.location:
        narrow = contraction_like(op, sources, op.result.type)
    op.result.replace_all_uses_with(narrow)
    extended = []
    for value, source in zip(op.operands, sources):
        if value != source and value not in extended:
            extended.append(value)
    op.erase()
    for value in extended:                        # the i32 copies nothing else reads
        if not any(True for _ in value.uses):
            value.owner.erase()
    return narrow.owner.operation if hasattr(narrow.owner, "operation") else narrow.owner


def _widen_in_chunks(op: ir.Operation, plan: tuple[int, int, list[int]], wide: ir.Type) -> None:
    with ir.InsertionPoint(op), op.location:
        def dot_like(operands, result):
            return contraction_like(op, operands, result)
        total = chunked_f32_dot(op, plan, dot_like, wide)
        narrow = _convert(total, op.result.type)
    op.result.replace_all_uses_with(narrow)
    op.erase()


def _largest(element: ir.Type) -> int:
    """The largest magnitude an integer of ``element``'s type takes."""
    integer = ir.IntegerType(element)
    return (1 << integer.width) - 1 if integer.is_unsigned or integer.width == 1 \
        else 1 << (integer.width - 1)


def _attribute_name(named) -> str:
    return named if isinstance(named, str) else named.name


def contraction_like(op: ir.Operation, operands: list[ir.Value], result: ir.Type) -> ir.Value:
    """A copy of contraction ``op`` (its dimension numbers, window, precision)
    on ``operands`` with ``result`` type, built at the insertion point."""
    attributes = {name: op.attributes[name] for name in map(_attribute_name, op.attributes)}
    return ir.Operation.create(op.name, results=[result], operands=operands,
                               attributes=attributes).result


def _narrow_operands(op: ir.Operation, wide: ir.Type) -> bool:
    """A dot_general of two bf16 or two f16 operands into that type or f32."""
    types = {str(_element(v)) for v in op.operands}
    return op.name == "stablehlo.dot_general" and wide == ir.F32Type.get() \
        and len(types) == 1 and types <= {"bf16", "f16"} \
        and str(_element(op.result)) in types | {"f32"}


def _widen_result(op: ir.Operation, element: ir.Type) -> None:
    with ir.InsertionPoint(op), op.location:
        wide = contraction_like(op, list(op.operands), _retyped(op.result.type, element))
        narrow = _convert(wide, op.result.type)
    op.result.replace_all_uses_with(narrow)
    op.erase()


def _widen(op: ir.Operation, element: ir.Type, exact: bool = False) -> None:
    with ir.InsertionPoint(op), op.location:
        operands = [_convert(v, _retyped(v.type, element)) for v in op.operands]
        wide = contraction_like(op, operands, _retyped(op.result.type, element))
        if exact and op.name == "stablehlo.dot_general":
            wide.owner.attributes[PRECISION] = ir.StringAttr.get("highest")
        if isinstance(element, ir.FloatType) and isinstance(_element(op.result), ir.IntegerType):
            # exact integers: to i32 first, so that an i8 result wraps (f32 -> i8 saturates)
            wide = _convert(wide, _retyped(op.result.type, ir.IntegerType.get_signless(32)))
        narrow = _convert(wide, op.result.type)
    op.result.replace_all_uses_with(narrow)
    op.erase()
