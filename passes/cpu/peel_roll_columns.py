"""xla-peel-roll-columns: a loop whose body picks a roll's slice by its
innermost index is split among the threads by rows, and each chunk's columns
are peeled into stretches in which every pick is made and every read is
contiguous."""

from __future__ import annotations

import os
import re

from xlac.mlir import dialect, ir, transform_interpreter
from xlac.passes.base import ModulePass, dim_position, module_ops, nested_ops, text_of
from xlac.passes.cpu.affine_as_arith import affine_as_arith
from xlac.passes.cpu.plans.chunks import thread_tiles
from xlac.passes.cpu.plans.narrow_tails import lanes
from xlac.passes.cpu.plans.schedule_plan import Machine, has_math, loop_extents, loop_nest
from xlac.passes.lower.pad_as_slices import insert_slice
from xlac.record import record

MAX_PARTS = 6           # column stretches a chunk may split into (picks' edges, vectors' edges)
_TAG = "xla_peel_roll_columns"


@record
class PeelRollColumns(ModulePass):
    """Tile a `linalg.generic` of parallel loops (two or more), whose body
    branches on `innermost index < c` (`scf.if`, a concatenate's pick of its
    operand: a roll along the last axis), into an `scf.forall` over the
    threads' chunks of its outer loops, then split each chunk's generic
    along its innermost loop at those constants and where the longest stretch
    stops filling whole vectors: one generic per stretch of columns, all in
    the one chunk, reading and writing its slice of each operand, each branch
    on the innermost index folded to the side its stretch takes, the
    innermost index offset by the stretch's start. xla-apply-schedules then
    vectorizes each stretch (its chunk is small: no second forall).

    Why: a roll (`jnp.roll` along the last axis: slices of one tensor side by
    side) fused into its readers' loop picks its slice per element; the pick
    changes inside a vector, so no vector schedule took the loop and it ran
    as scalar code with a branch per element (jax_shallow_water's three
    stencil kernels, about two thirds of a step). Within a stretch each read
    is a slice at `index + constant`: a contiguous load, no select, no mask
    (the stretch of the vectors' remainder is taken whole). The stretches of
    one chunk are one kernel: the row split, one fork-join, the edge columns
    read while their rows are in cache (xla-split-roll-columns, tried before,
    made each stretch a kernel of its own over every row: docs/PERFORMANCE.md).

        %r = linalg.generic ... {          // (i, j) in 256 x 64
          %t = scf.if (j < 63) { extract %a[i, j] } else { extract %b[i, j - 63] }
        }
      ->
        scf.forall (%c) in (8) {            // rows [32 c, 32 c + 32)
          generic (columns [0, 48)) { extract %a[i', j] }
          generic (columns [48, 63)) { extract %a[i', j + 48] }
          generic (columns [63, 64)) { extract %b[i', (j + 63) - 63] }
        }

    Options as xla-apply-schedules': `threads` (0: every core this process
    may use), `vector-bytes` (0: this host's).
    """

    name = "xla-peel-roll-columns"
    threads: int = 0
    vector_bytes: int = 0

    acts_on = frozenset({"linalg.generic"})

    def run(self, module: ir.Operation) -> None:
        machine = self.machine()
        for generic in [op for op in module_ops(module) if op.name == "linalg.generic"]:
            if _within_forall(generic):
                continue
            cuts = _cuts(generic)
            chunks = _row_chunks(generic, machine) if cuts else None
            if chunks is None:
                continue
            cuts = _with_vector_edges(generic, cuts, machine)
            if len(cuts) >= MAX_PARTS:
                continue
            tile = _tile_rows(module, generic, chunks)
            if tile is not None:
                _split(tile, cuts)

    def machine(self) -> Machine:
        from xlac.cpu_model import cpu_model
        threads = self.threads or len(os.sched_getaffinity(0))
        return Machine(threads, self.vector_bytes or cpu_model("host").vector_bytes)


def _within_forall(op: ir.Operation) -> bool:
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        if parent.name == "scf.forall":
            return True
        parent = parent.parent
    return False


