"""xla-speculate-branch-reads: a branch between tensor reads in a loop body
becomes a select of both reads, each read clamped in bounds."""

from __future__ import annotations

from xlac.mlir import dialect, ir
from xlac.passes.base import ModulePass, module_ops
from xlac.passes.cpu.plans.body_reads import contiguous, reads_a_slice
from xlac.passes.cpu.plans.schedule_plan import loop_extents

# What a branch may hold to be run unconditionally: no op whose result, or
# whose fault, depends on the branch being taken (no division: a zero divisor
# is undefined), no memory but the reads this pass clamps.
_SPECULATABLE_PREFIXES = ("arith.", "math.")
_UNSAFE = ("arith.divsi", "arith.divui", "arith.remsi", "arith.remui", "arith.ceildivsi",
           "arith.ceildivui", "arith.floordivsi")
MAX_SPECULATED_OPS = 24        # both branches' ops together: beyond, the work wasted outweighs


class SpeculateBranchReads(ModulePass):
    """In each `linalg.generic` body, turn an `scf.if` whose branches only
    compute and read tensors (`tensor.extract`) into both branches' ops, run
    unconditionally, and an `arith.select` of their results. A read whose
    index might be out of bounds when its branch is not taken gets the index
    clamped into the tensor (`arith.maxsi`/`arith.minsi`); an index that is a
    loop's own (`linalg.index`) within the dim is left as it is.

    Why: stablehlo-legalize-to-linalg lowers a concatenate to such a branch
    per element (one read per input, the index shifted by the earlier
    inputs' sizes), fused into the consumers' loop (ViT's class token before
    its patches; `jnp.roll`). No vector schedule takes a body with a region
    in it: the loop ran as scalar code. As a select of two clamped reads it
    is an elementwise body with reads at computed places, which the
    elementwise schedule vectorizes (contiguous loads where the innermost
    loop walks the last dim).

    Example:
        %r = scf.if %first -> (f32) {
          %a = tensor.extract %cls[%i, %j] : tensor<4x1xf32>
          scf.yield %a : f32
        } else {
          %k = arith.subi %j, %c1 : index
          %b = tensor.extract %rest[%i, %k] : tensor<4x196xf32>
          scf.yield %b : f32
        }
      becomes
        %jc = arith.minsi (arith.maxsi %j, %c0), %c0     // %cls has one column
        %a = tensor.extract %cls[%i, %jc] : tensor<4x1xf32>
        %k = arith.subi %j, %c1 : index
        %kc = arith.minsi (arith.maxsi %k, %c0), %c195
        %b = tensor.extract %rest[%i, %kc] : tensor<4x196xf32>
        %r = arith.select %first, %a, %b : f32
    """

    name = "xla-speculate-branch-reads"

    def run(self, module: ir.Operation) -> None:
        # only the generics are kept: a kept object of an op inside a branch
        # would outlive the branch's erasure (see _speculate_if)
        for generic in [op for op in module_ops(module) if op.name == "linalg.generic"]:
            _speculate_body(generic)


def _speculate_body(generic: ir.Operation) -> None:
    extents = loop_extents(generic)
    body = generic.regions[0].blocks[0]
    for branch in [op.operation for op in body.operations if op.operation.name == "scf.if"]:
        _speculate_if(branch, extents)


def _speculate_if(branch: ir.Operation, extents: list[int] | None) -> bool:
    """Replace ``branch`` by its branches' ops and a select, when it may be.

    No Python object of an op inside ``branch`` outlives its erasure: the
    bindings find ops by address, and a stale one taken for a later op at the
    same address crashed the interpreter."""
    if len(branch.regions) != 2 or not branch.results or \
            not all(len(region.blocks) == 1 for region in branch.regions):
        return False
    if not all(_speculate_inner(block, extents) for block in _blocks(branch)):
        return False                    # inner branches first: they must go too
    moved = [op for block in _blocks(branch) for op in _ops(block) if op.name != "scf.yield"]
    if len(moved) > MAX_SPECULATED_OPS or not all(_speculatable(op) for op in moved):
        return False
    if not all(_stays_right(op, extents) for op in moved if op.name == "tensor.extract"):
        return False
    for op in moved:
        op.move_before(branch)
        if op.name == "tensor.extract":
            _clamp_indices(op, extents)
    then_values, else_values = (list(_ops(block)[-1].operands) for block in _blocks(branch))
    arith = dialect("arith")
    with ir.InsertionPoint(branch), branch.location:
        chosen = [arith.select(branch.operands[0], a, b) for a, b in zip(then_values, else_values)]
    for result, value in zip(branch.results, chosen):
        result.replace_all_uses_with(value)
    branch.erase()
    return True


