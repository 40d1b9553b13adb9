"""xla-forward-slice-copies: a buffer written once and copied whole into a
slice of another is that slice itself (cpu, after bufferization)."""

from __future__ import annotations

from xlac.mlir import dialect, ir
from xlac.passes.base import ModulePass, ancestor_in_block, module_ops

#: Users of a view of the forwarded buffer that take any strided layout.
_LAYOUT_FREE = ("vector.transfer_read", "vector.transfer_write", "vector.load", "vector.store",
                "vector.maskedload", "vector.maskedstore", "memref.load", "memref.store",
                "memref.dealloc")


class ForwardSliceCopies(ModulePass):
    """Where `memref.copy %a, %s` copies a static `memref.alloc` %a, whose
    other users all come before the copy and are views (`memref.subview` of
    its rank) read and written by plain loads and stores, into %s, a static
    subview of another alloc %d, and no other user of %d before the copy
    touches the box of %s: %s replaces %a (its views become views of %s)
    and the copy goes.

    Why: one-shot bufferization cannot tell that the results of a
    multi-result `linalg.generic` written into disjoint slices of one tensor
    (xla-lower-fft's butterfly stages, via xla-results-in-slices) do not
    overlap: all results but the first got a buffer of their own and a copy
    into the slice, 23 copies of 43 KB for a radix-12 stage of a 180 x 720
    FFT (~0.1 ms of 0.55).

        %d = memref.alloc() : memref<2x4x8xf32>
        %s0 = memref.subview %d[0, 0, 0] [1, 4, 8] [1, 1, 1]
        %a = memref.alloc() : memref<4x8xf32>
        ... writes %s0 and %a (through subviews) ...
        %s1 = memref.subview %d[1, 0, 0] [1, 4, 8] [1, 1, 1]
        memref.copy %a, %s1
      ->
        the writes of %a go to %s1 (moved up), no %a, no copy
    """

    name = "xla-forward-slice-copies"

    def run(self, module: ir.Operation) -> None:
        copies = [op for op in module_ops(module) if op.name == "memref.copy"]
        kept = [copy for copy in copies if not _drop_self_copy(copy)]
        for copy in kept:
            _forward(copy)


def _drop_self_copy(copy: ir.Operation) -> bool:
    """Erase a copy between two equal subviews of one buffer (the same
    operands and static attributes: scf.for's iter_args bufferized); True if so."""
    views = [_owner(v) for v in copy.operands]
    if any(v is None or v.name != "memref.subview" for v in views):
        return False
    a, b = views
    if list(a.operands) != list(b.operands) or any(
            str(a.attributes[k]) != str(b.attributes[k])
            for k in ("static_offsets", "static_sizes", "static_strides")):
        return False
    copy.erase()
    for view in views:
        if view != views[0] and not list(view.results[0].uses):
            view.erase()
    return True


def _views_ok(value: ir.Value, rank: int) -> bool:
    """Whether every user of ``value`` is a plain load/store or a subview of
    the same rank whose users are so too (any layout then works)."""
    for use in value.uses:
        user = use.owner.operation
        if user.name in _LAYOUT_FREE:
            continue
        if user.name != "memref.subview" or ir.MemRefType(user.results[0].type).rank != rank \
                or not _views_ok(user.results[0], rank):
            return False
    return True


def _static_box(view: ir.Operation) -> list[tuple[int, int]] | None:
    if view.name != "memref.subview" or len(view.operands) != 1:
        return None
    strides = list(ir.DenseI64ArrayAttr(view.attributes["static_strides"]))
    if any(s != 1 for s in strides):
        return None
    offsets = list(ir.DenseI64ArrayAttr(view.attributes["static_offsets"]))
    sizes = list(ir.DenseI64ArrayAttr(view.attributes["static_sizes"]))
    return [(o, o + n) for o, n in zip(offsets, sizes)]


def _disjoint(a, b) -> bool:
    return any(hi_a <= lo_b or hi_b <= lo_a for (lo_a, hi_a), (lo_b, hi_b) in zip(a, b))


