"""Row reductions whose kept dim is the input's short contiguous one.

xla-complex-as-pairs makes a complex tensor its parts' pairs (a minor dim of
2): a complex row sum `512x1024xcomplex<f64> -> 512` becomes loops (512, 2,
1024) over a `512x1024x2xf64` input, the kept parts' dim contiguous and the
reduced dim the one above it. schedule_plan's rows then vectorized the
reduced dim alone: 16 reads two elements apart per vector, one part at a
time, which LLVM makes 16 scalar loads and inserts (at x86-64-v3 1.5-2x
XLA's time). Here each step reads 16 of the reduced dim times the whole
kept dim, 16 rows of K contiguous elements, as one K x 16 vector: the loop is
tagged, and xla-flatten-minor-transfers makes the read one contiguous load
transposed in registers (shuffles), into a K x 16 accumulator folded over
the 16 at the end of the row (`xla_reduce_kept_minor_3d` in reduction.mlir).
Each kept index has the same 16 lanes, added in the same order, as before:
the sums are the same bits.
"""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import dim_position
from xlac.passes.cpu.plans.chunks import thread_tiles
from xlac.passes.cpu.plans.narrow_tails import narrowest_bytes

LANES = 16                   # the reduction schedules' steps of the reduced dim
# 4- and 8-byte elements (complex parts, f32/i32 and f64/i64 coordinates); the
# narrower ones' in-register transposes (i1 as bytes, bf16 as i16) not checked
WIDTHS = (4, 8)


def kept_minor_plan(op: ir.Operation, nest, machine) -> tuple[str, tuple[int, ...]] | None:
    """The sequence and its parameter (the threads' chunk of the outer loop)
    for a reduction of 4- and 8-byte elements only with loops (outer, kept, reduced)
    whose every input is laid out (outer, reduced, kept), the kept dim shorter
    than the 16 steps, the reduced dim a multiple of them, and the kept x 16
    accumulator within half the vector registers; else None."""
    if op.name != "linalg.generic" or len(nest.extents) != 3 or nest.reductions != (2,) or \
            nest.element_bytes not in WIDTHS or narrowest_bytes(op) not in WIDTHS:
        return None
    outer, kept, reduced = nest.extents
    if kept >= LANES or reduced % LANES or \
            LANES * kept * nest.element_bytes > machine.registers * machine.vector_bytes // 2:
        return None
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    inputs = maps[:len(op.operands) - len(op.results)]
    if not inputs or any([dim_position(e) for e in amap.results] != [0, 2, 1] for amap in inputs):
        return None
    return "xla_reduce_kept_minor_3d", thread_tiles((outer,), machine.threads, 1, kept * reduced)
