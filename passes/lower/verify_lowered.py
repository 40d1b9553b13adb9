"""xla-verify-lowered: no input-dialect op may survive lowering."""

from __future__ import annotations

from dataclasses import dataclass

from xlac.mlir import ir
from xlac.passes.base import ModulePass, PassFailure, nested_ops


@dataclass(frozen=True)
class VerifyLowered(ModulePass):
    """Fail, at each op's location, if any op of the listed dialects is left.

    Why: a conversion that silently leaves an op behind fails much later
    with an obscure message (or not at all). This turns it into a clear
    error naming the op. Example: `xla-verify-lowered{dialects=stablehlo,chlo}`.
    """

    name = "xla-verify-lowered"
    dialects: tuple[str, ...] = ("stablehlo", "chlo")

    def run(self, module: ir.Operation) -> None:
        prefixes = tuple(d + "." for d in self.dialects)
        left = [op for op in nested_ops(module) if op.name.startswith(prefixes)]
        for op in left:
            op.location.emit_error(f"'{op.name}' was not lowered; this is an xlac bug, "
                                   "please report it with the input program")
        if left:
            raise PassFailure()
