"""The regions jax.export writes as functions: a custom call names its body
(``called_computations``: a comparator, a reducer) where the StableHLO op
that replaces it holds the body as a region."""

from __future__ import annotations

from xlac.mlir import ir

_RETURNS = ("stablehlo.return", "func.return")


def body_function(module: ir.Operation, name: str) -> ir.Operation | None:
    """The function ``name`` if it can be a region's body: a func.func of one
    block ending in stablehlo.return (jax.jit(f).lower) or func.return (jax.export)."""
    try:
        found = ir.SymbolTable(module)[name].operation
    except KeyError:
        return None
    blocks = list(found.regions[0].blocks) if found.name == "func.func" else []
    if len(blocks) != 1 or list(blocks[0].operations)[-1].name not in _RETURNS:
        return None
    return found


def copy_body_into(op: ir.Operation, function: ir.Operation, ip: ir.InsertionPoint) -> None:
    """Make a copy of ``function``'s body the (empty) first region of ``op``,
    ending in stablehlo.return. A copy, not a call: a call of it would leave the
    inliner a func.func ending in stablehlo.return, which crashed it."""
    copy = function.clone(ip=ip)
    copy.regions[0].blocks[0].append_to(op.regions[0])
    copy.erase()
    end = list(op.regions[0].blocks[0].operations)[-1]
    if end.name == "func.return":                  # a region of stablehlo ends in its own return
        ir.Operation.create("stablehlo.return", operands=list(end.operands), ip=ir.InsertionPoint(end))
        end.erase()
