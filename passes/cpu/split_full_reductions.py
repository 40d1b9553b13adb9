"""xla-split-full-reductions: an exact reduction of a whole array as rows, then
the rows' results: a vector schedule, not the serial one."""

from __future__ import annotations

import math

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops, text_of
from xlac.passes.cpu.collapse_reduction_loops import discardable_attributes
from xlac.passes.cpu.plans.schedule_plan import REDUCTION_LANES
from xlac.passes.outline import clone_ops

# integer combiners (exact, associative, commutative) and their identities,
# as a function of the bit width
_IDENTITY = {
    "arith.ori": lambda bits: 0, "arith.xori": lambda bits: 0, "arith.addi": lambda bits: 0,
    "arith.andi": lambda bits: -1, "arith.muli": lambda bits: 1,
    "arith.maxui": lambda bits: 0, "arith.minui": lambda bits: -1,
    "arith.maxsi": lambda bits: -(1 << (bits - 1)) if bits > 1 else -1,
    "arith.minsi": lambda bits: (1 << (bits - 1)) - 1 if bits > 1 else 0,
}
_SPLIT_LENGTH = 32          # the 1-D schedule's rows: a length 32 divides needs no split


class SplitFullReductions(ModulePass):
    """An integer `linalg.generic` reducing every loop of a static array to a
    scalar with one exact combiner (`or`, `and`, `add`, min/max, ...), whose
    length 32 does not divide but whose innermost dim fills a 16-lane vector, becomes
    a reduction of the rows (the leading dims kept, the combiner's identity as
    their init), then the same reduction of the rows' results.

    Why: xla-collapse-reduction-loops makes a full reduction one loop, and the
    1-D schedule splits it in 32 rows only where 32 divides its length; any
    other length runs the serial schedule: one thread, a 16-lane accumulator
    in memory, masked reads. A `while` loop's convergence test (jax's continued
    fractions: `any(|d - 1| >= eps)` over 405 x 648) was 40% of betainc's
    trip at x86-64-v3. The rows schedule runs on the threads, in registers.
    The combiners are exact: any grouping gives the same result.

        %r = linalg.generic {iterators = [reduction, reduction]} ins(%m : tensor<405x648xi1>)
            outs(%init : tensor<i1>) { ori }
      ->
        %rows = linalg.generic {iterators = [parallel, reduction]} ins(%m)
            outs(fill(false) : tensor<405xi1>) { ori }
        %r = linalg.generic {iterators = [reduction]} ins(%rows) outs(%init) { ori }
    """

    name = "xla-split-full-reductions"

    def run(self, module: ir.Operation) -> None:
        for op in [op for op in module_ops(module) if op.name == "linalg.generic"]:
            combiner = _split_combiner(op)
            if combiner is not None:
                _split(op, combiner)


def _split_combiner(op: ir.Operation) -> str | None:
    """The combiner of ``op`` where it is a full integer reduction to split."""
    if len(op.results) != 1 or len(op.operands) < 2:
        return None
    iterators = [text_of(t) for t in ir.ArrayAttr(op.attributes["iterator_types"])]
    if len(iterators) < 2 or any("reduction" not in t for t in iterators):
        return None
    inputs, init = list(op.operands)[:-1], op.operands[-1].type
    if not all(isinstance(v.type, ir.RankedTensorType) and v.type.has_static_shape for v in inputs) \
            or not (isinstance(init, ir.RankedTensorType) and init.rank == 0):
        return None
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    identity = ir.AffineMap.get_identity(len(iterators))
    if any(m != identity for m in maps[:-1]) or maps[-1].results:
        return None
    if not isinstance(init.element_type, ir.IntegerType):
        return None
    shape = ir.RankedTensorType(inputs[0].type).shape
    if shape[-1] < REDUCTION_LANES or math.prod(shape) % _SPLIT_LENGTH == 0:
        return None
    block = op.regions[0].blocks[0]
    body = [inner.operation for inner in block.operations]
    out = block.arguments[len(inputs)]
    combine, yielded = body[-2:] if len(body) >= 2 else (body[0], body[0])
    if combine.name not in _IDENTITY or list(yielded.operands) != [combine.results[0]] \
            or list(combine.operands).count(out) != 1:
        return None
    if any(inner.name.startswith(("linalg.index", "tensor.", "memref.")) or len(inner.regions)
           or (inner is not combine and out in list(inner.operands)) for inner in body):
        return None
    return combine.name


def _split(op: ir.Operation, combiner: str) -> None:
    source = ir.RankedTensorType(op.operands[0].type)
    element = ir.RankedTensorType(op.results[0].type).element_type
    inputs = list(op.operands)[:-1]
    rank = source.rank
    with ir.InsertionPoint(op), op.location:
        rows_type = ir.RankedTensorType.get(source.shape[:-1], element)
        identity = _IDENTITY[combiner](ir.IntegerType(element).width)
        reduction = ir.Attribute.parse("#linalg.iterator_type<reduction>")
        parallel = ir.Attribute.parse("#linalg.iterator_type<parallel>")
        value = ir.Operation.create("arith.constant", results=[element],
                                    attributes={"value": ir.IntegerAttr.get(element, identity)}).result
        empty = ir.Operation.create("tensor.empty", results=[rows_type], operands=[]).result
        fill = ir.Operation.create("linalg.fill", results=[rows_type], operands=[value, empty], regions=1,
                                   attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1])})
        block = fill.regions[0].blocks.append(element, element)
        with ir.InsertionPoint(block):
            ir.Operation.create("linalg.yield", operands=[block.arguments[0]])
        dims = [ir.AffineDimExpr.get(d) for d in range(rank)]
        rows = _generic(op, inputs + [fill.result], rows_type,
                        [ir.AffineMap.get(rank, 0, dims)] * len(inputs) + [ir.AffineMap.get(rank, 0, dims[:-1])],
                        [parallel] * (rank - 1) + [reduction], True)
        final = _generic(op, [rows.result, op.operands[-1]], op.results[0].type,
                         [ir.AffineMap.get_identity(rank - 1), ir.AffineMap.get(rank - 1, 0, [])],
                         [reduction] * (rank - 1), False)
    op.results[0].replace_all_uses_with(final.result)
    op.erase()


def _generic(op: ir.Operation, operands: list, result_type, maps: list, iterators: list,
             whole: bool) -> ir.Operation:
    """A generic with ``op``'s body (cloned; its combiner alone unless ``whole``)
    and xla-fuse's marks."""
    generic = ir.Operation.create(
        "linalg.generic", results=[result_type], operands=operands, regions=1,
        attributes={"indexing_maps": ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                    "iterator_types": ir.ArrayAttr.get(iterators),
                    "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(operands) - 1, 1]),
                    **{a.name: a.attr for a in discardable_attributes(op)}})
    old = op.regions[0].blocks[0]
    body = [inner.operation for inner in old.operations]
    block = generic.regions[0].blocks.append(*[_element(v) for v in operands])
    args = list(block.arguments)
    out = old.arguments[len(old.arguments) - 1]
    if whole:                                       # the rows: the whole body
        mapping = dict(zip(old.arguments, args))
    else:                                           # the rows' results: combined as they are
        combine = body[-2]
        value = next(v for v in combine.operands if v != out)
        mapping = {value: args[0], out: args[1]}
        body = body[-2:]
    with ir.InsertionPoint(block):
        clone_ops(body, mapping)
    return generic


def _element(value: ir.Value) -> ir.Type:
    return ir.RankedTensorType(value.type).element_type