def _owner(value: ir.Value):
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def _forward(copy: ir.Operation) -> None:
    source, target = copy.operands[0], copy.operands[1]
    alloc, view = _owner(source), _owner(target)
    block = copy.block
    if alloc is None or view is None or alloc.name != "memref.alloc" or alloc.block != block \
            or len(alloc.operands) or view.block != block:
        return
    box = _static_box(view)
    base = view.operands[0] if box is not None else None
    root = _owner(base) if base is not None else None
    if root is None or root.name != "memref.alloc" or root.block != block \
            or not root.is_before_in_block(alloc):
        return
    source_type = ir.MemRefType(source.type)
    if not source_type.has_static_shape or str(source_type.layout) != str(
            ir.AffineMapAttr.get(ir.AffineMap.get_identity(source_type.rank))) \
            or list(ir.MemRefType(target.type).shape) != list(source_type.shape):
        return
    if any(use.owner.operation != view for use in target.uses) and \
            any(use.owner.operation != copy for use in target.uses):
        return
    views = []
    for use in source.uses:
        user = use.owner.operation
        if user == copy:
            continue
        mine = ancestor_in_block(user, block)
        if mine is None or not mine.is_before_in_block(copy) or user.name != "memref.subview" \
                or ir.MemRefType(user.results[0].type).rank != source_type.rank \
                or not _views_ok(user.results[0], source_type.rank):
            return
        views.append(user)
    for use in base.uses:             # the root's other users: disjoint boxes, or after the copy
        user = use.owner.operation
        if user == view:
            continue
        other = _static_box(user)
        mine = ancestor_in_block(user, block)
        if (other is None or not _disjoint(other, box)) and (
                mine is None or not copy.is_before_in_block(mine)):
            return
    view.move_after(alloc)
    with copy.location:
        _retarget(views, view.results[0])
    copy.erase()
    for use in list(source.uses):
        if use.owner.operation.name == "memref.dealloc":
            use.owner.operation.erase()
    if not list(source.uses):
        alloc.erase()


def _retarget(views: list[ir.Operation], target: ir.Value) -> None:
    """Each subview of the forwarded alloc made again on ``target``, whose
    layout its result now carries (see `subview_layout`); subviews of those alike."""
    memref = dialect("memref")
    for old in views:
        old_type = ir.MemRefType(old.results[0].type)
        layout = subview_layout(ir.MemRefType(target.type),
                                ir.DenseI64ArrayAttr(old.attributes["static_offsets"]),
                                ir.DenseI64ArrayAttr(old.attributes["static_strides"]))
        new_type = ir.MemRefType.get(old_type.shape, old_type.element_type, layout,
                                     old_type.memory_space)
        count = len(old.operands)
        dyn = list(old.operands)[1:count]
        segments = list(ir.DenseI32ArrayAttr(old.attributes["operandSegmentSizes"]))
        offsets = dyn[:segments[1]]
        sizes = dyn[segments[1]:segments[1] + segments[2]]
        strides_dyn = dyn[segments[1] + segments[2]:]
        with ir.InsertionPoint(old), old.location:
            new = memref.SubViewOp(new_type, target, offsets, sizes, strides_dyn,
                                   old.attributes["static_offsets"], old.attributes["static_sizes"],
                                   old.attributes["static_strides"])
        inner = [u.owner.operation for u in old.results[0].uses
                 if u.owner.operation.name == "memref.subview"]
        old.results[0].replace_all_uses_with(new.result)
        old.erase()
        _retarget(inner, new.result)


def subview_layout(source: ir.MemRefType, offsets, steps) -> ir.StridedLayoutAttr:
    """The layout `memref.subview` infers for a view of ``source`` at static
    ``offsets`` with static ``steps`` (either may hold the dynamic marker), of
    the same rank: the verifier wants exactly it, a static offset where
    everything it sums is static (the view of a tail at a static offset into
    a static slice) and a dynamic one otherwise; products and sums saturate
    to dynamic, a product with 0 stays 0."""
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()

    def times(a: int, b: int) -> int:
        if a == 0 or b == 0:
            return 0
        return dynamic if dynamic in (a, b) else a * b

    strides, offset = source.get_strides_and_offset()
    for stride, at in zip(strides, offsets):
        term = times(stride, at)
        offset = dynamic if dynamic in (offset, term) else offset + term
    return ir.StridedLayoutAttr.get(offset, [times(a, b) for a, b in zip(strides, steps)])
