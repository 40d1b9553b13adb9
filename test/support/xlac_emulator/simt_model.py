"""The SIMT emulator's data: translated kernels, memrefs, and one launch's state
(see xlac_emulator.simt for the model)."""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass, field

import numpy as np

from xlac.errors import XlacError
from xlac_emulator import simt_ops as ops

POISON = 0xFF
DYNAMIC = -(1 << 63)          # ShapedType's marker for a dynamic size/offset/stride
CTYPES = {"index": ctypes.c_int64, "i64": ctypes.c_int64, "i32": ctypes.c_int32, "i16": ctypes.c_int16,
           "i8": ctypes.c_int8, "i1": ctypes.c_bool, "f32": ctypes.c_float, "f64": ctypes.c_double,
           "f16": ctypes.c_uint16, "bf16": ctypes.c_uint16}


class EmulationError(XlacError):
    """The kernel did something a GPU would fault on, or the emulator does not support."""


# ---- the translated form -------------------------------------------------------------

@dataclass
class Region:
    params: list[int]
    ops: list
    yields: list[int]


@dataclass
class Op:
    name: str
    run: object
    res: list[int]
    args: list[int]
    rtypes: list[str]
    atypes: list[str]
    attrs: dict
    regions: list[Region]
    text: str


@dataclass
class MemRefType:
    element: str
    dtype: np.dtype               # storage dtype (i1 is a byte in memory)
    shape: list                   # None for a dynamic dimension
    strides: list
    offset: object
    space: str                    # "global", "workgroup" or "private"


@dataclass
class Kernel:
    name: str
    nslots: int
    params: list[int]
    param_types: list[str]
    attributions: list[tuple[int, str, str]]        # (slot, type, "workgroup"|"private")
    body: Region
    globals_: dict = field(default_factory=dict)


_MEMREF_TYPES: dict[str, MemRefType] = {}


def parse_memref(text: str) -> MemRefType:
    """A memref type's layout; translation parses each once (in the emulator's context),
    so execution only looks it up."""
    if text not in _MEMREF_TYPES:
        _MEMREF_TYPES[text] = _parse_memref(text)
    return _MEMREF_TYPES[text]


def _parse_memref(text: str) -> MemRefType:
    from xlac.mlir import ir
    t = ir.MemRefType(ir.Type.parse(text))
    element = str(t.element_type)
    strides, offset = t.get_strides_and_offset()
    space = str(t.memory_space) if t.memory_space is not None else ""
    kind = "workgroup" if "workgroup" in space or space == "3" else \
        "private" if "private" in space or space == "5" else "global"
    dtype = _memory_dtype(element)
    return MemRefType(element, dtype, [None if d == DYNAMIC else d for d in t.shape],
                      [None if s == DYNAMIC else s for s in strides],
                      None if offset == DYNAMIC else offset, kind)


def _memory_dtype(element: str) -> np.dtype:
    """How an element sits in memory: i1 and sub-byte integers take a byte, as the host's."""
    if re.fullmatch(r"i\d+", element):
        width = int(element[1:])
        if width not in (8, 16, 32, 64):
            return np.dtype(np.uint8) if width == 1 else \
                np.dtype(f"int{next(w for w in (8, 16, 32, 64) if w >= width)}")
    return ops.storage_dtype(element)


def attr_value(attr):
    from xlac.mlir import ir
    for kind in (ir.DenseI64ArrayAttr, ir.DenseI32ArrayAttr, ir.DenseBoolArrayAttr):
        if isinstance(attr, kind):
            return list(kind(attr))
    if isinstance(attr, ir.IntegerAttr):
        return ir.IntegerAttr(attr).value
    if isinstance(attr, ir.FloatAttr):
        return ir.FloatAttr(attr).value
    if isinstance(attr, ir.StringAttr):
        return ir.StringAttr(attr).value
    if isinstance(attr, ir.ArrayAttr):
        return [attr_value(a) for a in ir.ArrayAttr(attr)]
    return attr                                      # kept as the binding object: read at translation



# ---- memory ---------------------------------------------------------------------------

@dataclass
class MemRef:
    """A memref in the emulator: bytes, where element 0 is (per thread), and its layout."""
    buf: np.ndarray               # flat uint8: a device allocation, or all blocks'/threads' copies
    base: object                  # byte address of the (aligned) base pointer in buf
    lo: object                    # byte bounds of this block's/thread's allocation
    hi: object
    type: MemRefType
    offset: object
    sizes: list
    strides: list

    def with_layout(self, offset, sizes, strides, mtype: MemRefType | None = None) -> MemRef:
        return MemRef(self.buf, self.base, self.lo, self.hi, mtype or self.type, offset, list(sizes),
                      list(strides))


