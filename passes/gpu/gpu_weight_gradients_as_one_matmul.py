"""xla-gpu-weight-gradients-as-one-matmul: a convolution's weight gradient split
into one matmul per filter tap -> one matmul of the transposed patch matrix.

xla-canonicalize-convolutions makes a weight gradient with more taps than output
positions (a CNN's, batch 64: 9 taps, 12,544 positions) one `dot_general` per tap:
the tap's strided slice of the (padded) input, transposed to C x N*O.., times
dY (N*O.. x F), each result inserted as row t of a T x C x F tensor. The CPU
schedules rely on that split; on the GPU it is 2 launches a tap (a transpose
kernel, a GEMM of 1 to 5 thread blocks), 36 per step in the flax CNN. Here the
whole chain becomes the product of the patch matrix transposed (T*C x N*O.., the
forward convolution's im2col, conv_gemm_text.py, padding folded in) and dY:
an im2col kernel and one GEMM (cuBLASLt reads the transpose where it lies; the
generated matmul after a transpose kernel).

Matched (tensors, before bufferization): a fill of T x C x F, written whole by a
chain of `tensor.insert_slice`s of 1 x C x F, each an expanded
`linalg.matmul(collapse(transpose(extract_slice(X))), B)` into a zero fill, with
the same X, the same B, slices of the same size and stride whose offsets are a
tap grid from 0 (tap t at row t, row-major); anything else is left alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from xlac.mlir import ir
from xlac.passes.base import ModulePass, nested_ops
from xlac.passes.gpu.conv_gemm_text import ConvGemm, patch_matrix_lines
from xlac.passes.gpu.gpu_convolutions_as_matmuls import folded_padding, producer
from xlac.passes.gpu.gpu_inline_helpers import inline_call
from xlac.passes.gpu.gpu_matmul_kernels import DEFAULT_MAPS
from xlac.passes.helper_calls import fresh_symbol, replace_with_call

_ELEMENTS = ("f32", "f64")
_ZEROS = ("0.000000e+00", "-0.000000e+00")


@dataclass(frozen=True)
class Tap:
    """One tap's matmul and where its slice of X starts."""

    offsets: tuple[int, ...]          # spatial
    ops: tuple[ir.Operation, ...]     # insert, expand, matmul, collapse, transpose, slice: erased after


class GpuWeightGradientsAsOneMatmul(ModulePass):
    """Per-tap weight-gradient matmuls inserted into one tensor -> an im2col and one matmul."""

    name = "xla-gpu-weight-gradients-as-one-matmul"

    def run(self, module: ir.Operation) -> None:
        starts = [op for op in nested_ops(module) if op.name == "tensor.insert_slice" and _zero_filled(op.operands[1])]
        for start in starts:
            found = _chain(start)
            if found is not None:
                _rewrite(module, *found)


def _zero_filled(value: ir.Value) -> bool:
    """Made by a fill of a constant (a linalg.fill, or a generic with no inputs yielding one)."""
    op = producer(value)
    if op is None or op.name not in ("linalg.fill", "linalg.generic"):
        return False
    if op.name == "linalg.generic":
        inputs = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))[0]
        body = list(op.regions[0].blocks[0].operations)
        return inputs == 0 and len(body) == 1 and _constant(body[0].operands[0]) is not None
    return _constant(op.operands[0]) is not None


def _constant(value: ir.Value) -> str | None:
    op = producer(value)
    return str(op.attributes["value"]) if op is not None and op.name == "arith.constant" else None


