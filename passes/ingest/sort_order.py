"""What order a sort's comparator sorts its first operand in, if it is a plain one.

The comparators exporters write for one key:
- `compare GT|LT, %a, %b, TOTALORDER` (chlo.top_k's legalization, lax.sort's);
- the same with FLOAT, SIGNED or no type (torch-mlir's aten.sort);
- jnp.sort's: each side first canonicalized, -0 to +0 and every NaN to one
  NaN, `select(x != x, NaN, select(x == 0, 0, x))`, then TOTALORDER.
Constants may come from outside the region (CSE hoists them).
"""

from __future__ import annotations

from xlac.mlir import ir, stablehlo
from xlac.passes.lower.builders.top_k_keys import TopKOrder

_FLOATS = ("f16", "bf16", "f32", "f64")
_SIGNED = ("i8", "i16", "i32", "i64")


def comparator_order(sort: ir.Operation, element: str) -> TopKOrder | None:
    """The order ``sort``'s comparator puts its first operand's elements in
    (whose type is ``element``), or None if it is not one of the known forms."""
    block = sort.regions[0].blocks[0]
    returned = list(block.operations)[-1].operands
    compare = _defined_by(returned[0], "stablehlo.compare") if len(returned) == 1 else None
    if compare is None:
        return None
    sides = [_side(value, block) for value in compare.operands]
    if None in sides or {sides[0][0], sides[1][0]} != {0, 1} or sides[0][1] != sides[1][1]:
        return None
    direction = _direction(compare)
    if direction not in ("GT", "LT"):
        return None
    canonical = _canonical_order(element, _compare_type(compare), sides[0][1])
    if canonical is None:
        return None
    return TopKOrder(smallest=(direction == "LT") == (sides[0][0] == 0), canonical=canonical)


def _canonical_order(element: str, compare_type: str, canonicalized: bool) -> bool | None:
    """Whether keys must be canonical (-0 == +0, NaNs one value); None: no top-k order.

    A FLOAT compare already takes -0 for +0; NaN compares false either way there,
    so no sort order is defined for it, and the top-k puts NaNs above +inf."""
    if element in _FLOATS:
        if compare_type == "TOTALORDER":
            return canonicalized
        return True if compare_type in ("FLOAT", "NOTYPE") else None
    if element in _SIGNED and compare_type in ("SIGNED", "NOTYPE") and not canonicalized:
        return False
    return None


def _side(value: ir.Value, block: ir.Block) -> tuple[int, bool] | None:
    """(the comparator argument ``value`` reads, whether jnp canonicalized it)."""
    argument = _argument_number(value, block)
    if argument is not None:
        return argument, False
    outer = _defined_by(value, "stablehlo.select")
    inner = _defined_by(outer.operands[2], "stablehlo.select") if outer else None
    if inner is None:
        return None
    argument = _argument_number(inner.operands[2], block)
    x = inner.operands[2]
    nan_test = _defined_by(outer.operands[0], "stablehlo.compare")
    zero_test = _defined_by(inner.operands[0], "stablehlo.compare")
    if (argument is None or nan_test is None or zero_test is None
            or _direction(nan_test) != "NE" or list(nan_test.operands) != [x, x]
            or _direction(zero_test) != "EQ" or zero_test.operands[0] != x
            or not _constant_is(zero_test.operands[1], lambda v: v == 0)
            or not _constant_is(inner.operands[1], lambda v: v == 0)
            or not _constant_is(outer.operands[1], lambda v: v != v)):
        return None
    return argument, True


def _argument_number(value: ir.Value, block: ir.Block) -> int | None:
    if isinstance(value.owner, ir.Block) and value.owner == block:
        return ir.BlockArgument(value).arg_number
    return None


def _defined_by(value: ir.Value, name: str) -> ir.Operation | None:
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != name:
        return None
    return owner.operation


def _direction(compare: ir.Operation) -> str:
    return stablehlo.ComparisonDirectionAttr(compare.attributes["comparison_direction"]).value


def _compare_type(compare: ir.Operation) -> str:
    if "compare_type" not in compare.attributes:
        return "NOTYPE"
    return stablehlo.ComparisonTypeAttr(compare.attributes["compare_type"]).value


def _constant_is(value: ir.Value, test) -> bool:
    """Is ``value`` a splat float constant whose value passes ``test``?"""
    constant = _defined_by(value, "stablehlo.constant")
    if constant is None:
        return False
    attribute = ir.DenseElementsAttr(constant.attributes["value"])
    if not attribute.is_splat or not isinstance(attribute.get_splat_value(), ir.FloatAttr):
        return False
    return test(ir.FloatAttr(attribute.get_splat_value()).value)
