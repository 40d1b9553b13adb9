"""xla-gpu-duplicate-cheap-producers: a cheap elementwise producer copied into each of its
loop-nest readers, so that elementwise fusion can fold it into every one (cuda)."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, nested_ops

# At most this many ops in a producer's body (its yield excluded): recomputing
# it in each reader costs less than a kernel launch and a round trip to memory.
CHEAP_BODY_OPS = 12
# At most this many copies of one producer: copies of copies multiply along a
# chain of them, and each copy is work every reader redoes.
MAX_COPIES = 4
READS_MEMORY = ("linalg.index", "tensor.extract")  # a gather: not an elementwise producer


class GpuDuplicateCheapProducers(ModulePass):
    """Give each `linalg.generic` reader of a cheap elementwise `linalg.generic`
    a copy of it of its own, right before it, when all its readers are such. A
    reader that reads it twice gets two copies: fusion takes a producer only at
    its one use.

    Why: upstream `linalg-fuse-elementwise-ops` fuses a producer only into its
    single reader, so a producer read by two loop nests (layernorm's `x - mean`
    read by the variance sum and by the normalization) stays a kernel of its
    own on the GPU, and its result a round trip through memory. XLA duplicates
    such cheap producers into every fusion that reads them; after this pass
    each copy has one reader, and elementwise fusion run again folds it in.
    Example:

        %d = linalg.generic {parallel} ins(%x, %m) { subf }
        %v = linalg.generic {reduction} ins(%d, %d) { mulf, addf }
        %n = linalg.generic {parallel} ins(%d, %r) { mulf }
        ->  %d1 = linalg.generic {parallel} ins(%x, %m) { subf }
            %v = linalg.generic {reduction} ins(%d1, %d1) ...
            %d2 = linalg.generic {parallel} ins(%x, %m) { subf }
            %n = linalg.generic {parallel} ins(%d2, %r) ...
    """

    name = "xla-gpu-duplicate-cheap-producers"
    acts_on = frozenset({"linalg.generic"})

    def run(self, module: ir.Operation) -> None:
        # last to first: a producer read by another duplicated producer is copied
        # for each of that one's copies, not shared between them (then unfusable)
        for op in reversed(nested_ops(module)):
            if op.name == "linalg.generic" and _cheap_elementwise(op):
                _copy_into_readers(op)


def _copy_into_readers(producer) -> None:
    """A copy of ``producer`` for each operand of a generic reader (fusion takes a
    producer only when that operand is its one use), when those are all its uses.

    A producer something else reads too (a loop's yield, a matmul) would stay
    a kernel and its readers recompute it: no launch saved, and the reader it
    was fused with as a second result (multi-output) would lose it."""
    uses = [(use.owner, use.operand_number) for use in producer.results[0].uses
            if use.owner.name == "linalg.generic" and use.owner.parent == producer.parent]
    if not 2 <= len(uses) <= MAX_COPIES or len(uses) != len(list(producer.results[0].uses)):
        return        # one reader: fusion takes it as it is; others too (a loop's yield): it stays a kernel
    for reader, i in uses:
        copy = producer.clone(ip=ir.InsertionPoint(reader))
        reader.operands[i] = copy.results[0]
    producer.erase()


def _cheap_elementwise(op) -> bool:
    """One result, every loop parallel, a short body of plain arithmetic."""
    if len(op.results) != 1 or not isinstance(op.results[0].type, ir.RankedTensorType):
        return False
    if any("parallel" not in str(it) for it in ir.ArrayAttr(op.attributes["iterator_types"])):
        return False
    body = list(op.regions[0].blocks[0].operations)[:-1]
    return len(body) <= CHEAP_BODY_OPS and not any(_expensive(o) for o in body)


def _expensive(op) -> bool:
    """As XLA's GPU fusion judges: f32 math (exp, rsqrt, tanh) is a few instructions
    of the special-function unit, f64 math and divisions are slow (a libdevice call)."""
    if op.name.startswith(READS_MEMORY):
        return True
    f64 = any(str(r.type) == "f64" for r in op.results)
    return f64 and (op.name.startswith("math.") or op.name in ("arith.divf", "arith.remf"))
