"""Which transform schedule each linalg op gets, and with which tile sizes.

Read by xla-apply-schedules. An op is described by its loops (extent and
kind of each) and element types; a plan names a `transform.named_sequence`
in passes/cpu/schedules/ and the i64 parameters it takes. Ops that no schedule
fits get no plan and lower to scalar loops as before.
"""

from __future__ import annotations

import math

from xlac.mlir import ir
from xlac.passes.base import dim_position, is_zero, text_of
from xlac.passes.cpu.expand_f8_casts import FORMATS as F8_FORMATS
from xlac.passes.cpu.plans.body_reads import gather_safe, stepping_loop
from xlac.passes.cpu.plans.chunks import block_tiles, blocked_sequence, body_work, streams_alone, thread_tiles
from xlac.passes.cpu.plans.kept_minor_plan import kept_minor_plan
from xlac.passes.cpu.plans.loop_trips import enclosing_trips
from xlac.passes.cpu.plans.minor_dim_plan import minor_dim_plan, minor_reads
from xlac.passes.cpu.plans.narrow_tails import peel_tail, streamed_bytes, vector_lanes
from xlac.passes.cpu.plans.pair_transpose_plan import pair_transpose_tiles
from xlac.passes.cpu.plans.permuted_reads import copy_permutation, permuted_read, transpose_block, transposed_read_loop
from xlac.record import record


@record
class Machine:
    """What the schedules are made for: the threads parallel loops are split
    among, the bytes in one SIMD register (64 AVX-512, 32 AVX2, 16 SSE) and
    in one core's L1 data cache (0: not known, the plans measured on 48 KiB)."""

    threads: int
    vector_bytes: int
    l1d_bytes: int = 0

    @property
    def registers(self) -> int:
        """SIMD registers: 32 with AVX-512, 16 with AVX2 and SSE (x86-64)."""
        return 32 if self.vector_bytes >= 64 else 16


MIN_WORK = 256               # smaller ops stay scalar loops: no gain, only compile time
SHORT_K = 256                # the matmul schedules' k block: shorter k needs none
MATH_UNROLL_OPERANDS = 8     # math kernels of more arrays: one register a value, not 4 (spills)
# f8 vectors: xla-expand-f8-casts converts them; i1: a byte in memory, moved as bytes (xla-i1-memory-as-i8)
VECTOR_ELEMENT_BYTES = {"i1": 1, "f32": 4, "f64": 8, "bf16": 2, "f16": 2, "i8": 1, "i16": 2, "i32": 4, "i64": 8,
                  **dict.fromkeys(F8_FORMATS, 1)}
_COMBINERS = {"arith.addf", "arith.mulf", "arith.addi", "arith.muli", "arith.andi", "arith.ori", "arith.xori",
              "arith.maximumf", "arith.minimumf", "arith.maxnumf", "arith.minnumf", "arith.maxsi", "arith.minsi",
              "arith.maxui", "arith.minui"}
CONTRACTIONS = {"linalg.matmul": "xla_matmul", "linalg.batch_matmul": "xla_batch_matmul",
                 "linalg.conv_2d_nhwc_hwcf": "xla_conv_2d_nhwc_hwcf"}
# per-channel windows, loops (n, oh, ow, c, kh, kw): poolings and depthwise convolutions
POOLINGS = ("linalg.pooling_nhwc_sum", "linalg.pooling_nhwc_max", "linalg.pooling_nhwc_min",
            "linalg.depthwise_conv_2d_nhwc_hwc")


@record(uncompared=("members",))
class Plan:
    """Apply ``sequence`` to the op with these parameters."""

    sequence: str
    params: tuple[int, ...]
    # ops fused into this op's loops (schedule argument after the op), consumers first
    members: tuple[ir.Operation, ...] = ()


@record
class LoopNest:
    extents: tuple[int, ...]
    reductions: tuple[int, ...]       # positions of the reduction loops
    element_bytes: int                # widest element in memory
    contiguous: int = -1              # the loop walking the first input's last dim