def _row_chunks(generic: ir.Operation, machine: Machine) -> list[int] | None:
    """The forall tile sizes of ``generic``'s loops: the threads' chunks of
    the outer loops, each dividing its loop (static chunk shapes), the
    innermost loop whole (0); None when it has one loop."""
    extents = loop_extents(generic)
    if not extents or len(extents) < 2:
        return None
    chunks = list(thread_tiles(tuple(extents), machine.threads, 1, _reads_per_element(generic)))
    if chunks == extents:
        chunks = [extents[0]] + [0] * (len(extents) - 1)      # one chunk: all stretches still one kernel
    if chunks[-1] not in (0, extents[-1]):
        return None
    chunks[-1] = 0
    return [_dividing(extent, chunk) for extent, chunk in zip(extents, chunks)]


def _reads_per_element(generic: ir.Operation) -> int:
    """The tensors an iteration reads (its operands and the body's reads):
    a stencil's iteration is a dozen loads, worth splitting where one load's
    elementwise loop is not (thread_tiles' ``inner_work``)."""
    reads = sum(1 for op in nested_ops(generic) if op.name == "tensor.extract")
    return max(1, len(generic.operands) + reads)


def _dividing(extent: int, chunk: int) -> int:
    """The largest chunk no larger than ``chunk`` that divides ``extent`` evenly
    in as few parts (0 stays 0: the loop is whole)."""
    if chunk <= 0 or chunk >= extent:
        return chunk
    parts = -(-extent // chunk)
    while extent % parts:
        parts += 1
    return extent // parts


def _with_vector_edges(generic: ir.Operation, cuts: list[int], machine: Machine) -> list[int]:
    """``cuts`` plus, in each stretch longer than a vector that whole vectors
    do not fill, a cut where they stop: the rest is a stretch of its own,
    vectorized whole (xla_elementwise_*d takes a short loop whole, no mask),
    so no vector of the long stretch is masked."""
    nest = loop_nest(generic)
    extent = loop_extents(generic)[-1]
    if nest is None:
        return cuts
    vector = lanes(nest, machine) * (4 if has_math(generic) else 1)
    edges = [0, *cuts, extent]
    more = []
    for start, end in zip(edges, edges[1:]):
        if end - start > vector and (end - start) % vector:
            more.append(start + (end - start) // vector * vector)
    return sorted(set(cuts) | set(more))


def _tile_rows(module: ir.Operation, generic: ir.Operation, chunks: list[int]) -> ir.Operation | None:
    """``generic`` tiled by ``chunks`` into an scf.forall (the upstream
    tiling); the generic of one chunk, or None when the tiling failed."""
    generic.attributes[_TAG] = ir.UnitAttr.get(generic.context)
    sizes = ", ".join(str(c) for c in chunks)
    script = ir.Module.parse(f"""
module attributes {{transform.with_named_sequence}} {{
  transform.named_sequence @__transform_main(%root: !transform.any_op {{transform.readonly}}) {{
    %op = transform.structured.match attributes{{{_TAG}}} in %root : (!transform.any_op) -> !transform.any_op
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [{sizes}]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }}
}}""", generic.context)
    interpreter = transform_interpreter()
    options = interpreter.TransformOptions()
    options.expensive_checks = False
    try:
        interpreter.apply_named_sequence(module, script.body.operations[0].operation,
                                             script.operation, options)
    except (ValueError, ir.MLIRError):
        tagged = [op for op in nested_ops(module) if _TAG in op.attributes]
        for op in tagged:
            del op.attributes[_TAG]
        return None
    tiles = [op for op in nested_ops(module) if _TAG in op.attributes]
    for op in tiles:
        del op.attributes[_TAG]
    return tiles[0] if len(tiles) == 1 else None


def _cuts(generic: ir.Operation) -> list[int]:
    """Where the innermost loop's picks change, or [] when it cannot be split."""
    extents = loop_extents(generic)
    kinds = [text_of(a) for a in generic.attributes["iterator_types"]]
    if not extents or any("parallel" not in kind for kind in kinds):
        return []
    innermost = len(extents) - 1
    if not all(_walk_dim(amap, innermost) is not False for amap in _maps(generic)):
        return []
    cuts = {_pick_bound(op, innermost) for op in _branches(generic.regions[0].blocks[0])}
    cuts.discard(None)
    cuts = sorted(c for c in cuts if 0 < c < extents[innermost])
    return cuts if 0 < len(cuts) < MAX_PARTS else []


def _maps(generic: ir.Operation) -> list[ir.AffineMap]:
    return [ir.AffineMapAttr(a).value for a in generic.attributes["indexing_maps"]]


def _walk_dim(amap: ir.AffineMap, loop: int):
    """Which operand dim the map walks with loop ``loop`` (None: no dim;
    False: through an expression this pass does not slice)."""
    for position, expr in enumerate(amap.results):
        dim = dim_position(expr)
        if dim is not None:         # a plain dN: read as such, not printed
            if dim == loop:
                return position
        elif f"d{loop}" in re.findall(r"d\d+", str(expr)):
            return False
    return None


def _branches(block: ir.Block) -> list[ir.Operation]:
    """The `scf.if` ops of ``block``, those nested in them too."""
    found = []
    for op in block.operations:
        if op.operation.name == "scf.if":
            found.append(op.operation)
            found += [inner for region in op.operation.regions if len(region.blocks)
                      for inner in _branches(region.blocks[0])]
    return found


def _body_ops(generic: ir.Operation) -> list[ir.Operation]:
    return [op.operation for op in generic.regions[0].blocks[0].operations]


def _pick_bound(branch: ir.Operation, innermost: int) -> int | None:
    """``c`` when ``branch`` is taken on `innermost index < c` (unsigned or signed)."""
    condition = branch.operands[0].owner
    if isinstance(condition, ir.Block) or condition.operation.name != "arith.cmpi":
        return None
    condition = condition.operation
    if ir.IntegerAttr(condition.attributes["predicate"]).value not in (2, 6):   # slt, ult
        return None
    index, bound = (operand.owner for operand in condition.operands)
    if isinstance(index, ir.Block) or isinstance(bound, ir.Block):
        return None
    if index.operation.name != "linalg.index" or bound.operation.name != "arith.constant" or \
            ir.IntegerAttr(index.operation.attributes["dim"]).value != innermost:
        return None
    return ir.IntegerAttr(bound.operation.attributes["value"]).value


def _split(generic: ir.Operation, cuts: list[int]) -> None:
    extents = loop_extents(generic)
    innermost = len(extents) - 1
    starts = [0, *cuts]
    ends = [*cuts, extents[innermost]]
    n_ins = ir.DenseI32ArrayAttr(generic.attributes["operandSegmentSizes"])[0]
    maps = _maps(generic)
    with ir.InsertionPoint(generic), generic.location:
        wholes = list(generic.operands[n_ins:])
        for start, end in zip(starts, ends):
            parts = [_cut(value, _walk_dim(amap, innermost), start, end)
                     for value, amap in zip([*generic.operands[:n_ins], *wholes], maps)]
            piece = ir.Operation.create(
                "linalg.generic", results=[v.type for v in parts[n_ins:]], operands=parts,
                attributes={name: generic.attributes[name] for name in generic.attributes}, regions=1)
            copy = generic.clone(ir.InsertionPoint(piece))
            copy.regions[0].blocks[0].append_to(piece.regions[0])
            copy.erase()
            _fix_body(piece, innermost, start, end)
            affine_as_arith(_body_ops(piece))
            wholes = [_paste(result, whole, _walk_dim(amap, innermost), start)
                      for result, whole, amap in zip(piece.results, wholes, maps[n_ins:])]
    for result, whole in zip(generic.results, wholes):
        result.replace_all_uses_with(whole)
    generic.erase()


def _cut(value: ir.Value, dim, start: int, end: int) -> ir.Value:
    if dim is None:
        return value
    shape = list(ir.RankedTensorType(value.type).shape)
    offsets = [0] * len(shape)
    offsets[dim], shape[dim] = start, end - start
    element = ir.RankedTensorType(value.type).element_type
    return ir.Operation.create(
        "tensor.extract_slice", results=[ir.RankedTensorType.get(shape, element)],
        operands=[value], attributes={
            "static_offsets": ir.DenseI64ArrayAttr.get(offsets),
            "static_sizes": ir.DenseI64ArrayAttr.get(shape),
            "static_strides": ir.DenseI64ArrayAttr.get([1] * len(shape)),
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 0, 0, 0]),
        }).results[0]


