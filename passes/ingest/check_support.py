"""xla-check-support: list every op xlac cannot compile, before lowering."""

from __future__ import annotations

from xlac.errors import UnsupportedOpError
from xlac.mlir import ir
from xlac.passes.base import ModulePass, PassFailure, module_ops, text_of
from xlac.passes.ingest.check_shape_assertions import takes_dynamic_dims
from xlac.passes.ingest.custom_calls import DECIDED_PER_SHAPE, custom_call_reason
from xlac.passes.ingest.support import unsupported_reason
from xlac.record import record


@record
class CheckSupport(ModulePass):
    """Report every op the target cannot compile, each at its own location.

    Why: users hit "failed to legalize" one op at a time elsewhere; this check
    runs before any lowering and names all of them at once, with the reason,
    so one compile tells the whole story. Example: `xla-check-support{target=cpu}`.
    """

    name = "xla-check-support"
    keeps_ops = True                 # a check: it changes nothing, its walk is shared
    target: str = "cpu"

    def run(self, module: ir.Operation) -> None:
        problems = []
        dynamic = takes_dynamic_dims(module)
        for op in module_ops(module):
            if op.name == "stablehlo.custom_call":
                if dynamic and _target(op) in DECIDED_PER_SHAPE:
                    continue                    # decided when a call's shapes specialize it
                reason = custom_call_reason(_target(op), self.target)
            else:
                reason = unsupported_reason(op.name, _types(op.operands), _types(op.results))
            if reason:
                problems.append((op, reason))
        for op, reason in problems:
            op.location.emit_error(f"'{op.name}' is not supported on {self.target}: {reason}")
        if problems:
            raise PassFailure(kind=UnsupportedOpError)


def _types(values) -> list[str]:
    return [text_of(value.type) for value in values]



def _target(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["call_target_name"]).value