def loop_extents(op: ir.Operation) -> list[int] | None:
    """Each loop's extent, from the operand dims its plain ``dN`` map results
    walk (windows such as ``d3 * 2 + d4`` tell nothing; another operand must
    give those loops), whatever the element types; None if one stays unknown."""
    if "indexing_maps" not in op.attributes:
        return None
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    extents: dict[int, int] = {}
    for amap, value in zip(maps, op.operands):
        if not _is_static_tensor(value.type):
            continue
        for expr, size in zip(amap.results, value.type.shape):
            dim = dim_position(expr)
            if dim is not None:
                extents[dim] = size
    count = maps[0].n_dims if maps else 0
    if sorted(extents) != list(range(count)) or any(e <= 0 for e in extents.values()):
        return None
    return [extents[i] for i in range(count)]


def plan_for(op: ir.Operation, machine: Machine) -> Plan | None:
    """The vector schedule for ``op``, or None: then parallel_loops_plan.py's
    for a generic, else convert-linalg-to-loops' scalar loops."""
    nest = loop_nest(op)
    if nest is None or math.prod(nest.extents) * enclosing_trips(op) < MIN_WORK:
        return None
    if op.name in CONTRACTIONS or op.name in POOLINGS:
        return None                    # contraction_plan.py's
    if op.name == "linalg.fill" and _only_feeds_contractions(op):
        return None                    # the contraction's schedule fuses it into its tiles
    if op.name == "linalg.transpose":
        return _transpose_plan(op, nest, machine)
    if op.name not in ("linalg.generic", "linalg.fill"):
        return None
    if op.name == "linalg.generic" and copy_permutation(op) is not None:
        return _swap_plan(copy_permutation(op), nest, machine)
    if op.name == "linalg.generic" and not nest.reductions and simple_body(op):
        walked = transposed_read_loop(op)
        plan = _blocked_transpose_plan(walked, nest, machine) if walked is not None else None
        if plan is None and (permutation := permuted_read(op)) is not None:
            plan = _pair_transpose_plan(permutation, nest, machine)
        if plan is not None:
            return plan
    if not nest.reductions and simple_body(op, gathers=True):
        moved = moved_bytes(op) if reads_in_order(op) else None
        minor = minor_dim_plan(op, nest, machine, moved)
        heavy = has_math(op) and len(op.operands) <= MATH_UNROLL_OPERANDS
        plan = None if minor else _elementwise_plan(nest, machine, heavy, moved, body_work(op), 5 + minor_reads(op))
        return Plan(*minor) if minor else peel_tail(plan, op, nest, machine)
    if not simple_body(op):
        return None
    if len(op.results) == 1 and not narrow_float_sum(op, nest):
        kept = kept_minor_plan(op, nest, machine)
        return Plan(*kept) if kept else peel_tail(reduction_plan(nest, machine), op, nest, machine)
    return None


def narrow_float_sum(op: ir.Operation, nest: LoopNest) -> bool:
    """A sum or product whose accumulators are f16, bf16 or f8: 16 lanes would
    round 16 partial sums, and a bf16 sum of 4,096 numbers then differed from
    the interpreter's one-by-one sum by 19% of the largest result (measured).
    A reduce that only adds reaches here in f32 (xla-widen-narrow-sums);
    products, and sums the pass leaves (other targets' pipelines), stay so.
    Integers (any width, i1 too) add exactly in any order, max and min are
    exact in any order; f32 and f64 keep their vector sums as before."""
    if nest.element_bytes >= 4:
        return False
    floats = any(isinstance(v.type, ir.ShapedType) and not isinstance(
        ir.ShapedType(v.type).element_type, ir.IntegerType) for v in op.results)
    return floats and any(inner.operation.name in ("arith.addf", "arith.mulf")
                          for inner in op.regions[0].blocks[0].operations)


def iterations(op: ir.Operation) -> int:
    """Iterations of ``op``'s loop nest, else its largest static tensor's elements."""
    nest = loop_nest(op)
    if nest is not None:
        return math.prod(nest.extents)
    extents = loop_extents(op)
    if extents is not None:
        return math.prod(extents)
    sizes = [math.prod(v.type.shape) for v in [*op.operands, *op.results]
             if _is_static_tensor(v.type)]
    return max(sizes, default=0)