def _speculate_inner(block: ir.Block, extents: list[int] | None) -> bool:
    return all(_speculate_if(op, extents) for op in _ops(block) if op.name == "scf.if")


def _blocks(op: ir.Operation) -> list[ir.Block]:
    return [region.blocks[0] for region in op.regions]


def _ops(block: ir.Block) -> list[ir.Operation]:
    return [op.operation for op in block.operations]


def _stays_right(read: ir.Operation, extents: list[int] | None) -> bool:
    """Whether ``read``, clamped, still vectorizes right: a contiguous load
    (its last index the innermost loop's own, in bounds: no clamp on it),
    or a gather from a tensor that is no slice (``gather_safe``)."""
    if extents is None:
        return False
    if not read.operands[0].type.shape:
        return True                      # a 0-d tensor's one element: the same in every lane
    innermost = len(extents) - 1
    last = read.operands[len(read.operands) - 1]
    in_bounds = _within(last, read.operands[0].type.shape[-1], extents)
    return (in_bounds and contiguous(read, innermost)) or not reads_a_slice(read)


def _speculatable(op: ir.Operation) -> bool:
    if op.name == "tensor.extract":
        return isinstance(op.operands[0].type, ir.RankedTensorType) and \
            op.operands[0].type.has_static_shape
    return op.name.startswith(_SPECULATABLE_PREFIXES) and op.name not in _UNSAFE \
        and not op.regions


def _clamp_indices(read: ir.Operation, extents: list[int] | None) -> None:
    """Clamp each index of ``read`` that is not surely within its dim."""
    shape = read.operands[0].type.shape
    for position, size in enumerate(shape):
        index = read.operands[1 + position]
        if _within(index, size, extents):
            continue
        arith = dialect("arith")
        with ir.InsertionPoint(read), read.location:
            low = arith.constant(ir.IndexType.get(), 0)
            high = arith.constant(ir.IndexType.get(), size - 1)
            read.operands[1 + position] = arith.minsi(arith.maxsi(index, low), high)


def _within(index: ir.Value, size: int, extents: list[int] | None) -> bool:
    """Whether ``index`` is surely in [0, size): a constant in range, or the
    loop index of a loop no longer than the dim."""
    owner = index.owner
    if isinstance(owner, ir.Block):
        return False
    owner = owner.operation
    if owner.name == "arith.constant":
        value = ir.IntegerAttr(owner.attributes["value"]).value
        return 0 <= value < size
    if owner.name == "linalg.index" and extents is not None:
        return extents[ir.IntegerAttr(owner.attributes["dim"]).value] <= size
    if owner.name == "arith.addi":          # a stretch of columns' index, offset
        index, offset = owner.operands
        offset = offset.owner
        return not isinstance(offset, ir.Block) and offset.operation.name == "arith.constant" and \
            _shifted_within(index, ir.IntegerAttr(offset.operation.attributes["value"]).value, size, extents)
    return False


def _shifted_within(index: ir.Value, offset: int, size: int, extents: list[int] | None) -> bool:
    """Whether loop index ``index`` plus ``offset`` is surely in [0, size)."""
    owner = index.owner
    if isinstance(owner, ir.Block) or owner.operation.name != "linalg.index" or extents is None:
        return False
    extent = extents[ir.IntegerAttr(owner.operation.attributes["dim"]).value]
    return offset >= 0 and extent + offset <= size
