"""xla-lane-arg-reductions: argmax and argmin over rows, columns and middle axes as 16-lane vector loops."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops
from xlac.passes.cpu.arg_combiner import LANES, ArgReduction, match
from xlac.passes.cpu.arg_widen import Widened, cast, widened
from xlac.record import record

# ops of the fused producers that run on vectors as they are (an integer
# division of a masked-off lane could trap: not taken)
_VECTOR_OPS = ("arith.", "math.")
_TRAPS = ("arith.divsi", "arith.divui", "arith.remsi", "arith.remui", "arith.ceildivsi",
          "arith.ceildivui", "arith.floordivsi")


@record
class LaneArgReductions(ModulePass):
    """Rewrite each argmax/argmin linalg.generic on buffers (a (value, index)
    pair reduced over the innermost loop by a selecting combiner,
    arg_combiner.match) that no schedule took into loops over its rows, each
    row read 16 elements a step: the body (its fused producers and the
    combiner) runs on vectors, every lane keeping the winner of its elements
    (l, l + 16, ...), the last partial step masked; then the 16 winners are
    folded in 4 halvings, each pair given to the combiner lower index first.
    One reduced over another dim of the input than its last (argmax over
    axis 0 of a matrix, over a middle axis of a 3-D array: the input read
    with the reduced dim moved last) runs 16 elements of the input's last dim
    a step instead, in a loop over the other outer dims, each lane its own
    column's scalar loop in the same order, the last step masked, no fold.
    Bool, 8- and 16-bit integer, bf16 and f16 values run on 32-bit lanes
    (arg_widen.py: extended as read, narrowed when stored). Option
    `i1-vectors` (default on; the pipeline turns it off where
    xla-i1-memory-as-i8 is disabled) lets it take i1 buffers. Option
    `row-pairs` (2 at AVX2): a row's step is that many independent 8-lane
    accumulator pairs (16 / row-pairs lanes each), combined lane by lane
    before the fold: a 16-lane i1 mask spans two ymm registers, and LLVM
    packed and unpacked it around every and/or and blend (38 instructions a
    16-byte bool step against 29, one dependency chain against two; bool
    rows at x86-64-v3, fastest calls 1.11 -> 0.52 ms, XLA 0.72-1.26).

    Why: jnp.argmax(v, axis=1) ran as scalar loops, a compare-select chain an
    element (at AVX-512 through mask registers: 2.7x slower than the same code
    at AVX2). The answer is the scalar loop's: the combiner is checked to be a
    selection by a total preorder with consistent ties (NaN first, the larger
    value, the lower index), which any grouping of the elements gives alike; the
    value result (which can differ in the sign of a zero on ties) must be a
    buffer nothing reads (rows; the columns' is the scalar loop's as it was).
    jnp.argmax over 396 x 660 f32 rows: 0.97 -> 0.065 ms at AVX-512 (XLA 1.33),
    over columns 0.90 -> 0.084; over the middle axis of 64 x 512 x 32 f32
    27 -> 0.35 ms, of 2048 x 1024 bf16 rows 32 -> 0.70 (docs/PERFORMANCE.md).

        linalg.generic {iterator_types = ["parallel", "reduction"]}
            ins(%x : memref<?x660xf32>) outs(%v, %i : memref<?xf32>, memref<?xi64>)
      ->
        scf.for %r ... { scf.for %c = 0 to 656 step 16 iter_args(vector<16xf32>, vector<16xi64>)
                         {vector.load, the body on vectors}; the masked tail; 4 halvings; stores }
    """

    name = "xla-lane-arg-reductions"
    i1_vectors: bool = True
    row_pairs: int = 1

    acts_on = frozenset({"linalg.generic"})

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            found = match(op) if op.name == "linalg.generic" else None
            if found is not None and takes(found, buffers=True, i1_vectors=self.i1_vectors):
                with op.location:
                    _rewrite(found, int(self.row_pairs))


def takes(found: ArgReduction, buffers: bool, i1_vectors: bool = True) -> bool:
    """Whether the rewrite applies: producers it can run on vectors, a value
    result nothing reads where the fold could change its zero's sign; i1
    buffers only where xla-i1-memory-as-i8 makes their vector moves bytes."""
    op = found.op
    i1 = ir.IntegerType.get_signless(1)
    if not i1_vectors and any(ir.ShapedType(v.type).element_type == i1 for v in op.operands):
        return False
    block = op.regions[0].blocks[0]
    combiner = set(found.combiner)
    for o in list(block.operations)[:-1]:
        if o in combiner or o.name == "linalg.index":
            continue
        if not (o.name.startswith(_VECTOR_OPS) or o.name == "affine.apply") or o.name in _TRAPS \
                or len(o.regions) or len(o.results) != 1:
            return False
    if buffers and not all(isinstance(v.type, ir.MemRefType) for v in op.operands):
        return False
    if not found.value_dead_needed:
        return True
    if not buffers:
        return len(list(op.results[0].uses)) == 0
    return _written_only(op.operands[len(op.operands) - 2], op)


_VIEWS = ("memref.subview", "memref.expand_shape", "memref.collapse_shape", "memref.cast")
_WRITES = ("memref.copy", "linalg.copy", "linalg.fill")      # operand 1: the buffer written


def _written_only(buffer: ir.Value, op: ir.Operation) -> bool:
    """Whether ``buffer`` is (a view of) an allocation that nothing but ``op``
    reads: only views, fills, copies into it and its dealloc use it."""
    while not isinstance(buffer, ir.BlockArgument) and buffer.owner.name in _VIEWS:
        buffer = buffer.owner.operands[0]
    if isinstance(buffer, ir.BlockArgument) or buffer.owner.name != "memref.alloc":
        return False
    views = [buffer]
    while views:
        for use in views.pop().uses:
            user = use.owner
            if user.name in _VIEWS and use.operand_number == 0:
                views.append(user.results[0])
            elif not (user == op or user.name == "memref.dealloc"
                      or (user.name in _WRITES and use.operand_number == 1)):
                return False
    return True


class _Builder:
    """Ops created before one point, at one location."""

    def __init__(self, loc, lanes: int = LANES):
        self.loc, self.lanes = loc, lanes

    def op(self, name, results, operands, attributes=None, regions=0):
        return ir.Operation.create(name, results=results, operands=operands,
                                   attributes=attributes or {}, regions=regions, loc=self.loc)

    def one(self, name, result, operands, attributes=None):
        return self.op(name, [result], operands, attributes).results[0]

    def const(self, value: int):
        index = ir.IndexType.get()
        return self.one("arith.constant", index, [], {"value": ir.IntegerAttr.get(index, value)})

    def splat(self, scalar):
        return self.one("vector.broadcast", ir.VectorType.get([self.lanes], scalar.type), [scalar])

    def dim(self, memref, d: int):
        shape = ir.MemRefType(memref.type).shape
        if shape[d] != ir.ShapedType.get_dynamic_size():
            return self.const(shape[d])
        return self.one("memref.dim", ir.IndexType.get(), [memref, self.const(d)])


def _for(b: _Builder, lb, ub, step, inits):
    loop = b.op("scf.for", [v.type for v in inits], [lb, ub, step, *inits], regions=1)
    body = loop.regions[0].blocks.append(ir.IndexType.get(), *[v.type for v in inits])
    return loop, body


def _rewrite(found: ArgReduction, row_pairs: int = 1) -> None:
    op = found.op
    b = _Builder(op.location)
    n_in = len(op.operands) - 2
    ins, out_v, out_i = list(op.operands[:n_in]), op.operands[n_in], op.operands[n_in + 1]
    rank = len(ir.MemRefType(ins[0].type).shape)
    widen = widened(found)
    with ir.InsertionPoint(op):
        zero, one, step = b.const(0), b.const(1), b.const(LANES)
        extents = [b.dim(ins[0], d) for d in range(rank)]
        n = extents[-1]                               # columns: the input's last dim
        full = b.one("arith.muli", n.type, [b.one("arith.divui", n.type, [n, step]), step])
        c = (zero, one, step, n, full)
        if found.columns:                             # the parallel dims but the input's last
            outer = [e for d, e in enumerate(extents[:-1]) if d != found.axis]
            _nest(b, outer, [], lambda ivs: _columns(b, found, widen, ins, (out_v, out_i),
                                                     extents[found.axis], ivs, c))
        else:
            rows = _Builder(op.location, LANES // row_pairs)
            _nest(b, extents[:-1], [], lambda ivs: _row(rows, found, widen, ins, out_v, out_i, ivs, n, row_pairs))
    op.erase()


def _nest(b: _Builder, extents, ivs, leaf) -> None:
    """A loop over each of ``extents``, ``leaf(ivs)`` inside."""
    if len(ivs) == len(extents):
        leaf(ivs)
        return
    _, body = _for(b, b.const(0), extents[len(ivs)], b.const(1), [])
    with ir.InsertionPoint(body):
        yield_op = b.op("scf.yield", [], [])
    with ir.InsertionPoint(yield_op):
        _nest(b, extents, [*ivs, body.arguments[0]], leaf)


def _columns(b: _Builder, found, widen, ins, outs, rows, ivs, c) -> None:
    """(cols, rows) loops over the input's (..., rows, ..., cols) at the outer
    indices ``ivs``: 16 columns a step, each lane its own column's scalar loop
    (the same combines in the same order), the last partial step masked; no fold."""
    zero, one, step, n, full = c
    iota = _iota(b)
    axis = found.axis
    mask_type = ir.VectorType.get([LANES], ir.IntegerType.get_signless(1))
    for start, end, mask in ((zero, full, None), (full, n, "tail")):
        if mask is None:
            col_loop, col_body = _for(b, start, end, step, [])
        with ir.InsertionPoint(col_body) if mask is None else _Here():
            j = col_body.arguments[0] if mask is None else full
            if mask is not None:
                mask = b.one("vector.create_mask", mask_type, [b.one("arith.subi", n.type, [n, full])])
            acc = [_read(b, m, [*ivs, j], mask) for m in outs]
            acc[0] = cast(b, widen, acc[0], True)
            loop, body = _for(b, zero, rows, one, acc)
            with ir.InsertionPoint(body):
                r = body.arguments[0]
                reads = [_read(b, m, [*ivs[:axis], r, *ivs[axis:], j], mask) for m in ins]
                dims = {**dict(enumerate(ivs)), len(ivs): b.one("arith.addi", iota.type, [b.splat(j), iota]),
                        len(ivs) + 1: r}
                b.op("scf.yield", [], _body(b, found, widen, reads, list(body.arguments[1:]), dims))
            results = [cast(b, widen, loop.results[0], False), loop.results[1]]
            for value, m in zip(results, outs):
                if mask is None:
                    b.op("vector.store", [], [value, m, *ivs, j])
                else:
                    b.op("vector.maskedstore", [], [m, *ivs, j, mask, value])
            if mask is None:
                b.op("scf.yield", [], [])


class _Here:
    """The insertion point as it is."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _read(b: _Builder, memref, indices, mask):
    """16 elements of ``memref`` from ``indices``; where ``mask``, only its lanes (zeros elsewhere)."""
    et = ir.MemRefType(memref.type).element_type
    vt = ir.VectorType.get([b.lanes], et)
    if mask is None:
        return b.one("vector.load", vt, [memref, *indices])
    pad = b.splat(b.one("arith.constant", et, [], {"value": _zero_attr(et)}))
    return b.one("vector.maskedload", vt, [memref, *indices, mask, pad])