def contiguous_strides(sizes) -> list:
    strides, running = [], np.int64(1)
    for size in reversed(sizes):
        strides.append(running)
        running = running * size
    return strides[::-1]


def merge(cond, a, b):
    """Per-thread choice between two values, memrefs included."""
    if not isinstance(a, MemRef):
        return ops.where(cond, a, b)
    if a is b or np.ndim(cond) == 0:
        return a if (np.ndim(cond) != 0 or cond) else b
    if a.buf is not b.buf:
        raise EmulationError("a thread-dependent choice between memrefs of different allocations "
                             "is not supported by the SIMT emulator")
    pick = lambda x, y: ops.where(cond, x, y)   # noqa: E731
    return MemRef(a.buf, pick(a.base, b.base), pick(a.lo, b.lo), pick(a.hi, b.hi), a.type,
                  pick(a.offset, b.offset), [pick(x, y) for x, y in zip(a.sizes, b.sizes)],
                  [pick(x, y) for x, y in zip(a.strides, b.strides)])


# ---- one launch -------------------------------------------------------------------------

class Launch:
    """The state of one kernel launch: thread geometry, SSA values, memory."""

    def __init__(self, kernel: Kernel, grid, block, memory: dict, smem: int):
        self.kernel, self.grid, self.block, self.memory, self.smem = kernel, grid, block, memory, smem
        self.per_block = int(np.prod(block))
        self.nblocks = int(np.prod(grid))
        self.n = self.per_block * self.nblocks
        t = np.arange(self.n, dtype=np.int64)
        self.thread = t
        self.block_index = t // self.per_block if self.nblocks > 1 else np.int64(0)
        self.linear = t % self.per_block
        bx, by, _ = block
        gx, gy, _ = grid
        self.thread_ids = [self._uniform_if(block[0] == 1, self.linear % bx),
                           self._uniform_if(block[1] == 1, (self.linear // bx) % by),
                           self._uniform_if(block[2] == 1, self.linear // (bx * by))]
        blocks = t // self.per_block
        self.block_ids = [self._uniform_if(grid[0] == 1, blocks % gx),
                          self._uniform_if(grid[1] == 1, (blocks // gx) % gy),
                          self._uniform_if(grid[2] == 1, blocks // (gx * gy))]
        self.lane = self.linear % 32
        self.env = [None] * kernel.nslots
        self.instances: dict = {}          # module globals and dynamic shared memory, once per launch
        self._starts = sorted(memory)

    @staticmethod
    def _uniform_if(uniform: bool, values):
        return np.int64(0) if uniform else values

    def run(self, values) -> None:
        kernel = self.kernel
        with np.errstate(all="ignore"):
            for slot, value, type_text in zip(kernel.params, values, kernel.param_types):
                self.env[slot] = (self.device_memref(int(value), parse_memref(type_text), type_text)
                                  if type_text.startswith("memref<") else value)
            for slot, type_text, space in kernel.attributions:
                mtype = parse_memref(type_text)
                self.env[slot] = self.allocate(mtype, space, mtype.shape, type_text)
            self.region(kernel.body, np.ones(self.n, np.bool_), [])

    def region(self, region: Region, mask, args) -> list:
        env = self.env
        for slot, value in zip(region.params, args):
            env[slot] = value
        op = None
        try:
            for op in region.ops:
                op.run(self, op, mask)
        except EmulationError:
            raise
        except Exception as exc:                         # an emulator gap: say where
            raise EmulationError(f"kernel {self.kernel.name}: {op.text}: "
                                 f"{type(exc).__name__}: {exc}") from exc
        return [env[slot] for slot in region.yields]

    def fail(self, op: Op, message: str):
        raise EmulationError(f"kernel {self.kernel.name}: {op.text}: {message}")

    def where_is(self, bad) -> str:
        """'thread (x,y,z) of block (x,y,z)' for the first thread flagged in ``bad``."""
        t = int(np.flatnonzero(bad)[0])
        ids = [int(np.broadcast_to(v, self.n)[t]) for v in self.thread_ids]
        blocks = [int(np.broadcast_to(v, self.n)[t]) for v in self.block_ids]
        return f"thread {tuple(ids)} of block {tuple(blocks)}"

    # -- memory --

    def device_memref(self, address: int, mtype: MemRefType, type_text: str) -> MemRef:
        if mtype.offset is None or None in mtype.strides:
            raise EmulationError(f"kernel {self.kernel.name}: argument {type_text} has a dynamic "
                                 "layout, which the bare-pointer ABI cannot pass")
        buf, start = self._allocation(address)
        base = np.int64(address - start)
        if base % mtype.dtype.itemsize:
            raise EmulationError(f"kernel {self.kernel.name}: argument {type_text} at {address:#x} is "
                                 f"not aligned to {mtype.dtype.itemsize} bytes")
        return MemRef(buf, base, np.int64(0), np.int64(buf.size), mtype, np.int64(mtype.offset),
                      [None if d is None else np.int64(d) for d in mtype.shape],
                      [np.int64(s) for s in mtype.strides])

    def _allocation(self, address: int):
        if address in self.memory:
            return self.memory[address], address
        import bisect
        i = bisect.bisect_right(self._starts, address) - 1
        if i >= 0:
            start = self._starts[i]
            if address < start + self.memory[start].size:
                return self.memory[start], start
        raise EmulationError(f"kernel {self.kernel.name}: {address:#x} is not a device allocation")

    def allocate(self, mtype: MemRefType, space: str, sizes, what: str) -> MemRef:
        """Fresh memory: one copy per block (workgroup) or per thread (private)."""
        sizes = [np.int64(s) for s in sizes]
        count = np.int64(1)
        for size in sizes:
            count = count * size
        count = int(np.max(count))                     # per-thread sizes: room for the largest
        nbytes = count * mtype.dtype.itemsize
        stride = (nbytes + 15) // 16 * 16 or 16
        copies, which = (self.nblocks, self.block_index) if space == "workgroup" else (self.n, self.thread)
        buf = np.full(copies * stride, POISON, np.uint8)
        base = which * stride
        strides = contiguous_strides(sizes) if mtype.offset in (0, None) and not _has_layout(what) \
            else [np.int64(s) for s in mtype.strides]
        return MemRef(buf, base, base, base + nbytes, mtype, np.int64(mtype.offset or 0), sizes, strides)

    def address(self, op: Op, ref: MemRef, indices, mask):
        """Element index into ``typed(ref)`` for each thread; faults raise."""
        element = ref.offset
        for dim, (index, size, stride) in enumerate(zip(indices, ref.sizes, ref.strides)):
            if size is not None:
                bad = (index < 0) | (index >= size)
                if np.any(bad & mask):
                    self._fault(op, bad & mask, f"index {self._at(index, bad & mask)} out of bounds "
                                f"for dimension {dim} of size {self._at(size, bad & mask)}")
            element = element + index * stride
        itemsize = ref.type.dtype.itemsize
        byte = ref.base + element * itemsize
        bad = (byte < ref.lo) | (byte + itemsize > ref.hi)
        if np.any(bad & mask):
            self._fault(op, bad & mask, f"byte offset {self._at(byte, bad & mask)} is outside its "
                        "allocation")
        return byte // itemsize

    def _at(self, value, bad):
        return int(np.broadcast_to(value, self.n)[np.flatnonzero(bad)[0]])

    def _fault(self, op, bad, message):
        self.fail(op, f"{message} ({self.where_is(bad)}); on a GPU this is an illegal or stray "
                  "memory access")

    def typed(self, ref: MemRef) -> np.ndarray:
        size = ref.type.dtype.itemsize
        return ref.buf[: ref.buf.size // size * size].view(ref.type.dtype)

    def load(self, ref: MemRef, index, mask):
        view = self.typed(ref)
        if np.ndim(index) == 0:
            value = view[index] if mask.any() else ref.type.dtype.type(0)
        elif mask.all():
            value = view[index]
        else:
            value = np.zeros(self.n, ref.type.dtype)
            value[mask] = view[index[mask]]
        return self._to_register(ref.type.element, value)

    @staticmethod
    def _to_register(element: str, value):
        if element == "i1":
            return ops.fix(np.asarray(value).astype(np.bool_))
        if element[0] == "i" and element[1:].isdigit() and int(element[1:]) not in (8, 16, 32, 64):
            return ops.pack(value, int(element[1:]))      # a sub-byte integer: its low bits
        return value

    def store(self, ref: MemRef, index, value, mask) -> None:
        view = self.typed(ref)
        value = np.asarray(value)
        if value.dtype != ref.type.dtype:                 # i1 and sub-byte integers: a byte each
            value = value.astype(ref.type.dtype)
        if np.ndim(index) == 0:
            active = np.flatnonzero(mask)
            if active.size:                               # one address: the last thread's value
                view[index] = value if np.ndim(value) == 0 else value[active[-1]]
            return
        view[index[mask]] = np.broadcast_to(value, (self.n,))[mask]


def _has_layout(type_text: str) -> bool:
    return "strided<" in type_text or "affine_map" in type_text


def set_value(launch: Launch, op: Op, *values) -> None:
    for slot, value in zip(op.res, values):
        launch.env[slot] = value


def segments(op: Op, launch) -> list[list]:
    """Operands split by operandSegmentSizes."""
    sizes, values, start = op.attrs["operandSegmentSizes"], [launch.env[s] for s in op.args], 0
    parts = []
    for size in sizes:
        parts.append(values[start:start + size])
        start += size
    return parts