def loop_nest(op: ir.Operation) -> LoopNest | None:
    """Loop extents from the operand shapes through the indexing maps."""
    types = [o.type for o in op.operands]
    if not all(_is_static_tensor(t) or text_of(t) in VECTOR_ELEMENT_BYTES for t in types):
        return None
    elements = {text_of(t.element_type) if isinstance(t, ir.RankedTensorType) else text_of(t)
                for t in types}
    if not elements <= set(VECTOR_ELEMENT_BYTES):
        return None
    widest = max(VECTOR_ELEMENT_BYTES[e] for e in elements)
    if op.name in ("linalg.fill", "linalg.transpose"):     # loops = the result's dims
        shape = types[1].shape
        return LoopNest(tuple(shape), (), widest) if all(d > 0 for d in shape) else None
    if op.name == "linalg.conv_2d_nhwc_hwcf":      # loops n, oh, ow, f, kh, kw, c
        (n, oh, ow, f), (kh, kw, c, _) = types[2].shape, types[1].shape
        return LoopNest((n, oh, ow, f, kh, kw, c), (4, 5, 6), widest)
    if op.name in POOLINGS:                         # loops n, oh, ow, c, kh, kw
        (n, oh, ow, c), (kh, kw) = types[2].shape, types[1].shape[:2]
        return LoopNest((n, oh, ow, c, kh, kw), (4, 5), widest)
    if "indexing_maps" not in op.attributes:
        return None
    return _nest_from_maps(op, types, widest)


def _nest_from_maps(op: ir.Operation, types, widest: int) -> LoopNest | None:
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    extents: dict[int, int] = {}
    for amap, type_ in zip(maps, types):
        shape = type_.shape if isinstance(type_, ir.RankedTensorType) else []
        for expr, size in zip(amap.results, shape):
            dim = dim_position(expr)
            if dim is not None:
                extents[dim] = size
            elif not is_zero(expr):
                return None                     # windows, strides: not a plain projection
    count = maps[0].n_dims
    if sorted(extents) != list(range(count)) or any(e <= 0 for e in extents.values()):
        return None
    reductions = tuple(i for i, kind in enumerate(iterator_kinds(op, count)) if kind == "reduction")
    widest = widest if reductions else streamed_bytes(op, maps, types, VECTOR_ELEMENT_BYTES, widest)
    last = dim_position(maps[0].results[-1]) if maps[0].results else None
    return LoopNest(tuple(extents[i] for i in range(count)), reductions, widest,
                    -1 if last is None else last)


def _is_static_tensor(type_: ir.Type) -> bool:
    return isinstance(type_, ir.RankedTensorType) and type_.has_static_shape


def iterator_kinds(op: ir.Operation, count: int) -> list[str]:
    if "iterator_types" in op.attributes:
        return ["reduction" if "reduction" in text_of(a) else "parallel"
                for a in op.attributes["iterator_types"]]
    return ["parallel"] * (count - 1) + ["reduction"]      # matmul, batch_matmul: k last


def simple_body(op: ir.Operation, gathers: bool = False) -> bool:
    """Only arith/math scalar code (no nested regions) vectorizes safely; with
    ``gathers``, reads of other tensors at computed places too (tensor.extract:
    a contiguous vector load where the innermost loop walks the last dim,
    else a vector gather), but no gather from a slice (``gather_safe``)."""
    block = op.regions[0].blocks[0]
    allowed = ("linalg.yield", "linalg.index") + (("tensor.extract",) if gathers else ())
    loops = len(op.attributes["iterator_types"]) if "iterator_types" in op.attributes else 0
    for inner in block.operations:
        name = inner.operation.name
        if not (name.startswith(("arith.", "math.")) or name in allowed):
            return False
        if name == "tensor.extract" and not gather_safe(inner.operation, stepping_loop(loop_extents(op), loops)):
            return False
    return True


def vector_size(extent: int, lanes: int, registers: int = 1) -> int:
    """One register: out-of-order execution overlaps the iterations of memory-
    bound loops, and wider only makes more code to compile. Four for long
    math (exp, tanh polynomials), whose dependency chains need the overlap in
    the code. A short dim is taken whole, no mask."""
    return min(extent, registers * lanes)


def has_math(op: ir.Operation) -> bool:
    return any(inner.operation.name.startswith("math.")
               for inner in op.regions[0].blocks[0].operations)


