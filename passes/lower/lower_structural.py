"""xla-lower-structural: remove StableHLO ops that only group or order values."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, PassFailure, forget_module_ops, module_ops, nested_ops

_TUPLE_OPS = ("stablehlo.tuple", "stablehlo.get_tuple_element")


class LowerStructural(ModulePass):
    """Fold tuples away, drop optimization barriers and dot algorithm hints.

    Why: upstream stablehlo-legalize-to-linalg lowers none of these, and
    none of them computes anything. `get_tuple_element(tuple(a, b))[1]` is
    `b` (while/if/case cannot carry tuples, the verifier rejects them, so
    these two ops are the only holders). `optimization_barrier` only orders
    scheduling, which a sequential CPU program keeps anyway. A dot_general
    `algorithm` lets a backend use cheaper arithmetic; the linalg lowering
    refuses it, and computing in the operand types is at least as exact.
    A tuple that crosses the function boundary is an error. Example:

        %t = stablehlo.tuple %a, %b : tuple<tensor<f32>, tensor<i32>>
        %x = stablehlo.get_tuple_element %t[1] : (...) -> tensor<i32>
      becomes: uses of %x read %b.
    """

    name = "xla-lower-structural"
    keeps_ops = True                 # most programs have no barrier and no tuple: the walk is shared

    def run(self, module: ir.Operation) -> None:
        tuples = erased = False
        for op in reversed(module_ops(module)):
            name = op.name
            if name == "stablehlo.optimization_barrier":
                _forward_operands(op)
                erased = True
            elif name == "stablehlo.dot_general" and "algorithm" in op.attributes:
                del op.attributes["algorithm"]
            elif name in _TUPLE_OPS:
                tuples = True
        if erased or tuples:
            forget_module_ops()
        if tuples:               # forwarding a barrier makes no tuple: none, nothing to fold
            _fold_tuples(module)
            _check_no_tuples(module)


def _forward_operands(op: ir.Operation) -> None:
    for result, operand in zip(op.results, op.operands):
        result.replace_all_uses_with(operand)
    op.erase()


def _fold_tuples(module: ir.Operation) -> None:
    """Read every element straight from its tuple, then drop unused tuples."""
    # Operands are defined before their uses, so one forward sweep also
    # folds chains like get_tuple_element(get_tuple_element(tuple(tuple(...)))).
    for op in nested_ops(module):
        if op.name == "stablehlo.get_tuple_element":
            source = op.operands[0].owner
            if not isinstance(source, ir.Block) and source.name == "stablehlo.tuple":
                index = ir.IntegerAttr(op.attributes["index"]).value
                op.results[0].replace_all_uses_with(source.operands[index])
                op.erase()
    # Outer tuples come after the tuples they hold: erase from the back.
    for op in reversed(nested_ops(module)):
        if op.name == "stablehlo.tuple" and not list(op.results[0].uses):
            op.erase()


def _check_no_tuples(module: ir.Operation) -> None:
    left = [op for op in nested_ops(module) if op.name in _TUPLE_OPS]
    for op in left:
        op.location.emit_error(f"'{op.name}' cannot be lowered: the tuple reaches a function "
                               "argument or result; pass and return its elements instead")
    if left:
        raise PassFailure(module.location, f"{len(left)} tuple op(s) could not be folded away")
