"""xla-additive-reductions: a reduction that subtracts each element adds its negation."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops, text_of


class AdditiveReductions(ModulePass):
    """Rewrite a `linalg.generic` reduction whose body yields `out - v` (out:
    the output's block argument) to yield `out + (-v)`.

    Why: a sum of negated elements (a gradient's `reduce(negate(x))`) is fused
    by linalg into one body, and canonicalization folds `out + (-v)` into
    `out - v`; the vectorizer knows no combining kind for a subtraction, so
    the reduction's schedule failed ("Attempted to vectorize, but failed") and
    it ran as scalar loops on one core: the batch-norm statistics' gradients
    of a ResNet-18 training step, 25M elements each. IEEE 754 defines
    `a - b` as `a + (-b)`, so the results are the same bits.

        %r = arith.subf %out, %v : f32        ->     %n = arith.negf %v : f32
        linalg.yield %r : f32                        %r = arith.addf %out, %n : f32
    """

    name = "xla-additive-reductions"

    acts_on = frozenset({"linalg.generic"})

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name == "linalg.generic" and "reduction" in text_of(op.attributes["iterator_types"]):
                _add_negations(op)


def _add_negations(op: ir.Operation) -> None:
    block = op.regions[0].blocks[0]
    outputs = list(block.arguments)[len(block.arguments) - len(op.results):]
    done = list(block.operations)[-1]
    for value, out in zip(list(done.operands), outputs):
        sub = value.owner
        if not isinstance(sub, ir.OpView) or sub.operation.name != "arith.subf" \
                or sub.operands[0] != out or len(list(value.uses)) != 1:
            continue
        with ir.InsertionPoint(sub), sub.location:
            flags = {"fastmath": sub.attributes["fastmath"]} if "fastmath" in sub.attributes else {}
            negated = ir.Operation.create("arith.negf", results=[value.type],
                                          operands=[sub.operands[1]], attributes=flags)
            added = ir.Operation.create("arith.addf", results=[value.type],
                                        operands=[out, negated.results[0]], attributes=flags)
        value.replace_all_uses_with(added.results[0])
        sub.operation.erase()
