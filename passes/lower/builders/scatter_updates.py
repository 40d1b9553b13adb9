"""A scatter's updates computed row by row inside its loop, not materialized first.

An embedding bag, ``segment_sum(table[ids] * w[:, None], segments)``, is a
scatter whose updates are a gather of table rows times a per-row weight.
Materialized, they are written once and read back once (4 MB for 16k rows of
64 floats); computed where the scatter reads row i, they stay in registers.
The ops that can be computed a row at a time: elementwise ops, splat
constants, reshapes and broadcasts that keep the leading dim, broadcasts of
something without it, and gathers of whole rows (`table[ids]`), as a slice
of the table at ``ids[i]`` clamped into it (gather's rule). An op joins
only if the scatter (through the chain) is its only reader, so each row is
computed once and the op can go. Anything else is a leaf: an argument of
the helper, sliced at row i (or taken whole). A gather's ids always are:
computed on 0-d tensors in the loop, each row's id took a malloc (its
buffer), 16,384 per call; read from their own small kernel's result, an id
is one load.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xlac.mlir import ir, stablehlo
from xlac.passes.fusion.op_classes import ELEMENTWISE, op_class
from xlac.passes.helper_calls import tensor_type


@dataclass
class UpdateRows:
    """How to compute row i of a scatter's updates: the ops, and their leaves."""

    rows: int                                             # the leading dim, N
    ops: list[ir.Operation] = field(default_factory=list)     # the chain, operands first
    leaves: list[ir.Value] = field(default_factory=list)      # the helper's extra arguments
    row_leaves: list[bool] = field(default_factory=list)      # sliced at row i, or whole

    def text(self, updates: ir.Value, row: str, leaf_names: list[str]) -> tuple[list[str], str]:
        """SSA lines computing row ``row`` of ``updates``; the name of that row."""
        names: dict[ir.Value, str] = {}
        lines: list[str] = []
        for k, (leaf, by_row) in enumerate(zip(self.leaves, self.row_leaves)):
            names[leaf] = leaf_names[k]
            if by_row:
                names[leaf] = f"%row_leaf{k}"
                lines.append(_row_slice(leaf_names[k], leaf, row, names[leaf]))
        for k, op in enumerate(self.ops):
            name = f"%row_op{k}"
            lines += _row_op(op, names, name)
            names[op.results[0]] = name
        return lines, names[updates]


def update_rows(scatter: ir.Operation, updates: ir.Value) -> UpdateRows:
    """The chain that computes ``updates`` row by row (possibly empty: one leaf)."""
    chain = UpdateRows(ir.RankedTensorType(updates.type).shape[0])
    readers = {scatter}
    _need_row(updates, chain, readers)
    chain.ops.reverse()
    return chain


def _need_row(value: ir.Value, chain: UpdateRows, readers: set) -> None:
    op = value.owner
    if isinstance(op, ir.Block) or not _joins(op.operation, chain.rows, readers):
        _leaf(value, chain, by_row=True)
        return
    op = op.operation
    readers.add(op)
    chain.ops.append(op)
    gather = op.name == "stablehlo.gather"
    for position, (operand, by_row) in enumerate(_operand_needs(op)):
        if by_row and not (gather and position == 1):      # a gather's ids: a leaf
            _need_row(operand, chain, readers)
        else:
            _leaf(operand, chain, by_row=by_row)


def _leaf(value: ir.Value, chain: UpdateRows, by_row: bool) -> None:
    for known, known_by_row in zip(chain.leaves, chain.row_leaves):
        if known == value and known_by_row == by_row:
            return
    chain.leaves.append(value)
    chain.row_leaves.append(by_row)


def _joins(op: ir.Operation, rows: int, readers: set) -> bool:
    """Can ``op`` be computed a row at a time, and does only the chain read it?"""
    if len(op.results) != 1 or any(use.owner not in readers for use in op.results[0].uses):
        return False
    shape = ir.RankedTensorType(op.results[0].type).shape
    if not shape or shape[0] != rows:
        return False
    if op.name == "stablehlo.constant":
        return ir.DenseElementsAttr(op.attributes["value"]).is_splat
    return _operand_needs(op) is not None


def _operand_needs(op: ir.Operation) -> list[tuple[ir.Value, bool]] | None:
    """Each operand of ``op`` and whether its row i (or it whole) computes row i of ``op``."""
    rows = ir.RankedTensorType(op.results[0].type).shape[0]
    if op.name == "stablehlo.constant":
        return []
    if op_class(op) == ELEMENTWISE:
        return [(operand, True) for operand in op.operands]
    if op.name == "stablehlo.reshape":
        keeps = ir.RankedTensorType(op.operands[0].type).shape[:1] == [rows]
        return [(op.operands[0], True)] if keeps else None
    if op.name == "stablehlo.broadcast_in_dim":
        return _broadcast_needs(op, rows)
    if op.name == "stablehlo.gather" and _row_gather(op):
        return [(op.operands[0], False), (op.operands[1], True)]
    return None


