"""The register-tile loops of f32 matmuls and convolutions after bufferization,
as xla-micro-kernel-calls finds them (micro_kernel_calls.py has the forms)."""

from __future__ import annotations

import re

from xlac.mlir import ir
from xlac.passes.cpu.plans.loop_trips import constant_index
from xlac.record import record

MAX_ROWS, MAX_COLUMNS, LANES = 8, 32, 4       # the micro-kernels' closed set of tiles
_SUM = re.compile(r"^[ds]\d+( \+ [ds]\d+)*$")
_PURE = ("affine.apply", "arith.addi", "arith.muli", "arith.constant")    # index arithmetic
# A tile fewer k steps deep stays compiled in: the call and the kernel's set-up
# (about 30 cycles) are a tenth of a 4 x 16 tile 64 deep (256 cycles of FMAs).
# Measured with every tile a call (one thread, CPU time, interleaved): BERT
# (attention's k = 64) 5-6% slower; ResNet-18's 56 x 56 x 64 layer (64
# channels a tap) 4-6% slower, though its generated tile reads and writes C
# every 8 channels where the kernel keeps it in registers.
MIN_K = 128


@record(mutable=True)
class Tile:
    loop: ir.Operation
    read_c: ir.Operation | None          # None: the accumulators start at zero
    write_c: ir.Operation
    read_a: ir.Operation
    read_b: ir.Operation
    rows: int
    columns: int
    inside: bool = False                 # C read and written at each step, in the loop
    a_first: int = 0                     # A's tile row i is row a_first + a_step * i of its read
    a_step: int = 1


def in_place_tile_loop(loop: ir.Operation) -> Tile | None:
    """A convolution's register tile: a loop over input channels, kv at a time,
    whose body reads C's tile, adds A[tm x kv] * B[kv x tn] (outer products in
    k order, as the micro-kernel runs them) and writes it back where it read it."""
    step = channel_step(loop)
    if step is None:
        return None
    body = loop.regions[0].blocks[0]
    ops = [op.operation for op in body.operations]
    contracts = [op for op in ops if op.name == "vector.contract"]
    writes = [op for op in ops if op.name == "vector.transfer_write"]
    allowed = ("vector.contract", "scf.yield", "vector.transfer_read", "vector.transfer_write",
               "memref.subview", *_PURE)
    if len(contracts) != 1 or len(writes) != 1 or not all(op.name in allowed for op in ops) \
            or not matmul_maps(contracts[0]) or writes[0].operands[0] != contracts[0].result:
        return None
    contract, write_c = contracts[0], writes[0]
    rows, columns = ir.VectorType(contract.result.type).shape
    read_a, read_b, read_c = (read_of(v) for v in contract.operands)
    if not fits(rows, columns) or read_a is None or read_b is None or read_c is None \
            or ir.VectorType(read_a.result.type).shape != [rows, step] \
            or ir.VectorType(read_b.result.type).shape != [step, columns] \
            or not written_back(read_c, write_c, loop) or not operands_fit(read_a, read_b, loop):
        return None
    return Tile(loop, read_c, write_c, read_a, read_b, rows, columns, inside=True)


def channel_step(loop: ir.Operation) -> int | None:
    """The step of a loop without results, of constant bounds it divides and
    at least ``MIN_K`` deep; None for any other loop."""
    step, lower, upper = (constant_index(loop.operands[i]) for i in (2, 0, 1))
    if loop.results or step is None or lower is None or upper is None or (upper - lower) % step \
            or upper - lower < MIN_K:
        return None
    return step


def written_back(read_c: ir.Operation, write_c: ir.Operation, loop: ir.Operation) -> bool:
    """Whether ``write_c`` writes C's tile unmasked where ``read_c`` read it, the
    same place at every step."""
    memref = write_c.operands[1].type
    return plain_memref(memref) and "false" not in str(write_c.attributes["in_bounds"]) \
        and len(write_c.operands) == ir.MemRefType(memref).rank + 2 \
        and minor_identity(write_c.attributes["permutation_map"], 2) \
        and _same_place(read_c, write_c) \
        and all(invariant(v, loop) for v in (*indices(read_c), *indices(write_c),
                                              write_c.operands[1]))


def _short(loop: ir.Operation) -> bool:
    """Whether the loop runs a known count of steps under ``MIN_K``."""
    lower, upper = constant_index(loop.operands[0]), constant_index(loop.operands[1])
    return lower is not None and upper is not None and upper - lower < MIN_K


def fits(rows: int, columns: int) -> bool:
    return 1 <= rows <= MAX_ROWS and columns % LANES == 0 and columns <= MAX_COLUMNS


