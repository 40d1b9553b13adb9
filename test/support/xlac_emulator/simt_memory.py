"""The SIMT emulator's memref ops: loads, stores, views, atomics, copies
(see xlac_emulator.simt)."""

from __future__ import annotations

import numpy as np

from xlac_emulator import simt_ops as ops
from xlac_emulator.simt_model import DYNAMIC, MemRef, contiguous_strides, parse_memref, segments, set_value

# ---- memref -------------------------------------------------------------------------------

def _load(launch, op, mask):
    env = launch.env
    ref = env[op.args[0]]
    index = launch.address(op, ref, [env[s] for s in op.args[1:]], mask)
    set_value(launch, op, launch.load(ref, index, mask))


def _store(launch, op, mask):
    env = launch.env
    ref = env[op.args[1]]
    index = launch.address(op, ref, [env[s] for s in op.args[2:]], mask)
    launch.store(ref, index, env[op.args[0]], mask)


def _alloca(launch, op, mask):
    mtype = parse_memref(op.rtypes[0])
    dynamic = iter(launch.env[s] for s in op.args)
    sizes = [next(dynamic) if d is None else d for d in mtype.shape]
    space = "workgroup" if mtype.space == "workgroup" else "private"
    set_value(launch, op, launch.allocate(mtype, space, sizes, op.rtypes[0]))


def _get_global(launch, op, mask):
    symbol = op.attrs["symbol"]
    if symbol not in launch.instances:
        mtype, data = launch.kernel.globals_[symbol]
        if data is None:
            ref = launch.allocate(mtype, "workgroup" if mtype.space == "workgroup" else "private",
                                  mtype.shape, op.rtypes[0])
        else:
            buf = data.copy()
            ref = MemRef(buf, np.int64(0), np.int64(0), np.int64(buf.size), mtype,
                         np.int64(mtype.offset or 0), [np.int64(d) for d in mtype.shape],
                         [np.int64(s) for s in mtype.strides])
        launch.instances[symbol] = ref
    set_value(launch, op, launch.instances[symbol])


def _mixed(static, dynamic) -> list:
    dynamic = iter(dynamic)
    return [next(dynamic) if s == DYNAMIC else np.int64(s) for s in static]


def _extract_strided_metadata(launch, op, mask):
    ref = launch.env[op.args[0]]
    base = ref.with_layout(np.int64(0), [], [], parse_memref(op.rtypes[0]))
    set_value(launch, op, base, ref.offset, *ref.sizes, *ref.strides)


def _reinterpret_cast(launch, op, mask):
    source, offsets, sizes, strides = segments(op, launch)
    mtype = parse_memref(op.rtypes[0])
    set_value(launch, op, source[0].with_layout(_mixed(op.attrs["static_offsets"], offsets)[0],
                                           _mixed(op.attrs["static_sizes"], sizes),
                                           _mixed(op.attrs["static_strides"], strides), mtype))


def _subview(launch, op, mask):
    source, offsets, sizes, strides = segments(op, launch)
    ref = source[0]
    offsets = _mixed(op.attrs["static_offsets"], offsets)
    sizes = _mixed(op.attrs["static_sizes"], sizes)
    steps = _mixed(op.attrs["static_strides"], strides)
    offset = ref.offset
    for o, s in zip(offsets, ref.strides):
        offset = offset + o * s
    new_strides = [s * k for s, k in zip(ref.strides, steps)]
    mtype = parse_memref(op.rtypes[0])
    keep = _kept_dims(op.attrs["static_sizes"], len(mtype.shape))
    set_value(launch, op, ref.with_layout(offset, [sizes[i] for i in keep], [new_strides[i] for i in keep], mtype))


def _kept_dims(static_sizes, rank: int) -> list[int]:
    """Dimensions a rank-reducing subview keeps: unit dims are dropped, leftmost first."""
    drop = len(static_sizes) - rank
    keep = []
    for i, size in enumerate(static_sizes):
        if drop and size == 1:
            drop -= 1
            continue
        keep.append(i)
    return keep


