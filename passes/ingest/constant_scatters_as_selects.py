"""xla-constant-scatters-as-selects: a scatter or dynamic_update_slice at
constant indices, feeding a kernel, as the elementwise select it is."""

from __future__ import annotations

from xlac.mlir import ir, stablehlo
from xlac.passes.base import ModulePass, module_ops
from xlac.passes.fusion.op_classes import CONSTANT, ELEMENTWISE, MOVEMENT, REDUCE, is_expensive, op_class
from xlac.passes.ingest.constant_windows import Updates, Window, defining_op, scatter_updates, update_slice_updates

_SET = ()                            # an update computation that returns the update


class ConstantScattersAsSelects(ModulePass):
    """A `stablehlo.scatter` whose indices are constants (up to 4 index tuples,
    no batching dims, one operand) or a `stablehlo.dynamic_update_slice` whose
    starts are, becomes, window by window in order,
    `select(iota_d == start_d && ..., combine(acc, update), acc)`: one compare
    per operand dim the window does not span whole (two for a range), the
    update broadcast to the operand's shape (one element, or a window whose
    every dim is 1 or the operand's whole extent), the update computation
    (cheap elementwise ops only) applied to whole tensors. Windows that do not
    fit the operand are dropped, as XLA drops them; a dynamic_update_slice's
    starts are clamped into it, as the op clamps them.

    Only where a kernel takes the select in: a reader of the result that
    fuses it (elementwise, data movement, reduction), or an operand made by
    an elementwise op, data movement or a constant (whose kernel then writes the
    selected value). Otherwise the scatter stays: it updates its operand in
    place where that is its last use, a point write, not a pass over it.

    Why: a scatter is a kernel of its own, and its operand cannot be written
    in place where it is the entry's argument or read again: jax's
    `jnp.argmax(v.at[2, 3].set(jnp.nan), axis=1)` copied the 1 MB operand
    (a pass over memory) to write one element, then read it again for the
    argmax; as a select it is two compares in the argmax's loop. XLA's
    algebraic simplifier does no such rewrite, but its scatter fusion writes
    in place.

        %r = "stablehlo.scatter"(%x, dense<[2, 3]>, %nan) ({ return %u })
      ->
        %m = and(compare EQ iota0, 2), (compare EQ iota1, 3)
        %r = stablehlo.select %m, broadcast(%nan), %x
    """

    name = "xla-constant-scatters-as-selects"
    acts_on = frozenset({"stablehlo.scatter", "stablehlo.dynamic_update_slice"})

    def run(self, module: ir.Operation) -> None:
        # last first: a scatter read by a later one that became a select is then read by a kernel
        with ir.Location.unknown(module.context):
            for op in reversed([o for o in module_ops(module) if o.name in self.acts_on]):
                if op.name == "stablehlo.scatter":
                    updates, region = scatter_updates(op), _region_ops(op)
                else:
                    updates, region = update_slice_updates(op), _SET
                if updates is not None and region is not None and _pays(op):
                    _as_selects(op, updates, region)


_FUSING = (ELEMENTWISE, MOVEMENT, REDUCE)


def _pays(op: ir.Operation) -> bool:
    """A reader fuses the select, or the operand's kernel (an elementwise op,
    movement, a constant) can write it; and no column reduction takes it in."""
    if _into_column_reduction(op, 0):
        return False
    if any(op_class(use.owner) in _FUSING for use in op.results[0].uses):
        return True
    producer = defining_op(op.operands[0])
    return producer is not None and op_class(producer) in (ELEMENTWISE, MOVEMENT, CONSTANT)