def operands_fit(read_a: ir.Operation, read_b: ir.Operation, loop: ir.Operation) -> bool:
    """A read at [..., row, k + c] and B at [..., k + c', column], the rest invariant."""
    k = loop.regions[0].blocks[0].arguments[0]
    *a_lead, a_row, a_column = indices(read_a)
    *b_lead, b_row, b_column = indices(read_b)
    return linear(a_column, k, loop) and linear(b_row, k, loop) \
        and all(invariant(v, loop) for v in (*a_lead, a_row, *b_lead, b_column))


def _same_place(read: ir.Operation, write: ir.Operation) -> bool:
    """Whether ``write`` writes what ``read`` read: the same memref and indices,
    or a unit-stride subview of the read's memref at the read's indices, written at 0."""
    if read.operands[0] == write.operands[1]:
        return indices(read) == indices(write)
    view = write.operands[1].owner
    if not isinstance(view, ir.OpView) or view.operation.name != "memref.subview" \
            or view.operation.operands[0] != read.operands[0] \
            or any(constant_index(v) != 0 for v in indices(write)) \
            or any(s != 1 for s in ir.DenseI64ArrayAttr(view.operation.attributes["static_strides"])):
        return False
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    offsets = list(ir.DenseI64ArrayAttr(view.operation.attributes["static_offsets"]))
    given = iter(list(view.operation.operands)[1:])
    for offset, index in zip(offsets, indices(read)):
        if offset == dynamic:
            if next(given) != index:
                return False
        elif constant_index(index) != offset:
            return False
    return True


def register_tile_loop(loop: ir.Operation) -> Tile | None:
    if len(loop.results) != 1 or constant_index(loop.operands[2]) != 1 or _short(loop):
        return None
    carried = loop.results[0].type
    if not isinstance(carried, ir.VectorType) or ir.VectorType(carried).rank != 2 \
            or str(ir.VectorType(carried).element_type) != "f32":
        return None
    rows, columns = ir.VectorType(carried).shape
    if not (1 <= rows <= MAX_ROWS and columns % LANES == 0 and columns <= MAX_COLUMNS):
        return None
    body = loop.regions[0].blocks[0]
    contract = _only_contract(body)
    if contract is None or contract.operands[2] != body.arguments[1]:
        return None
    read_a, read_b = read_of(contract.operands[0]), read_of(uncast(contract.operands[1]))
    k = body.arguments[0]
    if read_a is None or read_b is None or ir.VectorType(read_a.result.type).shape != [rows, 1] \
            or ir.VectorType(read_b.result.type).shape[-1] != columns:
        return None
    *a_lead, a_row, a_column = indices(read_a)
    *b_lead, b_row, b_column = indices(read_b)
    if not linear(a_column, k, loop) or not linear(b_row, k, loop) \
            or not all(invariant(v, loop) for v in (*a_lead, a_row, *b_lead, b_column)):
        return None
    write_c = _only_write(loop)
    if write_c is None:
        return None
    read_c = _c_read(loop, write_c)
    if read_c is False:
        return None
    return Tile(loop, read_c, write_c, read_a, read_b, rows, columns)


def _only_contract(body: ir.Block) -> ir.Operation | None:
    """The body's one contraction, of a matmul's maps and kind add, yielded."""
    ops = [op.operation for op in body.operations]
    contracts = [op for op in ops if op.name == "vector.contract"]
    if len(contracts) != 1 or ops[-1].name != "scf.yield" or ops[-1].operands[0] != contracts[0].result \
            or not matmul_maps(contracts[0]):
        return None
    allowed = ("vector.contract", "scf.yield", "vector.transfer_read", "vector.shape_cast", *_PURE)
    return contracts[0] if all(op.name in allowed for op in ops) else None


def matmul_maps(contract: ir.Operation) -> bool:
    """C(m, n) += A(m, k) * B(k, n), as a sum."""
    maps = [str(m) for m in ir.ArrayAttr(contract.attributes["indexing_maps"])]
    return maps == ["affine_map<(d0, d1, d2) -> (d0, d2)>", "affine_map<(d0, d1, d2) -> (d2, d1)>",
                    "affine_map<(d0, d1, d2) -> (d0, d1)>"] \
        and "add" in str(contract.attributes["kind"])


def uncast(value: ir.Value) -> ir.Value:
    owner = value.owner
    if isinstance(owner, ir.OpView) and owner.operation.name == "vector.shape_cast":
        return owner.operation.operands[0]
    return value


