"""xla-gpu-matmul-kernels: linalg.matmul / batch_matmul on buffers -> a shared-memory tiled kernel.

See gpu_matmul_text.py for the kernel's shape (64x64 tiles per 16x16-thread
block, K staged through shared memory, 4x4 outputs per thread).
"""

from __future__ import annotations

import math

from xlac.mlir import ir
from xlac.passes.base import ModulePass, nested_ops
from xlac.passes.gpu.gpu_matmul_text import matmul_kernel
from xlac.passes.gpu.launch_ops import OpOrder, buffer_base, constant_text, fill_before, is_view
from xlac.passes.gpu.matmul_epilogue import find_epilogue, inline_body
from xlac.passes.helper_calls import fresh_symbol, region_declaration, replace_with_call

_MATMULS = {"linalg.matmul": 0, "linalg.batch_matmul": 1}


class GpuMatmulKernels(ModulePass):
    """linalg.matmul / batch_matmul (f32, f64, plain layouts) -> a shared-memory tiled kernel."""

    name = "xla-gpu-matmul-kernels"

    def run(self, module: ir.Operation) -> None:
        order = OpOrder(module)                          # one walk; the searches read it
        for op in order.ops():
            if op.name in _MATMULS and _plain_matmul(op):
                transposed = transposed_operand(op, order)
                if transposed is not None:               # read B's transpose where it lies
                    old_b = op.operands[1]
                    op.operands[1] = transposed[1]
                    erase_transposed(transposed[0], old_b, order)
                types = [ir.MemRefType(v.type) for v in op.operands]
                batch = types[0].shape[0] if _MATMULS[op.name] else 0
                (m, k), n = types[0].shape[-2:], types[1].shape[-2 if transposed else -1]
                name = fresh_symbol(module, "xla_gpu_matmul")
                fill = fill_before(op, op.operands[2], order)
                folded = fill is not None
                init = constant_text(fill.operands[0]) if folded else ""
                epilogue = find_epilogue(op, 3, order)
                memrefs = [str(t) for t in types] + ([str(v.type) for v in epilogue.extra]
                                                     if epilogue else [])
                text = matmul_kernel(name, memrefs, str(types[0].element_type),
                                     batch, m, n, k, init, epilogue, transposed is not None)
                bodies = {}
                if epilogue is not None:
                    text += region_declaration(epilogue.op.regions[0], f"{name}_body")
                    bodies[f"{name}_body"] = epilogue.op.regions[0]
                key = order.key(op)                      # replace_with_call erases op
                call, helpers = replace_with_call(module, op, text, name, bodies,
                                                  arguments=epilogue.extra if epilogue else ())
                order.replaced(key, call)
                if epilogue is not None:
                    order.erased(epilogue.op)
                    epilogue.op.erase()
                    inline_body(helpers[name], helpers[f"{name}_body"])
                if folded:
                    order.erased(fill)
                    fill.erase()


DEFAULT_MAPS = {
    "linalg.matmul": ["(d0, d1, d2) -> (d0, d2)", "(d0, d1, d2) -> (d2, d1)", "(d0, d1, d2) -> (d0, d1)"],
    "linalg.batch_matmul": ["(d0, d1, d2, d3) -> (d0, d1, d3)", "(d0, d1, d2, d3) -> (d0, d3, d2)",
                            "(d0, d1, d2, d3) -> (d0, d1, d2)"],
}


