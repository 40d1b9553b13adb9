"""xla-verify-lowered: no input-dialect op may survive lowering."""

from __future__ import annotations

from xlac.errors import NotLoweredError
from xlac.mlir import ir
from xlac.passes.base import ModulePass, PassFailure, module_ops
from xlac.record import record

# The pass that lowers each op xlac lowers itself; upstream
# stablehlo-legalize-to-linalg lowers the rest.
LOWERED_BY = {
    "stablehlo.while": "xla-lower-control-flow", "stablehlo.if": "xla-lower-control-flow",
    "stablehlo.case": "xla-lower-control-flow", "stablehlo.sort": "xla-lower-sort",
    "stablehlo.scatter": "xla-lower-scatter", "stablehlo.fft": "xla-lower-fft",
    "stablehlo.select_and_scatter": "xla-lower-select-and-scatter",
    "stablehlo.triangular_solve": "xla-lower-linalg-ops",
    "stablehlo.cholesky": "xla-lower-linalg-ops",
    "stablehlo.batch_norm_inference": "xla-decompose-batch-norm",
    "stablehlo.batch_norm_training": "xla-decompose-batch-norm",
    "stablehlo.batch_norm_grad": "xla-decompose-batch-norm",
    "stablehlo.custom_call": "xla-lower-custom-calls",
    "stablehlo.tuple": "xla-lower-structural", "stablehlo.get_tuple_element": "xla-lower-structural",
    "stablehlo.optimization_barrier": "xla-lower-structural",
}


@record
class VerifyLowered(ModulePass):
    """Fail, at each op's location, if any op of the listed dialects is left.

    Why: a conversion that silently leaves an op behind fails much later
    with an obscure message (or not at all). This turns it into a clear
    error naming the op and the pass that lowers it; whoever runs the
    pipeline says whether that is a compiler bug or a disabled pass.
    Example: `xla-verify-lowered{dialects=stablehlo,chlo}`.
    """

    name = "xla-verify-lowered"
    keeps_ops = True                 # a check: it changes nothing, its walk is shared
    dialects: tuple[str, ...] = ("stablehlo", "chlo")

    def run(self, module: ir.Operation) -> None:
        prefixes = tuple(d + "." for d in self.dialects)
        left = [op for op in module_ops(module) if op.name.startswith(prefixes)
                and not _inside(op, prefixes)]   # a left op's region speaks with it
        for op in left:
            lowering = LOWERED_BY.get(op.name, "stablehlo-legalize-to-linalg")
            op.location.emit_error(f"'{op.name}' was not lowered ({lowering} lowers it)")
        if left:
            raise PassFailure(kind=NotLoweredError)


def _inside(op: ir.Operation, prefixes: tuple[str, ...]) -> bool:
    parent = op.parent
    while parent is not None:
        if parent.name.startswith(prefixes):
            return True
        parent = parent.parent
    return False