def read_of(value: ir.Value) -> ir.Operation | None:
    """The unmasked, in-bounds ``vector.transfer_read`` of an f32 memref (2-D,
    or a batch of them) with unit inner stride and no permutation that makes
    ``value``."""
    owner = value.owner
    if not isinstance(owner, ir.OpView) or owner.operation.name != "vector.transfer_read":
        return None
    read = owner.operation
    memref = read.operands[0].type
    if not plain_memref(memref) or len(read.operands) != ir.MemRefType(memref).rank + 2 \
            or "false" in str(read.attributes["in_bounds"]):
        return None
    return read if minor_identity(read.attributes["permutation_map"],
                                   ir.VectorType(read.result.type).rank) else None


def indices(transfer: ir.Operation) -> list[ir.Value]:
    """The memref indices of a transfer_read or transfer_write."""
    first = 1 if transfer.name == "vector.transfer_read" else 2
    rank = ir.MemRefType(transfer.operands[first - 1].type).rank
    return list(transfer.operands)[first:first + rank]


def minor_identity(permutation: ir.Attribute, vector_rank: int) -> bool:
    """Whether the map reads the memref's last ``vector_rank`` dims in order."""
    text = str(permutation)                    # affine_map<(d0, d1, d2) -> (d1, d2)>
    dims = text.split("(", 1)[1].split(")", 1)[0].split(", ")
    return text.endswith(f"-> ({', '.join(dims[-vector_rank:])})>")


def plain_memref(t: ir.Type) -> bool:
    if not isinstance(t, ir.MemRefType) or ir.MemRefType(t).rank < 2 \
            or str(ir.MemRefType(t).element_type) != "f32":
        return False
    strides, _ = ir.MemRefType(t).get_strides_and_offset()
    return strides[-1] == 1


def inside(value: ir.Value, loop: ir.Operation) -> bool:
    """Whether ``value`` is defined in ``loop``'s body."""
    owner = value.owner
    op = owner.owner if isinstance(owner, ir.Block) else owner.operation
    op = op.operation if hasattr(op, "operation") else op
    while op is not None:
        if op == loop:
            return True
        op = op.parent.operation if op.parent is not None else None
    return False


def invariant(value: ir.Value, loop: ir.Operation) -> bool:
    """Whether ``value`` is the same at every iteration of ``loop``: made
    outside it, or in it by index arithmetic on such values."""
    if not inside(value, loop):
        return True
    owner = value.owner
    return isinstance(owner, ir.OpView) and owner.operation.name in (*_PURE, "memref.subview") \
        and all(invariant(v, loop) for v in owner.operation.operands)


def linear(value: ir.Value, k: ir.Value, loop: ir.Operation) -> bool:
    """Whether ``value`` is ``k`` plus something the loop does not change."""
    if value == k:
        return True
    owner = value.owner
    if not inside(value, loop) or not isinstance(owner, ir.OpView):
        return False
    op = owner.operation
    varying = [v for v in op.operands if not invariant(v, loop)]
    if op.name == "arith.addi":
        return len(varying) == 1 and linear(varying[0], k, loop)
    if op.name == "affine.apply":
        expression = str(op.attributes["map"]).split("-> (", 1)[1].rsplit(")", 1)[0]
        terms = expression.split(" + ")
        return bool(_SUM.match(expression)) and len(set(terms)) == len(terms) \
            and len(terms) == len(list(op.operands)) and len(varying) == 1 \
            and linear(varying[0], k, loop)
    return False


def _only_write(loop: ir.Operation) -> ir.Operation | None:
    """The unmasked in-bounds write of the loop's result right after it."""
    uses = list(loop.results[0].uses)
    if len(uses) != 1:
        return None
    write = uses[0].owner.operation
    if write.name != "vector.transfer_write" or not plain_memref(write.operands[1].type) \
            or len(write.operands) != ir.MemRefType(write.operands[1].type).rank + 2 \
            or "false" in str(write.attributes["in_bounds"]) \
            or not minor_identity(write.attributes["permutation_map"], 2) \
            or write.parent.operation != loop.parent.operation \
            or not next_to(loop, write):
        return None
    return write


def next_to(first: ir.Operation, second: ir.Operation) -> bool:
    ops = [op.operation for op in first.block.operations]
    return ops.index(second) == ops.index(first) + 1


def _c_read(loop: ir.Operation, write: ir.Operation):
    """The read of C the tile starts from (right before the loop, of what the
    write writes), None for a zero start, False for anything else."""
    init = loop.operands[3]
    owner = init.owner
    if not isinstance(owner, ir.OpView):
        return False
    op = owner.operation
    if op.name == "arith.constant":
        return None if str(op.attributes["value"]).startswith("dense<0.000000e+00>") else False
    read = read_of(init)
    if read is None or len(list(init.uses)) != 1 or not next_to(read, loop) \
            or read.operands[0] != write.operands[1] or indices(read) != indices(write):
        return False
    return read
