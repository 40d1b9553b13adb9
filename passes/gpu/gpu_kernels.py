"""xla-gpu-kernels: linalg.generic ops on buffers -> gpu.launch loop and reduction kernels.

The CUDA target's kernels, XLA-style (see gpu_kernel_text.py for their
shapes). Each op becomes a call of a helper holding one or two gpu.launch;
``inline`` folds them into the host function. Ops these passes do not
handle (dynamic sizes, linalg.index in the region, ops nested in host
control flow) stay for the generic route: parallel loops tiled 16x16.
"""

from __future__ import annotations

import math
import re

from xlac.mlir import ir
from xlac.passes.base import ModulePass
from xlac.passes.gpu.gpu_kernel_columns import column_kernels, column_plan
from xlac.passes.gpu.gpu_kernel_emit import KernelOp, identity, loop_kernel, reduction_kernels
from xlac.passes.gpu.gpu_kernel_rows import RowKernel, RowStage, fits, row_kernel
from xlac.passes.gpu.gpu_kernel_text import Operand, Space
from xlac.passes.gpu.launch_ops import (
    constant,
    constant_text,
    element_type,
    fill_before,
    has_reduction,
    top_level_ops,
)
from xlac.passes.gpu.multi_output import FOLDED_INIT, merge_producers
from xlac.passes.gpu.row_chains import RowChain, access, row_chains, stored
from xlac.passes.helper_calls import captured_values, fresh_symbol, region_declaration, replace_with_call

_FOLDED = "xla.folded_into_reduction"
ENOUGH_THREADS = 65536           # this many outputs keep the GPU busy with a thread each
FEW_COLUMNS = 8192               # column reductions with fewer outputs get a block each
MIN_BLOCK_REDUCTION = 64         # fewer reduced elements: a thread folds them alone


class GpuKernels(ModulePass):
    """linalg.generic on buffers -> loop or reduction kernels (run after generalizing named ops)."""

    name = "xla-gpu-kernels"

    def run(self, module: ir.Operation) -> None:
        for chain in row_chains(top_level_ops(module)):
            _replace_chain(module, chain)
        merge_producers(top_level_ops(module), _block_reduced)
        # reductions first, so they find the fills of their outputs; a fill folded into
        # a reduction is marked, skipped and erased at the end (ops are re-listed after
        # each round: the Python objects of erased ops must not be touched)
        for op in _generics(module):
            if has_reduction(op):
                for fill in _replace_generic(module, op):
                    fill.attributes[_FOLDED] = ir.UnitAttr.get()
        for op in _generics(module):
            if _FOLDED not in op.attributes:
                _replace_generic(module, op)
        for op in _generics(module):
            if _FOLDED in op.attributes:
                op.erase()


def _replace_chain(module: ir.Operation, chain: RowChain) -> None:
    """The chain's ops (and the fills it folds) -> one call of a row kernel helper."""
    buffers: list[ir.Value] = []
    captures: list[ir.Value] = []
    for op in chain.ops:
        buffers += [v for v in op.operands if v not in buffers]
        captures += [v for v in captured_values(op) if v not in captures]
    if not all(constant(v) for v in captures):
        return
    name = fresh_symbol(module, "xla_gpu_rows")
    stages, bodies, text = [], {}, ""
    for index, op in enumerate(chain.ops):
        combiner = _combiner(op, 1)[0] if has_reduction(op) else ""
        if combiner is None:
            return
        stages.append(_row_stage(f"{name}_s{index}", op, buffers, combiner, chain.fills.get(index),
                                 stored(chain, index)))
        bodies[f"{name}_s{index}_body"] = op.regions[0]
        text += region_declaration(op.regions[0], f"{name}_s{index}_body", captures)
    sizes = _kernel_space(chain.ops[-1]).sizes
    operands = tuple(Operand(position, str(v.type), str(element_type(v)), (), _layout(v))
                     for position, v in enumerate(buffers))
    kernel = RowKernel(name, operands, tuple(str(c.type) for c in captures), tuple(sizes[:-1]),
                       sizes[-1], tuple(stages))
    if not fits(kernel):
        return
    erase = chain.ops[:-1] + list(chain.fills.values())
    replace_with_call(module, chain.ops[-1], row_kernel(kernel) + text, name, bodies, captures,
                      operands=buffers)
    for op in erase:
        op.erase()


