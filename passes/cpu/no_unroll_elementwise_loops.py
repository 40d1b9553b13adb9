"""xla-no-unroll-elementwise-loops: LLVM leaves an elementwise kernel's loops rolled."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, functions, nested_ops
from xlac.passes.cpu.no_unroll_fill_loops import keep_rolled
from xlac.passes.cpu.plans.loop_trips import constant_index
from xlac.passes.cpu.strided_reads_as_shuffles import LANE_STRIDE_TAG

# A function with any of these is a register-tile, reduction or shuffle kernel:
# LLVM's unrolling of its loops (packing copies among them) is worth its cost.
_TILE_OPS = ("vector.contract", "vector.fma", "vector.outerproduct", "vector.reduction",
             "vector.multi_reduction", "vector.transpose", "vector.shuffle", "vector.gather",
             "vector.scatter", "vector.interleave", "vector.deinterleave")
_VECTOR_READS = ("vector.transfer_read", "vector.load", "vector.maskedload")
_VECTOR_WRITES = ("vector.transfer_write", "vector.store", "vector.maskedstore")
_SHORT = 8                    # trips of a row's loop still unrolled inside a data-dependent walk


class NoUnrollElementwiseLoops(ModulePass):
    """Mark each `scf.for` without results that reads and writes vectors,
    in a function with no register tiles, reductions or shuffles (an
    elementwise kernel: a bias add, a residual add, GELU, an optimizer's
    update), not to be unrolled by LLVM.

    Why: LLVM -O3 unrolled the vector loop of every such kernel completely
    (ViT's bias + residual add over 4 x 197 x 192: 12 iterations of one
    16-lane add each) and then spent its time on the copies: 46 ms of machine
    code for a kernel of 158 LLVM-dialect ops, 20 ms rolled; elementwise
    kernels were 65% of ViT's LLVM time and 45% of the CNN training step's.
    A streaming loop of 16-lane vectors gains nothing from unrolling that the
    memory would let it use. Loops that carry values (accumulators) and
    scalar loops (LLVM's vectorizer takes those) are left alone, and so are
    a loop whose bounds are data (a sorted scatter's walk over its rows) and
    a loop of at most 8 trips inside one: each row there waits on a load
    from a row found at run time, and the fewer instructions a row takes,
    the more rows' loads the CPU has in flight (an embedding bag, 16,384
    rows of 64 floats: 0.56 -> 0.53 ms, one process, alternating batches).

    Example:
        scf.for %j = %c0 to %c192 step %c16 { %a = vector.load ... ; vector.store ... }
    becomes
        scf.for %j = ... { ... } {llvm.loop_annotation = #llvm.loop_annotation<unroll = <disable = true>>}
    """

    name = "xla-no-unroll-elementwise-loops"

    def run(self, module: ir.Operation) -> None:
        for func in functions(module):
            inner = nested_ops(func)
            if any(op.name in _TILE_OPS and LANE_STRIDE_TAG not in op.attributes for op in inner):
                continue
            for op in inner:
                if op.name == "scf.for" and not op.results and _streams_vectors(op) \
                        and not _short_in_a_data_walk(op):
                    keep_rolled(op)


def _short_in_a_data_walk(loop: ir.Operation) -> bool:
    """``loop`` walks rows found at run time, or is a short loop inside such a walk."""
    bounds = [constant_index(v) for v in list(loop.operands)[:3]]
    if None in bounds[:2]:
        return True                                     # the walk itself
    if bounds[2] is None or bounds[2] <= 0 or (bounds[1] - bounds[0]) > _SHORT * bounds[2]:
        return False
    parent = loop.parent
    while parent is not None and parent.name != "func.func":
        if parent.name == "scf.while" or (parent.name == "scf.for" and None in [
                constant_index(v) for v in list(parent.operands)[:2]]):
            return True
        parent = parent.parent
    return False


def _streams_vectors(loop: ir.Operation) -> bool:
    """Whether ``loop`` both reads and writes vectors."""
    names = {op.name for op in nested_ops(loop)}
    return bool(names.intersection(_VECTOR_READS)) and bool(names.intersection(_VECTOR_WRITES))