def _paste(part: ir.Value, whole: ir.Value, dim: int, start: int) -> ir.Value:
    shape = list(ir.RankedTensorType(part.type).shape)
    offsets = [0] * len(shape)
    offsets[dim] = start
    return insert_slice(part, whole, offsets, shape)


def _fix_body(piece: ir.Operation, innermost: int, start: int, end: int) -> None:
    """Fold the picks of the stretch [start, end) and offset the innermost index."""
    while True:                 # a pick of three operands nests a branch in a branch
        picks = [(op, _pick_bound(op, innermost)) for op in _body_ops(piece) if op.name == "scf.if"]
        picks = [(branch, bound) for branch, bound in picks
                 if bound is not None and (end <= bound or start >= bound)]
        if not picks:
            break
        for branch, bound in picks:
            _inline(branch, 0 if end <= bound else 1)
    arith = dialect("arith")
    for index in [op for op in _body_ops(piece) if op.name == "linalg.index"]:
        if ir.IntegerAttr(index.attributes["dim"]).value != innermost or start == 0:
            continue
        with ir.InsertionPoint(index), index.location:
            fresh = ir.Operation.create("linalg.index", results=[ir.IndexType.get()],
                                        attributes={"dim": index.attributes["dim"]})
            shifted = arith.addi(fresh.results[0], arith.constant(ir.IndexType.get(), start))
        index.results[0].replace_all_uses_with(shifted)
        index.erase()
    _fold_offsets(piece, innermost)
    _drop_dead(piece)