def _broadcast_needs(op: ir.Operation, rows: int):
    dims = list(ir.DenseI64ArrayAttr(op.attributes["broadcast_dimensions"]))
    source = ir.RankedTensorType(op.operands[0].type).shape
    if dims[:1] == [0] and source[0] == rows:
        return [(op.operands[0], True)]
    return [(op.operands[0], False)] if 0 not in dims else None


def _row_gather(op: ir.Operation) -> bool:
    """``table[ids]``: whole rows of a table, one per leading index."""
    numbers = stablehlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
    table = ir.RankedTensorType(op.operands[0].type).shape
    indices = ir.RankedTensorType(op.operands[1].type).shape
    sizes = list(ir.DenseI64ArrayAttr(op.attributes["slice_sizes"]))
    return (list(numbers.collapsed_slice_dims) == [0] and list(numbers.start_index_map) == [0]
            and list(numbers.offset_dims) == list(range(1, len(table)))
            and not list(numbers.operand_batching_dims) and numbers.index_vector_dim == 1
            and len(indices) in (1, 2) and indices[1:] in ([], [1]) and sizes == [1, *table[1:]])


def _row_type(value: ir.Value) -> str:
    tensor = ir.RankedTensorType(value.type)
    return tensor_type(tensor.shape[1:], str(tensor.element_type))


def _row_slice(source: str, value: ir.Value, row: str, name: str) -> str:
    tensor = ir.RankedTensorType(value.type)
    rest = tensor.shape[1:]
    offsets = ", ".join([row] + ["0"] * len(rest))
    sizes = ", ".join(map(str, [1, *rest]))
    strides = ", ".join("1" for _ in tensor.shape)
    return (f"{name} = tensor.extract_slice {source}[{offsets}] [{sizes}] [{strides}] : "
            f"{value.type} to {_row_type(value)}")


def _row_op(op: ir.Operation, names: dict, name: str) -> list[str]:
    """Row i of ``op`` from the rows (or wholes) of its operands, as StableHLO lines."""
    result = _row_type(op.results[0])
    if op.name == "stablehlo.constant":
        splat = ir.DenseElementsAttr(op.attributes["value"]).get_splat_value()
        return [f"{name} = stablehlo.constant dense<{_literal(splat)}> : {result}"]
    if op.name == "stablehlo.gather":
        return _row_gather_lines(op, names, name)
    operands = [names[v] for v in op.operands]
    types = [_row_type(v) if by_row else str(v.type) for v, by_row in _operand_needs(op)]
    attributes = {key: str(op.attributes[key]) for key in op.attributes
                  if not key.startswith("xla.")}            # not the fusion tags
    if op.name == "stablehlo.broadcast_in_dim":
        dims = list(ir.DenseI64ArrayAttr(op.attributes["broadcast_dimensions"]))
        kept = [d - 1 for d in (dims[1:] if _operand_needs(op)[0][1] else dims)]
        attributes["broadcast_dimensions"] = f"array<i64{': ' if kept else ''}{', '.join(map(str, kept))}>"
    listed = ", ".join(f"{key} = {value}" for key, value in attributes.items())
    return [f'{name} = "{op.name}"({", ".join(operands)}) {{{listed}}} : '
            f'({", ".join(types)}) -> {result}']


def _row_gather_lines(op: ir.Operation, names: dict, name: str) -> list[str]:
    """``table[ids[i]]``: the id clamped into the table (gather's rule), its row
    sliced out rank-reduced, so what combines it stays one-dimensional."""
    table, indices = op.operands
    shape = ir.RankedTensorType(table.type).shape
    index = str(ir.RankedTensorType(indices.type).element_type)
    position = ", ".join([f"{name}_zero"] * (len(ir.RankedTensorType(indices.type).shape) - 1))
    rest = shape[1:]
    return [f"{name}_zero = arith.constant 0 : index",
            f"{name}_id = tensor.extract {names[indices]}[{position}] : {_row_type(indices)}",
            f"{name}_at = arith.index_cast {name}_id : {index} to index",
            f"{name}_last = arith.constant {shape[0] - 1} : index",
            f"{name}_low = arith.maxsi {name}_at, {name}_zero : index",
            f"{name}_row = arith.minsi {name}_low, {name}_last : index",
            f"{name} = tensor.extract_slice {names[table]}[{name}_row{', 0' * len(rest)}] "
            f"[1{''.join(f', {n}' for n in rest)}] [1{', 1' * len(rest)}] : "
            f"{table.type} to {_row_type(op.results[0])}"]


def _literal(splat: ir.Attribute) -> str:
    """The text of a splat element as ``dense<...>`` takes it (``1.5 : f32`` -> ``1.5``)."""
    return str(splat).split(" : ")[0]
