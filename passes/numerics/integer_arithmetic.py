"""xla-integer-arithmetic: integer power by square-and-multiply over every bit."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops
from xlac.passes.helper_calls import (
    elementwise_helper_text,
    fresh_symbol,
    predicate_type,
    replace_with_call,
)


class IntegerArithmetic(ModulePass):
    """Lower integer `power` by square-and-multiply over every bit of the
    exponent, all elementwise.

    Why: upstream lowers integer `power` with six squarings (exponents below
    64), but modulo 2^w an odd base has a period up to 2^(w-2): 5^65535 is
    52429 as ui16 (the interpreter's, XLA's), not 40909; an unsigned
    exponent past 2^(w-1) was also taken as negative (5^255 : ui8 gave 0).
    The helper squares once per bit of the exponent, all elementwise.
    """

    name = "xla-integer-arithmetic"

    acts_on = frozenset({"stablehlo.power"})

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name == "stablehlo.power" and _wide_integer(op):
                name = fresh_symbol(module, "xla_integer_power")
                replace_with_call(module, op, _power_text(op, name), name)


def _integer(op: ir.Operation) -> ir.IntegerType | None:
    element = getattr(op.results[0].type, "element_type", op.results[0].type)
    return ir.IntegerType(element) if isinstance(element, ir.IntegerType) else None


def _wide_integer(op: ir.Operation) -> bool:
    element = _integer(op)
    return element is not None and element.width >= 8


def _power_text(op: ir.Operation, name: str) -> str:
    """Square-and-multiply over every bit of the exponent; a negative
    (signed) exponent keeps upstream's lowering, which the interpreter agrees with."""
    tensor = str(op.results[0].type)
    element = _integer(op)
    boolean = predicate_type(tensor)
    lines = [f"%one = stablehlo.constant dense<1> : {tensor}",
             f"%zero = stablehlo.constant dense<0> : {tensor}"]
    result, base, exponent = "%one", "%b", "%e"
    for i in range(element.width):
        lines += [f"%bit{i} = stablehlo.and {exponent}, %one : {tensor}",
                  f"%odd{i} = stablehlo.compare NE, %bit{i}, %zero : ({tensor}, {tensor}) -> {boolean}",
                  f"%times{i} = stablehlo.multiply {result}, {base} : {tensor}",
                  f"%r{i} = stablehlo.select %odd{i}, %times{i}, {result} : {boolean}, {tensor}",
                  f"%sq{i} = stablehlo.multiply {base}, {base} : {tensor}",
                  f"%e{i} = stablehlo.shift_right_logical {exponent}, %one : {tensor}"]
        result, base, exponent = f"%r{i}", f"%sq{i}", f"%e{i}"
    if not element.is_unsigned:
        lines += [f"%negative = stablehlo.compare LT, %e, %zero : ({tensor}, {tensor}) -> {boolean}",
                  f"%upstream = stablehlo.power %b, %e : {tensor}",
                  f"%result = stablehlo.select %negative, %upstream, {result} : {boolean}, {tensor}"]
        result = "%result"
    return elementwise_helper_text(name, ["%b", "%e"], tensor, lines, result)