def _into_column_reduction(op: ir.Operation, depth: int) -> bool:
    """A reduction over other dims than the innermost reads ``op``'s result,
    directly or through elementwise ops and movement (a few deep).

    Its schedule runs the fused elementwise ops on vectors of N x 1 (the
    outputs' lanes by one reduced step), which LLVM unrolls into N scalar ops:
    `jnp.sum(v.at[2].add(1.0), axis=0)` as a select was 0.123 ms against 0.093
    copied and scattered (one thread, 528 x 396 f32)."""
    for use in op.results[0].uses:
        user = use.owner
        kind = op_class(user)
        if kind == REDUCE:
            rank = ir.RankedTensorType(user.operands[0].type).rank
            if rank - 1 not in list(ir.DenseI64ArrayAttr(user.attributes["dimensions"])):
                return True
        elif kind in (ELEMENTWISE, MOVEMENT) and depth < 4 and _into_column_reduction(user, depth + 1):
            return True
    return False


def _region_ops(op: ir.Operation) -> tuple | None:
    """The update computation as (its block, its ops) (``_SET``: it returns the
    update) when each op is a cheap elementwise one on 0-d tensors; else None."""
    block = op.regions[0].blocks[0]
    ops = [o.operation for o in block.operations]
    body, terminator = ops[:-1], ops[-1]
    if len(block.arguments) != 2 or len(terminator.operands) != 1:
        return None
    if not body and terminator.operands[0] == block.arguments[1]:
        return _SET
    known = set(block.arguments)
    for inner in body:
        if inner.name != "stablehlo.constant" and (op_class(inner) != ELEMENTWISE or is_expensive(inner)):
            return None
        if any(v not in known for v in inner.operands) or len(inner.results) != 1 \
                or ir.RankedTensorType(inner.results[0].type).rank != 0:
            return None
        known.add(inner.results[0])
    return (block, tuple(body)) if terminator.operands[0] in known else None


