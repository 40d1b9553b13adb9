"""`affine.apply` as `arith`: a tiled loop body's offsets, in the ops the
vector schedules take."""

from __future__ import annotations

from xlac.mlir import dialect, ir


def affine_as_arith(ops: list[ir.Operation]) -> None:
    """Each `affine.apply` among ``ops`` (sums and products of its operands
    and constants; others are left) as `arith` ops. Why: the tiling offsets a loop body's
    index by its chunk with one, and the vector schedules take only arith
    and math in a body."""
    for apply in [op for op in ops if op.name == "affine.apply"]:
        amap = ir.AffineMapAttr(apply.attributes["map"]).value
        if not _sum_of_products(amap.results[0]):
            continue
        operands = list(apply.operands)
        with ir.InsertionPoint(apply), apply.location:
            value = _expr_value(amap.results[0], operands[:amap.n_dims], operands[amap.n_dims:])
        apply.results[0].replace_all_uses_with(value)
        apply.erase()


def _expr_value(expr: ir.AffineExpr, dims: list[ir.Value], symbols: list[ir.Value]) -> ir.Value:
    arith = dialect("arith")
    if isinstance(expr, ir.AffineDimExpr):
        return dims[expr.position]
    if isinstance(expr, ir.AffineSymbolExpr):
        return symbols[expr.position]
    if isinstance(expr, ir.AffineConstantExpr):
        return arith.constant(ir.IndexType.get(), expr.value)
    if isinstance(expr, ir.AffineAddExpr):
        return arith.addi(_expr_value(expr.lhs, dims, symbols), _expr_value(expr.rhs, dims, symbols))
    if isinstance(expr, ir.AffineMulExpr):
        return arith.muli(_expr_value(expr.lhs, dims, symbols), _expr_value(expr.rhs, dims, symbols))
    raise ValueError(f"affine expression {expr} has no arith form here")


def _sum_of_products(expr: ir.AffineExpr) -> bool:
    if isinstance(expr, (ir.AffineAddExpr, ir.AffineMulExpr)):
        return _sum_of_products(expr.lhs) and _sum_of_products(expr.rhs)
    return isinstance(expr, (ir.AffineDimExpr, ir.AffineSymbolExpr, ir.AffineConstantExpr))
