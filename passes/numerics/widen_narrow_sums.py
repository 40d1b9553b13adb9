"""xla-widen-narrow-sums: sums (and maxima, minima) of f16, bf16 and f8
tensors accumulated in f32, the result rounded once."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, forget_module_ops, module_ops
from xlac.passes.fusion.inline_fusions import GROUP_ATTR, KIND_ATTR


class WidenNarrowSums(ModulePass):
    """Give each single-input `stablehlo.reduce` whose body is one `add` of a
    float type narrower than f32 its operand and init converted to f32, the
    sum in f32, and one `convert` of the result back.

    Why: summed in its own type, one element after another (StableHLO's
    order, the interpreter's), 512 bf16 sums of 1,024 normal numbers are off
    by up to 4.7-6.3% of the largest sum, f16 ones by 0.5-0.8% (f64 sums as
    truth); and such a sum cannot take vector lanes, whose 16 partial sums
    each rounded to bf16 differ from that order by as much again, so it ran
    as a scalar loop, 5-10x XLA's time. XLA's CPU backend (jaxlib 0.10) sums
    bf16 in f32 but rounds each add to bf16 again, in a tree of 32-element
    windows (1.1-1.2% off), and f16 in f16 in the same tree (0.13-0.17%).
    In f32, rounded once, the sums are within 0.2% (bf16) and 0.04% (f16),
    the nearest of the three to the truth, and the f32 reduction
    schedules take it: the convert is an elementwise producer that linalg
    fuses into the reduction's loop, so the bf16 tensor is read once and
    never stored wide.

    Max and min are widened too, with no change to any result: the largest
    of the widened elements is a widened element, so its rounding back is
    exact (a NaN is the quiet NaN either way: the rounding makes every NaN
    that). In their own type, each step of the accumulator rounded back
    (without AVX-512's bf16 instructions: shifts, adds and a NaN select)
    before the next compare, a chain per element: softmax's row max at
    x86-64-v3 (512 x 1024 bf16) took as long as the row's exp.
    Products, windows (pools, cumsum: scans whose blocks round as XLA's)
    and variadic reductions keep their type.

        %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across
             dimensions = [1] : (tensor<8x1024xbf16>, tensor<bf16>) -> tensor<8xbf16>
      ->
        %wx = stablehlo.convert %x : (tensor<8x1024xbf16>) -> tensor<8x1024xf32>
        %wz = stablehlo.convert %z : (tensor<bf16>) -> tensor<f32>
        %ws = stablehlo.reduce(%wx init: %wz) applies stablehlo.add ... -> tensor<8xf32>
        %s = stablehlo.convert %ws : (tensor<8xf32>) -> tensor<8xbf16>

    The converts join the reduce's kernel (its xla.fusion_group).
    """

    name = "xla-widen-narrow-sums"
    keeps_ops = True                 # no op added or erased unless it rewrites one (then it forgets the walk)

    acts_on = frozenset({"stablehlo.reduce"})

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            combiner = widened_combiner(op) if op.name == "stablehlo.reduce" else None
            if combiner is not None:
                _widen(op, combiner)
                forget_module_ops()


# the reductions widened: their combining op
_COMBINERS = frozenset({"stablehlo.add", "stablehlo.maximum", "stablehlo.minimum"})


def widened_combiner(op: ir.Operation) -> str | None:
    """The combining op's name of a one-input reduce whose body is one add,
    maximum or minimum of its two arguments in a float type narrower than 32
    bits; else None."""
    if len(op.operands) != 2 or len(op.results) != 1:
        return None
    element = ir.RankedTensorType(op.operands[0].type).element_type
    if not isinstance(element, ir.FloatType) or ir.FloatType(element).width >= 32:
        return None
    block = op.regions[0].blocks[0]
    body = [inner.operation for inner in block.operations]
    if len(body) == 2 and body[0].name in _COMBINERS \
            and list(body[0].operands) == list(block.arguments) \
            and list(body[1].operands) == [body[0].result]:
        return body[0].name
    return None


def _retyped(value_type: ir.Type, element: ir.Type) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(ir.RankedTensorType(value_type).shape, element)


def _kernel_attributes(op: ir.Operation) -> dict[str, ir.Attribute]:
    """The reduce's kernel tags, for the ops that replace it."""
    return {name: op.attributes[name] for name in (GROUP_ATTR, KIND_ATTR) if name in op.attributes}


def _convert(value: ir.Value, to: ir.Type, tags: dict) -> ir.Value:
    return ir.Operation.create("stablehlo.convert", results=[to], operands=[value],
                               attributes=tags).result


def _widen(op: ir.Operation, combiner: str) -> None:
    f32, tags = ir.F32Type.get(), _kernel_attributes(op)
    with ir.InsertionPoint(op), op.location:
        scalar = ir.RankedTensorType.get([], f32)
        operands = [_convert(v, _retyped(v.type, f32), tags) for v in op.operands]
        names = [n if isinstance(n, str) else n.name for n in op.attributes]
        attributes = {name: op.attributes[name] for name in names}
        wide = ir.Operation.create("stablehlo.reduce", results=[_retyped(op.result.type, f32)],
                                   operands=operands, attributes=attributes, regions=1)
        block = wide.regions[0].blocks.append(scalar, scalar, arg_locs=[op.location] * 2)
        with ir.InsertionPoint(block):
            total = ir.Operation.create(combiner, results=[scalar],
                                        operands=list(block.arguments)).result
            ir.Operation.create("stablehlo.return", operands=[total])
        narrow = _convert(wide.result, op.result.type, tags)
    op.result.replace_all_uses_with(narrow)
    op.erase()
