"""The SIMT emulator's gpu and scf ops: thread geometry, shuffles, barriers, and
structured control flow under masks (see xlac_emulator.simt)."""

from __future__ import annotations

import numpy as np

from xlac_emulator import simt_ops as ops
from xlac_emulator.simt_model import DYNAMIC, merge, parse_memref, segments, set_value

# ---- gpu ops ----------------------------------------------------------------------------

def _thread_id(launch, op, mask):
    set_value(launch, op, launch.thread_ids[op.attrs["dim"]])


def _block_id(launch, op, mask):
    set_value(launch, op, launch.block_ids[op.attrs["dim"]])


def _block_dim(launch, op, mask):
    set_value(launch, op, np.int64(launch.block[op.attrs["dim"]]))


def _grid_dim(launch, op, mask):
    set_value(launch, op, np.int64(launch.grid[op.attrs["dim"]]))


def _global_id(launch, op, mask):
    dim = op.attrs["dim"]
    set_value(launch, op, launch.block_ids[dim] * launch.block[dim] + launch.thread_ids[dim])


def _lane_id(launch, op, mask):
    set_value(launch, op, launch.lane)


def _subgroup_id(launch, op, mask):
    set_value(launch, op, launch.linear // 32)


def _num_subgroups(launch, op, mask):
    set_value(launch, op, np.int64((launch.per_block + 31) // 32))


def _subgroup_size(launch, op, mask):
    set_value(launch, op, np.int64(32))


def _barrier(launch, op, mask):
    """A no-op in lockstep; but every thread of a block must reach it, or a GPU hangs."""
    rows = mask.reshape(launch.nblocks, launch.per_block)
    split = rows.any(axis=1) & ~rows.all(axis=1)
    if split.any():
        launch.fail(op, f"reached by only some threads of block {int(np.flatnonzero(split)[0])} "
                    "(a barrier in divergent control flow: undefined, usually a hang, on a GPU)")


def _shuffle(launch, op, mask):
    """gpu.shuffle as MLIR lowers it to shfl.sync: member lanes [0, width), clamp width-1."""
    env = launch.env
    value, offset, width = env[op.args[0]], env[op.args[1]], env[op.args[2]]
    offset, width = np.int64(offset) if np.ndim(offset) == 0 else offset.astype(np.int64), \
        np.int64(width) if np.ndim(width) == 0 else width.astype(np.int64)
    lane, mode = launch.lane, op.attrs["mode"]
    if mode == "xor":
        source, valid = lane ^ offset, (lane ^ offset) <= width - 1
    elif mode == "down":
        source, valid = lane + offset, lane + offset <= width - 1
    elif mode == "up":
        source, valid = lane - offset, lane - offset >= 32 - width
    elif mode == "idx":
        source = np.broadcast_to(offset & 31, lane.shape)
        valid = source <= width - 1
    else:
        launch.fail(op, f"shuffle mode {mode} is not supported")
    source = np.where(valid, source, lane)
    warp_start = launch.thread - lane
    exists = launch.linear - lane + source < launch.per_block
    target = np.where(exists, warp_start + source, launch.thread)
    members = mask & (lane < width)
    reads_idle = members & valid & exists & ~mask[target]
    if reads_idle.any():
        launch.fail(op, f"{launch.where_is(reads_idle)} reads a lane that is not active "
                    "(gpu.shuffle in divergent control flow: undefined on a GPU)")
    values = np.broadcast_to(value, (launch.n,))
    shuffled = values[target]
    if not np.all(exists | ~members | ~valid):           # lanes past the block's end: garbage
        shuffled = shuffled.copy()
        missing = members & valid & ~exists
        shuffled[missing] = np.array(np.nan).astype(shuffled.dtype) if shuffled.dtype.kind in "fcV" else 0
    set_value(launch, op, shuffled, np.broadcast_to(valid, (launch.n,)).copy())


_SUBGROUP_REDUCE = {"add": np.add, "mul": np.multiply, "minnumf": np.fmin, "maxnumf": np.fmax,
                    "minimumf": ops.minimumf, "maximumf": ops.maximumf}
_SUBGROUP_REDUCE_INT = {"minsi": "arith.minsi", "maxsi": "arith.maxsi", "minui": "arith.minui",
                        "maxui": "arith.maxui", "and": "arith.andi", "or": "arith.ori", "xor": "arith.xori"}


def _subgroup_reduce(launch, op, mask):
    """The reduction over each warp (or cluster of lanes), given to every lane of it."""
    cluster = int(op.attrs.get("cluster_size", 32))
    if int(op.attrs.get("cluster_stride", 1)) != 1:
        launch.fail(op, "cluster_stride other than 1 is not supported")
    key = launch.block_index * ((launch.per_block + cluster - 1) // cluster) + launch.linear // cluster
    whole = np.bincount(key, minlength=int(key.max()) + 1)
    active = np.bincount(key, weights=mask, minlength=whole.size)
    if np.any((active > 0) & (active < whole)):
        launch.fail(op, "reached by only some lanes of a subgroup (divergent: undefined on a GPU)")
    kind, width = op.attrs["mode"], None
    if kind in _SUBGROUP_REDUCE:
        combine = _SUBGROUP_REDUCE[kind]
    elif kind in _SUBGROUP_REDUCE_INT:
        width = ops.int_width(op.atypes[0])
        combine = ops.INT_BINARY[_SUBGROUP_REDUCE_INT[kind]]
    else:
        launch.fail(op, f"subgroup reduction {kind} is not supported")
    values = np.broadcast_to(launch.env[op.args[0]], (launch.n,))
    starts = np.r_[0, np.flatnonzero(np.diff(key)) + 1]
    total = values[starts].copy()
    for step in range(1, cluster):                 # lane by lane: clusters are contiguous threads
        at = starts + step
        inside = at < np.r_[starts[1:], launch.n]
        part = values[np.where(inside, at, starts)]
        merged = combine(total, part) if width is None else combine(total, part, width)
        total = np.where(inside, merged, total)
    set_value(launch, op, np.repeat(total, np.diff(np.r_[starts, launch.n])))


def _dynamic_shared_memory(launch, op, mask):
    if "dynamic_shared" not in launch.instances:
        mtype = parse_memref(op.rtypes[0])
        launch.instances["dynamic_shared"] = launch.allocate(mtype, "workgroup", [launch.smem], op.rtypes[0])
    set_value(launch, op, launch.instances["dynamic_shared"])


# ---- scf ----------------------------------------------------------------------------------

def _scf_if(launch, op, mask):
    cond = launch.env[op.args[0]]
    then, other = op.regions[0], op.regions[1] if len(op.regions) > 1 else None
    if np.ndim(cond) == 0:
        region = then if cond else other
        set_value(launch, op, *(launch.region(region, mask, []) if region is not None else []))
        return
    yes, no = mask & cond, mask & ~cond
    if other is None or not no.any():
        set_value(launch, op, *launch.region(then, yes, []))
    elif not yes.any():
        set_value(launch, op, *launch.region(other, no, []))
    else:
        first = launch.region(then, yes, [])
        second = launch.region(other, no, [])
        set_value(launch, op, *[merge(cond, a, b) for a, b in zip(first, second)])


def _less(a, b, width: int, unsigned: bool):
    return ops.unsigned(a, width) < ops.unsigned(b, width) if unsigned else \
        ops.signed(a, width) < ops.signed(b, width)


def _scf_for(launch, op, mask):
    env = launch.env
    lower, upper, step = (env[s] for s in op.args[:3])
    carried = [env[s] for s in op.args[3:]]
    body = op.regions[0]
    type_text = op.atypes[0]
    width, unsigned = ops.int_width(type_text), "unsignedCmp" in op.attrs
    if all(np.ndim(v) == 0 for v in (lower, upper, step)):
        read = ops.unsigned if unsigned else ops.signed
        lo, hi, st = (int(read(v, width)) for v in (lower, upper, step))
        if st <= 0 and lo < hi:
            launch.fail(op, f"loop step {st} is not positive")
        if mask.any():
            dtype = ops.storage_dtype(type_text)
            for i in range(lo, hi, st):
                carried = launch.region(body, mask, [ops.scalar(i, dtype)] + carried)
        set_value(launch, op, *carried)
        return
    iv = np.broadcast_to(lower, (launch.n,)).copy()
    live = mask & _less(iv, upper, width, unsigned)
    while live.any():
        new = launch.region(body, live, [iv] + carried)
        carried = [merge(live, a, b) for a, b in zip(new, carried)]
        iv = ops.INT_BINARY["arith.addi"](iv, step, width)
        live = live & _less(iv, upper, width, unsigned)
    set_value(launch, op, *carried)


def _iterations(launch, lower, upper, step, mask):
    """(index, mask) for each iteration of one index-typed loop dimension."""
    if all(np.ndim(v) == 0 for v in (lower, upper, step)):
        if mask.any():
            for i in range(int(lower), int(upper), int(step)):
                yield np.int64(i), mask
        return
    iv = np.broadcast_to(lower, (launch.n,)).copy()
    live = mask & (iv < upper)
    while live.any():
        yield iv, live
        iv = iv + step
        live = live & (iv < upper)


def _scf_parallel(launch, op, mask):
    """Iterations run one after another (any order is valid); scf.reduce combines in order."""
    lowers, uppers, steps, inits = segments(op, launch)
    body, reducers = op.regions[0], op.attrs.get("reducers", [])
    accumulated = list(inits)

    def nest(dim, indices, active):
        if dim == len(lowers):
            values = launch.region(body, active, indices)
            for i, reducer in enumerate(reducers):
                combined = launch.region(reducer, active, [accumulated[i], values[i]])[0]
                accumulated[i] = merge(active, combined, accumulated[i])
            return
        for index, live in _iterations(launch, lowers[dim], uppers[dim], steps[dim], active):
            nest(dim + 1, indices + [index], live)

    nest(0, [], mask)
    set_value(launch, op, *accumulated)


def _scf_forall(launch, op, mask):
    """A bufferized scf.forall (no shared outputs): its iterations one after
    another, as _scf_parallel's (any order is valid). Each bound is static
    (``static*`` attributes) or, where that says dynamic, the next operand of
    its operand segment."""
    lowers, uppers, steps, outputs = segments(op, launch)
    if outputs:
        launch.fail(op, "scf.forall with shared outputs (tensors) is not supported")
    lowers, uppers, steps = (_forall_bounds(op.attrs[name], dynamic)
                             for name, dynamic in (("staticLowerBound", lowers),
                                                   ("staticUpperBound", uppers),
                                                   ("staticStep", steps)))
    body = op.regions[0]

    def nest(dim, indices, active):
        if dim == len(lowers):
            launch.region(body, active, indices)
            return
        for index, live in _iterations(launch, lowers[dim], uppers[dim], steps[dim], active):
            nest(dim + 1, indices + [index], live)

    nest(0, [], mask)


def _forall_bounds(static: list[int], dynamic: list) -> list:
    values = iter(dynamic)
    return [next(values) if bound == DYNAMIC else np.int64(bound) for bound in static]


def _scf_while(launch, op, mask):
    before, after = op.regions
    carried = [launch.env[s] for s in op.args]
    active, results = mask, None
    while True:
        cond, *forward = launch.region(before, active, carried)
        if results is None:
            results = forward
        else:
            leaving = active & ~np.asarray(cond)
            results = [merge(leaving, f, r) for f, r in zip(forward, results)]
        active = active & cond
        if not np.any(active):
            break
        carried = launch.region(after, active, forward)
    set_value(launch, op, *results)


def _index_switch(launch, op, mask):
    value = launch.env[op.args[0]]
    default, *cases = op.regions
    labels = op.attrs["cases"]
    if np.ndim(value) == 0:
        region = cases[labels.index(int(value))] if int(value) in labels else default
        set_value(launch, op, *launch.region(region, mask, []))
        return
    results, rest = None, mask
    for label, region in list(zip(labels, cases)) + [(None, default)]:
        chosen = rest if label is None else rest & (value == label)
        rest = rest & ~chosen
        if not chosen.any() and not (label is None and results is None):
            continue
        out = launch.region(region, chosen, [])
        results = out if results is None else [merge(chosen, a, b) for a, b in zip(out, results)]
    set_value(launch, op, *results)


def _execute_region(launch, op, mask):
    set_value(launch, op, *launch.region(op.regions[0], mask, []))


def _select(launch, op, mask):
    env = launch.env
    set_value(launch, op, merge(env[op.args[0]], env[op.args[1]], env[op.args[2]]))




HANDLERS = {
    "gpu.thread_id": _thread_id,
    "gpu.block_id": _block_id,
    "gpu.block_dim": _block_dim,
    "gpu.grid_dim": _grid_dim,
    "gpu.global_id": _global_id,
    "gpu.lane_id": _lane_id,
    "gpu.subgroup_id": _subgroup_id,
    "gpu.num_subgroups": _num_subgroups,
    "gpu.subgroup_size": _subgroup_size,
    "gpu.barrier": _barrier,
    "gpu.shuffle": _shuffle,
    "gpu.subgroup_reduce": _subgroup_reduce,
    "gpu.dynamic_shared_memory": _dynamic_shared_memory,
    "scf.if": _scf_if,
    "scf.for": _scf_for,
    "scf.while": _scf_while,
    "scf.index_switch": _index_switch,
    "scf.execute_region": _execute_region,
    "scf.parallel": _scf_parallel,
    "scf.forall": _scf_forall,
    "arith.select": _select,
}
