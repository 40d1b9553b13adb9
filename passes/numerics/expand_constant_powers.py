"""xla-expand-constant-powers: x^c for c a constant 1, 2, -1 or a half
integer in [-1.5, 1.5] as multiplies, divides and a square root."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops
from xlac.passes.helper_calls import (
    elementwise_helper_text,
    fresh_symbol,
    predicate_type,
    replace_with_call,
)

_FLOATS = ("f32", "f64")        # narrower types: pow rounds once from f32, these would round in f16

# exponent -> the body, from %x, %s = sqrt(x) made +0 at -0 (as pow) and %one;
# and the value at x = -inf, where sqrt is NaN but pow is not ("inf": +inf)
_BODIES = {
    1.0: ("%x", None),
    2.0: ("stablehlo.multiply %x, %x", None),
    -1.0: ("stablehlo.divide %one, %x", None),
    0.5: ("%s", "inf"),
    -0.5: ("stablehlo.divide %one, %s", "0.0"),
    1.5: ("stablehlo.multiply %ax, %s", "inf"),
    -1.5: ("stablehlo.divide %one, %m", "0.0"),
}
_INFINITY = {"f32": "0x7F800000", "f64": "0x7FF0000000000000"}     # MLIR spells inf in hex


class ExpandConstantPowers(ModulePass):
    """Replace f32/f64 `stablehlo.power` whose exponent is a splat constant
    of 1, 2, -1, +-0.5 or +-1.5 by the same value computed with `multiply`,
    `divide` and `sqrt`.

    Why: `power` lowers to `math.powf`, which LLVM calls libm's `powf` for,
    one element at a time even in a vector loop: the N-body model's
    softening `(r^2 + eps)^-1.5` was two million `powf` calls per call and
    nearly all of its time. IEEE's special cases are kept: x^0.5 is +0 at
    -0 (sqrt gives -0) and +inf at -inf (sqrt gives NaN), x^-1.5 is +inf at
    +-0 and +0 at -inf; a negative finite x gives NaN as pow does. Each
    result is within 2 ulp of pow's (sqrt, multiply and divide round once
    each), except where x * sqrt(x) leaves the normal range first (f32: x
    past 6e25 or below 1e-25, powers of -1.5 there are subnormal or 0).
    """

    name = "xla-expand-constant-powers"

    acts_on = frozenset({"stablehlo.power"})

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name == "stablehlo.power" and _float(op):
                exponent = _splat_exponent(op.operands[1])
                if exponent in _BODIES:
                    name = fresh_symbol(module, "xla_constant_power")
                    kernel = _kernel_tags(op)
                    _, added = replace_with_call(module, op, _power_text(op, exponent, name), name)
                    _tag(added[name], kernel)


_KERNEL_TAGS = ("xla.fusion_group", "xla.fusion_kind")     # xla-inline-fusions' names for a kernel's ops


def _kernel_tags(op: ir.Operation) -> dict[str, ir.Attribute]:
    return {tag: op.attributes[tag] for tag in _KERNEL_TAGS if tag in op.attributes}


def _tag(helper: ir.Operation, kernel: dict[str, ir.Attribute]) -> None:
    """The power's kernel tags on the ops replacing it (constants aside), so
    that, inlined, they are still that kernel's ops: xla-outline-fusions then
    sees the square root and divide that xla-fuse kept out of a bigger loop
    (the N-body force's `(r^2 + eps)^-1.5`, read per x, y, z: three times the
    square roots and divides when linalg fused it into that reduction)."""
    for inner in helper.regions[0].blocks[0].operations:
        if inner.operation.name not in ("func.return", "stablehlo.constant"):
            for tag, value in kernel.items():
                inner.operation.attributes[tag] = value


def _float(op: ir.Operation) -> bool:
    element = getattr(op.results[0].type, "element_type", None)
    return str(element) in _FLOATS


def _splat_exponent(value: ir.Value) -> float | None:
    """The exponent's one value, where it is a splat constant (perhaps broadcast)."""
    owner = value.owner
    if not isinstance(owner, ir.Block) and owner.name == "stablehlo.broadcast_in_dim":
        owner = owner.operands[0].owner
    if isinstance(owner, ir.Block) or owner.name != "stablehlo.constant":
        return None
    attr = owner.attributes["value"]
    if not isinstance(attr, ir.DenseFPElementsAttr) or not attr.is_splat:
        return None
    return ir.FloatAttr(attr.get_splat_value()).value


def _power_text(op: ir.Operation, exponent: float, name: str) -> str:
    tensor = str(op.results[0].type)
    boolean = predicate_type(tensor)
    body, at_minus_inf = _BODIES[exponent]
    if at_minus_inf == "inf":
        at_minus_inf = _INFINITY[str(op.results[0].type.element_type)]
    lines = [f"%one = stablehlo.constant dense<1.0> : {tensor}",
             f"%zero = stablehlo.constant dense<0.0> : {tensor}",
             f"%root = stablehlo.sqrt %x : {tensor}",
             f"%s = stablehlo.add %root, %zero : {tensor}",             # -0 -> +0
             f"%ax = stablehlo.abs %x : {tensor}",
             f"%m = stablehlo.multiply %ax, %s : {tensor}"]
    result = body if body.startswith("%") else "%power"
    if not body.startswith("%"):
        lines.append(f"%power = {body} : {tensor}")
    if at_minus_inf is not None:
        lines += [f"%finite = stablehlo.is_finite %x : ({tensor}) -> {boolean}",
                  f"%negative = stablehlo.compare LT, %x, %zero : ({tensor}, {tensor}) -> {boolean}",
                  f"%infinite = stablehlo.not %finite : {boolean}",
                  f"%minus_inf = stablehlo.and %infinite, %negative : {boolean}",
                  f"%there = stablehlo.constant dense<{at_minus_inf}> : {tensor}",
                  f"%result = stablehlo.select %minus_inf, %there, {result} : {boolean}, {tensor}"]
        result = "%result"
    return elementwise_helper_text(name, ["%x", "%e"], tensor, lines, result)