class _Builder:
    """New ops before ``op``, at its location, of the operand's shape."""

    def __init__(self, op: ir.Operation):
        self.point, self.location = ir.InsertionPoint(op), op.location
        self.type = ir.RankedTensorType(op.operands[0].type)
        self.shape = list(self.type.shape)
        width = 32 if max(self.shape) < 2 ** 31 else 64
        self.index_type = ir.RankedTensorType.get(self.shape, ir.IntegerType.get_signless(width))
        self.iotas: dict[int, ir.Value] = {}
        self.broadcasts: dict = {}

    def make(self, name: str, operands, type_: ir.Type, attributes=None) -> ir.Value:
        return ir.Operation.create(name, results=[type_], operands=list(operands),
                                   attributes=attributes or {}, ip=self.point,
                                   loc=self.location).results[0]

    def like(self, element_type: ir.Type) -> ir.RankedTensorType:
        return ir.RankedTensorType.get(self.shape, element_type)

    def splat(self, element: ir.Attribute, type_: ir.RankedTensorType) -> ir.Value:
        return self.make("stablehlo.constant", [], type_,
                         {"value": ir.DenseElementsAttr.get_splat(type_, element)})

    def broadcast(self, value: ir.Value, dims) -> ir.Value:
        if ir.RankedTensorType(value.type) == self.type and list(dims) == list(range(len(self.shape))):
            return value
        key = (value, tuple(dims))
        if key not in self.broadcasts:
            self.broadcasts[key] = self._broadcast(value, dims)
        return self.broadcasts[key]

    def _broadcast(self, value: ir.Value, dims) -> ir.Value:
        return self.make("stablehlo.broadcast_in_dim", [value], self.like(
            ir.RankedTensorType(value.type).element_type),
            {"broadcast_dimensions": ir.DenseI64ArrayAttr.get(list(dims))})

    def compare(self, direction: str, d: int, bound: int) -> ir.Value:
        if d not in self.iotas:
            self.iotas[d] = self.make("stablehlo.iota", [], self.index_type,
                                      {"iota_dimension": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), d)})
        element = ir.IntegerAttr.get(self.index_type.element_type, bound)
        return self.make("stablehlo.compare", [self.iotas[d], self.splat(element, self.index_type)],
                         self.like(ir.IntegerType.get_signless(1)),
                         {"comparison_direction": stablehlo.ComparisonDirectionAttr.get(direction),
                          "compare_type": stablehlo.ComparisonTypeAttr.get("SIGNED")})

    def mask(self, window: Window) -> ir.Value | None:
        """True inside the window's box; None where the box is the whole operand."""
        tests = []
        for d, (start, size, whole) in enumerate(zip(window.starts, window.sizes, self.shape)):
            if size == whole:
                continue
            if size == 1:
                tests.append(self.compare("EQ", d, start))
                continue
            if start > 0:
                tests.append(self.compare("GE", d, start))
            if start + size < whole:
                tests.append(self.compare("LT", d, start + size))
        mask = None
        for test in tests:
            mask = test if mask is None else self.make("stablehlo.and", [mask, test], test.type)
        return mask

    def value(self, window: Window, updates: Updates) -> ir.Value:
        """The window's update brought to the operand's shape."""
        if isinstance(window.scalar, ir.Value):
            return self.broadcast(window.scalar, [])
        if window.scalar is not None:
            return self.splat(window.scalar, self.type)
        source = updates.source
        if updates.scatter_dims:
            shape = list(ir.RankedTensorType(source.type).shape)
            starts, limits = [0] * len(shape), list(shape)
            for d, at in zip(updates.scatter_dims, window.position):
                starts[d], limits[d] = at, at + 1
            sliced = [1 if d in updates.scatter_dims else n for d, n in enumerate(shape)]
            element = ir.RankedTensorType(source.type).element_type
            source = self.make("stablehlo.slice", [source], ir.RankedTensorType.get(sliced, element),
                               {"start_indices": ir.DenseI64ArrayAttr.get(starts),
                                "limit_indices": ir.DenseI64ArrayAttr.get(limits),
                                "strides": ir.DenseI64ArrayAttr.get([1] * len(shape))})
            window_shape = [n for d, n in enumerate(shape) if d not in updates.scatter_dims]
            source = self.make("stablehlo.reshape", [source], ir.RankedTensorType.get(window_shape, element))
        return self.broadcast(source, updates.window_dims)

    def combine(self, region: tuple, old: ir.Value, new: ir.Value) -> ir.Value:
        """The update computation on whole tensors: ``old`` for its first
        argument, ``new`` for its second."""
        if region is _SET:
            return new
        block, body = region
        mapping = {block.arguments[0]: old, block.arguments[1]: new}
        for inner in body:
            element = ir.RankedTensorType(inner.results[0].type).element_type
            if inner.name == "stablehlo.constant":
                attr = ir.DenseElementsAttr(inner.attributes["value"])
                mapping[inner.results[0]] = self.splat(attr.get_splat_value(), self.like(element))
                continue
            attributes = {a.name: a.attr for a in inner.attributes}
            mapping[inner.results[0]] = self.make(inner.name, [mapping[v] for v in inner.operands],
                                                  self.like(element), attributes)
        return mapping[list(block.operations)[-1].operands[0]]


def _as_selects(op: ir.Operation, updates: Updates, region: tuple) -> None:
    build = _Builder(op)
    result = op.operands[0]
    for window in updates.windows:
        combined = build.combine(region, result, build.value(window, updates))
        mask = build.mask(window)
        result = combined if mask is None else build.make("stablehlo.select", [mask, combined, result],
                                                          build.type)
    op.results[0].replace_all_uses_with(result)
    inputs = []
    for value in op.operands[1:]:                    # each once: a constant may be two starts
        source = defining_op(value)
        if source is not None and not any(source == seen for seen in inputs):
            inputs.append(source)
    op.erase()
    _erase_unread(inputs)


_PURE = frozenset({"stablehlo.constant", "stablehlo.broadcast_in_dim", "stablehlo.reshape"})


def _erase_unread(ops) -> None:
    """The indices' and updates' constants and broadcasts no one reads any more."""
    for op in ops:
        if op is not None and op.name in _PURE and not any(True for r in op.results for _ in r.uses):
            sources = [defining_op(v) for v in op.operands]       # at most one
            op.erase()
            _erase_unread(sources)
