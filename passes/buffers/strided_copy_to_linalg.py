"""xla-strided-copy-to-linalg: copies between strided memrefs as row loops of
vector copies, or as linalg.copy."""

from __future__ import annotations

import math
import os

from xlac.mlir import dialect, ir
from xlac.passes.base import ModulePass, module_ops
from xlac.passes.buffers.row_copies import ROW_BYTES, copies_rows, is_identity, row_copy_text, side_by_side_groups
from xlac.passes.buffers.row_copies import vector_element as _vector_element
from xlac.passes.buffers.strided_row_copy import strided_row_copy_text
from xlac.passes.cpu.plans.chunks import CHUNKS_PER_THREAD
from xlac.passes.helper_calls import fresh_name, replace_with_call, symbols
from xlac.record import record


@record
class StridedCopyToLinalg(ModulePass):
    """Rewrite `memref.copy` with a non-identity layout into loops.

    Why: finalize-memref-to-llvm turns such copies into calls to `memrefCopy`
    from MLIR's C runner library, which the JIT does not have (and an AOT
    library should not need). Contiguous copies are left alone: they become
    one memcpy. A copy whose rows (the last dim) are contiguous on both sides
    and of static length (a padded input's interior, a slice) becomes loops
    over the outer dims around 64-byte vector loads and stores along the row
    (`@xla_copy_rows_<n>`, inlined later). As linalg.copy (what other copies
    become) it was a scalar loop nest that LLVM's -O3 vectorized and unrolled
    itself: 60-140 ms of machine code per copy. A copy whose source rows
    step over elements (`x[:, 1::2]`) loads each row's contiguous span and
    shuffles (strided_row_copy.py): as linalg.copy a bool one stayed a
    scalar byte loop. `rows=false` (the CUDA
    pipeline: its kernels map linalg ops to threads) makes every copy a
    linalg.copy.

    `split-bytes` (0: never; the CPU pipeline's `split_copy_bytes`): a copy of
    rows that moves at least this many bytes, strided or contiguous, runs its
    outermost dim in chunks of an `scf.forall`, a few per thread of `threads`
    (0: this host's), which the CPU runs on its threads: one core's copy is
    bound by what one core can stream, XLA splits its concatenates in two.
    """

    name = "xla-strided-copy-to-linalg"
    rows: bool = True
    split_bytes: int = 0
    threads: int = 0
    side_by_side: bool = True

    def run(self, module: ir.Operation) -> None:
        taken = symbols(module)
        threads = self.threads or len(os.sched_getaffinity(0))
        copies = []
        for op in module_ops(module):
            if op.name != "memref.copy":
                continue
            splits = self._splits(_moved_bytes(op), threads)
            if not _is_strided(op) and not splits:
                continue                      # one memcpy, as finalize-memref-to-llvm makes it
            if self.rows:
                _merge_short_rows(op, keep_outer=splits)
            copies.append(op)
        groups = side_by_side_groups(copies) if self.rows and self.side_by_side else [[c] for c in copies]
        for group in groups:
            self._lower(module, group, taken, threads)

    def _splits(self, moved_bytes: int, threads: int) -> bool:
        """Whether copies moving ``moved_bytes`` run on the threads."""
        return self.rows and self.split_bytes > 0 and threads > 1 and moved_bytes >= self.split_bytes

    def _lower(self, module: ir.Operation, group: list[ir.Operation], taken: set, threads: int) -> None:
        """The group's copies as one call of a row-copy helper, or the one copy
        as a helper of spans (strided rows) or a linalg.copy."""
        op = group[-1]
        splits = self._splits(sum(_moved_bytes(copy) for copy in group), threads)
        chunks = _split_chunks(op, threads) if splits else 1
        if not _is_strided(op) and len(group) == 1 and chunks == 1:
            return                            # a contiguous copy too short-rowed to split
        name = fresh_name(taken, "xla_copy_rows")
        text = row_copy_text(group, name, chunks) if self.rows and copies_rows(op) else ""
        if self.rows and not text and _vector_element(ir.MemRefType(op.operands[0].type).element_type):
            text = strided_row_copy_text(op, name, ROW_BYTES)
        if text:
            operands = [value for copy in group for value in copy.operands]
            replace_with_call(module, op, text, name, operands=operands)
            for copy in group[:-1]:
                copy.erase()
            return
        with ir.InsertionPoint(op), op.location:     # the OpDSL: imported only here
            dialect("linalg").copy(op.operands[0], outs=[op.operands[1]])
        op.erase()


