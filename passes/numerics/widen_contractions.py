"""xla-widen-contractions: bf16/f16 dots and convolutions computed in f32."""

from __future__ import annotations

from dataclasses import dataclass

from xlac.mlir import ir
from xlac.passes.base import ModulePass, nested_ops

_CONTRACTIONS = ("stablehlo.dot_general", "stablehlo.convolution")
_NARROW = ("bf16", "f16")


@dataclass(frozen=True)
class WidenContractions(ModulePass):
    """Give each bf16/f16 `dot_general` and `convolution` f32 operands and an f32
    accumulator, and round the result back once.

    Why: XLA's CPU backend computes these in f32 (no CPU has a bf16 dot for
    general shapes), so its results, which users compare with, are sums
    rounded once; accumulating in bf16 loses about three digits on a
    1024-long dot. The f32 contraction also takes the f32 matmul and
    convolution schedules, where a bf16 one would run as scalar loops.
    Example: `dot_general(bf16, bf16) -> bf16` becomes `convert` to f32 of
    both operands, the f32 `dot_general`, and one `convert` back to bf16.
    """

    name = "xla-widen-contractions"

    def run(self, module: ir.Operation) -> None:
        for op in nested_ops(module):
            if op.name in _CONTRACTIONS and _narrow(op):
                _widen(op)


def _element(value_type: ir.Type) -> str:
    return str(ir.RankedTensorType(value_type).element_type)


def _narrow(op: ir.Operation) -> bool:
    types = [v.type for v in (*op.operands, *op.results)]
    return (all(isinstance(t, ir.RankedTensorType) for t in types)
            and {_element(t) for t in types} <= set(_NARROW))


def _f32(value_type: ir.Type) -> ir.Type:
    tensor = ir.RankedTensorType(value_type)
    return ir.RankedTensorType.get(tensor.shape, ir.F32Type.get())


def _convert(value: ir.Value, to: ir.Type) -> ir.Value:
    return ir.Operation.create("stablehlo.convert", results=[to], operands=[value]).result


def _attribute_name(named) -> str:
    return named if isinstance(named, str) else named.name


def _widen(op: ir.Operation) -> None:
    with ir.InsertionPoint(op), op.location:
        operands = [_convert(v, _f32(v.type)) for v in op.operands]
        attributes = {name: op.attributes[name] for name in map(_attribute_name, op.attributes)}
        wide = ir.Operation.create(op.name, results=[_f32(op.result.type)], operands=operands,
                                   attributes=attributes)
        narrow = _convert(wide.result, op.result.type)
    op.result.replace_all_uses_with(narrow)
    op.erase()
