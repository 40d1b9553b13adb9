"""A's packing handed to the producer: where an AMX matmul's chunk epilogue
(xlac.passes.cpu.amx_epilogue) writes a temporary that only the next AMX
matmul reads, as its A (the bf16 MLP's ReLU-and-round between its dots), the
epilogue writes it in the kernel's packed tile order (xlac.passes.cpu.amx_pack)
and the next matmul's iterations read it in place with lda 0: no packing copy
per thread loop iteration (each of which packs its whole row block again).

The temporary then holds A's m x k elements in the packed order: 32-row block
b, k-step s, row r at element 32 b k + 32 s + 32 r (a row block of the next
matmul at %row starts at element %row k). Nothing else may read it: the
handoff is made only where its uses are the epilogue, that matmul's A and its
deallocation."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.cpu import amx_pack
from xlac.passes.cpu.amx_contractions import ALIGN
from xlac.passes.cpu.amx_pack import ROWS

PER_THREAD = 4          # the next matmul's iterations per thread: no copy each, so a busy core's share moves


def packs_a(op: ir.Operation, threads: int) -> bool:
    """Whether xla-amx-calls' iterations for ``op`` pack its A (rank-2 matmuls)."""
    m, _ = ir.MemRefType(op.operands[0].type).shape
    n = ir.MemRefType(op.operands[1].type).shape[-1]
    blocks = -(-m // min(ROWS, m))
    return amx_pack.packs(amx_pack.per_group(n // ALIGN, blocks, threads))


def handoffs(pairs: list[tuple[ir.Operation, ir.Operation | None]], fitting: list[ir.Operation],
             threads: int) -> list[tuple[ir.Operation, ir.Operation]]:
    """(matmul, next matmul) pairs whose temporary between them is written
    packed: ``pairs`` the matmuls with their fused epilogues (or None),
    ``fitting`` the matmuls xla-amx-calls rewrites."""
    found = []
    for first, epilogue in pairs:
        if epilogue is None or len(ir.MemRefType(first.operands[0].type).shape) != 2:
            continue
        out = epilogue.operands[1]
        if not _contiguous_allocation(out):
            continue
        readers = [op for op in fitting if op != first and op.operands[0] == out]
        if len(readers) != 1:
            continue
        second = readers[0]
        if len(ir.MemRefType(out.type).shape) != 2 or second.operands[1] == out \
                or not packs_a(second, threads):
            continue
        users = [u.owner.operation if isinstance(u.owner, ir.OpView) else u.owner for u in out.uses]
        if all(u in (epilogue, second) or u.name == "memref.dealloc" for u in users):
            # the kernel's tile rows are 64 bytes: each in one cache line (a misaligned A: 7% slower)
            out.owner.operation.attributes["alignment"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 64)
            found.append((first, second))
    return found


def _contiguous_allocation(value: ir.Value) -> bool:
    if not isinstance(value.owner, ir.OpView) or value.owner.operation.name != "memref.alloc":
        return False
    type_ = ir.MemRefType(value.type)
    strides, offset = type_.get_strides_and_offset()
    return type_.has_static_shape and offset == 0 and strides == [type_.shape[1], 1]


def flat_type(out_type: str) -> str:
    """The temporary seen as one dimension (for the packed stores)."""
    shape = ir.MemRefType(ir.Type.parse(out_type)).shape
    return f"memref<{shape[0] * shape[1]}x{ir.MemRefType(ir.Type.parse(out_type)).element_type}>"


def packed_indices(out_type: str) -> tuple[list[str], list[str], list[str]]:
    """(constants, the lines in the epilogue's row/column loop computing
    ``%p0`` and ``%p1``: the packed positions of row %er's 16 columns from
    %ec0 and from %ec1 (%ec0 a multiple of 32), the flattening of %o into %of)."""
    k = ir.MemRefType(ir.Type.parse(out_type)).shape[1]
    constants = ["  %pk32 = arith.constant " + str(32 * k) + " : index"]
    lines = ["      %pblock = arith.divui %er, %c32 : index",
             "      %prow = arith.remui %er, %c32 : index",
             "      %pbase = arith.muli %pblock, %pk32 : index",
             "      %pstep = arith.muli %ec0, %c32 : index",
             "      %prow32 = arith.muli %prow, %c32 : index",
             "      %pat = arith.addi %pbase, %pstep : index",
             "      %p0 = arith.addi %pat, %prow32 : index",
             "      %p1 = arith.addi %p0, %c16 : index"]
    flatten = [f"  %of = memref.collapse_shape %o [[0, 1]] : {out_type} into {flat_type(out_type)}"]
    return constants, lines, flatten


def chunk_address(k: int) -> list[str]:
    """In an iteration's chunk loop: ``%aat_i``, the row block %row's packed
    A in place (its first element %row k), and ``%ald_i`` 0 (packed)."""
    return [f"    %apk = arith.constant {k} : index",
            "    %aprow = arith.muli %row, %apk : index",
            "    %apel = arith.addi %aoff, %aprow : index",
            "    %apbytes = arith.muli %apel, %c2 : index",
            "    %apat = arith.addi %aptr, %apbytes : index",
            "    %aat_i = arith.index_cast %apat : index to i64",
            "    %ald_i = arith.constant 0 : i64"]