def _row_stage(body: str, op: ir.Operation, buffers: list[ir.Value], combiner: str,
               fill: ir.Operation | None, store: bool) -> RowStage:
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    rank = maps[-1].n_dims
    ins = list(op.operands)[:-1]
    return RowStage(body, tuple(buffers.index(v) for v in ins),
                    tuple(access(m, rank) for m in maps[:-1]),
                    buffers.index(list(op.operands)[-1]),
                    tuple(tuple(str(e) for e in m.results) for m in maps),
                    combiner, constant_text(fill.operands[0]) if fill is not None else "", store)


def _generics(module: ir.Operation) -> list[ir.Operation]:
    return [op for op in top_level_ops(module) if op.name == "linalg.generic"]


def _replace_generic(module: ir.Operation, op: ir.Operation) -> list[ir.Operation]:
    """Replace ``op`` by a kernel if it can; the fills folded into it (erased)."""
    space = _kernel_space(op)
    if space is None:
        return []
    inputs, outputs = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    operands = list(op.operands)
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    reduction = space.reduction
    captures = captured_values(op)
    name = fresh_symbol(module, "xla_gpu_kernel")
    kernel_operands = tuple(
        Operand(i, str(v.type), str(element_type(v)), tuple(str(e) for e in m.results), _layout(v))
        for i, (v, m) in enumerate(zip(operands, maps)))
    combiner, pointwise = _combiner(op, outputs)
    block_reduction = _block_reduction(space, combiner, _reads_rows(op))
    if pointwise and not block_reduction:
        return []        # only the block reduction stores pointwise outputs
    folding = [v for k, v in enumerate(operands[inputs:]) if k not in pointwise]
    reads_output = any(v in operands[:inputs] for v in operands[inputs:])
    fills = _folded_fills(op, folding) if any(reduction) and not reads_output else []
    init = tuple(constant_text(f.operands[0]) for f in fills)
    if FOLDED_INIT in op.attributes:      # a fill multi_output.py folded already
        init = (str(op.attributes[FOLDED_INIT]),)
    kernel = KernelOp(name, kernel_operands, inputs, space, tuple(str(c.type) for c in captures),
                      combiner or "", init, pointwise)
    columns = column_plan(kernel) if combiner else None
    if columns is not None:       # inputs contiguous along the outputs: columns on threads
        text = column_kernels(kernel, columns)
    else:
        text = reduction_kernels(kernel) if block_reduction else loop_kernel(kernel)
    text += region_declaration(op.regions[0], f"{name}_body", captures)
    replace_with_call(module, op, text, name, {f"{name}_body": op.regions[0]}, captures)
    return fills


def _kernel_space(op: ir.Operation) -> Space | None:
    """The iteration space of a generic these kernels take: static buffers, constant
    scalars and captures (a value read on the host, a pad value, is moved into a
    kernel by xla-gpu-wrap-host-code instead), no linalg.index; else None."""
    inputs, _ = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    operands = list(op.operands)
    if not all(_static_memref(v) for v in operands[inputs:]) or _uses_index(op):
        return None
    if not all(_static_memref(v) or (_scalar(v) and constant(v)) for v in operands[:inputs]):
        return None
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    reduction = tuple("reduction" in str(t) for t in ir.ArrayAttr(op.attributes["iterator_types"]))
    sizes = _loop_sizes(maps, operands, len(reduction))
    if sizes is None or 0 in sizes or not all(constant(v) for v in captured_values(op)):
        return None
    return Space(tuple(sizes), reduction)


def _folded_fills(op: ir.Operation, outputs: list[ir.Value]) -> list[ir.Operation]:
    """The constant fills of a reduction's outputs before it (the init values; other
    kernels may come between, fill_before), so the reduction kernel starts from the
    constant: one launch and one pass over memory fewer."""
    fills = [fill_before(op, output) for output in outputs]
    if any(fill is None for fill in fills):
        return []
    distinct = all(a != b for i, a in enumerate(fills) for b in fills[i + 1:])
    return fills if distinct else []


def _static_memref(value: ir.Value) -> bool:
    """Static sizes and layout: a view with a computed offset cannot be a bare-pointer
    kernel argument (xla-gpu-wrap-host-code moves its computation into the kernel)."""
    return (isinstance(value.type, ir.MemRefType) and ir.MemRefType(value.type).has_static_shape
            and "?" not in str(value.type))