def _iota(b: _Builder):
    n = b.lanes
    return b.one("arith.constant", ir.VectorType.get([n], ir.IndexType.get()), [],
                 {"value": ir.Attribute.parse(f"dense<[{', '.join(map(str, range(n)))}]> : vector<{n}xindex>")})


def _row(b: _Builder, found, widen, ins, out_v, out_i, ivs, n, pairs: int = 1) -> None:
    """One row: the vector loop (``pairs`` accumulator pairs of b.lanes lanes,
    each its own chain, a step), the masked tail, the pairs combined, the
    fold, the two stores."""
    iota, lanes = _iota(b), b.lanes
    zero, step = b.const(0), b.const(lanes * pairs)
    full = b.one("arith.muli", n.type, [b.one("arith.divui", n.type, [n, step]), step])
    init = [b.splat(cast(b, widen, b.one("memref.load", found.acc_value.type, [out_v, *ivs]), True)),
            b.splat(b.one("memref.load", found.acc_index.type, [out_i, *ivs]))]
    loop, body = _for(b, zero, full, step, init * pairs)
    with ir.InsertionPoint(body):
        new = []
        for p in range(pairs):
            c = b.one("arith.addi", n.type, [body.arguments[0], b.const(p * lanes)]) if p else body.arguments[0]
            reads = [_read(b, m, [*ivs, c], None) for m in ins]
            new += _body(b, found, widen, reads, list(body.arguments[1 + 2 * p:3 + 2 * p]), _dims(b, ivs, c, iota))
        b.op("scf.yield", [], new)
    accs = [list(loop.results[2 * p:2 * p + 2]) for p in range(pairs)]
    # the tail: lanes past the row keep their winners
    mask_type = ir.VectorType.get([lanes], ir.IntegerType.get_signless(1))
    for p in range(pairs):
        start = b.one("arith.addi", n.type, [full, b.const(p * lanes)]) if p else full
        mask = b.one("vector.create_mask", mask_type, [b.one("arith.subi", n.type, [n, start])])
        reads = [_read(b, m, [*ivs, start], mask) for m in ins]
        new = _body(b, found, widen, reads, accs[p], _dims(b, ivs, start, iota))
        accs[p] = [b.one("arith.select", a.type, [mask, x, a]) for x, a in zip(new, accs[p])]
    acc = accs[0]
    for other in accs[1:]:                            # lane by lane, the lower index as the accumulator
        acc = _combine_lower_first(b, found, widen, acc, other)
    # the fold: lane l against lane l + h
    h = lanes // 2
    while h:
        shuffle = {"mask": ir.Attribute.parse(f"array<i64: {', '.join(str((k + h) % lanes) for k in range(lanes))}>")}
        other = [b.one("vector.shuffle", a.type, [a, a], shuffle) for a in acc]
        acc = _combine_lower_first(b, found, widen, acc, other)
        h //= 2
    pos = {"static_position": ir.Attribute.parse("array<i64: 0>")}
    value = b.one("vector.extract", ir.VectorType(acc[0].type).element_type, [acc[0]], pos)
    b.op("memref.store", [], [cast(b, widen, value, False), out_v, *ivs])
    b.op("memref.store", [], [b.one("vector.extract", found.acc_index.type, [acc[1]], pos), out_i, *ivs])


