"""Elementwise kernels whose minor dim is shorter than a vector: rows of it per vector.

A complex tensor is its parts' pairs after xla-complex-as-pairs (a minor dim
of 2), so each of its elementwise kernels (a broadcast of a complex vector, a
complex iota, a c64 -> c128 convert) had vectors along that dim: 2 lanes, one
16-byte store per c128 number. Here the two innermost loops share one vector
(`%w` rows of `%m`), which xla-flatten-minor-transfers turns into one 1-D
load or store where the rows lie contiguous in memory.
"""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.cpu.plans.chunks import streams_alone, thread_tiles


def minor_dim_plan(op: ir.Operation, nest, machine,
                   moved: tuple[int, int] | None) -> tuple[str, tuple[int, ...]] | None:
    """The `xla_elementwise_minor_<rank>d` sequence and its parameters for
    elementwise ``op`` (schedule_plan makes them a Plan), or None.

    Taken where a register holds whole rows of the minor dim (its extent
    divides the lanes, a power of two) and the next dim is a multiple of
    those rows (no partial vector, no mask); the results are written in
    the loops' order, so the rows a vector holds are contiguous. Math
    kernels (exp, tanh: arithmetic, not data movement) and gathers keep
    the one-dim plan. Six loops: an NCHW max-pool gradient's
    [n, c, h, 2, w, 2] (select_and_scatter_windows.py), its window reads
    broadcast along the last loop, vectors of [w, 2] rows. The threads' chunks follow the streams' rule
    (`streams_alone`), chunk edges on whole vectors."""
    rank = len(nest.extents)
    if op.name != "linalg.generic" or not 2 <= rank <= 6 or not _moves_data(op) or not _writes_in_order(op):
        return None
    lanes = machine.vector_bytes // nest.element_bytes
    minor = nest.extents[-1]
    if minor >= lanes or lanes % minor:
        return None
    rows = lanes // minor
    if nest.extents[-2] % rows:
        return None
    alone = moved is not None and streams_alone(*moved, False)
    align = (1,) * (rank - 2) + (rows, minor)
    chunks = thread_tiles(nest.extents, 1 if alone else machine.threads, align)
    return f"xla_elementwise_minor_{rank}d", chunks + (rows, minor)


def _moves_data(op: ir.Operation) -> bool:
    """No math call (its polynomial is the work) and no read at a computed place."""
    return not any(inner.operation.name.startswith("math.") or inner.operation.name == "tensor.extract"
                   for inner in op.regions[0].blocks[0].operations)


def _writes_in_order(op: ir.Operation) -> bool:
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    return all(amap.is_permutation and list(amap.results) == [
        ir.AffineExpr.get_dim(i) for i in range(amap.n_dims)] for amap in maps[len(maps) - len(op.results):])


def minor_reads(op: ir.Operation) -> bool:
    """Whether every input of ``op`` is read along its innermost loop, in its last dim:
    where schedule_plan's elementwise plan takes six loops (a max-pool gradient's
    [n, h, 2, w, 2, c], passes/lower/select_and_scatter_windows.py). A read broadcast
    along the vectors there was a 0-d transfer of a strided view, which the LLVM
    lowering rejected."""
    if "indexing_maps" not in op.attributes:
        return True                           # linalg.fill: writes only
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    innermost = ir.AffineExpr.get_dim(maps[0].n_dims - 1) if maps else None
    return all(len(amap.results) and amap.results[-1] == innermost
               for amap in maps[:len(op.operands) - len(op.results)])