def moved_bytes(op: ir.Operation) -> tuple[int, int]:
    """The bytes one call of ``op``'s kernel reads and writes: its inputs (and
    its inits where the body reads them: an add in place), and its inits."""
    inits = len(op.results)
    inputs, arguments = len(op.operands) - inits, op.regions[0].blocks[0].arguments
    read = written = 0
    for index, value in enumerate(op.operands):
        if not _is_static_tensor(value.type):
            continue
        size = math.prod(value.type.shape) * VECTOR_ELEMENT_BYTES.get(str(value.type.element_type), 8)
        if index < inputs or (index < len(arguments) and any(True for _ in arguments[index].uses)):
            read += size
        written += size * (index >= inputs)
    return read, written


def reads_in_order(op: ir.Operation) -> bool:
    """Whether every input of ``op`` is read in its loops' order (an identity,
    a broadcast: each map's ``dN`` results increase), so its kernel streams
    memory; a permuted read (a bias added to a transposed QKV) walks strides."""
    if "indexing_maps" not in op.attributes:
        return True                           # linalg.fill: writes only
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    for amap in maps[:len(op.operands) - len(op.results)]:
        dims = [d for d in map(dim_position, amap.results) if d is not None]
        if dims != sorted(dims):
            return False
    return True


def _elementwise_plan(nest: LoopNest, machine: Machine, math_heavy: bool = False,
                      moved: tuple[int, int] | None = None, work: int = 1, max_rank: int = 5) -> Plan | None:
    """Vectors along the innermost loop, chunks of the outer ones for the
    threads; one chunk (the calling thread) for a kernel that streams few
    bytes (``moved``; None: not known); six loops: minor_dim_plan.minor_reads."""
    rank = len(nest.extents)
    if not 1 <= rank <= max_rank:
        return None
    vector = vector_size(nest.extents[-1], vector_lanes(nest, machine, math_heavy), 4 if math_heavy else 1)
    alone = moved is not None and streams_alone(*moved, math_heavy)
    chunks = thread_tiles(nest.extents, 1 if alone else machine.threads, vector, work)
    return Plan(f"xla_elementwise_{rank}d", chunks + (vector,))


def _transpose_plan(op: ir.Operation, nest: LoopNest, machine: Machine) -> Plan | None:
    # its permutation: each output dim's input dim; the plans': each input dim's loop (output dim)
    permutation = list(ir.DenseI64ArrayAttr(op.attributes["permutation"]))
    return _swap_plan([permutation.index(k) for k in range(len(permutation))], nest, machine)


def _swap_plan(permutation: list[int], nest: LoopNest, machine: Machine) -> Plan | None:
    """A permuted copy: register blocks where its input (or its pairs) runs along another loop, else rows."""
    return _pair_transpose_plan(permutation, nest, machine) or \
        _blocked_transpose_plan(permutation[-1], nest, machine) or _elementwise_plan(nest, machine)


def _pair_transpose_plan(permutation: list[int], nest: LoopNest, machine: Machine) -> Plan | None:
    """Register blocks of pairs (pair_transpose_plan.py) for an op reading an
    operand of complex parts' pairs transposed (a transpose, or an
    elementwise op on one: a c128 -> c64 convert of ``x.T``), else None."""
    pairs = pair_transpose_tiles(nest.extents, permutation, machine.threads)
    return Plan(*pairs) if pairs else None


def _blocked_transpose_plan(walked: int, nest: LoopNest, machine: Machine) -> Plan | None:
    """Square blocks of the loop that walks the transposed input's contiguous
    dim and of the innermost loop (the output's), both a block long at least:
    read as rows of the input, transposed in registers, written as rows; a
    ragged dim's partial blocks peeled (transpose_peeled.mlir). Otherwise each output
    vector gathers its elements, a cache line apiece (x.T of 180x2048 f32: 1.1 ms; 0.09 in blocks)."""
    rank = len(nest.extents)
    side = transpose_block(nest.element_bytes)
    if not 2 <= rank <= 4 or walked == rank - 1 or side is None or min(nest.extents[walked], nest.extents[-1]) < side:
        return None
    block = [1] * rank
    block[walked] = block[-1] = side
    whole = not (nest.extents[walked] % side or nest.extents[-1] % side)
    return Plan(blocked_sequence(rank, whole, (nest.extents[walked] * nest.element_bytes,
                                               nest.extents[-1] * nest.element_bytes)),
                (block_tiles if whole else thread_tiles)(nest.extents, machine.threads, tuple(block)) + tuple(block))


