"""xla-hoist-window-accumulators: a pooling or depthwise register tile carried
through its window's tap loops in registers, read before them and written
once after them."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, is_within, module_ops

TAPS = "xla.window_taps"           # passes/cpu/schedules/pooling.mlir's outer tap loop
DYNAMIC = -(2 ** 63)               # ShapedType::kDynamic: a stride, offset or size not known


class HoistWindowAccumulators(ModulePass):
    """In the tap loops the pooling schedules tag (`xla.window_taps`: the
    window's (kh, kw) loops around a tw x tc output tile of
    `xla_pooling_nhwc[_padded]`), read the output tile once before them,
    carry it as the loops' `iter_args` and write it once after them.

    Why: after bufferization each tap reads the tile from the output buffer
    and writes it back (the read of the chunk, the write of a rank-reduced
    subview of it), and LLVM keeps both: it cannot tell the output from the
    weights or the input (nothing says they do not alias). The 4 x 16 v3 tile
    of a 144-channel depthwise convolution made 8 stores per 8 FMAs. Here they
    cannot alias: the schedule's op writes its own result (a fresh tensor on
    the tensor level; bufferization gives it a buffer of its own), so the
    memref-level hoist is safe only in these loops, and done only there.

    The read and the write must touch the same elements: each resolves through
    its `memref.subview`s to one base buffer, a linear offset (constants and
    index values defined outside the tap loops) and the strides of the
    vector's dims; nothing else in the loops may use that buffer. The loops
    must have constant bounds and run. The arithmetic is unchanged (the same
    FMAs, maxima or sums, in the same order): the results are bit-identical.

        scf.for %kh ... {xla.window_taps} {
          scf.for %kw ... {
            %sv = memref.subview %out[0, %i, %j, %c] [1, 1, 4, 16] ... to memref<1x4x16xf32, ...>
            %acc = vector.transfer_read %out[%c0, %i, %j, %c] ... : vector<4x16xf32>
            %r = vector.fma %x, %w, %acc : vector<4x16xf32>
            vector.transfer_write %r, %sv[%c0, %c0, %c0] ...
          }
        }
      ->
        %acc0 = vector.transfer_read %out[%c0, %i, %j, %c] ...
        %t = scf.for %kh ... iter_args(%a = %acc0) {
          %u = scf.for %kw ... iter_args(%b = %a) {
            %r = vector.fma %x, %w, %b : vector<4x16xf32>
            scf.yield %r
          }
          scf.yield %u
        } {xla.window_taps}
        vector.transfer_write %t, %out[%c0, %i, %j, %c] ...
    """

    name = "xla-hoist-window-accumulators"

    acts_on = frozenset(("scf.for",))

    def run(self, module: ir.Operation) -> None:
        tagged = [op for op in module_ops(module) if op.name == "scf.for" and TAPS in op.attributes]
        for loop in [op for op in tagged if not _tagged_parent(op)]:     # the outer tap loops
            found = _tile_pair(loop)
            if found is not None:
                _carry(loop, *found)


def _tagged_parent(op: ir.Operation) -> bool:
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        if parent.name == "scf.for" and TAPS in parent.attributes:
            return True
        parent = parent.parent
    return False


def _op(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    return owner.operation if isinstance(owner, ir.OpView) else owner


def _constant(value: ir.Value) -> int | None:
    op = _op(value)
    if op is None or op.name != "arith.constant" or not isinstance(op.attributes["value"], ir.IntegerAttr):
        return None
    return ir.IntegerAttr(op.attributes["value"]).value


def _runs(loop: ir.Operation) -> bool:
    lower, upper, step = (_constant(v) for v in loop.operands[:3])
    return None not in (lower, upper, step) and lower < upper and step > 0 and len(loop.operands) == 3


def _add(terms: dict, value: ir.Value, scale: int) -> bool:
    """terms += value * scale (a constant folds into the key None)."""
    known = _constant(value)
    key, scale = (None, scale * known) if known is not None else (value, scale)
    terms[key] = terms.get(key, 0) + scale
    return True


def _strides(memref: ir.Type) -> list[int] | None:
    strides, _ = ir.MemRefType(memref).get_strides_and_offset()
    return None if DYNAMIC in strides else list(strides)


def _offsets(subview: ir.Operation) -> list | None:
    """The subview's offsets, ints and values; None if a stride is not 1."""
    attrs = subview.attributes
    if any(s != 1 for s in ir.DenseI64ArrayAttr(attrs["static_strides"])):
        return None
    dynamic = iter(subview.operands[1:])
    return [next(dynamic) if o == DYNAMIC else o
            for o in ir.DenseI64ArrayAttr(attrs["static_offsets"])]


