"""An argmax's narrow values widened in registers (xla-lane-arg-reductions).

A bool, 8- or 16-bit integer, bf16 or f16 argmax runs its combiner on 32-bit
lanes: the incoming values are extended as they are read (after their fused
producers), the running winners stay wide through the loop and the fold, and
are narrowed once, when stored. Extending keeps every comparison the combiner
makes: floats are extended exactly (NaNs stay NaNs, -0.0 stays -0.0), integers
zero-extended where the combiner orders them unsigned (a bool: jax compares
i1 unsigned), sign-extended where it orders them signed; one that orders them
both ways is left narrow. The value written back is one of the inputs, so the
truncation is exact.
"""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.cpu.arg_combiner import ArgReduction
from xlac.record import record

_UNSIGNED = {6, 7, 8, 9}                      # arith.cmpi ult, ule, ugt, uge
_SIGNED = {2, 3, 4, 5}
_SELECTS = ("arith.select", "arith.maxsi", "arith.minsi", "arith.maxui", "arith.minui")


@record(mutable=True)
class Widened:
    """The lane type of the values (``wide``), the casts to and from it, and the
    combiner's values that carry one (those get the wide type when cloned)."""
    narrow: ir.Type
    wide: ir.Type
    ext: str
    trunc: str
    carries: set


def widened(found: ArgReduction) -> Widened | None:
    """How ``found``'s values widen, or None where they stay as they are."""
    t = found.acc_value.type
    carries = {found.acc_value, found.value}
    for o in found.combiner:
        if o.name in _SELECTS and any(v in carries for v in list(o.operands)[-2:]):
            carries.add(o.results[0])
    if isinstance(t, (ir.BF16Type, ir.F16Type)):
        return Widened(t, ir.F32Type.get(), "arith.extf", "arith.truncf", carries)
    if not isinstance(t, ir.IntegerType) or ir.IntegerType(t).width >= 32:
        return None
    orders = set()
    for o in found.combiner:
        if o.name == "arith.cmpi" and any(v in carries for v in o.operands):
            orders.add(ir.IntegerAttr(o.attributes["predicate"]).value)
        elif o.name.startswith(("arith.max", "arith.min")):
            orders.add(6 if o.name.endswith("ui") else 2)
    if orders & _UNSIGNED and orders & _SIGNED:
        return None
    ext = "arith.extui" if orders & _UNSIGNED else "arith.extsi"
    return Widened(t, ir.IntegerType.get_signless(32), ext, "arith.trunci", carries)


def cast(b, widen: Widened | None, value, to_wide: bool):
    """``value`` (a scalar or a vector of the narrow type) cast to the wide
    one, or back; as it is without widening."""
    if widen is None:
        return value
    element = widen.wide if to_wide else widen.narrow
    t = ir.VectorType.get(ir.VectorType(value.type).shape, element) \
        if isinstance(value.type, ir.VectorType) else element
    return b.one(widen.ext if to_wide else widen.trunc, t, [value])
