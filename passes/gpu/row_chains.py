"""Chains of row kernels that one block per row can run in a single pass.

Softmax is ``max(x)``, ``exp(x - max)``, ``sum(e)``, ``e / sum``; layer norm is
``sum(x)``, ``sum((x - mean)^2)``, ``(x - mean) * rsqrt(var) * scale + bias``.
On buffers each is a run of generics over the same [rows..., row] space whose
reductions fold the innermost dimension: as separate kernels they read the
row 3 times (softmax moved 1,342 MB for a 537 MB roofline at 8192x8192 f32).
A block per row that keeps the row on chip (shared memory) runs them all:
the row read once, each reduction's value broadcast to the block, the last
result written once (gpu_kernel_rows.py emits it; this module finds them).

A run is consecutive generics (constant fills of their reduction outputs and
allocations may come between) with the same sizes, reductions only over the
innermost dimension and one output each. A buffer the run writes is read in
it only as written (point for point, or as the row's value), and is stored
only when something after the run may read it: not when it is an allocation
nothing else uses, nor when a later op of the run overwrites it the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xlac.mlir import ir
from xlac.passes.gpu.launch_ops import buffer_base, constant_fill_of, fill_before, has_reduction

_RESHAPES = ("memref.expand_shape", "memref.collapse_shape")  # views the run may pass and see through
MAX_ROW = 16384                  # elements; a row longer keeps the separate kernels
_ELEMENTS = ("f16", "bf16", "f32", "f64", "i8", "i16", "i32", "i64")


@dataclass
class RowChain:
    ops: list[ir.Operation]                       # the run, in order
    fills: dict[int, ir.Operation] = field(default_factory=dict)  # reduction index -> folded fill


def row_chains(ops: list[ir.Operation]) -> list[RowChain]:
    """The runs among a block's ops (in order) worth one kernel: a reduction and an op
    after it reading its result."""
    chains, current, sizes = [], [], None
    for op in ops:
        shape = _row_space(op)
        if shape is not None and (sizes is None or shape == sizes):
            current.append(op)
            sizes = shape
            continue
        if _passable(op, current):
            continue
        chains += _worth(current)
        current, sizes = ([op], shape) if shape is not None else ([], None)
    chains += _worth(current)
    return chains


def _passable(op: ir.Operation, current: list[ir.Operation]) -> bool:
    """An op the run may pass: an allocation, or a fill of a buffer the run does not
    read before the reduction it starts (checked when the run is planned)."""
    if not current:
        return False
    if op.name == "memref.alloc" or op.name in _RESHAPES:
        return True
    return op.name == "linalg.generic" and len(list(op.operands)) == 2 and \
        constant_fill_of(op, list(op.operands)[1])


def _worth(ops: list[ir.Operation]) -> list[RowChain]:
    while ops and not has_reduction(ops[0]):
        ops = ops[1:]          # leading elementwise ops stay loop kernels of their own
    # the longest run with a reduction before its last op and that op reading its value
    for end in range(len(ops), 1, -1):
        run = ops[:end]
        if any(has_reduction(op) for op in run[:-1]) and _reads_any_reduction(run[-1], run[:-1]):
            chain = _plan(run)
            return [chain] if chain is not None else []
    return []


def _reads_any_reduction(op: ir.Operation, before: list[ir.Operation]) -> bool:
    reduced = {_output(r) for r in before if has_reduction(r)}
    return any(v in reduced for v in _inputs(op))


def _plan(ops: list[ir.Operation]) -> RowChain | None:
    """The chain with its folded fills, or None where a buffer's use breaks the model."""
    chain = RowChain(list(ops))
    _unify_reshapes(_span(ops))
    written: dict[ir.Value, str] = {}        # buffer -> "row" or "point"
    for index, op in enumerate(ops):
        rank = _rank(op)
        for value, amap in zip(_inputs(op), _maps(op)):
            kind = access(amap, rank)
            if value in written and written[value] != kind:
                return None
            if value not in written and any(buffer_base(value) == buffer_base(w) and value != w
                                            for w in written):
                return None               # a view of what the run wrote: not kept on chip
        out = _output(op)
        if any(buffer_base(out) == buffer_base(w) and out != w for w in written):
            return None
        if has_reduction(op):
            fill = fill_before(op, out)
            if fill is not None:
                chain.fills[index] = fill
            written[out] = "row"
        else:
            written[out] = "point"
    if not _only_folded_fills_between(ops, chain):
        return None
    elements = {_element(_output(op)) for op in ops if has_reduction(op)}
    return chain if len(elements) == 1 else None


