"""A matmul's masked edge tile, as xla-micro-kernel-calls finds it: the last
row tile of a chunk whose rows the register tile does not divide
(micro_kernel_calls.py has the other forms).

The schedules peel the rows that tm does not divide (GPT-2's and BERT's
128-row images: 21 tiles of 6 rows and one of 2) into a tile vectorized at
the full tm x tn under a constant mask: each k step ran tm rows of FMAs
for the r rows kept, at a whole tile's cost. Its loop, starting from zeros:

    %t = scf.for %k = %c0 to %c256 step %c1 iter_args(%acc = %zeros) -> (vector<6x16xf32>) {
      %row = memref.subview %A_rows[0, %k] [2, 1] [1, 1]          (or A read at [i, k])
      %a = vector.transfer_read %row[%c0, %c0], %pad, %mask_2x1 : ..., vector<6x1xf32>
      %b = vector.transfer_read %B[%k, %j] ... : vector<16xf32>
      ... vector.contract %a, %b, %acc ...
    }
    vector.transfer_write %t, %C_2x16[%c0, %c0], %mask_2x16 : vector<6x16xf32>, ...

becomes a call of the r x tn micro-kernel: the kept rows' sums, each the
same FMAs in the same k order (bit-identical results), the masked rows not
computed at all.
"""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.cpu.plans.loop_trips import constant_index
from xlac.passes.cpu.register_tile_loops import (
    MIN_K,
    Tile,
    fits,
    indices,
    invariant,
    linear,
    matmul_maps,
    minor_identity,
    next_to,
    plain_memref,
    read_of,
    uncast,
)

_ALLOWED = ("vector.contract", "scf.yield", "vector.transfer_read", "vector.shape_cast",
            "memref.subview", "affine.apply", "arith.addi", "arith.muli", "arith.constant")


def edge_tile_loop(loop: ir.Operation) -> Tile | None:
    """The masked edge tile's loop as a ``Tile`` of its kept rows, or None."""
    if len(loop.results) != 1 or constant_index(loop.operands[2]) != 1 or not _deep(loop) \
            or not _zeros(loop.operands[3]):
        return None
    carried = loop.results[0].type
    if not isinstance(carried, ir.VectorType) or ir.VectorType(carried).rank != 2 \
            or str(ir.VectorType(carried).element_type) != "f32":
        return None
    columns = ir.VectorType(carried).shape[1]
    body = loop.regions[0].blocks[0]
    ops = [op.operation for op in body.operations]
    contracts = [op for op in ops if op.name == "vector.contract"]
    if len(contracts) != 1 or not all(op.name in _ALLOWED for op in ops) \
            or ops[-1].operands[0] != contracts[0].result or not matmul_maps(contracts[0]) \
            or contracts[0].operands[2] != body.arguments[1]:
        return None
    read_a, read_b = _masked_a(contracts[0].operands[0], loop), read_of(uncast(contracts[0].operands[1]))
    if read_a is None or read_b is None or ir.VectorType(read_b.result.type).shape[-1] != columns:
        return None
    rows = _mask_rows(read_a, 1)
    *b_lead, b_row, b_column = indices(read_b)
    write_c = _masked_write(loop, rows, columns)
    if rows is None or write_c is None or not fits(rows, columns) \
            or not linear(b_row, body.arguments[0], loop) \
            or not all(invariant(v, loop) for v in (*b_lead, b_column)):
        return None
    return Tile(loop, None, write_c, read_a, read_b, rows, columns)


def _deep(loop: ir.Operation) -> bool:
    lower, upper = constant_index(loop.operands[0]), constant_index(loop.operands[1])
    return lower is not None and upper is not None and upper - lower >= MIN_K


def _zeros(value: ir.Value) -> bool:
    owner = value.owner
    return isinstance(owner, ir.OpView) and owner.operation.name == "arith.constant" \
        and str(owner.operation.attributes["value"]).startswith("dense<0.000000e+00>")


def _masked_a(value: ir.Value, loop: ir.Operation) -> ir.Operation | None:
    """The masked, in-bounds read of A's column making ``value``: of a
    memref at [row, k + c], or at [0, 0] of a unit-stride subview made in
    the loop at [row, k + c] of a memref the loop does not change."""
    owner = value.owner
    if not isinstance(owner, ir.OpView) or owner.operation.name != "vector.transfer_read":
        return None
    read = owner.operation
    memref = read.operands[0]
    if not plain_memref(memref.type) or ir.MemRefType(memref.type).rank != 2 \
            or len(read.operands) != 5 or "false" in str(read.attributes["in_bounds"]) \
            or not minor_identity(read.attributes["permutation_map"], 2) \
            or ir.VectorType(read.result.type).shape[1] != 1:
        return None
    k = loop.regions[0].blocks[0].arguments[0]
    row, column = indices(read)
    if invariant(memref, loop):
        return read if invariant(row, loop) and linear(column, k, loop) else None
    view = memref.owner
    if not isinstance(view, ir.OpView) or view.operation.name != "memref.subview" \
            or any(constant_index(v) != 0 for v in (row, column)):
        return None
    view = view.operation
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    offsets = list(ir.DenseI64ArrayAttr(view.attributes["static_offsets"]))
    given = list(view.operands)[1:]
    if len(offsets) != 2 or len(given) != offsets.count(dynamic) \
            or any(s != 1 for s in ir.DenseI64ArrayAttr(view.attributes["static_strides"])) \
            or not invariant(view.operands[0], loop) or offsets[1] != dynamic:
        return None
    return read if linear(given[-1], k, loop) and all(invariant(v, loop) for v in given[:-1]) else None


def _mask_rows(transfer: ir.Operation, columns: int) -> int | None:
    """r for a transfer masked by a constant mask of its first r rows and
    ``columns`` columns (fewer rows than the vector's), else None."""
    mask = transfer.operands[-1].owner
    if not isinstance(mask, ir.OpView) or mask.operation.name != "vector.constant_mask":
        return None
    sizes = list(ir.DenseI64ArrayAttr(mask.operation.attributes["mask_dim_sizes"]))
    rows = ir.VectorType(mask.operation.result.type).shape[0]
    return sizes[0] if len(sizes) == 2 and sizes[1] == columns and 0 < sizes[0] < rows else None


def _masked_write(loop: ir.Operation, rows: int | None, columns: int) -> ir.Operation | None:
    """The write of the loop's result right after it, masked to its first
    ``rows`` rows, into a unit-stride memref at indices the loop does not change."""
    uses = list(loop.results[0].uses)
    if rows is None or len(uses) != 1:
        return None
    write = uses[0].owner.operation
    memref = write.operands[1].type
    if write.name != "vector.transfer_write" or not plain_memref(memref) \
            or len(write.operands) != ir.MemRefType(memref).rank + 3 \
            or "false" in str(write.attributes["in_bounds"]) \
            or not minor_identity(write.attributes["permutation_map"], 2) \
            or write.parent.operation != loop.parent.operation or not next_to(loop, write) \
            or _mask_rows(write, columns) != rows \
            or not all(invariant(v, loop) for v in (*indices(write), write.operands[1])):
        return None
    return write