def _inline(branch: ir.Operation, side: int) -> None:
    block = branch.regions[side].blocks[0]
    ops = [op.operation for op in block.operations]
    for op in ops[:-1]:
        op.move_before(branch)
    yielded = list(ops[-1].operands)
    for result, value in zip(branch.results, yielded):
        result.replace_all_uses_with(value)
    branch.erase()


def _fold_offsets(piece: ir.Operation, innermost: int) -> None:
    """Each read's last index `innermost index + constants` as one `addi`
    (or the index itself): the form the vectorizer reads contiguously."""
    arith = dialect("arith")
    for read in [op for op in _body_ops(piece) if op.name == "tensor.extract"]:
        last = len(read.operands) - 1
        found = _offset_of(read.operands[last], innermost)
        if found is None:
            continue
        index, offset = found
        if offset == 0:
            read.operands[last] = index
            continue
        with ir.InsertionPoint(read), read.location:
            read.operands[last] = arith.addi(index, arith.constant(ir.IndexType.get(), offset))


def _offset_of(value: ir.Value, innermost: int, depth: int = 0):
    """(the innermost linalg.index, k) when ``value`` is that index plus k."""
    owner = value.owner
    if isinstance(owner, ir.Block) or depth > 8:
        return None
    op = owner.operation
    if op.name == "linalg.index":
        return (value, 0) if ir.IntegerAttr(op.attributes["dim"]).value == innermost else None
    if op.name not in ("arith.addi", "arith.subi"):
        return None
    left, right = op.operands
    constant = _constant(right)
    if constant is None and op.name == "arith.addi":
        left, constant = right, _constant(left)
    found = None if constant is None else _offset_of(left, innermost, depth + 1)
    if found is None:
        return None
    return found[0], found[1] + (constant if op.name == "arith.addi" else -constant)


def _constant(value: ir.Value) -> int | None:
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.operation.name != "arith.constant":
        return None
    return ir.IntegerAttr(owner.operation.attributes["value"]).value


def _drop_dead(piece: ir.Operation) -> None:
    """Erase the body's arithmetic nothing reads (the folded picks' compares)."""
    changed = True
    while changed:
        changed = False
        for op in reversed(_body_ops(piece)):
            if op.name.startswith("arith.") and all(not list(r.uses) for r in op.results):
                op.erase()
                changed = True
                break
