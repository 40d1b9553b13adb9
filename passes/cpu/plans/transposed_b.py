"""Which matmuls take their B from a producer fused into B's packing (a 2-D
transpose: x . W^T; a widening), and AVX2's rules for a transposed B: packed
apart, or whole-k panels made by the transpose. Read by contraction_plan.py."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.cpu.plans.permuted_reads import copy_permutation
from xlac.passes.cpu.plans.schedule_plan import Machine
from xlac.passes.cpu.plans.whole_k_blocks import BLOCK, whole_k_block_bytes
from xlac.passes.cpu.plans.widened_a import is_widening


def b_producer(op: ir.Operation) -> ir.Operation | None:
    """The op making B, and only B, that the schedule can fuse into its
    packing of B's panels: a 2-D transpose (a weight stored [n, k]) or a
    widening (bf16, f16, f8 weights computed in f32; i8 ones in i32), else None."""
    producer = op.operands[1].owner
    if not hasattr(producer, "name") or not (is_transpose_2d(producer) or is_widening(producer)):
        return None
    uses = list(producer.results[0].uses)
    return producer if len(uses) == 1 and uses[0].owner == op else None


def is_transpose_2d(op: ir.Operation) -> bool:
    """A 2-D transpose: a copy generic with a swapped map, or the named
    ``linalg.transpose`` (xla-normalize-contractions' for a dot contracting
    B's last dim: the train step's backward pass, x . W^T)."""
    if op.name == "linalg.transpose":
        return list(ir.DenseI64ArrayAttr(op.attributes["permutation"])) == [1, 0]
    return op.name == "linalg.generic" and copy_permutation(op) == [1, 0]


FUSED_B_ROWS_AVX2 = 512
TRANSPOSE_APART_ROWS_AVX2 = 128


def transpose_apart_avx2(m: int, k: int, producer: ir.Operation | None) -> bool:
    """Whether AVX2's matmul leaves a transposed B to a kernel of its own
    (then packs it as a B stored [k, n]) rather than fusing the transpose into
    BLOCK-deep panels, each k block a pass over the chunk's C: for k of
    several BLOCKs and at least TRANSPOSE_APART_ROWS_AVX2 rows, where the
    whole-k panels (whole_k_transposed_panels_avx2) do not fit L2's share
    (k past 4096). One core of a Zen 4 at x86-64-v3 (ms of CPU time): 256 x
    1024 x 1024 7.8 -> 6.6-7.0 against the BLOCK-deep panels; 64 rows (64 x
    1024 x 4096) 11.7 -> 13.3, so those keep the panels."""
    return producer is not None and is_transpose_2d(producer) and k > BLOCK \
        and m >= TRANSPOSE_APART_ROWS_AVX2


def whole_k_transposed_panels_avx2(k: int, tn: int, producer: ir.Operation, machine: Machine) -> bool:
    """Whether AVX2's matmul with B made by a 2-D transpose (x . W^T, a weight
    stored [n, k]) and k of several BLOCKs makes each column tile's whole
    k x tn panel by the transpose (8 x 8 register blocks,
    @xla_matmul_fused_b_short_k_avx2), its row tiles then running all of k from
    zeros in registers and storing C once. The panel (k x 16 f32: 64 KiB at
    k = 1024) stays in L2 while every row tile of the chunk reads it, as long
    as it fits the whole-k block's share of L2 (k up to 4096 at AVX2).
    Before, such B was transposed by a kernel of its own (written whole, read
    back and packed again) from 128 rows (transpose_apart_avx2, still so
    for longer k), and fused into BLOCK-deep panels (a pass over C per k
    block) below: two threads on a Zen 4 at x86-64-v3,
    CPU time new/old, m x k x n: 256 x 1024 x 256 (GPT-2's MLP down) 0.94
    with its bias and residual, 256 x 1024 x 1024 0.80, 128 x 1024 x 1024
    0.73, 512 x 1024 x 256 0.90, 256 x 512 x 1024 0.86, 1024^3 0.90,
    256 x 4096 x 1024 0.74, 64 x 1024 x 4096 0.92 (docs/PERFORMANCE.md).
    The sums run over k in order from 0 either way: the same bits. SSE's
    8-lane tiles keep their plans (the panels' 16 x 16 blocks need tn % 16)."""
    return machine.vector_bytes == 32 and is_transpose_2d(producer) and k > BLOCK \
        and k % 16 == 0 and tn % 16 == 0 and k * tn * 4 <= whole_k_block_bytes(machine)
