"""Which linalg reductions are an argmax or argmin: a (value, index) pair
reduced over the innermost loop (any dim of the input) by a combiner that
picks one of the two.

xla-lane-arg-reductions vectorizes them (16 lanes a row, each keeping its own
winner, folded at the end of the row); this module says which ones that gives
the same answer for, by running the combiner on a grid of values: it must be a
selection by a total preorder on the values whose ties go to the lower index
(jax's argmax and argmin: NaN first, then the larger (smaller) value, then
the lower index) or all to the higher one. The combiner is then always applied
with the lower index as its accumulator, as the scalar loop applies it.
"""

from __future__ import annotations

import itertools
import math

from xlac.mlir import ir
from xlac.record import record

LANES = 16
# an integer argmax's value, as canonicalize leaves it (a width: the unsigned ones' order)
_MINMAX = {"arith.maxsi": lambda a, b, w: max(a, b), "arith.minsi": lambda a, b, w: min(a, b),
           "arith.maxui": lambda a, b, w: max(a, b, key=lambda v: v % (1 << w)),
           "arith.minui": lambda a, b, w: min(a, b, key=lambda v: v % (1 << w))}
_COMBINER_OPS = ("arith.cmpf", "arith.cmpi", "arith.andi", "arith.ori", "arith.xori", "arith.select", *_MINMAX)
_FLOATS = (ir.F32Type, ir.F64Type, ir.BF16Type, ir.F16Type)
_FLOAT_GRID = (math.nan, -math.inf, -1.5, -0.0, 0.0, 1.5, math.inf)
_INT_GRID = (-5, -1, 0, 1, 5)
_INDEX_PAIRS = ((0, 1), (2, 7), (1, 30))


@record(mutable=True)
class ArgReduction:
    """``op`` (a linalg.generic) as an argmax: its body's block arguments for the
    accumulated value and index, the incoming value and index, and the combiner's
    ops (those that read the accumulators) in block order."""
    op: ir.Operation
    acc_value: ir.Value
    acc_index: ir.Value
    value: ir.Value
    index: ir.Value
    combiner: list
    value_dead_needed: bool          # the value result is not the scalar loop's bit for bit (+0/-0 ties)
    columns: bool = False            # the reduced dim not the input's last: 16 columns' own loops, no fold
    axis: int = -1                   # the input's reduced dim (columns)


def _op(value: ir.Value):
    """The op that defines ``value``, or None for a block argument."""
    if isinstance(value, ir.BlockArgument):
        return None
    owner = value.owner
    return owner.operation if hasattr(owner, "operation") else owner


def iterator_kinds(op: ir.Operation) -> list[str]:
    return ["reduction" if "reduction" in str(a) else "parallel"
            for a in ir.ArrayAttr(op.attributes["iterator_types"])]


def _maps(op: ir.Operation) -> list:
    return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]


def match(op: ir.Operation) -> ArgReduction | None:
    """``op`` as an argmax/argmin over its innermost loop, or None."""
    if op.name != "linalg.generic":
        return None
    kinds = iterator_kinds(op)
    rank = len(kinds)
    if rank < 1 or kinds[-1] != "reduction" or "reduction" in kinds[:-1]:
        return None
    maps = _maps(op)
    n_in = len(maps) - 2
    if n_in < 1 or len(op.operands) != len(maps):
        return None
    reads = {str(m) for m in maps[:n_in]}
    axis = next((k for k in range(rank) if reads == {_read_map(rank, k)}), None)
    columns = axis is not None and axis < rank - 1
    if axis is None or any(str(m) != _outer_map(rank) for m in maps[n_in:]):
        return None
    block = op.regions[0].blocks[0]
    args = list(block.arguments)
    acc_value, acc_index = args[-2], args[-1]
    if not any(isinstance(acc_value.type, t) for t in _FLOATS) and not _int(acc_value.type, (1, 8, 16, 32, 64)):
        return None
    if not _int(acc_index.type, (32, 64)):
        return None
    ops = list(block.operations)
    yield_op = ops[-1]
    if yield_op.name != "linalg.yield" or len(yield_op.operands) != 2:
        return None
    picks = [_op(v) for v in yield_op.operands]
    if any(p is None for p in picks) or picks[1].name != "arith.select" or picks[1].operands[1] != acc_index:
        return None
    if picks[0].name == "arith.select" and picks[0].operands[1] == acc_value:
        value = picks[0].operands[2]
    elif picks[0].name in _MINMAX and acc_value in list(picks[0].operands):
        value = [v for v in picks[0].operands if v != acc_value][0]
    else:
        return None
    index = picks[1].operands[2]
    if not _is_loop_index(index, rank - 1):
        return None
    combiner = _reads_of(ops[:-1], {acc_value, acc_index})
    allowed = {acc_value, acc_index, value, index} | {r for o in combiner for r in o.results}
    if any(o.name not in _COMBINER_OPS or any(v not in allowed for v in o.operands) for o in combiner):
        return None
    if picks[0] not in combiner or picks[1] not in combiner:
        return None
    checked = _check(combiner, acc_value, acc_index, value, index, picks)
    if checked is None:
        return None
    # a column's elements come in the scalar loop's order: its value too
    return ArgReduction(op, acc_value, acc_index, value, index, combiner, checked and not columns, columns, axis)


def _read_map(rank: int, axis: int) -> str:
    """The input's map where its dim ``axis`` is the reduced loop (the last)
    and the other dims the parallel loops in order."""
    dims = [f"d{i}" for i in range(rank - 1)]
    return f"({', '.join(f'd{i}' for i in range(rank))}) -> ({', '.join(dims[:axis] + [f'd{rank - 1}'] + dims[axis:])})"