def _plain_matmul(op: ir.Operation) -> bool:
    """No transposed operand (custom indexing_maps), no casting: C += A . B exactly,
    on buffers of static shape and layout (a view of a slice of a buffer, as
    attention's heads are, is read in place: the kernel ABI applies its offset)."""
    maps = [str(ir.AffineMapAttr(a).value) for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    if maps != DEFAULT_MAPS[op.name] or "cast" in op.attributes:
        return False
    types = [v.type for v in op.operands]
    if not all(static_layout(t) for t in types):
        return False
    elements = {str(ir.MemRefType(t).element_type) for t in types}
    return elements in ({"f32"}, {"f64"})


def static_layout(t: ir.Type) -> bool:
    """A memref of static shape, strides and offset."""
    if not isinstance(t, ir.MemRefType) or not ir.MemRefType(t).has_static_shape:
        return False
    strides, offset = ir.MemRefType(t).get_strides_and_offset()
    return ir.ShapedType.get_dynamic_stride_or_offset() not in (*strides, offset)


def transposed_operand(op: ir.Operation, order: OpOrder, index: int = 1) -> tuple[ir.Operation, ir.Value] | None:
    """``(transpose, B read from its source)`` where a ``linalg.transpose``
    (last two dims swapped) made the matmul's B (operand ``index``: A too, for
    cuBLASLt), alone, in a buffer of its own (maybe seen through a collapse of
    batch dims), or None. Attention's Q . K^T: a kernel wrote K^T for the
    matmul alone to read. The source must have a static layout and not be
    written between the two ops."""
    b = op.operands[index]
    collapse = b.owner if _named(b.owner, "memref.collapse_shape") else None
    buffer = collapse.operands[0] if collapse is not None else b
    if not _named(buffer.owner, "memref.alloc") or (collapse and len(list(b.uses)) != 1):
        return None
    users = [use.owner for use in buffer.uses]
    transposes = [u for u in users if u.name == "linalg.transpose" and u.operands[1] == buffer]
    if len(users) != 2 or len(transposes) != 1:    # the transpose, and the matmul or collapse
        return None
    (transpose,) = transposes
    rank = ir.MemRefType(buffer.type).rank
    source = transpose.operands[0]
    if list(ir.DenseI64ArrayAttr(transpose.attributes["permutation"])) != \
            [*range(rank - 2), rank - 1, rank - 2] or transpose.parent != op.parent \
            or not static_layout(source.type) or not _untouched_between(source, transpose, op, order):
        return None
    if collapse is None:
        return transpose, source
    collapsed = _collapsed(source, collapse)
    return (transpose, collapsed) if collapsed is not None else None


def _collapsed(source: ir.Value, collapse: ir.Operation) -> ir.Value | None:
    """``source`` collapsed as ``collapse`` collapses the transposed buffer (batch
    dims only: the last two stand alone), made before ``collapse``; None where
    the source's layout cannot be collapsed so (its batch dims not contiguous)."""
    groups = [list(ir.ArrayAttr(g)) for g in ir.ArrayAttr(collapse.attributes["reassociation"])]
    groups = [[ir.IntegerAttr(d).value for d in g] for g in groups]
    source_type = ir.MemRefType(source.type)
    rank = source_type.rank
    if groups[-2:] != [[rank - 2], [rank - 1]]:
        return None
    shape, (strides, offset) = source_type.shape, source_type.get_strides_and_offset()
    sizes, new_strides = [], []
    for group in groups:
        if any(strides[d] != strides[d + 1] * shape[d + 1] for d in group[:-1]):
            return None
        sizes.append(math.prod(shape[d] for d in group))
        new_strides.append(_group_stride(group, shape, strides))
    with ir.InsertionPoint(collapse), collapse.location:
        result = ir.MemRefType.get(sizes, source_type.element_type,
                                   _collapsed_layout(source_type, offset, new_strides),
                                   source_type.memory_space)
        made = ir.Operation.create("memref.collapse_shape", results=[result], operands=[source],
                                   attributes={"reassociation": collapse.attributes["reassociation"]})
    return made.results[0]


def _group_stride(group: list[int], shape, strides) -> int:
    """A collapsed group's stride as memref.collapse_shape infers it: that of
    the group's innermost dim not of size 1 (a unit dim's stride is arbitrary)."""
    inner = [d for d in group if shape[d] != 1]
    return strides[inner[-1] if inner else group[-1]]


def _collapsed_layout(source_type: ir.MemRefType, offset: int, strides: list[int]):
    """The result layout the verifier expects: none (identity) when the source
    has none, else the strided one. A strided layout equal to the identity is
    still a different type, and the verifier rejects it (attention's
    memref<8x16x2048x128xf32> collapsed to memref<128x2048x128xf32, strided<...>>)."""
    layout = source_type.layout
    if isinstance(layout, ir.AffineMapAttr) and \
            layout.value == ir.AffineMap.get_identity(source_type.rank):
        return None
    return ir.StridedLayoutAttr.get(offset, strides)


def _named(owner, name: str) -> bool:
    return not isinstance(owner, ir.Block) and owner.name == name


def _untouched_between(source: ir.Value, first: ir.Operation, last: ir.Operation,
                       order: OpOrder) -> bool:
    """No op between ``first`` and ``last`` names ``source``'s buffer (but for views):
    what the matmul reads there is what the transpose read."""
    base = buffer_base(source)
    between_ops = order.between(first.operation, last.operation)
    if between_ops is None:
        return False
    return not any(buffer_base(v) == base
                   for between in between_ops
                   if not is_view(between)
                   for inner in [between, *nested_ops(between)] for v in inner.operands
                   if isinstance(v.type, ir.MemRefType))


def erase_transposed(transpose: ir.Operation, b: ir.Value, order: OpOrder) -> None:
    """Erase ``transpose``, the collapse of its output the matmul read (``b``,
    now unused) and the buffer it wrote."""
    buffer = transpose.operands[1]
    order.erased(transpose)
    transpose.erase()
    for value in ([b] if b != buffer else []) + [buffer]:
        if not list(value.uses):
            order.erased(value.owner.operation)
            value.owner.erase()
