"""What an index value is always a multiple of: column offsets of a matmul
tile's reads (xla-pack-invariant-panels reads B in w-column panels only
where each offset is a multiple of w)."""

from __future__ import annotations

import math

from xlac.mlir import ir


def divisor(value: ir.Value) -> int:
    """A number ``value`` (an index) is always a multiple of; 0: it is zero."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        op = owner.owner.operation
        if op.name == "scf.for" and value == owner.arguments[0]:
            return math.gcd(divisor(op.operands[0]), divisor(op.operands[2]))
        return 1
    op = owner.operation
    if op.name == "arith.constant":
        return abs(ir.IntegerAttr(op.attributes["value"]).value)
    if op.name in ("arith.addi", "arith.muli"):
        a, b = (divisor(v) for v in op.operands)
        return math.gcd(a, b) if op.name == "arith.addi" else a * b
    if op.name == "affine.apply":
        amap = ir.AffineMapAttr(op.attributes["map"]).value
        if len(amap.results) == 1:
            return _expressiondivisor(amap.results[0], [divisor(v) for v in op.operands], amap.n_dims)
    return 1


def _expressiondivisor(expr: ir.AffineExpr, operands: list[int], dims: int) -> int:
    """The same for an affine expression of values with those divisors (sums
    and products; a floordiv or mod: 1)."""
    if isinstance(expr, ir.AffineConstantExpr):
        return abs(expr.value)
    if isinstance(expr, ir.AffineDimExpr):
        return operands[expr.position]
    if isinstance(expr, ir.AffineSymbolExpr):
        return operands[dims + expr.position]
    if isinstance(expr, ir.AffineAddExpr):
        return math.gcd(_expressiondivisor(expr.lhs, operands, dims), _expressiondivisor(expr.rhs, operands, dims))
    if isinstance(expr, ir.AffineMulExpr):
        return _expressiondivisor(expr.lhs, operands, dims) * _expressiondivisor(expr.rhs, operands, dims)
    return 1