def _combine_lower_first(b: _Builder, found, widen, acc, other) -> list:
    """``acc`` and ``other`` (value, index) combined lane by lane, the lower index as the accumulator."""
    swap = b.one("arith.cmpi", ir.VectorType.get([b.lanes], ir.IntegerType.get_signless(1)), [other[1], acc[1]],
                 {"predicate": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 2)})   # slt
    lo = [b.one("arith.select", a.type, [swap, o, a]) for a, o in zip(acc, other)]
    hi = [b.one("arith.select", a.type, [swap, a, o]) for a, o in zip(acc, other)]
    return _combine(b, found, widen, lo, hi)


def _zero_attr(t):
    if isinstance(t, ir.IntegerType):
        return ir.IntegerAttr.get(t, 0)
    return ir.FloatAttr.get(t, 0.0)


def _attrs(o) -> dict:
    return {name: o.attributes[name] for name in o.attributes}


def _clone(b: _Builder, ops, env: dict, widen: Widened | None = None, value=None) -> None:
    """``ops`` again on ``env``'s values: on vectors where an operand is one;
    the values ``widen`` carries wide (``value``, the incoming one, widened
    where its producer is cloned)."""
    carries = widen.carries if widen is not None else set()
    for o in ops:
        args = [env.get(v, v) for v in o.operands]
        wide = [widen.wide if r in carries and not _is(r, value) else r.type for r in o.results]
        if any(isinstance(a.type, ir.VectorType) for a in args):
            args = [a if isinstance(a.type, ir.VectorType) else b.splat(a) for a in args]
            results = [ir.VectorType.get([b.lanes], t) for t in wide]
        else:
            results = wide
        new = b.op(o.name, results, args, _attrs(o))
        for r, s in zip(o.results, new.results):
            env[r] = cast(b, widen, s, True) if _is(r, value) else s