def _expand_shape(launch, op, mask):
    ref = launch.env[op.args[0]]
    mtype = parse_memref(op.rtypes[0])
    dynamic = [launch.env[s] for s in op.args[1:]]
    out_sizes = _mixed(op.attrs["static_output_shape"], dynamic) if "static_output_shape" in op.attrs \
        else [np.int64(d) for d in mtype.shape]
    sizes, strides = list(out_sizes), [None] * len(out_sizes)
    for source_dim, group in enumerate(op.attrs["reassociation"]):
        running = ref.strides[source_dim]
        for dim in reversed(group):
            strides[dim] = running
            running = running * sizes[dim]
    set_value(launch, op, ref.with_layout(ref.offset, sizes, strides, mtype))


def _collapse_shape(launch, op, mask):
    ref = launch.env[op.args[0]]
    sizes, strides = [], []
    for group in op.attrs["reassociation"]:
        size = np.int64(1)
        for dim in group:
            size = None if size is None or ref.sizes[dim] is None else size * ref.sizes[dim]
        sizes.append(size)
        strides.append(ref.strides[group[-1]] if group else np.int64(1))
    set_value(launch, op, ref.with_layout(ref.offset, sizes, strides, parse_memref(op.rtypes[0])))


def _same_memref(launch, op, mask):
    if not op.res:                                   # assume_alignment without a result
        return
    ref = launch.env[op.args[0]]
    set_value(launch, op, ref.with_layout(ref.offset, ref.sizes, ref.strides, parse_memref(op.rtypes[0])))


def _view(launch, op, mask):
    ref, shift, *dynamic = (launch.env[s] for s in op.args)
    mtype = parse_memref(op.rtypes[0])
    dynamic = iter(dynamic)
    sizes = [next(dynamic) if d is None else np.int64(d) for d in mtype.shape]
    base = ref.base + ref.offset * ref.type.dtype.itemsize + shift
    view = MemRef(ref.buf, base, ref.lo, ref.hi, mtype, np.int64(0), sizes, contiguous_strides(sizes))
    if np.any(np.asarray(base) % mtype.dtype.itemsize):
        launch.fail(op, "the view is not aligned to its element size")
    set_value(launch, op, view)


def _dim(launch, op, mask):
    ref, index = launch.env[op.args[0]], launch.env[op.args[1]]
    set_value(launch, op, ref.sizes[int(index)])


def _rmw_rounds(launch, op, ref, index, mask):
    """Conflicting atomics take turns: each round updates every address at most once."""
    threads = np.flatnonzero(mask)
    addresses = np.broadcast_to(index, (launch.n,))[threads]
    order = np.argsort(addresses, kind="stable")
    sorted_addresses = addresses[order]
    if not sorted_addresses.size:
        return
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_addresses)) + 1]       # first of each address
    rank = np.arange(sorted_addresses.size) - np.repeat(starts, np.diff(np.r_[starts, sorted_addresses.size]))
    for r in range(int(rank.max()) + 1):
        yield threads[order[rank == r]]


_RMW = {"addf": np.add, "assign": lambda a, b: b, "maximumf": ops.maximumf, "minimumf": ops.minimumf,
        "mulf": np.multiply, "maxnumf": np.fmax, "minnumf": np.fmin}
_RMW_INT = {"addi": "arith.addi", "maxs": "arith.maxsi", "maxu": "arith.maxui", "mins": "arith.minsi",
            "minu": "arith.minui", "muli": "arith.muli", "ori": "arith.ori", "andi": "arith.andi"}


def _atomic_rmw(launch, op, mask):
    env = launch.env
    value, ref = env[op.args[0]], env[op.args[1]]
    index = launch.address(op, ref, [env[s] for s in op.args[2:]], mask)
    kind = op.attrs["mode"]
    if kind in _RMW:
        combine = _RMW[kind]
    elif kind in _RMW_INT:
        width = ops.int_width(op.atypes[0])
        combine = lambda a, b, f=ops.INT_BINARY[_RMW_INT[kind]]: f(a, b, width)   # noqa: E731
    else:
        launch.fail(op, f"atomic kind {kind} is not supported")
    view = launch.typed(ref)
    old = np.zeros(launch.n, ref.type.dtype)
    values = np.broadcast_to(value, (launch.n,))
    addresses = np.broadcast_to(index, (launch.n,))
    for group in _rmw_rounds(launch, op, ref, index, mask):
        current = view[addresses[group]]
        old[group] = current
        view[addresses[group]] = combine(current, values[group])
    set_value(launch, op, launch._to_register(ref.type.element, old))