def _layout(value: ir.Value) -> tuple[int, tuple[int, ...]] | None:
    """A static memref's (offset, strides) in elements (what vector accesses check)."""
    if not _static_memref(value):
        return None
    strides, offset = ir.MemRefType(value.type).get_strides_and_offset()
    return offset, tuple(strides)


def _scalar(value: ir.Value) -> bool:
    return isinstance(value.type, (ir.IntegerType, ir.FloatType, ir.IndexType))


def _uses_index(op: ir.Operation) -> bool:
    found = []

    def visit(inner):
        if inner.name == "linalg.index":
            found.append(inner)
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    return bool(found)


def _loop_sizes(maps, operands, rank: int) -> list[int] | None:
    """Each loop dim's size, read from an operand dim it indexes directly."""
    sizes = [None] * rank
    for affine_map, value in zip(maps, operands):
        if not _static_memref(value):
            continue
        shape = ir.MemRefType(value.type).shape
        for expr, extent in zip(affine_map.results, shape):
            text = str(expr)
            if text.startswith("d") and text[1:].isdigit() and sizes[int(text[1:])] is None:
                sizes[int(text[1:])] = extent
    return None if None in sizes else sizes


def _combiner(op: ir.Operation, outputs: int) -> tuple[str | None, tuple[int, ...]]:
    """The op folding each element into the one reduced output, if it is one with an
    identity; and the outputs stored at every point (a multi-output fusion's).

    The region must yield ``combine(x, out)`` with ``out`` used nowhere else:
    then threads may fold disjoint parts from the identity and be combined. A
    pointwise output is indexed by every loop and its block argument unread.
    """
    block = op.regions[0].blocks[0]
    args = list(block.arguments)
    inputs = len(args) - outputs
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    rank = maps[0].n_dims
    identity_map = str(ir.AffineMap.get_identity(rank))
    pointwise = tuple(k for k in range(outputs) if has_reduction(op)
                      and str(maps[inputs + k]) == identity_map and not list(args[inputs + k].uses))
    reduced = [k for k in range(outputs) if k not in pointwise]
    if len(reduced) != 1:
        return None, ()
    out = args[inputs + reduced[0]]
    yielded = list(block.operations)[-1].operands[reduced[0]]
    owner = yielded.owner
    if isinstance(owner, ir.Block) or len(list(owner.operands)) != 2:
        return None, ()
    combining = owner.operation
    uses = list(out.uses)
    if out not in list(combining.operands) or len(uses) != 1 or list(combining.operands).count(out) != 1:
        return None, ()
    if identity(combining.name, str(out.type)) is None:
        return None, ()
    return combining.name, pointwise


def _block_reduced(op: ir.Operation) -> bool:
    """Whether a single-output reduction becomes a block reduction (what a
    producer merged into it needs: that kernel stores pointwise outputs)."""
    _, outputs = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    space = _kernel_space(op) if outputs == 1 else None
    return space is not None and _block_reduction(space, _combiner(op, outputs)[0], _reads_rows(op))


def _block_reduction(space: Space, combiner: str | None, rows: bool) -> bool:
    """A block per output (tree-folded) rather than a thread per output (sequential).
    Rows read contiguously (``rows``) always take blocks: a thread per row would have a
    warp read 32 rows a row apart, 32 transactions per load (layer norm's 65,536 rows)."""
    if combiner is None or not any(space.reduction):
        return False
    outputs, reduced = math.prod(space.parallel_sizes), math.prod(space.reduction_sizes)
    if (outputs >= ENOUGH_THREADS and not rows) or reduced < MIN_BLOCK_REDUCTION:
        return False
    return space.reduction[-1] or outputs < FEW_COLUMNS


def _reads_rows(op: ir.Operation) -> bool:
    """Whether the innermost loop dim is reduced and every input indexed by it reads
    it as its own unit-stride innermost dim (a row reduction, not a column one)."""
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    inputs, _ = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    iterators = [str(t) for t in ir.ArrayAttr(op.attributes["iterator_types"])]
    if not iterators or "reduction" not in iterators[-1]:
        return False
    inner, reading = f"d{len(iterators) - 1}", False
    for value, affine_map in zip(list(op.operands)[:inputs], maps):
        results = [str(e) for e in affine_map.results]
        if not any(re.search(rf"\b{inner}\b", r) for r in results):
            continue
        layout = _layout(value)
        if results[-1] != inner or layout is None or layout[1][-1] != 1:
            return False
        reading = True
    return reading
