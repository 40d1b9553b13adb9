"""xla-micro-kernel-calls: a matmul's register-tile loop becomes a call to a
micro-kernel compiled once per machine (xlac.targets.cpu.micro_kernels)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from xlac.mlir import ir
from xlac.passes.base import ModulePass, nested_ops
from xlac.passes.cpu.plans.loop_trips import constant_index

PREFIX = "xlac_ukernel_f32_"                  # xlac.targets.cpu.micro_kernels.PREFIX
MAX_ROWS, MAX_COLUMNS, LANES = 8, 32, 4       # ... its closed set of tiles
_SUM = re.compile(r"^[ds]\d+( \+ [ds]\d+)*$")


@dataclass(frozen=True)
class MicroKernelCalls(ModulePass):
    """Replace each register tile of an f32 matmul (after bufferization) by a
    call to ``xlac_ukernel_f32_<tm>x<tn>(c, ldc, a, lda, b, ldb, k, accumulate)``.

    Why: the tile's k loop is the same few instructions in every program, yet
    LLVM compiled and optimized it again in each (it, with the convolutions',
    was about half of LLVM's work on real models). The micro-kernel runs the
    same FMAs in the same k order (bit-identical results); the program keeps
    the loops around it, the packing, the fill, the edge tiles (masked, left
    generated) and the epilogues.

    Matched: an `scf.for` of step 1 carrying one `vector<TMxTNxf32>`, whose
    body reads A's column (`vector<TMx1xf32>` at [i, k + c]) and B's row
    (`vector<TNxf32>` at [k + c', j]) unmasked from 2-D memrefs of unit
    inner stride and `vector.contract`s them into the carried tile; it
    starts from a read of C (or zeros) just before the loop and ends in the
    write of C just after. Example (AVX2):

        %t = vector.transfer_read %C[%i, %j] ... : vector<6x16xf32>
        %r = scf.for %k = %c0 to %c256 step %c1 iter_args(%acc = %t) -> (vector<6x16xf32>) {
          %a = vector.transfer_read %A[%i, %kk] ... : vector<6x1xf32>
          %b = vector.transfer_read %B[%k, %j] ... : vector<16xf32>
          ... vector.contract ... %a, %b1, %acc ...
        }
        vector.transfer_write %r, %C[%i, %j] ...
      becomes
        call @xlac_ukernel_f32_6x16(%c_at_ij, %ldc, %a_at_ikk, %lda, %b_at_0j, %ldb, %k256, %c1_i64)
    """

    name = "xla-micro-kernel-calls"
    acts_on = frozenset({"vector.contract"})

    def run(self, module: ir.Operation) -> None:
        declared: set[str] = set()
        loops = [op for op in nested_ops(module) if op.name == "scf.for"]   # before any erasure
        for op in loops:
            tile = _register_tile(op)
            if tile is not None:
                name = _replace(tile)
                if name not in declared:
                    _declare(module, name)
                    declared.add(name)


@dataclass
class _Tile:
    loop: ir.Operation
    read_c: ir.Operation | None          # None: the accumulators start at zero
    write_c: ir.Operation
    read_a: ir.Operation
    read_b: ir.Operation
    rows: int
    columns: int


def _register_tile(loop: ir.Operation) -> _Tile | None:
    if len(loop.results) != 1 or constant_index(loop.operands[2]) != 1:
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
    read_a, read_b = _read(contract.operands[0]), _read(_uncast(contract.operands[1]))
    k = body.arguments[0]
    if read_a is None or read_b is None or ir.VectorType(read_a.result.type).shape != [rows, 1] \
            or ir.VectorType(read_b.result.type).shape[-1] != columns:
        return None
    *a_lead, a_row, a_column = _indices(read_a)
    *b_lead, b_row, b_column = _indices(read_b)
    if not _linear(a_column, k, loop) or not _linear(b_row, k, loop) \
            or not all(_invariant(v, loop) for v in (*a_lead, a_row, *b_lead, b_column)):
        return None
    write_c = _only_write(loop)
    if write_c is None:
        return None
    read_c = _c_read(loop, write_c)
    if read_c is False:
        return None
    return _Tile(loop, read_c, write_c, read_a, read_b, rows, columns)


def _only_contract(body: ir.Block) -> ir.Operation | None:
    """The body's one contraction, of a matmul's maps and kind add, yielded."""
    ops = [op.operation for op in body.operations]
    contracts = [op for op in ops if op.name == "vector.contract"]
    if len(contracts) != 1 or ops[-1].name != "scf.yield" or ops[-1].operands[0] != contracts[0].result:
        return None
    contract = contracts[0]
    maps = [str(m) for m in ir.ArrayAttr(contract.attributes["indexing_maps"])]
    if maps != ["affine_map<(d0, d1, d2) -> (d0, d2)>", "affine_map<(d0, d1, d2) -> (d2, d1)>",
                "affine_map<(d0, d1, d2) -> (d0, d1)>"] \
            or "add" not in str(contract.attributes["kind"]):
        return None
    allowed = ("vector.contract", "scf.yield", "vector.transfer_read", "vector.shape_cast",
               "affine.apply", "arith.addi", "arith.constant")
    return contract if all(op.name in allowed for op in ops) else None


def _uncast(value: ir.Value) -> ir.Value:
    owner = value.owner
    if isinstance(owner, ir.OpView) and owner.operation.name == "vector.shape_cast":
        return owner.operation.operands[0]
    return value


def _read(value: ir.Value) -> ir.Operation | None:
    """The unmasked, in-bounds ``vector.transfer_read`` of an f32 memref (2-D,
    or a batch of them) with unit inner stride and no permutation that makes
    ``value``."""
    owner = value.owner
    if not isinstance(owner, ir.OpView) or owner.operation.name != "vector.transfer_read":
        return None
    read = owner.operation
    memref = read.operands[0].type
    if not _plain_memref(memref) or len(read.operands) != ir.MemRefType(memref).rank + 2 \
            or "false" in str(read.attributes["in_bounds"]):
        return None
    return read if _minor_identity(read.attributes["permutation_map"],
                                   ir.VectorType(read.result.type).rank) else None


def _indices(transfer: ir.Operation) -> list[ir.Value]:
    """The memref indices of a transfer_read or transfer_write."""
    first = 1 if transfer.name == "vector.transfer_read" else 2
    rank = ir.MemRefType(transfer.operands[first - 1].type).rank
    return list(transfer.operands)[first:first + rank]


def _minor_identity(permutation: ir.Attribute, vector_rank: int) -> bool:
    """Whether the map reads the memref's last ``vector_rank`` dims in order."""
    text = str(permutation)                    # affine_map<(d0, d1, d2) -> (d1, d2)>
    dims = text.split("(", 1)[1].split(")", 1)[0].split(", ")
    return text.endswith(f"-> ({', '.join(dims[-vector_rank:])})>")


def _plain_memref(t: ir.Type) -> bool:
    if not isinstance(t, ir.MemRefType) or ir.MemRefType(t).rank < 2 \
            or str(ir.MemRefType(t).element_type) != "f32":
        return False
    strides, _ = ir.MemRefType(t).get_strides_and_offset()
    return strides[-1] == 1


def _inside(value: ir.Value, loop: ir.Operation) -> bool:
    """Whether ``value`` is defined in ``loop``'s body."""
    owner = value.owner
    op = owner.owner if isinstance(owner, ir.Block) else owner.operation
    op = op.operation if hasattr(op, "operation") else op
    while op is not None:
        if op == loop:
            return True
        op = op.parent.operation if op.parent is not None else None
    return False


_PURE = ("affine.apply", "arith.addi", "arith.muli", "arith.constant")


def _invariant(value: ir.Value, loop: ir.Operation) -> bool:
    """Whether ``value`` is the same at every iteration of ``loop``: made
    outside it, or in it by index arithmetic on such values."""
    if not _inside(value, loop):
        return True
    owner = value.owner
    return isinstance(owner, ir.OpView) and owner.operation.name in _PURE \
        and all(_invariant(v, loop) for v in owner.operation.operands)


def _linear(value: ir.Value, k: ir.Value, loop: ir.Operation) -> bool:
    """Whether ``value`` is ``k`` plus something the loop does not change."""
    if value == k:
        return True
    owner = value.owner
    if not _inside(value, loop) or not isinstance(owner, ir.OpView):
        return False
    op = owner.operation
    varying = [v for v in op.operands if not _invariant(v, loop)]
    if op.name == "arith.addi":
        return len(varying) == 1 and _linear(varying[0], k, loop)
    if op.name == "affine.apply":
        expression = str(op.attributes["map"]).split("-> (", 1)[1].rsplit(")", 1)[0]
        terms = expression.split(" + ")
        return bool(_SUM.match(expression)) and len(set(terms)) == len(terms) \
            and len(terms) == len(list(op.operands)) and len(varying) == 1 \
            and _linear(varying[0], k, loop)
    return False


def _only_write(loop: ir.Operation) -> ir.Operation | None:
    """The unmasked in-bounds write of the loop's result right after it."""
    uses = list(loop.results[0].uses)
    if len(uses) != 1:
        return None
    write = uses[0].owner.operation
    if write.name != "vector.transfer_write" or not _plain_memref(write.operands[1].type) \
            or len(write.operands) != ir.MemRefType(write.operands[1].type).rank + 2 \
            or "false" in str(write.attributes["in_bounds"]) \
            or not _minor_identity(write.attributes["permutation_map"], 2) \
            or write.parent.operation != loop.parent.operation \
            or not _next_to(loop, write):
        return None
    return write


def _next_to(first: ir.Operation, second: ir.Operation) -> bool:
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
    read = _read(init)
    if read is None or len(list(init.uses)) != 1 or not _next_to(read, loop) \
            or read.operands[0] != write.operands[1] or _indices(read) != _indices(write):
        return False
    return read


def _replace(tile: _Tile) -> str:
    """The call in place of the tile's read, loop and write; its callee's name."""
    name = f"{PREFIX}{tile.rows}x{tile.columns}"
    loop = tile.loop
    with ir.InsertionPoint(tile.read_c or loop), loop.location:
        lower = loop.operands[0]
        c, ldc = _address(tile.write_c.operands[1], _indices(tile.write_c))
        a, lda = _address(tile.read_a.operands[0], [_at(v, loop, lower) for v in _indices(tile.read_a)])
        b, ldb = _address(tile.read_b.operands[0], [_at(v, loop, lower) for v in _indices(tile.read_b)])
        count = _i64(_arith("arith.subi", loop.operands[1], lower))
        accumulate = _constant_i64(0 if tile.read_c is None else 1)
        ir.Operation.create("func.call", operands=[c, ldc, a, lda, b, ldb, count, accumulate],
                            attributes={"callee": ir.FlatSymbolRefAttr.get(name)})
    tile.write_c.erase()
    loop.erase()
    if tile.read_c is not None:
        tile.read_c.erase()
    return name


def _at(value: ir.Value, loop: ir.Operation, lower: ir.Value) -> ir.Value:
    """``value`` (made in ``loop``'s body from its induction variable) at the first iteration."""
    k = loop.regions[0].blocks[0].arguments[0]
    if value == k:
        return lower
    if not _inside(value, loop):
        return value
    op = value.owner.operation
    operands = [_at(v, loop, lower) for v in op.operands]
    clone = op.clone()
    for i, operand in enumerate(operands):
        clone.operands[i] = operand
    return clone.results[0]


def _address(memref: ir.Value, indices: list[ir.Value]) -> tuple[ir.Value, ir.Value]:
    """(the address of memref[indices] as i64, its row stride in elements as i64)."""
    index = ir.IndexType.get()
    rank = len(indices)
    element = ir.MemRefType.get([], ir.MemRefType(memref.type).element_type)
    meta = ir.Operation.create("memref.extract_strided_metadata", operands=[memref],
                               results=[element] + [index] * (1 + 2 * rank))
    base, at, strides = meta.results[0], meta.results[1], list(meta.results)[2 + rank:]
    pointer = ir.Operation.create("memref.extract_aligned_pointer_as_index", operands=[base],
                                  results=[index]).result
    for position, stride in zip(indices, strides):
        at = _arith("arith.addi", at, _arith("arith.muli", position, stride))
    byte = _arith("arith.muli", at, _index_constant(4))
    return _i64(_arith("arith.addi", pointer, byte)), _i64(strides[-2])


def _arith(name: str, left: ir.Value, right: ir.Value) -> ir.Value:
    return ir.Operation.create(name, operands=[left, right], results=[left.type]).result


def _index_constant(value: int) -> ir.Value:
    index = ir.IndexType.get()
    return ir.Operation.create("arith.constant", results=[index],
                               attributes={"value": ir.IntegerAttr.get(index, value)}).result


def _constant_i64(value: int) -> ir.Value:
    i64 = ir.IntegerType.get_signless(64)
    return ir.Operation.create("arith.constant", results=[i64],
                               attributes={"value": ir.IntegerAttr.get(i64, value)}).result


def _i64(value: ir.Value) -> ir.Value:
    return ir.Operation.create("arith.index_cast", operands=[value],
                               results=[ir.IntegerType.get_signless(64)]).result


def _declare(module: ir.Operation, name: str) -> None:
    """``func.func private @name(i64 x 8)``, at the module's top."""
    with module.context, module.location:
        i64 = ir.IntegerType.get_signless(64)
        func = ir.Operation.create("func.func", regions=1, attributes={
            "sym_name": ir.StringAttr.get(name),
            "sym_visibility": ir.StringAttr.get("private"),
            "function_type": ir.TypeAttr.get(ir.FunctionType.get([i64] * 8, []))})
        body = module.regions[0].blocks[0]
        ir.InsertionPoint.at_block_begin(body).insert(func)
