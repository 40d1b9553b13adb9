"""Complex constants as xla-complex-as-pairs reads them: a splat's two parts,
and whether a scalar constant's parts are the same number."""

from __future__ import annotations

import re

from xlac.mlir import ir

_SPLAT = re.compile(r"dense<\(([^,()]+),([^,()]+)\)>")


def constant_parts(op: ir.Operation) -> tuple[str, str] | None:
    """The printed real and imaginary part of a splat complex constant. Read
    from the op's text: the bindings cannot hand out a complex dense attribute."""
    found = _SPLAT.search(str(op))
    return (found.group(1).strip(), found.group(2).strip()) if found else None


def equal_parts(value: ir.Value) -> str | None:
    """The printed part of a complex scalar constant (through 0-d broadcasts)
    whose two parts are the same number, or None."""
    owner = _defining_op(value)
    while owner is not None and owner.name == "stablehlo.broadcast_in_dim" \
            and ir.RankedTensorType(owner.operands[0].type).rank == 0:
        owner = _defining_op(owner.operands[0])
    if owner is None or owner.name != "stablehlo.constant":
        return None
    parts = constant_parts(owner)
    if parts is None or float(parts[0]) != float(parts[1]) or parts[0].startswith("-") != \
            parts[1].startswith("-"):
        return None
    return parts[0]


def _defining_op(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation
