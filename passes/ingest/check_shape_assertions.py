"""xla-check-shape-assertions: jax.export's `custom_call @shape_assertion`, decided at compile time."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, PassFailure, module_ops

TARGET = "shape_assertion"


class CheckShapeAssertions(ModulePass):
    """Erase each `stablehlo.custom_call @shape_assertion(%pred, %dims...)` whose
    predicate has folded to true; fail, with its `error_message` (`{0}`,
    `{1}`... the dims' values), where it has folded to false; keep it while
    the entry still takes `?` dims (a specialization decides it), and fail
    where it has not folded in a program without them.

    Why: jax.export writes these checks of the symbolic dims (e.g. `b >= 1`)
    into every shape-polymorphic program; XLA decides them once the shapes
    are refined (`CheckShapeAssertionsPass` in jaxlib's
    refine_polymorphic_shapes), and xlac refused every such program as
    calling code outside it. Run after stablehlo-refine-shapes and canonicalize.
    Example: `custom_call @shape_assertion(%true, %c3) {error_message = "..."}` goes away.
    """

    name = "xla-check-shape-assertions"

    acts_on = frozenset({"stablehlo.custom_call"})

    def run(self, module: ir.Operation) -> None:
        assertions = [op for op in module_ops(module) if is_shape_assertion(op)]
        if not assertions:
            return
        dynamic = takes_dynamic_dims(module)
        for op in assertions:
            holds = _constant_value(op.operands[0]) if len(op.operands) else None
            if holds is None and dynamic:
                continue                        # decided per shape, when it is specialized
            if holds is None:
                raise PassFailure(op.location, "a shape assertion of jax.export could not be "
                                               "decided at compile time: " + _message(op))
            if not holds:
                raise PassFailure(op.location, "shape assertion failed: " + _message(op))
            op.erase()


def is_shape_assertion(op: ir.Operation) -> bool:
    return (op.name == "stablehlo.custom_call"
            and ir.StringAttr(op.attributes["call_target_name"]).value == TARGET)


def _message(op: ir.Operation) -> str:
    """``error_message`` with ``{k}`` replaced by the value of operand k + 1 (where known)."""
    text = ir.StringAttr(op.attributes["error_message"]).value if "error_message" in op.attributes \
        else "(no error_message)"
    for k, value in enumerate(list(op.operands)[1:]):
        known = _constant_value(value)
        text = text.replace(f"{{{k}}}", str(known) if known is not None else "?")
    return text


def _constant_value(value: ir.Value) -> int | None:
    """The integer (booleans as 0/1) a scalar constant ``value`` holds, else None."""
    owner = value.owner
    owner = getattr(owner, "operation", owner)       # an OpView, or a Block (an argument)
    if not isinstance(owner, ir.Operation) or owner.name not in ("stablehlo.constant", "arith.constant"):
        return None
    try:
        elements = ir.DenseIntElementsAttr(owner.attributes["value"])
    except ValueError:
        return None
    if not elements.is_splat and len(elements) != 1:
        return None
    return int(elements.get_splat_value().value) if elements.is_splat else int(elements[0])


def takes_dynamic_dims(module: ir.Operation) -> bool:
    """Does a function of ``module`` still take or make a tensor with ``?`` dims?"""
    for op in module.regions[0].blocks[0].operations:
        if op.operation.name != "func.func":
            continue
        ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
        if any(isinstance(t, ir.RankedTensorType) and not t.has_static_shape
               for t in [*ftype.inputs, *ftype.results]):
            return True
    return False
