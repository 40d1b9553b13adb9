"""xla-check-ranked: refuse unranked tensors before anything lowers them."""

from __future__ import annotations

from xlac.errors import UnsupportedOpError
from xlac.mlir import ir
from xlac.passes.base import ModulePass, PassFailure, module_ops

# They only hand values on: the op that made an unranked value is reported.
_PASSING_VALUES_ON = ("func.return", "stablehlo.return", "func.call")


class CheckRanked(ModulePass):
    """Report every op with an unranked tensor (``tensor<*xf32>``), at its location.

    Why: xlac compiles programs whose tensors have a rank (static or `?` dims);
    upstream's chlo legalization aborts the process on some unranked ops
    (chlo.sinh, chlo.lgamma, ...), so they are refused first, all at once.
    Example: `xla-check-ranked`.
    """

    name = "xla-check-ranked"
    keeps_ops = True                 # a check: it changes nothing, its walk is shared

    def run(self, module: ir.Operation) -> None:
        found = [op for op in module_ops(module) if op.name not in _PASSING_VALUES_ON
                 and any(isinstance(value.type, ir.UnrankedTensorType)
                        for value in [*op.operands, *op.results])]
        for op in found:
            op.location.emit_error(f"'{op.name}' has an unranked tensor (tensor<*x...>): "
                                   "xlac compiles tensors of known rank only")
        if found:
            raise PassFailure(kind=UnsupportedOpError)