def reduction_plan(nest: LoopNest, machine: Machine) -> Plan | None:
    """One reduction loop, innermost (stablehlo's order). Rows: it walks the
    input's contiguous dim; columns: the innermost parallel loop does.
    The schedules keep 16-lane accumulators: one AVX-512 register of 4-byte
    elements, two of 8-byte ones (f64 sums, as PyTorch's layer norm takes),
    a half or a quarter of one of narrow integers (i8 sums; i1 any/all)."""
    rank = len(nest.extents)
    if nest.element_bytes not in (1, 2, 4, 8) or rank > 4:
        return None
    if rank >= 2 and nest.reductions == tuple(range(1, rank)) and nest.contiguous == 0:
        lanes = outer_reduction_lanes(nest, machine)
        return Plan(f"xla_reduce_outer_{rank}d", thread_tiles((nest.extents[0],), machine.threads, lanes,
                                                              math.prod(nest.extents[1:])) + (lanes,))
    if nest.reductions != (rank - 1,):
        return None
    work = nest.extents[-1]
    if rank == 1:
        if nest.extents[0] % 32:
            return Plan("xla_reduce_1d_serial", ())
        return Plan("xla_reduce_1d", thread_tiles((32,), machine.threads, 1, work // 32))
    vector_dim = _reduction_vector_dim(nest)
    if vector_dim == rank - 1:
        return Plan(f"xla_reduce_rows_{rank}d", thread_tiles(nest.extents[:-1], machine.threads, 1, work))
    if vector_dim == rank - 2 and (rank == 2 or nest.extents[-2] % REDUCTION_LANES == 0):
        # a masked vector<1x16x1> read lowers to 1-lane loads given 16-lane
        # masks, which LLVM rejects: a 3-D one goes whole-vector only
        # (xla-collapse-reduction-loops makes 2-D ones of the rest it can)
        return Plan(f"xla_reduce_cols_{rank}d", thread_tiles(nest.extents[:-1], machine.threads, 16, work))
    return None


REDUCTION_LANES = 16         # the reduction schedules' vectors


# AVX-512: from 64 lanes LLVM aborted on mask copies ("Cannot emit physreg copy", CNN step)
MAX_AVX512_OUTER_LANES = 32


def outer_reduction_lanes(nest: LoopNest, machine: Machine) -> int:
    """The kept outputs one vector of ``xla_reduce_outer_*`` holds: half the registers'
    bytes (AVX2: 64 f32, 32 f64; AVX-512 at most 32), halved while the kept dim fills
    less than half of it, never under 16. A 512x1024 f32 column sum on AVX2: 16 lanes
    (one 64-byte line a row) 0.27-0.33 ms, 64 lanes 0.12-0.14 (XLA 0.18-0.21)."""
    lanes = max(REDUCTION_LANES, machine.registers // 2 * machine.vector_bytes // nest.element_bytes)
    if machine.vector_bytes >= 64:
        lanes = min(lanes, MAX_AVX512_OUTER_LANES)
    while lanes > REDUCTION_LANES and 2 * nest.extents[0] <= lanes:
        lanes //= 2
    return lanes


def _reduction_vector_dim(nest: LoopNest) -> int:
    """The loop the reduction schedules vectorize: the reduced one ("rows") or
    the innermost parallel one ("cols"), whichever walks the input's
    contiguous dim, unless that one is shorter than a vector and the other is
    not: a dim of 3 (x, y, z coordinates, as in an N-body step) in 16 masked
    lanes wastes 13 of them, where 16 strided reads along the other fill all."""
    rank = len(nest.extents)
    if not 2 <= rank <= 3 or nest.contiguous not in (rank - 1, rank - 2):
        return nest.contiguous         # no "cols" schedule of rank 4
    other = 2 * rank - 3 - nest.contiguous
    if nest.extents[nest.contiguous] < REDUCTION_LANES <= nest.extents[other]:
        return other
    return nest.contiguous


def _only_feeds_contractions(fill: ir.Operation) -> bool:
    users = [use.owner for use in fill.results[0].uses]
    return bool(users) and all(user.name in CONTRACTIONS or user.name in POOLINGS for user in users)
