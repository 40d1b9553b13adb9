"""stablehlo.select_and_scatter as elementwise StableHLO over window positions
(xla-lower-select-and-scatter's vector form).

Two steps, each plain elementwise work that fuses into loop nests the CPU
schedules vectorize:

1. **Select** over the source's shape S: each window position k (row-major
   over the window) is one strided slice of the (padded) operand; a running
   (value, position) pair takes it where the window's `select(current, k)`
   is false, XLA's order: padding never picked, the first in-bounds element
   starts. The result is the picked position per window (-1: none).
2. **Scatter** over the output split as [q, r] per strided dim (position
   q * stride + r of the padded output): the windows that cover it are
   w = q - j for j < ceil(size / stride); each such j reads the picked
   positions and the source shifted by j (a slice of them padded once), and
   where the pick is position r + j * stride of its window combines the
   source into the result with `scatter`. The j are taken from the largest
   down: each output then combines its windows in the source's row-major
   order, as the loops do, bit for bit.

Taken where the regions are elementwise StableHLO on scalars and the window
has at most ``MAX_WINDOW`` positions; otherwise the loops. Where the minor dim
is strided (NCHW) the output's minor [q, r] rows are one vector's lanes
(minor_dim_plan's six-loop plan): q's extent there is rounded up to whole
vectors, the excess sliced off.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from xlac.mlir import ir

MAX_WINDOW = 64
# a strided minor dim's q extent is made a multiple of this: the rows of it
# one vector holds (minor_dim_plan: lanes / stride; 16 lanes of f32 / 2 = 8,
# 32 of bf16 = 16), so the vector loop has no partial step
MINOR_Q_MULTIPLE = 16
_REGION_OPS = frozenset(f"stablehlo.{n}" for n in (
    "compare", "select", "add", "subtract", "multiply", "maximum", "minimum", "and", "or", "not", "xor",
    "negate", "abs", "constant", "convert", "return"))


class _B:
    """StableHLO ops before one op, at its location."""

    def __init__(self, op: ir.Operation):
        self.ip, self.loc = ir.InsertionPoint(op), op.location

    def op(self, name, result, operands, attributes=None):
        return ir.Operation.create(name, results=[result], operands=operands, attributes=attributes or {},
                                   loc=self.loc, ip=self.ip).results[0]

    def const(self, shape, element, value):
        t = ir.RankedTensorType.get(shape, element)
        attr = ir.DenseElementsAttr.get_splat(t, _scalar_attr(element, value))
        return self.op("stablehlo.constant", t, [], {"value": attr})

    def table(self, shape, element, values):
        t = ir.RankedTensorType.get(shape, element)
        attr = ir.DenseElementsAttr.get(np.array(values, dtype=np.int32).reshape(shape), type=t)
        return self.op("stablehlo.constant", t, [], {"value": attr})

    def iota(self, shape, dim):
        t = ir.RankedTensorType.get(shape, ir.IntegerType.get_signless(32))
        return self.op("stablehlo.iota", t, [],
                       {"iota_dimension": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), dim)})

    def compare(self, direction, a, b):
        shape = ir.RankedTensorType(a.type).shape
        return self.op("stablehlo.compare", ir.RankedTensorType.get(shape, ir.IntegerType.get_signless(1)), [a, b],
                       {"comparison_direction": ir.Attribute.parse(f"#stablehlo<comparison_direction {direction}>")})

    def binary(self, name, a, b):
        return self.op(f"stablehlo.{name}", a.type, [a, b])

    def select(self, p, a, b):
        return self.op("stablehlo.select", a.type, [p, a, b])

    def slice(self, x, start, limit, strides):
        shape = [(hi - lo + s - 1) // s for lo, hi, s in zip(start, limit, strides)]
        if list(start) == [0] * len(shape) and shape == ir.RankedTensorType(x.type).shape:
            return x
        t = ir.RankedTensorType.get(shape, ir.RankedTensorType(x.type).element_type)
        return self.op("stablehlo.slice", t, [x], {"start_indices": _i64s(start), "limit_indices": _i64s(limit),
                                                   "strides": _i64s(strides)})

    def pad(self, x, value, low, high):
        if not any(low) and not any(high):
            return x
        shape = [n + a + b for n, a, b in zip(ir.RankedTensorType(x.type).shape, low, high)]
        t = ir.RankedTensorType.get(shape, ir.RankedTensorType(x.type).element_type)
        return self.op("stablehlo.pad", t, [x, value], {"edge_padding_low": _i64s(low),
                                                        "edge_padding_high": _i64s(high),
                                                        "interior_padding": _i64s([0] * len(shape))})

    def reshape(self, x, shape):
        if list(shape) == ir.RankedTensorType(x.type).shape:
            return x
        t = ir.RankedTensorType.get(shape, ir.RankedTensorType(x.type).element_type)
        return self.op("stablehlo.reshape", t, [x])

    def broadcast(self, x, shape, dims):
        t = ir.RankedTensorType.get(shape, ir.RankedTensorType(x.type).element_type)
        return self.op("stablehlo.broadcast_in_dim", t, [x], {"broadcast_dimensions": _i64s(dims)})


def _i64s(values):
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])


def _scalar_attr(element, value):
    if isinstance(element, ir.IntegerType):
        return ir.IntegerAttr.get(element, int(value))
    return ir.FloatAttr.get(element, float(value))


def elementwise_regions(op: ir.Operation) -> bool:
    """Whether both regions are elementwise StableHLO on 0-d tensors, reading
    nothing from outside them."""
    for region in op.regions[:2]:
        block = region.blocks[0]
        known = set(block.arguments)
        for inner in block.operations:
            if inner.name not in _REGION_OPS or any(v not in known for v in inner.operands):
                return False
            known.update(inner.results)
            if any(not isinstance(v.type, ir.RankedTensorType) or ir.RankedTensorType(v.type).rank
                   for v in [*inner.operands, *inner.results]):
                return False
    return True


def _apply(b: _B, region: ir.Region, args: list, shape: list) -> ir.Value:
    """``region`` (scalar StableHLO) on tensors of ``shape``: its one result."""
    block = region.blocks[0]
    env = dict(zip(block.arguments, args))
    for inner in block.operations:
        if inner.name == "stablehlo.return":
            return env[inner.operands[0]]
        element = ir.RankedTensorType(inner.results[0].type).element_type
        if inner.name == "stablehlo.constant":
            scalar = ir.Operation.create("stablehlo.constant", results=[inner.results[0].type],
                                         attributes={"value": inner.attributes["value"]}, loc=b.loc, ip=b.ip)
            env[inner.results[0]] = b.broadcast(scalar.results[0], shape, [])
            continue
        t = ir.RankedTensorType.get(shape, element)
        attrs = {name: inner.attributes[name] for name in inner.attributes}
        env[inner.results[0]] = b.op(inner.name, t, [env[v] for v in inner.operands], attrs)
    raise ValueError("region without a return")


def lower(op: ir.Operation, window) -> ir.Value:
    """The select_and_scatter ``op`` (its ``window``: sizes, strides, pad_low,
    pad_high, operand and source types) as elementwise StableHLO; its value."""
    b = _B(op)
    operand, source, init = op.operands[:3]
    element = ir.RankedTensorType(operand.type).element_type
    i32 = ir.IntegerType.get_signless(32)
    # positions numbered on a grid wide enough for r + j * stride (no number
    # of a position outside the window is one inside it)
    extents = [max(size, -(-size // s) * s) for size, s in zip(window.sizes, window.strides)]
    picked = _select(b, op.regions[0], operand, window, element, i32, extents)
    return _scatter(b, op.regions[1], picked, source, init, window, element, i32, extents)


def _select(b: _B, region, operand, w, element, i32, extents):
    """Per window (shape S): the picked position's row-major index in the window, -1 for none."""
    dims, shape = w.operand.shape, w.source.shape
    zero = b.const([], element, 0)
    padded = b.pad(operand, zero, w.pad_low, w.pad_high)
    cur = idx = have = None
    iotas = {}
    for k in itertools.product(*[range(n) for n in w.sizes]):
        k_lin = _linear(k, extents)
        limit = [kd + (n - 1) * s + 1 for kd, n, s in zip(k, shape, w.strides)]
        cand = b.slice(padded, k, limit, w.strides)
        valid = None
        for d in range(len(dims)):
            lo = -((k[d] - w.pad_low[d]) // w.strides[d])                  # ceil((lo - k) / s)
            hi = (w.pad_low[d] + dims[d] - 1 - k[d]) // w.strides[d]
            if lo <= 0 and hi >= shape[d] - 1:
                continue
            iota = iotas.setdefault(d, b.iota(shape, d))
            inside = b.binary("and", b.compare("GE", iota, b.const(shape, i32, lo)),
                              b.compare("LE", iota, b.const(shape, i32, hi)))
            valid = inside if valid is None else b.binary("and", valid, inside)
        position = b.const(shape, i32, k_lin)
        if cur is None:
            cur, idx, have = cand, position, valid
            continue
        keep = _apply(b, region, [cur, cand], shape)
        take = b.op("stablehlo.not", keep.type, [keep])
        if have is not None:
            take = b.binary("or", take, b.op("stablehlo.not", have.type, [have]))
        if valid is not None:
            take = b.binary("and", take, valid)
            have = None if have is None else b.binary("or", have, valid)
        else:
            have = None
        cur, idx = b.select(take, cand, cur), b.select(take, position, idx)
    return idx if have is None else b.select(have, idx, b.const(shape, i32, -1))


def _scatter(b: _B, region, picked, source, init, w, element, i32, extents):
    """The output: init, and each window's source combined at its picked position."""
    dims, shape, rank = w.operand.shape, w.source.shape, w.operand.rank
    split = [s > 1 for s in w.strides]
    big_is_q = False
    outer = [-(-(lo + n) // s) for lo, n, s in zip(w.pad_low, dims, w.strides)]       # q's extent
    if split[-1]:
        # the minor dim strided (NCHW): vectors of whole [q, r] rows along its q
        # (minor_dim_plan), which takes a q extent of whole vectors: rounded up
        outer[-1] = -(-outer[-1] // MINOR_Q_MULTIPLE) * MINOR_Q_MULTIPLE
    reach = [-(-size // s) for size, s in zip(w.sizes, w.strides)]                       # j's extent
    # [q, r] per strided dim, neighbouring q dims as one (at most 5 loops for NHWC's and NCHW's)
    big, q_shape, q_pos, r_pos = [], [], [], {}
    for d in range(rank):
        if big and big_is_q:
            big[-1] *= outer[d]
            q_shape[-1] *= outer[d]
        else:
            q_pos.append(len(big))
            big.append(outer[d])
            q_shape.append(outer[d])
        big_is_q = not split[d]
        if split[d]:
            r_pos[d] = len(big)
            big.append(w.strides[d])
    low = [j - 1 for j in reach]
    high = [max(0, q - n) for q, n in zip(outer, shape)]
    picked = b.pad(picked, b.const([], i32, -1), low, high)
    source = b.pad(source, b.const([], element, 0), low, high)
    acc = b.broadcast(init, big, [])
    # r's number on the position grid: sum of r_d * its grid stride, from iotas;
    # where the minor dim is strided (its r the innermost loop, which every read
    # then walks), a small constant table per window offset j instead: each is
    # read by one compare and fuses into it (a shared iota sum was an i32 array
    # of the output's size, written and read back)
    r_dims = list(r_pos)
    r_steps = [math.prod(extents[d + 1:]) for d in r_dims]
    r_number = None
    for d, pos in r_pos.items() if not split[-1] else ():
        term = b.iota(big, pos)
        if r_steps[r_dims.index(d)] != 1:
            term = b.binary("multiply", term, b.const(big, i32, r_steps[r_dims.index(d)]))
        r_number = term if r_number is None else b.binary("add", r_number, term)
    strides = [1] * rank
    for j in reversed(list(itertools.product(*[range(n) for n in reach]))):
        start = [lw - jd for lw, jd in zip(low, j)]
        limit = [st + q for st, q in zip(start, outer)]
        p_j = b.broadcast(b.reshape(b.slice(picked, start, limit, strides), q_shape), big, q_pos)
        s_j = b.broadcast(b.reshape(b.slice(source, start, limit, strides), q_shape), big, q_pos)
        offset = _linear([jd * s if sp else jd for jd, s, sp in zip(j, w.strides, split)], extents)
        if split[-1]:
            table = [offset + sum(r * step for r, step in zip(rs, r_steps))
                     for rs in itertools.product(*[range(w.strides[d]) for d in r_dims])]
            target = b.broadcast(b.table([w.strides[d] for d in r_dims], i32, table), big,
                                 [r_pos[d] for d in r_dims])
        else:
            target = b.const(big, i32, offset)
            target = target if r_number is None else b.binary("add", r_number, target)
        match = b.compare("EQ", p_j, target)
        acc = b.select(match, _apply(b, region, [acc, s_j], big), acc)
    flat = [q * s for q, s in zip(outer, w.strides)]
    acc = b.reshape(acc, flat)
    return b.slice(acc, w.pad_low, [lo + n for lo, n in zip(w.pad_low, dims)], strides)


def _linear(index, sizes) -> int:
    return sum(i * math.prod(sizes[d + 1:]) for d, i in enumerate(index))
