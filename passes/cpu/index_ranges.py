"""Bounds of index values built from loop induction variables and constants.

A small interval analysis for the index arithmetic vectorized loops write (an
iota's lanes: a loop's induction variable broadcast plus `vector.step`; a
gather's addresses: an index read from memory, clamped, plus a row's offset).
A value's range is known where every leaf of its tree is a constant, the
induction variable of an `scf.for` or `scf.forall` with constant bounds, or an
`affine.apply` of such; anything else (a value read from memory, an argument)
has its type's range, which a cast from a narrower type or a clamp narrows.
"""

from __future__ import annotations

from xlac.mlir import ir

Range = tuple[int, int]          # lowest and highest value, both included
_DEPTH = 32                      # deeper trees: unknown (no index tree here is)
_DYNAMIC = -(1 << 63)            # scf.forall's marker of a dynamic bound


def value_range(value: ir.Value, depth: int = 0) -> Range | None:
    """The lowest and highest value ``value`` (index, integer, or a vector of
    them: over all lanes; read as signed) can take, or None for another type.
    Where its tree says nothing better, or its bound would not fit the type
    (the arithmetic might have wrapped), the type's whole range."""
    width = bit_width(value.type)
    if width is None:
        return None
    bounds = _derived_range(value, depth) if depth <= _DEPTH else None
    return bounds if bounds is not None and fits(bounds, width) else signed_range(width)


def _derived_range(value: ir.Value, depth: int) -> Range | None:
    owner = value.owner
    if isinstance(owner, ir.Block):
        return _induction_range(value)
    op = owner.operation if isinstance(owner, ir.OpView) else owner
    name = op.name
    if name in _BINARY:
        lhs, rhs = (value_range(v, depth + 1) for v in op.operands)
        return _BINARY[name](lhs, rhs)
    if name == "arith.select":
        chosen = [value_range(v, depth + 1) for v in op.operands[1:]]
        return min(r[0] for r in chosen), max(r[1] for r in chosen)
    if name in _SIGNED_CASTS or name in _UNSIGNED_CASTS:
        return _cast_range(op, depth)
    if name == "vector.broadcast":
        return value_range(op.operands[0], depth + 1)
    if name == "vector.step":
        return 0, ir.VectorType(value.type).shape[0] - 1
    if name == "arith.constant":
        return _constant_range(op.attributes["value"])
    if name == "affine.apply":
        operands = [value_range(v, depth + 1) for v in op.operands]
        affine_map = ir.AffineMapAttr(op.attributes["map"]).value
        return _affine_range(affine_map.results[0], operands, affine_map.n_dims)
    return None


def _cast_range(cast: ir.Operation, depth: int) -> Range | None:
    """An integer cast's source range (the caller falls back to the result
    type's range where that does not fit it: a truncation); read unsigned by
    an unsigned cast, so a possibly negative source is its type's unsigned range."""
    source = cast.operands[0]
    known = value_range(source, depth + 1)
    if known is None or bit_width(source.type) is None:
        return None
    if cast.name in _UNSIGNED_CASTS and known[0] < 0:
        return 0, (1 << bit_width(source.type)) - 1
    return known


def bit_width(value_type: ir.Type) -> int | None:
    """An integer or index type's (or its vector's elements') width in bits."""
    if isinstance(value_type, ir.VectorType):
        value_type = ir.VectorType(value_type).element_type
    if isinstance(value_type, ir.IndexType):
        return 64
    return ir.IntegerType(value_type).width if isinstance(value_type, ir.IntegerType) else None


def signed_range(width: int) -> Range:
    return -(1 << (width - 1)), (1 << (width - 1)) - 1


def fits(bounds: Range, width: int) -> bool:
    """Every value of ``bounds`` is a signed ``width``-bit integer."""
    low, high = signed_range(width)
    return low <= bounds[0] and bounds[1] <= high


def _sum(a: Range, b: Range) -> Range:
    return a[0] + b[0], a[1] + b[1]


def _product(a: Range, b: Range) -> Range:
    corners = [x * y for x in a for y in b]
    return min(corners), max(corners)


_BINARY = {
    "arith.addi": _sum,
    "arith.subi": lambda a, b: (a[0] - b[1], a[1] - b[0]),
    "arith.muli": _product,
    "arith.maxsi": lambda a, b: (max(a[0], b[0]), max(a[1], b[1])),
    "arith.minsi": lambda a, b: (min(a[0], b[0]), min(a[1], b[1])),
}
_SIGNED_CASTS = ("arith.index_cast", "arith.extsi")
_UNSIGNED_CASTS = ("arith.index_castui", "arith.extui")


def _constant_range(attr: ir.Attribute) -> Range | None:
    if isinstance(attr, ir.IntegerAttr):
        return attr.value, attr.value
    if isinstance(attr, ir.DenseIntElementsAttr):
        values = [int(v) for v in attr] if not attr.is_splat else [int(attr[0])]
        return min(values), max(values)
    return None


def _induction_range(value: ir.Value) -> Range | None:
    """An scf.for's or scf.forall's induction variable with constant bounds
    and a positive step: from the lower bound to the last value below the upper."""
    argument = ir.BlockArgument(value)
    parent = argument.owner.owner
    parent = parent.operation if isinstance(parent, ir.OpView) else parent
    if parent is None:
        return None
    if parent.name == "scf.for" and argument.arg_number == 0:
        bounds = [_constant_int(v) for v in parent.operands[:3]]
    elif parent.name == "scf.forall" and argument.arg_number < _forall_rank(parent):
        bounds = [_forall_bound(parent, key, argument.arg_number)
                  for key in ("staticLowerBound", "staticUpperBound", "staticStep")]
    else:
        return None
    if any(b is None for b in bounds) or bounds[2] <= 0 or bounds[1] <= bounds[0]:
        return None
    low, high, step = bounds
    return low, low + (high - 1 - low) // step * step


def _forall_rank(forall: ir.Operation) -> int:
    return len(ir.DenseI64ArrayAttr(forall.attributes["staticUpperBound"]))


def _forall_bound(forall: ir.Operation, key: str, position: int) -> int | None:
    bound = ir.DenseI64ArrayAttr(forall.attributes[key])[position]
    return None if bound == _DYNAMIC else bound


def _constant_int(value: ir.Value) -> int | None:
    owner = value.owner
    op = owner.operation if isinstance(owner, ir.OpView) else owner
    if isinstance(owner, ir.Block) or op.name != "arith.constant":
        return None
    attr = op.attributes["value"]
    return attr.value if isinstance(attr, ir.IntegerAttr) else None


def _affine_range(expr: ir.AffineExpr, operands: list[Range], n_dims: int) -> Range | None:
    """``expr``'s range over its dims' and symbols' ranges (sums and products
    only; a floordiv, mod or ceildiv is unknown)."""
    if isinstance(expr, ir.AffineConstantExpr):
        return expr.value, expr.value
    if isinstance(expr, ir.AffineDimExpr):
        return operands[expr.position]
    if isinstance(expr, ir.AffineSymbolExpr):
        return operands[n_dims + expr.position]
    for kind, combine in ((ir.AffineAddExpr, _sum), (ir.AffineMulExpr, _product)):
        if isinstance(expr, kind):
            lhs = _affine_range(expr.lhs, operands, n_dims)
            rhs = _affine_range(expr.rhs, operands, n_dims)
            return None if lhs is None or rhs is None else combine(lhs, rhs)
    return None