def _view_offset(memref: ir.Value, terms: dict) -> ir.Value | None:
    """Add ``memref``'s element offset within its base to ``terms``; the base."""
    while (op := _op(memref)) is not None and op.name == "memref.subview":
        offsets, strides = _offsets(op), _strides(op.operands[0].type)
        if offsets is None or strides is None:
            return None
        for offset, stride in zip(offsets, strides):
            _ = _add(terms, offset, stride) if isinstance(offset, ir.Value) \
                else terms.__setitem__(None, terms.get(None, 0) + offset * stride)
        memref = op.operands[0]
    return memref


def _access(transfer: ir.Operation, memref: ir.Value, indices) -> tuple | None:
    """(base buffer, linear offset terms, the vector dims' strides, vector type)."""
    strides = _strides(memref.type)
    terms: dict = {}
    base = _view_offset(memref, terms)
    if strides is None or base is None:
        return None
    for index, stride in zip(indices, strides):
        _add(terms, index, stride)
    pmap = ir.AffineMapAttr(transfer.attributes["permutation_map"]).value
    dims = []
    for expr in pmap.results:
        if not isinstance(expr, ir.AffineDimExpr):
            return None                               # a broadcast dim: not a tile
        dims.append(strides[ir.AffineDimExpr(expr).position])
    offset = frozenset((k, v) for k, v in terms.items() if v)
    return base, offset, tuple(dims), str(transfer.operands[0].type if transfer.name == "vector.transfer_write"
                                          else transfer.results[0].type)


def _uses_base(op: ir.Operation, base: ir.Value, views: set) -> bool:
    return any(v in views for v in op.operands) or any(_base_of(v) == base for v in op.operands
                                                        if isinstance(v.type, ir.MemRefType))


def _base_of(memref: ir.Value) -> ir.Value:
    while (op := _op(memref)) is not None and op.name in ("memref.subview", "memref.collapse_shape",
                                                            "memref.expand_shape", "memref.cast"):
        memref = op.operands[0]
    return memref


def _chain(loop: ir.Operation) -> list[ir.Operation] | None:
    """The tap loops, outermost first: each but the last holds one scf.for."""
    chain = [loop]
    while True:
        inner = [op.operation for op in chain[-1].regions[0].blocks[0].operations if op.operation.name == "scf.for"]
        if not inner:
            return chain if all(_runs(one) for one in chain) else None
        if len(inner) > 1:
            return None
        chain.append(inner[0])


def _tile_pair(loop: ir.Operation):
    """(loops, read, write): the output tile's read and write in the
    innermost tap loop, of the same elements; None if not so."""
    chain = _chain(loop)
    if chain is None:
        return None
    body = [op.operation for op in chain[-1].regions[0].blocks[0].operations]
    writes = [op for op in body if op.name == "vector.transfer_write"]
    if len(writes) != 1 or len(writes[0].operands) != 2 + _rank(writes[0].operands[1]):
        return None
    write = writes[0]
    target = _access(write, write.operands[1], write.operands[2:])
    if target is None or any(_defined_in(v, loop) for v, _ in target[1] if v is not None):
        return None
    base = target[0]
    reads = [op for op in body if op.name == "vector.transfer_read" and _base_of(op.operands[0]) == base]
    if len(reads) != 1:
        return None
    read = reads[0]
    if not read.is_before_in_block(write) or len(read.operands) != 2 + _rank(read.operands[0]):
        return None                                   # a masked read, or one after the write
    if _access(read, read.operands[0], read.operands[1:-1]) != target \
            or any(_defined_in(v, loop) for v in read.operands):
        return None
    views = set(write.operands[1:2])
    allowed = {read, write}
    for op in _nested(loop):
        if op not in allowed and op.name != "memref.subview" and _uses_base(op, base, views):
            return None
        if op.name == "memref.subview" and _base_of(op.results[0]) == base and not _feeds_only(op, write):
            return None
    return chain, read, write