def _is(a, b) -> bool:
    return b is not None and a == b


def _dims(b: _Builder, ivs, c, iota) -> dict:
    """A row's loop indices: the outer ones, then the reduced one's 16 lanes from ``c``."""
    return {**dict(enumerate(ivs)), len(ivs): b.one("arith.addi", iota.type, [b.splat(c), iota])}


def _body(b: _Builder, found: ArgReduction, widen, reads, acc, dims: dict) -> list:
    """The generic's body on one step's vectors: the new (value, index) accumulators."""
    block = found.op.regions[0].blocks[0]
    args = list(block.arguments)
    env = dict(zip(args[:len(reads)], reads))
    if found.value in env:                            # the input itself, no producer
        env[found.value] = cast(b, widen, env[found.value], True)
    env[found.acc_value], env[found.acc_index] = acc
    ops = list(block.operations)
    rest = []
    for o in ops[:-1]:
        if o.name == "linalg.index":
            env[o.results[0]] = dims[ir.IntegerAttr(o.attributes["dim"]).value]
        else:
            rest.append(o)
    _clone(b, rest, env, widen, found.value)
    return [env[v] for v in ops[-1].operands]


def _combine(b: _Builder, found: ArgReduction, widen, lo, hi) -> list:
    env = {found.acc_value: lo[0], found.acc_index: lo[1], found.value: hi[0], found.index: hi[1]}
    _clone(b, found.combiner, env, widen)
    block = found.op.regions[0].blocks[0]
    return [env[v] for v in list(block.operations)[-1].operands]