def _chain(start: ir.Operation):
    """(taps, X, B, matmul fill value, the chain's last insert) where ``start`` begins a weight gradient."""
    result_type = ir.RankedTensorType(start.results[0].type)
    if len(result_type.shape) != 3 or not result_type.has_static_shape \
            or str(result_type.element_type) not in _ELEMENTS:
        return None
    inserts, op = [], start
    while True:
        inserts.append(op)
        uses = list(op.results[0].uses)
        if len(uses) != 1 or uses[0].owner.name != "tensor.insert_slice" or uses[0].owner.operands[1] != op.results[0]:
            break
        op = uses[0].owner
    if len(inserts) != result_type.shape[0] or len(inserts) < 2:
        return None
    taps = [_tap(insert, row) for row, insert in enumerate(inserts)]
    if any(t is None for t in taps):
        return None
    matmuls = [t.ops[2] for t in taps]
    x = taps[0].ops[5].operands[0]
    b = matmuls[0].operands[1]
    fill = producer(matmuls[0].operands[2])
    same = all(t.ops[5].operands[0] == x and _same_value(m.operands[1], b) and _same_slice(t.ops[5], taps[0].ops[5])
               for t, m in zip(taps, matmuls))
    value = _constant(fill.operands[0]) if fill is not None and fill.name == "linalg.fill" else None
    types = [ir.RankedTensorType(v.type) for v in (x, b, start.results[0])]
    elements = {str(t.element_type) for t in types}
    if not same or len(elements) != 1 or not all(t.has_static_shape for t in types):
        return None
    if value is None or value.split(":")[0].strip() not in _ZEROS:
        return None
    return taps, x, b, value, inserts[-1]


def _tap(insert: ir.Operation, row: int) -> Tap | None:
    """Tap ``row``'s ops, if ``insert`` puts an expanded per-tap matmul at row ``row``."""
    offsets = list(ir.DenseI64ArrayAttr(insert.attributes["static_offsets"]))
    if len(list(insert.operands)) != 2 or offsets != [row, 0, 0]:
        return None
    expand = producer(insert.operands[0])
    matmul = producer(expand.operands[0]) if expand is not None and expand.name == "tensor.expand_shape" else None
    collapse = producer(matmul.operands[0]) if matmul is not None and matmul.name == "linalg.matmul" else None
    transpose = producer(collapse.operands[0]) if collapse is not None \
        and collapse.name == "tensor.collapse_shape" else None
    if transpose is None or transpose.name != "linalg.transpose" or not _plain(matmul):
        return None
    rank = ir.RankedTensorType(transpose.operands[0].type).rank
    sliced = producer(transpose.operands[0])
    if list(ir.DenseI64ArrayAttr(transpose.attributes["permutation"])) != [rank - 1, *range(rank - 1)] \
            or sliced is None or sliced.name != "tensor.extract_slice" or len(list(sliced.operands)) != 1:
        return None
    starts = list(ir.DenseI64ArrayAttr(sliced.attributes["static_offsets"]))
    if starts[0] or starts[-1] or any(len(list(o.results[0].uses)) != 1 for o in (expand, matmul, collapse, transpose)):
        return None
    return Tap(tuple(starts[1:-1]), (insert, expand, matmul, collapse, transpose, sliced))


def _plain(matmul: ir.Operation) -> bool:
    """C += A . B as written (no transposed operand, no precision mark to keep)."""
    if "xla.precision" in matmul.attributes:
        return False
    maps = [str(ir.AffineMapAttr(a).value) for a in ir.ArrayAttr(matmul.attributes["indexing_maps"])]
    return maps == DEFAULT_MAPS["linalg.matmul"] and "cast" not in matmul.attributes


def _same_value(value: ir.Value, other: ir.Value) -> bool:
    """The same value, or the same collapse of the same value (each tap collapses dY again)."""
    if value == other:
        return True
    a, b = producer(value), producer(other)
    return a is not None and b is not None and a.name == b.name == "tensor.collapse_shape" \
        and a.operands[0] == b.operands[0] and str(a.attributes["reassociation"]) == str(b.attributes["reassociation"])


def _same_slice(a: ir.Operation, b: ir.Operation) -> bool:
    return all(str(a.attributes[k]) == str(b.attributes[k]) for k in ("static_sizes", "static_strides"))


def _grid(taps: list[Tap]) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """The window (taps per spatial dim) and the dilations, if tap t's offsets are
    (k.. of t in row-major order) * dilation."""
    spatial = len(taps[0].offsets)
    values = [sorted({t.offsets[i] for t in taps}) for i in range(spatial)]
    window = tuple(len(v) for v in values)
    dilations = tuple(v[1] - v[0] if len(v) > 1 else 1 for v in values)
    if math.prod(window) != len(taps) or any(v[0] != 0 for v in values):
        return None
    for t, tap in enumerate(taps):
        index = []
        for size in reversed(window):
            index.insert(0, t % size)
            t //= size
        if tap.offsets != tuple(k * d for k, d in zip(index, dilations)):
            return None
    return window, dilations


