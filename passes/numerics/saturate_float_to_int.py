"""xla-saturate-float-to-int: float -> integer conversion with XLA's semantics."""

from __future__ import annotations

from xlac.mlir import dialect, ir
from xlac.passes.base import ModulePass, forget_module_ops, module_ops


class SaturateFloatToInt(ModulePass):
    """Make every scalar `arith.fptosi` / `arith.fptoui` saturate: NaN -> 0,
    too large -> the integer's max, too small -> its min (0 when unsigned).

    Why: `stablehlo.convert` lowers to plain fptosi/fptoui, whose result is
    undefined (poison) for NaN and out-of-range values; LLVM then folds it to
    anything. XLA, whose outputs users compare with, saturates.
    """

    name = "xla-saturate-float-to-int"
    keeps_ops = True                 # no op added or erased unless it rewrites one (then it forgets the walk)

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name in ("arith.fptosi", "arith.fptoui") and _is_scalar_int(op.result.type):
                _saturate(op, signed=op.name == "arith.fptosi")
                forget_module_ops()


def _is_scalar_int(value_type: ir.Type) -> bool:
    return isinstance(value_type, ir.IntegerType) and value_type.width > 1


def _saturate(op: ir.Operation, signed: bool) -> None:
    arith = dialect("arith")

    source = op.operands[0]
    int_type = ir.IntegerType(op.result.type)
    float_type = source.type
    bits = int_type.width
    low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1)) if signed else (0, 2 ** bits)
    with ir.InsertionPoint.after(op), op.location:
        # [low, high) in float: both are powers of two (or 0), so exact in any float type.
        too_big = arith.cmpf(arith.CmpFPredicate.OGE, source, _float(float_type, high))
        too_small = arith.cmpf(arith.CmpFPredicate.OLT, source, _float(float_type, low))
        is_nan = arith.cmpf(arith.CmpFPredicate.UNO, source, source)
        max_value = high - 1 if signed else -1     # all ones for unsigned
        first = arith.select(too_big, _int(int_type, max_value), op.result)
        result = arith.select(too_small, _int(int_type, low), first)
        result = arith.select(is_nan, _int(int_type, 0), result)
    # Every former user now reads the saturated value; `first` keeps the raw one.
    op.result.replace_all_uses_except(result, first.owner.operation)


def _float(float_type: ir.Type, value: int) -> ir.Value:
    arith = dialect("arith")
    return arith.constant(float_type, ir.FloatAttr.get(float_type, float(value)))


def _int(int_type: ir.IntegerType, value: int) -> ir.Value:
    arith = dialect("arith")
    return arith.constant(int_type, ir.IntegerAttr.get(int_type, value))
