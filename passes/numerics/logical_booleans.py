"""xla-logical-booleans: boolean add and multiply as the or and and they are."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, forget_module_ops, module_ops

# StableHLO's arithmetic on booleans (the interpreter's, XLA's) -> the logical op
_LOGICAL = {"stablehlo.add": "stablehlo.or", "stablehlo.multiply": "stablehlo.and"}


class LogicalBooleans(ModulePass):
    """Rewrite `add` on i1 into `or` and `multiply` into `and`, reduction
    bodies included.

    Why: for StableHLO (and XLA) a PRED sum is a logical or: true + true is
    true. Everything downstream takes i1 arithmetic as arithmetic modulo 2:
    the constant folder of canonicalize (`true + true` folded to false, so
    a program gave another answer with constants than with the same values
    as arguments) and `stablehlo-legalize-to-linalg` (`arith.addi`, an xor:
    `reduce` of booleans with `add`, jnp.any as a sum, came out wrong). So
    it runs first, before any folding.

        %s = stablehlo.add %a, %b : tensor<4xi1>
      ->
        %s = stablehlo.or %a, %b : tensor<4xi1>
    """

    name = "xla-logical-booleans"
    keeps_ops = True                 # no op added or erased unless it rewrites one (then it forgets the walk)

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name in _LOGICAL and _boolean(op):
                _replace(op, _LOGICAL[op.name])
                forget_module_ops()


def _boolean(op: ir.Operation) -> bool:
    element = getattr(op.results[0].type, "element_type", op.results[0].type)
    return isinstance(element, ir.IntegerType) and ir.IntegerType(element).width == 1


def _replace(op: ir.Operation, name: str) -> None:
    with ir.InsertionPoint(op), op.location:
        logical = ir.Operation.create(name, results=[op.results[0].type],
                                      operands=list(op.operands))
    op.results[0].replace_all_uses_with(logical.results[0])
    op.erase()
