"""A matmul's elementwise epilogue scheduled inside the matmul's thread chunks.

Read by xla-apply-schedules. xla-fuse's output fusion puts a dot and the
elementwise ops reading its result (a bias add, a residual add) in one
kernel, but linalg keeps them as two ops, and each got a schedule of its
own: the matmul's threads zeroed and wrote all of C, then the epilogue's
threads read it all back (ViT: 43 such passes a call, ~0.1 ms each). Here
the epilogue is the root, its thread chunks the matmul's, and the matmul
(with its zero fill) is fused into each chunk (matmul_epilogue.mlir):

- k in one block (k <= bk): into each register tile too. A tile's
  accumulators start as zeros in registers, run over k and go through the
  epilogue at once; C is never zeroed nor read back from memory.
- longer k: the chunk's epilogue runs once the chunk's tiles are done, C's
  chunk still in cache.

Each element of C is still summed over k in order, one FMA a step, as in the
matmul's own plan: results are bit for bit the same.
"""

from __future__ import annotations

import math

from xlac.mlir import ir
from xlac.passes.base import text_of
from xlac.passes.cpu.plans.contraction_plan import BLOCK, ZERO_START, contraction_plan
from xlac.passes.cpu.plans.schedule_plan import Machine, Plan
from xlac.passes.cpu.plans.whole_k_blocks import l1_holds_a_panel
from xlac.record import replace

# the matmul plans with epilogue variants (their parameters: cm, cn, bn, bk, tm, tn)
_WITH_EPILOGUE = ("xla_matmul_block_packed",)
# B made by a transpose or widening fused into its panels (GPT-2's [n, k] weights):
# epilogue in the register tiles (k in one block) or after the chunk's tiles
_FUSED_B = ("xla_matmul_fused_b", "xla_matmul_fused_b_short_k", "xla_matmul_fused_b_short_k_avx2")
MAX_RANK = 3      # [b, s, h] activations; matmul_epilogue.mlir has 2-D and 3-D sequences
# AVX-512's plain plans (BERT's and ViT's [k, n] weights; their params: cm, cn, tm, tn
# and cm, cn, bm, bn, bk, tm, tn): with k in one block, the register-tile epilogue;
# longer k (xla_matmul's panels), the epilogue after the chunk's panels
_PLAIN_AVX512 = ("xla_matmul_short_k", "xla_matmul")


def epilogue_plan(op: ir.Operation, machine: Machine) -> Plan | None:
    """For an all-parallel generic reading one matmul's result (directly or
    through a tensor.expand_shape of its rows) that nothing else reads: the
    matmul's plan with this op as root and the matmul as its member, else None."""
    if op.name != "linalg.generic" or not _plain_elementwise(op):
        return None
    found = _matmul_input(op)
    if found is None:
        return None
    matmul, groups = found
    fused = _fused_plan(op, matmul, groups, machine)
    if fused is None and machine.l1d_bytes:
        # a small L1's whole-k block with no variant for this epilogue (3-D
        # rows): the plans of an L1 not known, whose panels have one
        return _fused_plan(op, matmul, groups, replace(machine, l1d_bytes=0))
    return fused