def _rewrite(module: ir.Operation, taps: list[Tap], x: ir.Value, b: ir.Value, zero: str,
             last: ir.Operation) -> None:
    grid = _grid(taps)
    if grid is None:
        return
    window, dilations = grid
    sliced = taps[0].ops[5]
    x_type, s_type = ir.RankedTensorType(x.type), ir.RankedTensorType(sliced.results[0].type)
    result = ir.RankedTensorType(last.results[0].type)
    channels, filters = result.shape[1], result.shape[2]
    strides = tuple(list(ir.DenseI64ArrayAttr(sliced.attributes["static_strides"]))[1:-1])
    element = str(x_type.element_type)
    conv = ConvGemm(tuple(x_type.shape), (*window, channels, filters), (*s_type.shape[:-1], filters),
                    strides, dilations, element, element)
    if conv.path() != "im2col":
        return
    padding = folded_padding(x)
    pad = producer(x) if padding is not None else None
    if pad is not None:
        conv = replace(conv, padding=padding)
        x = pad.operands[0]
    name = fresh_symbol(module, "xla_weight_gradient")
    feeders = _feeders(last)                  # the old chain, erased once the call reads nothing of it
    call, added = replace_with_call(module, last, _helper_text(name, conv, zero, str(b.type), str(result)),
                                    name, operands=[x, b])
    inline_call(added[name], call)
    for op in feeders:
        _erase_unread(op)


_FEEDERS = ("tensor.insert_slice", "tensor.expand_shape", "linalg.matmul", "tensor.collapse_shape",
            "linalg.transpose", "tensor.extract_slice", "tensor.pad", "tensor.empty", "linalg.fill",
            "linalg.generic")


def _feeders(op: ir.Operation) -> list[ir.Operation]:
    """The ops of this module's kinds that made ``op``'s operands, each once."""
    found = []
    for value in op.operands:
        feeder = producer(value)
        if feeder is not None and feeder.name in _FEEDERS and feeder not in found \
                and (feeder.name != "linalg.generic" or _zero_filled(feeder.results[0])):
            found.append(feeder)
    return found


def _erase_unread(op: ir.Operation) -> None:
    """Erase ``op`` if nothing reads it, then what fed only it: the chain back to
    its slices (and the pad, where no forward convolution reads it any more), each
    tap's dY collapse and transpose destination, the zero fills."""
    if any(list(r.uses) for r in op.results):
        return
    feeders = _feeders(op)
    op.erase()
    for feeder in feeders:
        _erase_unread(feeder)


def _helper_text(name: str, conv: ConvGemm, zero: str, b_type: str, result: str) -> str:
    """``@name(x, b) -> T x C x F``: the patch matrix transposed times B."""
    t_in, a_type, lines = patch_matrix_lines(conv)
    rows, depth = conv.rows, conv.depth
    at_type = f"tensor<{depth}x{rows}x{conv.element}>"
    c_type = f"tensor<{depth}x{conv.channels}x{conv.element}>"
    taps, channels = math.prod(conv.filter[:-2]), conv.filter[-2]
    label = f"{conv.label()} weight gradient"
    lines += [f"%te = tensor.empty() : {at_type}",
              f"%at = linalg.transpose ins(%a : {a_type}) outs(%te : {at_type}) permutation = [1, 0]",
              f"%ce = tensor.empty() : {c_type}",
              f"%zero = arith.constant {zero}",
              f"%c = linalg.fill ins(%zero : {conv.element}) outs(%ce : {c_type}) -> {c_type}",
              f'%m = linalg.matmul {{xla.conv = "{label}"}} ins(%at, %b : {at_type}, {b_type}) '
              f"outs(%c : {c_type}) -> {c_type}",
              f"%r = tensor.expand_shape %m [[0, 1], [2]] output_shape [{taps}, {channels}, {conv.channels}] "
              f": {c_type} into {result}"]
    body = "\n  ".join(lines)
    return (f"func.func private @{name}(%x: {t_in}, %b: {b_type}) -> {result} {{\n"
            f"  {body}\n  return %r : {result}\n}}\n")
