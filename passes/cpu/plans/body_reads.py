"""What a loop body's tensor reads (``tensor.extract``) become once the
elementwise schedule vectorizes them: contiguous loads, or gathers."""

from __future__ import annotations

from xlac.mlir import ir

_VIEWS = ("tensor.expand_shape", "tensor.collapse_shape", "tensor.cast")


def gather_safe(read: ir.Operation, innermost: int) -> bool:
    """Whether the vectorizer's form of ``read`` (a ``tensor.extract`` in a
    loop body) is right after bufferization: a contiguous load (its last
    index the innermost loop's own, the others not moving with it), or a
    gather from a tensor that is no slice.

    Why: the vectorizer's gathers index the tensor as if it were dense,
    row * width + column, and a slice (a roll's shifted rows) becomes a
    strided view of the larger buffer: the gather read the wrong elements."""
    return contiguous(read, innermost) or not reads_a_slice(read)


def stepping_loop(extents: list[int] | None, loops: int) -> int:
    """The loop the vectorizer steps a body's lanes along, of ``loops`` loops
    of these ``extents``: the last one longer than 1 (a 256 x 1 stretch of
    columns, xla-peel-roll-columns' edge, steps along the rows once its unit
    dim is collapsed)."""
    if not extents:
        return loops - 1
    longer = [loop for loop, extent in enumerate(extents) if extent != 1]
    return longer[-1] if longer else loops - 1


def reads_a_slice(read: ir.Operation) -> bool:
    """Whether ``read``'s tensor is a slice (through reshapes) of another:
    after bufferization, a strided view."""
    source = read.operands[0]
    while not isinstance(source.owner, ir.Block) and source.owner.operation.name in _VIEWS:
        source = source.owner.operation.operands[0]
    return not isinstance(source.owner, ir.Block) and \
        source.owner.operation.name == "tensor.extract_slice"


def contiguous(read: ir.Operation, innermost: int) -> bool:
    """Whether the vectorizer reads ``read``'s elements as one contiguous vector."""
    indices = list(read.operands)[1:]
    if not indices or not _steps_with(indices[-1], innermost):
        return False
    return not any(_moves_with(index, innermost) for index in indices[:-1])


def _steps_with(value: ir.Value, loop: int) -> bool:
    """Whether ``value`` is loop ``loop``'s index, or it plus a constant (a
    stretch of a roll's columns, xla-split-roll-columns): one step a lane."""
    owner = value.owner
    if not isinstance(owner, ir.Block) and owner.operation.name == "arith.addi":
        left, right = owner.operation.operands
        return _is_loop_index(left, loop) and _is_constant(right)
    return _is_loop_index(value, loop)


def _is_constant(value: ir.Value) -> bool:
    return not isinstance(value.owner, ir.Block) and value.owner.operation.name == "arith.constant"


def _is_loop_index(value: ir.Value, loop: int) -> bool:
    owner = value.owner
    return not isinstance(owner, ir.Block) and owner.operation.name == "linalg.index" and \
        ir.IntegerAttr(owner.operation.attributes["dim"]).value == loop


def _moves_with(value: ir.Value, loop: int, depth: int = 0) -> bool:
    """Whether ``value`` may change with loop ``loop``'s index (unknowns may)."""
    owner = value.owner
    if isinstance(owner, ir.Block):                 # a body argument (an element) moves
        return owner.owner.operation.name == "linalg.generic"
    op = owner.operation
    if op.parent.name != "linalg.generic":
        return False                                # defined outside the loops
    if op.name == "linalg.index":
        return ir.IntegerAttr(op.attributes["dim"]).value == loop
    if op.name == "arith.constant":
        return False
    if depth > 16 or not op.name.startswith("arith."):
        return True
    return any(_moves_with(operand, loop, depth + 1) for operand in op.operands)