def _fused_plan(op: ir.Operation, matmul: ir.Operation, groups: list[list[int]],
                machine: Machine) -> Plan | None:
    """epilogue_plan's plan for ``op`` reading ``matmul``'s result, or None."""
    plan = contraction_plan(matmul, machine)
    if plan is not None and plan.sequence == ZERO_START:
        # the epilogue variants are the block-packed plan's (their tiles start from zeros)
        plan = replace(plan, sequence="xla_matmul_block_packed")
    if plan is not None and machine.registers >= 32 and plan.sequence in _PLAIN_AVX512:
        return _plain_avx512_tiles(op, plan, matmul, groups, machine.threads)
    if plan is None or plan.sequence not in (*_WITH_EPILOGUE, *_FUSED_B):
        return None
    if plan.sequence in _WITH_EPILOGUE and machine.registers >= 32 \
            and l1_holds_a_panel(machine, *plan.params[-2:]):
        # AVX-512's whole-k blocks where L1 holds the panels (Intel's 48 KiB):
        # their epilogue variants not measured there, the epilogue runs apart.
        # Where it does not (Zen 4's 32 KiB), measured with bias and ReLU on
        # one core: 128 x 768 x 3072 79.6 -> 86.0 GFLOP/s (the panels' epilogue
        # variant before), 128 x 768 x 768 85.1 -> 88.8, 1024^3 95.4 -> 95.5
        # (the epilogue apart before)
        return None
    cm, cn, *inner = plan.params
    chunks = _epilogue_chunks(groups, ir.ShapedType(op.results[0].type).shape, cm, cn)
    if chunks is None:
        return None
    rank = len(chunks)
    shape = ir.ShapedType(op.results[0].type).shape
    k = ir.ShapedType(matmul.operands[0].type).shape[1]
    _, bk, tm, _ = inner
    columns = cn or ir.ShapedType(matmul.results[0].type).shape[1]
    tiles = bk == k and columns <= BLOCK and _tiles_are_boxes(groups, shape, tm)
    if plan.sequence in _FUSED_B:      # B made by its producer
        if tiles:
            # B's producer only: these tiles' sequences leave A's widening apart
            return Plan(f"xla_matmul_epilogue_tiles_fused_b_{rank}d", (*chunks, *inner), (matmul, plan.members[0]))
        return Plan(f"xla_matmul_fused_b_epilogue_{rank}d", (*chunks, *inner), (matmul, *plan.members))
    if tiles:
        rows = cm or shape[0]
        if _one_tall_tile(rank, rows, ir.ShapedType(matmul.results[0].type).shape[0], tm):
            # all of C's few rows in one register tile one vector wide: B read once, in place
            bn, bk = inner[:2]
            return Plan(UNPACKED_TILES, (*chunks, bn, bk, rows, machine.vector_bytes // 4), (matmul,))
        return Plan(_tiles_sequence(rank, rows, tm), (*chunks, *inner), (matmul,))
    return Plan(f"{plan.sequence}_epilogue_{rank}d", (*chunks, *inner), (matmul,))


def _plain_avx512_tiles(op: ir.Operation, plan: Plan, matmul: ir.Operation,
                        groups: list[list[int]], threads: int) -> Plan | None:
    """AVX-512's epilogue for a plain plan: in the register tiles where k is
    one block and the chunk at most BLOCK columns (packed once, as AVX2's
    block-packed chunk is); after the chunk's panels where k is longer
    (`xla_matmul`: ViT's and BERT's second MLP dots), or None."""
    cm, cn, *rest = plan.params
    tm, tn = rest[-2:]
    k = ir.ShapedType(matmul.operands[0].type).shape[1]
    n = ir.ShapedType(matmul.results[0].type).shape[1]
    columns = cn or n
    shape = ir.ShapedType(op.results[0].type).shape
    # chunks of whole images' rows: BERT's 64-row chunks of [4, 128] rows are 128
    inner = math.prod(shape[d] for d in groups[0][1:])
    chunks = _epilogue_chunks(groups, shape, -(-cm // inner) * inner if cm else 0, cn)
    if chunks is None:
        return None
    if k > BLOCK:
        if plan.sequence != "xla_matmul":
            return None
        if _images_apart(cm, cn, shape, groups, threads, n):
            bm = rest[0] if rest[0] < shape[1] else 0       # an image's rows: A's row blocks only past bm
            return Plan("xla_matmul_epilogue_3d", (1, 0, 0, bm, *rest[1:]), (matmul,))
        return Plan(f"xla_matmul_epilogue_{len(chunks)}d", (*chunks, *rest), (matmul,))
    if columns > BLOCK or columns % tn or not _tiles_are_boxes(groups, shape, tm):
        return None
    rows = cm or ir.ShapedType(matmul.results[0].type).shape[0]
    return Plan(_tiles_sequence(len(chunks), rows, tm), (*chunks, columns, k, tm, tn), (matmul,))


UNPACKED_TILES = "xla_matmul_epilogue_tiles_unpacked_2d"
MAX_TALL_TILE_ROWS = 8      # AVX2: 8 accumulators, B's vector and A's broadcast: 10 of 16 registers


def _one_tall_tile(rank: int, chunk_rows: int, m: int, tm: int) -> bool:
    """Whether a chunk's rows, all of C's (at most MAX_TALL_TILE_ROWS, more
    than the usual tile's), become one register tile one vector wide: AVX2
    cuts an LSTM step's 8 rows into two 4 x 16 tiles, each reading all of B
    from a packed panel; as one 8 x 8 tile B is read once, in place
    (flax_lstm_scan at x86-64-v3: 8 of 9 rounds of CPU time per call lower,
    about 12%; docs/PERFORMANCE.md). The k order of each sum is the same."""
    return rank == 2 and chunk_rows == m and tm < m <= MAX_TALL_TILE_ROWS


def _tiles_sequence(rank: int, chunk_rows: int, tm: int) -> str:
    """The register-tile epilogue's sequence: B's panels packed, or, where a
    chunk's rows are one register tile (an LSTM step's 8 x 256 . 256 x 1024
    with AVX-512's 8-row tiles), read in place: each panel was copied to be
    read once (matmul_epilogue_unpacked.mlir; 2-D only). Two tiles or more
    (AVX2's 4-row tiles of the same 8 rows) keep the packed panels: read
    twice in place, B's rows 4 KiB apart, it was no faster in CPU time."""
    if rank == 2 and chunk_rows <= tm:
        return UNPACKED_TILES
    return f"xla_matmul_epilogue_tiles_{rank}d"


def _images_apart(cm: int, cn: int, shape: list[int], groups: list[list[int]], threads: int,
                  n: int) -> bool:
    """Whether chunks of one image's rows beat the plan's chunks of columns:
    each column chunk read all of A again (ViT's second MLP dot, 788 x 768
    . 768 x 192: A 2.4 MB read by six 32-column chunks), an image's chunk
    packs B's panels once (590 KB). Images a multiple of the threads, A
    the larger operand. ViT's dot alone, two threads: 0.93x and 0.86x per
    round; one core 0.99x (docs/PERFORMANCE.md)."""
    return bool(cn) and not cm and groups[0] == [0, 1] and shape[0] % threads == 0 \
        and shape[0] * shape[1] > n


def _plain_elementwise(op: ir.Operation) -> bool:
    """Every loop parallel, one result, static f32 shapes, no index reads
    (an index-reading body, a concatenate, is no cheap epilogue)."""
    iterators = [text_of(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
    if any("parallel" not in it for it in iterators) or len(op.results) != 1:
        return False
    result = ir.ShapedType(op.results[0].type)
    if not result.has_static_shape or str(result.element_type) != "f32" or not 2 <= result.rank <= MAX_RANK:
        return False
    body = op.regions[0].blocks[0]
    return all(inner.operation.name not in ("linalg.index", "tensor.extract") and not inner.operation.regions
               for inner in body.operations)


def _matmul_input(op: ir.Operation) -> tuple[ir.Operation, list[list[int]]] | None:
    """(the matmul, the epilogue dims each of C's two dims spans) for the one
    input that is a matmul's only-read result, read with the identity map."""
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    inputs = len(op.operands) - 1
    found = []
    for value, amap in zip(list(op.operands)[:inputs], maps):
        source, groups = _through_expand(value)
        producer = source.owner
        if isinstance(producer, ir.OpView) and producer.name == "linalg.matmul" \
                and _read_once(source) and str(amap) == str(ir.AffineMap.get_identity(amap.n_dims)):
            found.append((producer.operation, groups))
    return found[0] if len(found) == 1 else None


def _through_expand(value: ir.Value) -> tuple[ir.Value, list[list[int]]]:
    """The value under a tensor.expand_shape that only this reads, with its
    reassociation; else the value itself, one dim a group."""
    owner = value.owner
    if isinstance(owner, ir.OpView) and owner.name == "tensor.expand_shape" and _read_once(value):
        groups = [[ir.IntegerAttr(d).value for d in ir.ArrayAttr(g)]
                  for g in ir.ArrayAttr(owner.attributes["reassociation"])]
        return owner.operands[0], groups
    rank = ir.ShapedType(value.type).rank
    return value, [[d] for d in range(rank)]


def _read_once(value: ir.Value) -> bool:
    return len(list(value.uses)) == 1


def _tiles_are_boxes(groups: list[list[int]], shape: list[int], tm: int) -> bool:
    """Whether C's tm x tn register tiles can be tiled from the epilogue as
    1 x .. x tm x tn boxes: C's rows its leading dims, its columns the last,
    and the innermost row dim at least tm long (a tile never spans two of its
    rows: 197 rows an image are 32 tiles and a masked one of 5)."""
    rows, columns = groups
    rank = len(shape)
    return columns == [rank - 1] and rows == list(range(rank - 1)) and shape[rank - 2] >= tm


def _epilogue_chunks(groups: list[list[int]], shape: list[int], cm: int, cn: int) -> tuple[int, ...] | None:
    """The epilogue's chunk sizes giving the matmul's cm x cn chunks (0: whole),
    or None where a chunk of C's rows is no box of the epilogue's dims."""
    if len(groups) != 2:
        return None
    rows, columns = groups
    chunks = [0] * len(shape)
    if cn:
        if len(columns) != 1:
            return None
        chunks[columns[0]] = cn
    if cm:
        inner = 1
        for dim in rows[1:]:
            inner *= shape[dim]
        if cm % inner:
            return None
        chunks[rows[0]] = cm // inner
    return tuple(chunks)
