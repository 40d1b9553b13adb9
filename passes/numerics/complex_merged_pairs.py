"""A gather of complex pairs made on the merged shape for xla-complex-as-pairs:
the parts' dim of 2 merged with the dim before it, so the gather's kernel does
not run along the 2 parts.

A gather of whole minor rows (`t[i]` of a 512x1024 c128 table): where the
operand's last dim is sliced whole and is the result's last dim, the pairs'
table 512x1024x2 is read as 512x2048 and the gather takes slices 2048 long:
each gathered row a contiguous copy of part lanes. As complex, the loop
copies it number by number (no vector schedule takes complex<f64>); as plain
pairs (slices of 2, tried before) the vectors held 2 lanes, 1.2-1.5x that
loop. c64 gathers move as i64 instead (complex_bits.py). A gather of columns
(`t[:, i]`) stays complex: its parts cannot merge with the gathered dim.
"""

from __future__ import annotations

from xlac.mlir import ir, stablehlo


def gathers_whole_rows(op: ir.Operation) -> bool:
    """Whether gather ``op`` slices its operand's last dim whole into the
    result's last dim (the parts merge with it on both sides)."""
    numbers = stablehlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
    table = ir.RankedTensorType(op.operands[0].type).shape
    sizes = list(ir.DenseI64ArrayAttr(op.attributes["slice_sizes"]))
    last = len(table) - 1
    result_rank = ir.RankedTensorType(op.results[0].type).rank
    offsets = list(numbers.offset_dims)
    return bool(table) and sizes[last] == table[last] and bool(offsets) \
        and offsets[-1] == result_rank - 1 and last not in list(numbers.collapsed_slice_dims) \
        and last not in list(numbers.start_index_map) and last not in list(numbers.operand_batching_dims)


def gather_pairs(create, op: ir.Operation, table: ir.Value, pairs_type: ir.Type) -> ir.Value:
    """The pairs of gather ``op`` of whole rows, ``table`` its operand's pairs."""
    pairs = ir.RankedTensorType(pairs_type)
    part = pairs.element_type
    source = ir.RankedTensorType(table.type).shape
    flat = create("stablehlo.reshape", [table],
                  ir.RankedTensorType.get([*source[:-2], 2 * source[-2]], part))
    sizes = list(ir.DenseI64ArrayAttr(op.attributes["slice_sizes"]))
    attributes = {n.name: n.attr for n in (op.attributes[i] for i in range(len(op.attributes)))
                  if n.name in ("dimension_numbers", "indices_are_sorted")}
    attributes["slice_sizes"] = ir.DenseI64ArrayAttr.get([*sizes[:-1], 2 * sizes[-1]])
    gathered = create("stablehlo.gather", [flat, op.operands[1]],
                      ir.RankedTensorType.get([*pairs.shape[:-2], 2 * pairs.shape[-2]], part), attributes)
    return create("stablehlo.reshape", [gathered], pairs)
