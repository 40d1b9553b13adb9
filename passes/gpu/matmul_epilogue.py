"""A matmul's elementwise epilogue (bias, activation) found for its kernel.

xla-fuse makes a dot and the elementwise ops on its result one "output"
fusion; on buffers they are the matmul and a generic reading its C. The
matmul kernel applies the generic's region to each output in registers and
stores its result (gpu_matmul_text.py): one kernel. Only epilogues that
write C itself (C = f(C, bias ...)), the usual bias and activation.
"""

from __future__ import annotations

from dataclasses import dataclass

from xlac.mlir import ir
from xlac.passes.base import nested_ops, symbol_name
from xlac.passes.gpu.gpu_kernel_text import Operand
from xlac.passes.gpu.launch_ops import (
    FILL_LOOKBACK,
    buffer_base,
    element_type,
    has_reduction,
    is_memref,
    is_view,
    ops_after,
)
from xlac.passes.outline import clone_ops


@dataclass(frozen=True)
class Epilogue:
    """The generic, where C is among its inputs, and its operands as the kernel sees them."""
    op: ir.Operation
    c_input: int                      # which of its inputs is C
    operands: tuple[Operand, ...]     # its inputs, then its output; positions in the helper
    extra: tuple[ir.Value, ...]       # the helper's arguments after A, B, C


def find_epilogue(matmul: ir.Operation, first_position: int, order=None) -> Epilogue | None:
    """The elementwise generic after ``matmul`` that reads its C point for point,
    with nothing between them touching C or the generic's operands; or None.
    Its operands other than C become helper arguments from ``first_position``;
    ``order``: the pass's ``OpOrder``, read instead of walking the block."""
    c = matmul.operands[2]
    passed = []
    for candidate in ops_after(matmul, 2 * FILL_LOOKBACK, order):
        if candidate.name == "arith.constant" or is_view(candidate):
            continue
        if candidate.name == "linalg.generic" and c in list(candidate.operands):
            return _epilogue(matmul, candidate, passed, first_position)
        passed.append(candidate)
        if len(passed) >= FILL_LOOKBACK:
            return None
    return None


def _epilogue(matmul: ir.Operation, op: ir.Operation, passed: list[ir.Operation],
              first_position: int) -> Epilogue | None:
    c = matmul.operands[2]
    inputs, outputs = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    operands = list(op.operands)
    # only C = f(C, ...), the usual bias and activation, for now: an epilogue writing
    # another buffer (an SGD step W - lr * dW after the gradient's matmul) would need
    # C stored as well wherever something else reads it
    if outputs != 1 or operands[inputs] != c or operands.count(c) != 2 or has_reduction(op):
        return None
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    rank = len(ir.MemRefType(c.type).shape)
    identity = str(ir.AffineMap.get_identity(rank))
    c_input = operands.index(c)
    if maps[0].n_dims != rank or str(maps[c_input]) != identity or str(maps[inputs]) != identity:
        return None
    if any(len(inner.regions) for inner in op.regions[0].blocks[0].operations):
        return None
    extra = [v for v in operands if v != c]
    if not all(_static(v) for v in extra) or not all(_defined_before(v, matmul) for v in extra):
        return None            # the helper replaces the matmul: its arguments must exist there
    touched = {buffer_base(v) for p in passed for v in p.operands if is_memref(v)}
    if touched & {buffer_base(v) for v in operands}:
        return None
    if any(buffer_base(v) == buffer_base(c) for v in [*extra, *list(matmul.operands)[:2]]):
        return None            # each block reads only its own outputs of C, and no A or B
    kernel_operands, position = [], first_position
    for value, amap in zip(operands, maps):
        place = 2 if value == c else position
        position += value != c
        kernel_operands.append(Operand(place, str(value.type), str(element_type(value)),
                                       tuple(str(e) for e in amap.results)))
    return Epilogue(op, c_input, tuple(kernel_operands), tuple(extra))


def _defined_before(value: ir.Value, op: ir.Operation) -> bool:
    """A block argument, or the result of an op before ``op`` in its block (MLIR's
    cached order: no list of the block per matmul)."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return True
    return owner.operation.block == op.block and owner.operation.is_before_in_block(op)


def inline_body(kernel: ir.Operation, func: ir.Operation) -> None:
    """Put the body of ``func`` (the epilogue's region) in place of each call of it
    in ``kernel`` (the helper calling it), then erase it. The inliner does not
    inline into a gpu.launch region itself, and canonicalizing the helper first
    folds away any scf.if the calls could have sat in. Only ``kernel`` is walked
    (the whole module, per matmul, made the pass quadratic)."""
    name = symbol_name(func)
    entry = func.regions[0].blocks[0]
    ops = [op.operation for op in entry.operations]
    calls = [op for op in nested_ops(kernel) if op.name == "func.call"
             and ir.FlatSymbolRefAttr(op.attributes["callee"]).value == name]
    for call in calls:
        mapping = dict(zip(entry.arguments, call.operands))
        with ir.InsertionPoint(call):
            clone_ops(ops[:-1], mapping)
        for result, value in zip(call.results, ops[-1].operands):
            result.replace_all_uses_with(mapping.get(value, value))
        call.erase()
    func.erase()


def _static(value: ir.Value) -> bool:
    return is_memref(value) and ir.MemRefType(value.type).has_static_shape \
        and "strided" not in str(value.type)