def _rank(memref: ir.Value) -> int:
    return ir.MemRefType(memref.type).rank


def _feeds_only(subview: ir.Operation, write: ir.Operation) -> bool:
    """Whether ``subview``'s result is used only by subviews feeding ``write`` or by it."""
    for use in subview.results[0].uses:
        user = use.owner.operation if isinstance(use.owner, ir.OpView) else use.owner
        if user == write:
            continue
        if user.name != "memref.subview" or not _feeds_only(user, write):
            return False
    return True


def _nested(op: ir.Operation) -> list[ir.Operation]:
    found = []
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                found.append(inner.operation)
                found.extend(_nested(inner.operation))
    return found


def _defined_in(value: ir.Value, loop: ir.Operation) -> bool:
    owner = value.owner
    if isinstance(owner, ir.Block):
        parent = owner.owner
        parent = parent.operation if isinstance(parent, ir.OpView) else parent
        return parent == loop or is_within(parent, loop)
    return is_within(_op(value), loop)


def _carry(loop: ir.Operation, chain, read: ir.Operation, write: ir.Operation) -> None:
    """The tile read before ``loop``, carried through ``chain``, written after it."""
    start = read.clone(ir.InsertionPoint(loop))
    result = _rebuild(chain, 0, start.results[0], read, write)
    with loop.context, loop.location, ir.InsertionPoint(loop):      # after the new loops
        ir.Operation.create(
            "vector.transfer_write", operands=[result, *start.operands[:-1]],
            attributes={"permutation_map": start.attributes["permutation_map"],
                        "in_bounds": start.attributes["in_bounds"],
                        "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1, len(start.operands) - 2, 0])})
    loop.erase()


def _rebuild(chain, depth: int, init: ir.Value, read: ir.Operation, write: ir.Operation) -> ir.Value:
    """``chain[depth]`` again with the tile as its iter_arg, before it, its
    ops moved in (the caller erases the old loop); the new loop's result."""
    old = chain[depth]
    with old.context, old.location, ir.InsertionPoint(old):
        new = ir.Operation.create("scf.for", results=[init.type], operands=[*old.operands[:3], init], regions=1,
                                  attributes={name: old.attributes[name] for name in old.attributes})
        body = new.regions[0].blocks.append(ir.IndexType.get(), init.type)
    old_body = old.regions[0].blocks[0]
    old_body.arguments[0].replace_all_uses_with(body.arguments[0])
    carried = body.arguments[1]
    ops = [o.operation for o in old_body.operations]
    for op in ops[:-1]:
        body.append(op)
    if depth + 1 < len(chain):
        out = _rebuild(chain, depth + 1, carried, read, write)
        chain[depth + 1].erase()
    else:
        read.results[0].replace_all_uses_with(carried)
        read.erase()
        out, view = write.operands[0], write.operands[1]
        write.erase()
        _erase_dead_views(view)
    with old.context, old.location, ir.InsertionPoint(body):
        ir.Operation.create("scf.yield", results=[], operands=[out])
    return new.results[0]


def _erase_dead_views(view: ir.Value) -> None:
    op = _op(view)
    while op is not None and op.name == "memref.subview" and not list(op.results[0].uses):
        source = op.operands[0]
        op.erase()
        op = _op(source)