def _generic_atomic_rmw(launch, op, mask):
    env = launch.env
    ref = env[op.args[0]]
    index = launch.address(op, ref, [env[s] for s in op.args[1:]], mask)
    addresses = np.broadcast_to(index, (launch.n,))
    old = np.zeros(launch.n, ref.type.dtype)
    for group in _rmw_rounds(launch, op, ref, index, mask):
        turn = np.zeros(launch.n, np.bool_)
        turn[group] = True
        current = launch.load(ref, addresses, turn)
        old[group] = np.asarray(current)[group]
        (new,) = launch.region(op.regions[0], turn, [current])
        launch.store(ref, addresses, new, turn)
    set_value(launch, op, launch._to_register(ref.type.element, old))


def _copy(launch, op, mask):
    """memref.copy by each active thread (once when both memrefs are the same for all)."""
    source, target = launch.env[op.args[0]], launch.env[op.args[1]]
    threads = np.flatnonzero(mask)
    if not threads.size:
        return
    fields = [v for ref in (source, target) for v in [ref.base, ref.offset, *ref.sizes, *ref.strides]]
    if not any(np.ndim(v) for v in fields):
        threads = threads[:1]                        # the same copy for every thread: do it once
    if any(size is None or np.ndim(size) for size in source.sizes):
        launch.fail(op, "a copy of a per-thread or dynamic shape is not supported")
    shape = [int(size) for size in source.sizes]
    positions = np.indices(shape).reshape(len(shape), int(np.prod(shape)))     # rank 0: one element
    addresses = [_element_addresses(launch, op, ref, positions, threads) for ref in (source, target)]
    launch.typed(target)[addresses[1]] = launch.typed(source)[addresses[0]]


def _element_addresses(launch, op, ref: MemRef, positions, threads):
    """Indices into typed(ref) of every element (columns) for each thread (rows)."""
    def pick(value):
        return value if np.ndim(value) == 0 else np.asarray(value)[threads][:, None]
    element = pick(ref.offset) + sum((pick(stride) * positions[d] for d, stride in enumerate(ref.strides)),
                                     np.zeros(positions.shape[1], np.int64))
    itemsize = ref.type.dtype.itemsize
    byte = pick(ref.base) + element * itemsize
    if np.any((byte < pick(ref.lo)) | (byte + itemsize > pick(ref.hi))):
        launch.fail(op, "copies outside its allocation (an illegal memory access on a GPU)")
    return np.broadcast_to(byte // itemsize, (threads.size, positions.shape[1]))


def _noop(launch, op, mask):
    pass


def _poison(launch, op, mask):
    set_value(launch, op, np.zeros((), ops.storage_dtype(op.rtypes[0]))[()])




HANDLERS = {
    "memref.load": _load,
    "memref.store": _store,
    "memref.alloca": _alloca,
    "memref.alloc": _alloca,
    "memref.get_global": _get_global,
    "memref.extract_strided_metadata": _extract_strided_metadata,
    "memref.reinterpret_cast": _reinterpret_cast,
    "memref.subview": _subview,
    "memref.expand_shape": _expand_shape,
    "memref.collapse_shape": _collapse_shape,
    "memref.cast": _same_memref,
    "memref.memory_space_cast": _same_memref,
    "memref.assume_alignment": _same_memref,
    "memref.view": _view,
    "memref.dim": _dim,
    "memref.atomic_rmw": _atomic_rmw,
    "memref.generic_atomic_rmw": _generic_atomic_rmw,
    "memref.copy": _copy,
    "memref.dealloc": _noop,
    "gpu.printf": _noop,
    "ub.poison": _poison,
}
