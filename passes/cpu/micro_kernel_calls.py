"""xla-micro-kernel-calls: a matmul's or convolution's register-tile loop
becomes a call to a micro-kernel compiled once per machine
(xlac.targets.cpu.micro_kernels)."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops
from xlac.passes.cpu.edge_tile_loops import edge_tile_loop
from xlac.passes.cpu.register_tile_loops import (
    Tile,
    in_place_tile_loop,
    indices,
    inside,
    register_tile_loop,
)
from xlac.passes.cpu.streaming_c import ResultBuffers
from xlac.passes.cpu.strided_tile_loops import strided_tile_loop

PREFIX = "xlac_ukernel_f32_"                  # xlac.targets.cpu.micro_kernels.PREFIX
STREAM = "_nt"                                # ... and .STREAM
STREAM_BYTES = 4 << 20                        # a written-once result larger than this is stored past the caches


class MicroKernelCalls(ModulePass):
    """Replace each register tile of an f32 matmul (after bufferization) by a
    call to ``xlac_ukernel_f32_<tm>x<tn>(c, ldc, a, lda, b, ldb, k, accumulate)``.

    Why: the tile's k loop is the same few instructions in every program, yet
    LLVM compiled and optimized it again in each (it, with the convolutions',
    was about half of LLVM's work on real models). The micro-kernel runs the
    same FMAs in the same k order (bit-identical results); the program keeps
    the loops around it, the packing, the fill, the column edge tiles (masked,
    left generated) and the epilogues. A row edge tile starting from zeros
    (rows tm does not divide, masked to r of tm) calls the r x tn kernel
    (edge_tile_loops.py).

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

    Also matched: a convolution's tile (conv.mlir), a loop over input channels
    kv at a time (constant bounds) whose body reads C's tile, contracts
    A[tm x kv] (pixels x channels) with B[kv x tn] (channels x filters) into
    it and writes it back to the same place (itself, or a unit-stride subview
    at the read's indices): one call with k = the channels. The contraction's
    outer products run k in order, as the micro-kernel does. And a strided
    convolution's tile (strided_tile_loops.py): the same loop, but C's rows
    contracted one at a time with every s-th row of A's read and put back.
    Loops under 128 k steps (channels) stay: a call would not pay (MIN_K).

    A tile starting from zeros whose C is a result of the program (an
    argument of the public entry, directly or through the kernel calls)
    larger than STREAM_BYTES calls the ``_nt`` kernel, which stores C with
    non-temporal stores (streaming_c.py says why).
    """

    name = "xla-micro-kernel-calls"
    acts_on = frozenset({"vector.contract"})

    def run(self, module: ir.Operation) -> None:
        declared: set[str] = set()
        loops = [op for op in module_ops(module) if op.name == "scf.for"]   # before any erasure
        results = ResultBuffers(module)
        fenced: set[ir.Operation] = set()
        for op in loops:
            tile = register_tile_loop(op) or in_place_tile_loop(op) or strided_tile_loop(op) \
                or edge_tile_loop(op)
            if tile is not None:
                stream = tile.read_c is None and results.is_large_result(tile.write_c.operands[1], STREAM_BYTES)
                if stream:
                    _fence_after(_outermost_loop(op), fenced)
                name = _replace(tile, stream)
                if name not in declared:
                    _declare(module, name)
                    declared.add(name)


def _replace(tile: Tile, stream: bool = False) -> str:
    """The call in place of the tile's read, loop and write; its callee's name."""
    name = f"{PREFIX}{tile.rows}x{tile.columns}{STREAM if stream else ''}"
    loop = tile.loop
    before = tile.read_c if tile.read_c is not None and not tile.inside else loop
    with ir.InsertionPoint(before), loop.location:
        lower = loop.operands[0]
        c, ldc = _address(_at(tile.write_c.operands[1], loop, lower),
                          [_at(v, loop, lower) for v in indices(tile.write_c)])
        a_at = [_at(v, loop, lower) for v in indices(tile.read_a)]
        if tile.a_first:                       # a strided tile's first row of A's read
            a_at[-2] = _arith("arith.addi", a_at[-2], _index_constant(tile.a_first))
        a, lda = _address(_at(tile.read_a.operands[0], loop, lower), a_at)
        if tile.a_step != 1:                   # ... and every a_step-th row after it
            lda = _arith("arith.muli", lda, _constant_i64(tile.a_step))
        b, ldb = _address(tile.read_b.operands[0], [_at(v, loop, lower) for v in indices(tile.read_b)])
        count = _i64(_arith("arith.subi", loop.operands[1], lower))
        accumulate = _constant_i64(0 if tile.read_c is None else 1)
        ir.Operation.create("func.call", operands=[c, ldc, a, lda, b, ldb, count, accumulate],
                            attributes={"callee": ir.FlatSymbolRefAttr.get(name)})
    if not tile.inside:
        tile.write_c.erase()
    loop.erase()                               # with the read and write inside it, if there
    if tile.read_c is not None and not tile.inside:
        tile.read_c.erase()
    return name


def _outermost_loop(loop: ir.Operation) -> ir.Operation:
    """The outermost scf.for around ``loop`` (itself included) within its thread chunk."""
    outer, parent = loop, loop.parent
    while parent is not None and parent.name not in ("scf.forall", "func.func"):
        if parent.name == "scf.for":
            outer = parent
        parent = parent.parent
    return outer


def _fence_after(loop: ir.Operation, fenced: set[ir.Operation]) -> None:
    """An ``sfence`` after ``loop``: its non-temporal stores are ordered before
    anything the thread does next (the thread pool's barrier, whose locked
    instructions drain them too, or the next kernel on this thread)."""
    if loop in fenced:
        return
    fenced.add(loop)
    with _after(loop), loop.location:
        ir.Operation.create("llvm.inline_asm", attributes={
            "asm_string": ir.StringAttr.get("sfence"), "constraints": ir.StringAttr.get(""),
            "has_side_effects": ir.UnitAttr.get()})


def _after(op: ir.Operation) -> ir.InsertionPoint:
    """Right after ``op`` (a loop: its block's terminator, at least, follows it)."""
    ops = [inner.operation for inner in op.block.operations]
    return ir.InsertionPoint(ops[ops.index(op) + 1])


def _at(value: ir.Value, loop: ir.Operation, lower: ir.Value) -> ir.Value:
    """``value`` (made in ``loop``'s body from its induction variable) at the first iteration."""
    k = loop.regions[0].blocks[0].arguments[0]
    if value == k:
        return lower
    if not inside(value, loop):
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