def _outer_map(rank: int) -> str:
    dims = ", ".join(f"d{i}" for i in range(rank))
    return f"({dims}) -> ({', '.join(f'd{i}' for i in range(rank - 1))})"


def _int(t, widths) -> bool:
    return isinstance(t, ir.IntegerType) and ir.IntegerType(t).width in widths


def _is_loop_index(value: ir.Value, dim: int) -> bool:
    """Whether ``value`` is ``linalg.index dim``, maybe cast to an integer."""
    op = _op(value)
    if op is not None and op.name == "arith.index_cast":
        op = _op(op.operands[0])
    return op is not None and op.name == "linalg.index" and ir.IntegerAttr(op.attributes["dim"]).value == dim


def _reads_of(ops, roots: set) -> list:
    """The ops of ``ops`` (in order) that read ``roots`` directly or through each other."""
    reached, found = set(roots), []
    for o in ops:
        if any(v in reached for v in o.operands):
            found.append(o)
            reached.update(o.results)
    return found


def _check(combiner, acc_value, acc_index, value, index, picks) -> bool | None:
    """None where the combiner is no ordered selection (see the module); else
    whether only a dead value result makes it exact (+0/-0 ties)."""
    floats = any(isinstance(acc_value.type, t) for t in _FLOATS)
    width = ir.IntegerType(acc_index.type).width
    vwidth = 64 if floats else ir.IntegerType(acc_value.type).width
    grid = _FLOAT_GRID if floats else sorted({_signed(v, vwidth) for v in _INT_GRID})
    wins = {}                                            # (a, b) -> index winner is the lower index's
    value_differs = False
    for a, b in itertools.product(range(len(grid)), repeat=2):
        seen = set()
        for lo, hi in _INDEX_PAIRS:
            env = {acc_value: grid[a], acc_index: lo, value: grid[b], index: hi}
            if not _run(combiner, env, width, vwidth):
                return None
            pick_v, pick_i = _same(env[picks[0].results[0]], grid[a]), env[picks[1].operands[0]]
            seen.add(pick_i)
            if pick_v != pick_i and not _same(grid[a], grid[b]):
                if floats and grid[a] == grid[b]:
                    value_differs = True                 # -0.0 and +0.0
                else:
                    return None
        if len(seen) != 1:
            return None
        wins[a, b] = seen.pop()
    n = len(grid)
    # better(x, y): x wins as the lower index and as the higher one
    better = {(x, y): wins[x, y] and not wins[y, x] for x in range(n) for y in range(n)}
    tie = {(x, y) for x in range(n) for y in range(n) if not better[x, y] and not better[y, x]}
    for x, y in tie:                                     # ties: all to the lower index, or all to the higher
        if wins[x, y] != wins[0, 0] or wins[y, x] != wins[0, 0]:
            return None
    for x, y, z in itertools.product(range(n), repeat=3):
        if better[x, y] and better[y, z] and not better[x, z]:
            return None
        if (x, y) in tie and (y, z) in tie and (x, z) not in tie:
            return None
    return value_differs


def _signed(v: int, width: int) -> int:
    """``v`` wrapped to a ``width``-bit signed integer (i1: 0 and -1)."""
    half = 1 << (width - 1)
    return (v + half) % (1 << width) - half


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    return a == b


_CMPF = {0: lambda a, b: False, 1: lambda a, b: a == b, 2: lambda a, b: a > b, 3: lambda a, b: a >= b,
         4: lambda a, b: a < b, 5: lambda a, b: a <= b, 6: lambda a, b: a != b and not _nan(a, b),
         7: lambda a, b: not _nan(a, b), 8: lambda a, b: a == b or _nan(a, b), 9: lambda a, b: a > b or _nan(a, b),
         10: lambda a, b: a >= b or _nan(a, b), 11: lambda a, b: a < b or _nan(a, b),
         12: lambda a, b: a <= b or _nan(a, b), 13: lambda a, b: a != b, 14: lambda a, b: _nan(a, b),
         15: lambda a, b: True}


def _nan(a, b) -> bool:
    return math.isnan(a) or math.isnan(b)


def _cmpi(pred: int, a: int, b: int, width: int) -> bool:
    if pred >= 6:                                        # unsigned predicates
        a, b = a % (1 << width), b % (1 << width)
    return [a == b, a != b, a < b, a <= b, a > b, a >= b, a < b, a <= b, a > b, a >= b][pred]


def _run(ops, env: dict, width: int, vwidth: int) -> bool:
    """Evaluate ``ops`` on Python scalars into ``env``; False where one is unknown."""
    for o in ops:
        args = [env.get(v) for v in o.operands]
        if any(a is None for a in args):
            return False
        if o.name == "arith.cmpf":
            out = _CMPF[ir.IntegerAttr(o.attributes["predicate"]).value](*args)
        elif o.name == "arith.cmpi":
            w = width if isinstance(o.operands[0].type, ir.IntegerType) and \
                ir.IntegerType(o.operands[0].type).width == width else vwidth
            out = _cmpi(ir.IntegerAttr(o.attributes["predicate"]).value, *args, w)
        elif o.name == "arith.select":
            out = args[1] if args[0] else args[2]
        elif o.name in _MINMAX:
            out = _MINMAX[o.name](*args, vwidth)
        elif not isinstance(o.results[0].type, ir.IntegerType) or ir.IntegerType(o.results[0].type).width != 1:
            return False                                 # and/or/xor on wider integers
        else:
            a, b = args
            out = {"arith.andi": a and b, "arith.ori": a or b, "arith.xori": a != b}[o.name]
        env[o.results[0]] = out
    return True
