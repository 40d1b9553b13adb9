"""A complex iota as its parts' pairs (xla-complex-as-pairs)."""

from __future__ import annotations

from xlac.mlir import ir


def iota_pairs(create, op: ir.Operation, result: ir.Type) -> ir.Value:
    """The pairs of complex iota ``op`` (``(i, 0)``), of type ``result``
    (``[..., n, 2]``), built with ``create(name, operands, type, attributes)``.

    Made on each row of pairs flattened (``[..., 2n]`` parts, then
    reshaped): at flat place ``k`` of a row, ``i`` (``k >> 1`` along the
    row's own dim, else the outer dim's index) times ``1 - (k & 1)`` in the
    part type. Exact: ``i * 1`` is ``i`` and ``i * 0`` is +0 (no iota is
    negative), the interpreter's imaginary part; the integers convert as
    the real iota's do. One elementwise kernel of full vectors along the
    flat rows. As complex it was a scalar loop (c64 1.5x XLA); as pairs
    ``[..., n, 2]`` the index of the rows' dim ran across vector rows
    (a transpose of index vectors per store: slower than the complex loop)."""
    result = ir.RankedTensorType(result)
    part, shape = result.element_type, list(result.shape)
    flat = [*shape[:-2], 2 * shape[-2]]
    last = len(flat) - 1
    width = 32 if max(flat) < 1 << 30 else 64
    counts = ir.RankedTensorType.get(flat, ir.IntegerType.get_signless(width))
    floats = ir.RankedTensorType.get(flat, part)
    dimension = ir.IntegerAttr(op.attributes["iota_dimension"]).value

    def apply(name, *operands, type_=counts):
        return create(name, list(operands), type_).result

    def iota(dim):
        return create("stablehlo.iota", [], counts, {"iota_dimension": ir.IntegerAttr.get(
            ir.IntegerType.get_signless(64), dim)}).result

    def splat(value):
        attribute = ir.DenseElementsAttr.get_splat(counts, ir.IntegerAttr.get(counts.element_type, value))
        return create("stablehlo.constant", [], counts, {"value": attribute}).result

    place = iota(last)
    index = apply("stablehlo.shift_right_logical", place, splat(1)) if dimension == last else iota(dimension)
    real = apply("stablehlo.subtract", splat(1), apply("stablehlo.and", place, splat(1)))
    value = apply("stablehlo.multiply", apply("stablehlo.convert", index, type_=floats),
                  apply("stablehlo.convert", real, type_=floats), type_=floats)
    return create("stablehlo.reshape", [value], result).result