def _only_folded_fills_between(ops: list[ir.Operation], chain: RowChain) -> bool:
    """What the run passes runs before the kernel: only allocations and the fills
    it folds (their values become start values; nothing between reads them)."""
    folded = list(chain.fills.values())
    between = [o for o in _span(ops) if o not in ops]
    return all(o.name == "memref.alloc" or o.name in _RESHAPES or o in folded for o in between)


def _span(ops: list[ir.Operation]) -> list[ir.Operation]:
    """The block's ops from the run's first to its last."""
    block_ops = [o.operation for o in ops[0].block.operations]
    return block_ops[block_ops.index(ops[0]):block_ops.index(ops[-1]) + 1]


def _unify_reshapes(ops: list[ir.Operation]) -> None:
    """Bufferization re-makes a reshape of a buffer for each op that takes it (softmax
    over [2, 3, 64] reads its row maxima and sums through two equal expand_shapes):
    one value for each, so the run sees the same buffer."""
    first: dict[str, ir.Value] = {}
    for op in ops:
        for index, value in enumerate(op.operands):
            if isinstance(value.owner, ir.Block) or value.owner.name not in _RESHAPES:
                continue
            view = value.owner
            key = (view.name, str(view.attributes["reassociation"]), str(value.type))
            same = [v for k, v in first.items() if k[:3] == key and v.owner.operands[0] == view.operands[0]]
            if same and same[0] != value:
                op.operands[index] = same[0]
            elif not same:
                first[(*key, len(first))] = value


def _row_space(op: ir.Operation) -> tuple[int, ...] | None:
    """The sizes of a generic this chain can take, or None."""
    if op.name != "linalg.generic":
        return None
    inputs, outputs = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    if outputs != 1 or inputs == 0 or not all(_static(v) for v in op.operands):
        return None
    kinds = [str(t) for t in ir.ArrayAttr(op.attributes["iterator_types"])]
    if any("reduction" in k for k in kinds[:-1]) or len(kinds) < 2:
        return None
    maps = _maps(op)
    rank = len(kinds)
    want = "row" if "reduction" in kinds[-1] else "point"
    if access(maps[-1], rank) != want:
        return None
    sizes = _sizes(op)
    if sizes is None or sizes[-1] > MAX_ROW or 0 in sizes:
        return None
    if any(_element(v) not in _ELEMENTS for v in op.operands):
        return None
    return sizes


def _sizes(op: ir.Operation) -> tuple[int, ...] | None:
    out = _output(op)
    shape = list(ir.MemRefType(out.type).shape)
    if has_reduction(op):
        inputs = [v for v, m in zip(_inputs(op), _maps(op)) if access(m, _rank(op)) == "point"]
        if not inputs:
            return None
        return tuple(ir.MemRefType(inputs[0].type).shape)
    return tuple(shape)


def access(amap: ir.AffineMap, rank: int) -> str:
    """How a map reads the [rows..., row] space: "point", "row" (the row's value), or
    "other" (a read from global memory, a bias along the row)."""
    results = [str(e) for e in amap.results]
    dims = [f"d{i}" for i in range(rank)]
    if results == dims:
        return "point"
    if results == dims[:-1]:
        return "row"
    return "other"


def _static(value: ir.Value) -> bool:
    return (isinstance(value.type, ir.MemRefType) and ir.MemRefType(value.type).has_static_shape
            and "?" not in str(value.type))


def _element(value: ir.Value) -> str:
    return str(ir.MemRefType(value.type).element_type)


def _rank(op: ir.Operation) -> int:
    return len(ir.ArrayAttr(op.attributes["iterator_types"]))


def _maps(op: ir.Operation) -> list[ir.AffineMap]:
    return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]


def _inputs(op: ir.Operation) -> list[ir.Value]:
    return list(op.operands)[:-1]


def _output(op: ir.Operation) -> ir.Value:
    return list(op.operands)[-1]


def stored(chain: RowChain, index: int) -> bool:
    """Whether what op ``index`` writes must reach memory: not when a later op of the
    chain overwrites it the same way, nor when it is an allocation only the chain
    (and the fills it folds) uses."""
    out = _output(chain.ops[index])
    if any(_output(later) == out and has_reduction(later) == has_reduction(chain.ops[index])
           for later in chain.ops[index + 1:]):
        return False
    mine = [*chain.ops, *chain.fills.values()]

    def internal(user: ir.Operation) -> bool:
        if user in mine or user.name == "memref.dealloc":
            return True
        return user.name in _RESHAPES and all(use.owner in mine for use in user.results[0].uses)

    base = buffer_base(out)
    if isinstance(base.owner, ir.Block) or base.owner.name != "memref.alloc":
        return True
    return not all(internal(use.owner) for use in base.uses)