def _moved_bytes(copy: ir.Operation) -> int:
    """The bytes ``copy`` writes; 0 where its shape is not static or its
    element not one vectors copy (complex, index: never split)."""
    source = ir.MemRefType(copy.operands[0].type)
    if not source.has_static_shape or not _vector_element(source.element_type):
        return 0
    return math.prod(source.shape) * max(1, source.element_type.width // 8)


def _split_chunks(copy: ir.Operation, threads: int) -> int:
    """How many chunks of its outermost dim ``copy``, big enough to split, is
    run in among ``threads``: 1 (not split) where its rows are not whole
    vectors of a static length (copies ``_row_copy_text`` takes otherwise or
    not at all) or its outermost dim is a single row."""
    source = ir.MemRefType(copy.operands[0].type)
    if source.rank < 2 or source.shape[0] < 2 or not _vector_element(source.element_type):
        return 1
    if source.shape[-1] * max(1, source.element_type.width // 8) < ROW_BYTES:
        return 1
    return min(source.shape[0], threads * CHUNKS_PER_THREAD)


def _merge_short_rows(copy: ir.Operation, keep_outer: bool = False) -> None:
    """Give ``copy`` operands whose rows are shorter than a vector (a complex
    tensor's 2 parts, xla-complex-as-pairs) their trailing dims merged, where
    both sides hold them contiguously: rows of 2 lanes became one vector copy
    each (a concatenate of c64 pairs along their rows 1.6x XLA, as complex
    0.96x); merged, the rows are whole again. ``keep_outer``: the outermost
    dim stays its own (the one a split copy's chunks divide)."""
    types = [ir.MemRefType(v.type) for v in copy.operands]
    shape = list(types[0].shape)
    if len(shape) < 2 or any(n < 0 for n in shape) or not _vector_element(types[0].element_type) \
            or shape[-1] * types[0].element_type.width // 8 >= ROW_BYTES:
        return
    layouts = [t.get_strides_and_offset() for t in types]
    first = len(shape) - 1                 # the first dim of the contiguous tail on both sides
    while first > int(keep_outer) and all(strides[first - 1] == strides[first] * shape[first] and
                            strides[-1] == 1 for strides, _ in layouts):
        first -= 1
    if first == len(shape) - 1:
        return
    groups = [[d] for d in range(first)] + [list(range(first, len(shape)))]
    merged = [*shape[:first], math.prod(shape[first:])]
    with ir.InsertionPoint(copy), copy.location:
        for index, (memref, (strides, offset)) in enumerate(zip(types, layouts)):
            layout = None if is_identity(memref) else \
                ir.StridedLayoutAttr.get(offset, [*strides[:first], 1])   # identity stays identity
            collapsed = ir.MemRefType.get(merged, memref.element_type, layout, memref.memory_space)
            reassociation = ir.ArrayAttr.get([ir.ArrayAttr.get(
                [ir.IntegerAttr.get(ir.IntegerType.get_signless(64), d) for d in group])
                for group in groups])
            view = ir.Operation.create("memref.collapse_shape", results=[collapsed],
                                       operands=[copy.operands[index]],
                                       attributes={"reassociation": reassociation})
            copy.operands[index] = view.results[0]


def _is_strided(copy: ir.Operation) -> bool:
    return not all(_is_contiguous(ir.MemRefType(v.type)) for v in copy.operands)


def _is_contiguous(memref: ir.MemRefType) -> bool:
    """What finalize-memref-to-llvm copies with one memcpy: an identity layout,
    or a static shape in row-major strides; anything else (a dynamic number
    of rows of a strided subview: a chunk of a matmul's C) it makes a call
    to `memrefCopy`."""
    if is_identity(memref):
        return True
    if not memref.has_static_shape:
        return False
    strides, _ = memref.get_strides_and_offset()
    expected, running = [], 1
    for size in reversed(memref.shape):
        expected.append(running)
        running *= size
    return list(strides) == expected[::-1]
