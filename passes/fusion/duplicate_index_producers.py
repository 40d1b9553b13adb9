"""xla-duplicate-index-producers: an iota (a generic computed from its loop
indices alone) read by several loop nests copied into each of them, so that
elementwise fusion folds it into every one as `linalg.index` (cpu)."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops

# At most this many ops in the producer's body (its yield excluded): an index,
# its cast and a little affine arithmetic (an iota of a reshaped or offset dim).
MAX_BODY_OPS = 8


class DuplicateIndexProducers(ModulePass):
    """Give each `linalg.generic` reader of an index-only `linalg.generic`
    (no inputs, every loop parallel, a body of `linalg.index` and
    arithmetic: a lowered `stablehlo.iota`) a copy of it of its own, right
    before it, when all its uses are such readers.

    Why: an argmax and an argmin of one array (or two argmaxes of one shape)
    each read an iota of the array's shape; CSE makes them one, and upstream
    `linalg-fuse-elementwise-ops` fuses a producer only into its single
    reader. The iota stayed an array written to memory and both reductions
    read it as an input, not as `linalg.index`, which the argmax matcher
    (passes/cpu/arg_combiner.py) requires: both ran as scalar loops. With a
    copy each, fusion folds the iota into both reductions and each gets its
    16-lane vector loop; the array is not written at all. The indices are the
    same numbers: the results are bit for bit the same.

        %i = linalg.generic {parallel} outs(%e) { linalg.index 0; index_cast }
        %a:2 = linalg.generic {reduction} ins(%x, %i) ...     // argmax
        %b:2 = linalg.generic {reduction} ins(%x, %i) ...     // argmin
      ->
        %i1 = linalg.generic ... ; %a:2 = linalg.generic ins(%x, %i1) ...
        %i2 = linalg.generic ... ; %b:2 = linalg.generic ins(%x, %i2) ...
    """

    name = "xla-duplicate-index-producers"
    acts_on = frozenset({"linalg.generic"})

    def run(self, module: ir.Operation) -> None:
        for op in [o for o in module_ops(module) if o.name == "linalg.generic" and _index_only(o)]:
            _copy_into_readers(op)


_RESHAPES = ("tensor.collapse_shape", "tensor.expand_shape")


def _readers(value, chain: tuple, found: list) -> bool:
    """(reader, operand number, reshapes on the way) for each use of ``value``,
    through reshapes (xla-flatten-reductions collapses an argmax's dims);
    False where a use is neither a generic nor a reshape."""
    for use in value.uses:
        owner = use.owner
        if owner.name in _RESHAPES:
            if not _readers(owner.results[0], (*chain, owner), found):
                return False
        elif owner.name == "linalg.generic":
            found.append((owner, use.operand_number, chain))
        else:
            return False
    return True


def _copy_into_readers(producer) -> None:
    """A copy of ``producer`` (and of the reshapes between) before each generic
    operand that reads it, when there are two or more and nothing else uses it
    (a result of the kernel stays as it is: it is written anyway)."""
    uses: list = []
    if not _readers(producer.results[0], (), uses) or len(uses) < 2 \
            or any(reader.parent != producer.parent for reader, _, _ in uses):
        return
    for reader, i, chain in uses:
        here = ir.InsertionPoint(reader)
        value = producer.clone(ip=here).results[0]
        for reshape in chain:
            copy = reshape.clone(ip=here)
            copy.operands[0] = value
            value = copy.results[0]
        reader.operands[i] = value
    depth = {r: k for _, _, chain in uses for k, r in enumerate(chain)}   # erased deepest first
    for reshape in sorted(depth, key=lambda r: -depth[r]):
        reshape.erase()
    producer.erase()


def _scalar_constant(value) -> bool:
    """A 0-d tensor constant (a lowered broadcast's scalar: select_and_scatter's init)."""
    owner = value.owner
    return isinstance(value.type, ir.RankedTensorType) and ir.RankedTensorType(value.type).rank == 0 \
        and not isinstance(owner, ir.Block) and owner.operation.name == "arith.constant"


def _index_only(op) -> bool:
    """No inputs but 0-d constants, one tensor result, every loop parallel, a short body of
    `linalg.index` and arith ops that reads no block argument."""
    if len(op.results) != 1 or not isinstance(op.results[0].type, ir.RankedTensorType):
        return False
    inputs = list(op.operands)[:-1]
    if not all(_scalar_constant(v) for v in inputs):   # its init alone, or splat scalars
        return False
    if any("parallel" not in str(it) for it in ir.ArrayAttr(op.attributes["iterator_types"])):
        return False
    block = op.regions[0].blocks[0]
    body = list(block.operations)[:-1]
    if len(body) > MAX_BODY_OPS or len(list(block.arguments[len(inputs)].uses)):
        return False
    return all(o.name == "linalg.index" or o.name.startswith("arith.") for o in body)
