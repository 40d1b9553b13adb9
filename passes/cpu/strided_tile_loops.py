"""A strided convolution's register-tile loop, as xla-micro-kernel-calls finds
it: C's tile contracted a row at a time (micro_kernel_calls.py has the forms)."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.cpu.register_tile_loops import (
    Tile,
    channel_step,
    fits,
    operands_fit,
    read_of,
    written_back,
)

# C(n) += A(k) * B(k, n): one row of the tile
_ROW_MAPS = ["affine_map<(d0, d1) -> (d1)>", "affine_map<(d0, d1) -> (d1, d0)>",
             "affine_map<(d0, d1) -> (d0)>"]
_ALLOWED = ("vector.contract", "vector.extract", "vector.insert_strided_slice", "scf.yield",
            "vector.transfer_read", "vector.transfer_write", "memref.subview",
            "affine.apply", "arith.addi", "arith.muli", "arith.constant")


def strided_tile_loop(loop: ir.Operation) -> Tile | None:
    """A loop over input channels, kv at a time, whose body reads C's tile
    (tm x tn), A's rows (R x kv: the tile's pixels every s-th row, a stride-s
    convolution) and B (kv x tn), contracts row i of C with A's row p + s i
    and B (its outer products in k order, as the micro-kernel's), puts the
    rows back (`vector.insert_strided_slice`) and writes C where it read it.
    ResNet-18's stride-2 3 x 3 layers: a 7 x 8 tile from 13 rows of A."""
    step = channel_step(loop)
    if step is None:
        return None
    ops = [op.operation for op in loop.regions[0].blocks[0].operations]
    writes = [op for op in ops if op.name == "vector.transfer_write"]
    if len(writes) != 1 or not all(op.name in _ALLOWED for op in ops):
        return None
    write_c = writes[0]
    rows_of, value = _inserted_rows(write_c.operands[0])
    read_c = read_of(value) if rows_of is not None else None
    if read_c is None or ir.VectorType(read_c.result.type).rank != 2:
        return None
    rows, columns = ir.VectorType(read_c.result.type).shape
    if sorted(rows_of) != list(range(rows)) or not fits(rows, columns):
        return None
    found = [_row(rows_of[i], read_c, i) for i in range(rows)]
    if any(f is None for f in found) or len({(a, b) for a, _, b in found}) != 1:
        return None
    a_value, b_value = found[0][0], found[0][2]
    positions = [p for _, p, _ in found]
    first, stride = positions[0], (positions[1] - positions[0]) if rows > 1 else 1
    read_a, read_b = read_of(a_value), read_of(b_value)
    if stride < 1 or positions != [first + stride * i for i in range(rows)] \
            or read_a is None or read_b is None \
            or ir.VectorType(read_a.result.type).shape[1:] != [step] \
            or ir.VectorType(read_b.result.type).shape != [step, columns] \
            or not written_back(read_c, write_c, loop) or not operands_fit(read_a, read_b, loop):
        return None
    return Tile(loop, read_c, write_c, read_a, read_b, rows, columns, inside=True,
                a_first=first, a_step=stride)


def _inserted_rows(value: ir.Value):
    """``({row: the value put there}, the tile they were put into)`` for a chain
    of `vector.insert_strided_slice` of whole rows; (None, None) otherwise."""
    rows = {}
    while isinstance(value.owner, ir.OpView) and value.owner.operation.name == \
            "vector.insert_strided_slice":
        op = value.owner.operation
        offsets = [ir.IntegerAttr(a).value for a in ir.ArrayAttr(op.attributes["offsets"])]
        if len(offsets) != 2 or offsets[1] != 0 or offsets[0] in rows:
            return None, None
        rows[offsets[0]] = op.operands[0]
        value = op.operands[1]
    return (rows, value) if rows else (None, None)


def _row(value: ir.Value, read_c: ir.Operation, row: int):
    """``(A's read, its row, B's read)`` when ``value`` is row ``row`` of C's
    read plus that row of A times B; None otherwise."""
    owner = value.owner
    if not isinstance(owner, ir.OpView) or owner.operation.name != "vector.contract":
        return None
    contract = owner.operation
    maps = [str(m) for m in ir.ArrayAttr(contract.attributes["indexing_maps"])]
    if maps != _ROW_MAPS or "add" not in str(contract.attributes["kind"]):
        return None
    a_row, acc = _extracted(contract.operands[0]), _extracted(contract.operands[2])
    if a_row is None or acc is None or acc != (read_c.result, row):
        return None
    return a_row[0], a_row[1], contract.operands[1]


def _extracted(value: ir.Value):
    """``(vector, row)`` when ``value`` is a `vector.extract` of a static row."""
    owner = value.owner
    if not isinstance(owner, ir.OpView) or owner.operation.name != "vector.extract" \
            or len(owner.operation.operands) != 1:
        return None
    position = list(ir.DenseI64ArrayAttr(owner.operation.attributes["static_position"]))
    return (owner.operation.operands[0], position[0]) if len(position) == 1 else None
