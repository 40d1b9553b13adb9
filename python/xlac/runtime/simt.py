"""A SIMT emulator: xlac's CUDA kernels (gpu.func in scf/arith/memref/math
form, the "kernels" stage) executed on the CPU, to check the CUDA launch path
and the kernels' logic against the CPU target on machines without a GPU.

Model. Every thread of the grid runs in lockstep: an SSA value is a numpy
array with one element per thread (or a numpy scalar when it is the same for
all), and each op runs under a boolean mask of the active threads. Thread t
is block-major, then ``x + y*bx + z*bx*by`` inside its block; its lane is
that linear id % 32, its warp the id // 32. ``scf.if`` runs both branches
under ``mask & cond`` / ``mask & ~cond`` and merges with ``np.where``; loops
with thread-dependent bounds run until no thread continues.

What it checks: inactive threads never touch memory; an active access out of
its memref's bounds or allocation raises ``EmulationError`` naming the kernel
and op (a fault or silent corruption on a GPU); ``gpu.barrier`` in control
flow that diverges inside a block and ``gpu.shuffle`` reading a lane that
does not take part raise too. What it cannot check: ``gpu.barrier`` is a
no-op, since lockstep already orders every op of every thread, so a missing
barrier (a data race) goes unnoticed; so does the order of conflicting plain
stores (the highest thread id wins here). Shared, private and fresh device
memory starts filled with 0xFF bytes (NaN for floats), so a kernel reading
memory it never wrote shows wrong results instead of lucky zeros.

Each gpu.func is translated once into ``Op`` records (handler, result and
operand slots, decoded attributes, nested regions), so execution never
touches the MLIR bindings.
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass, field

import numpy as np

from xlac.errors import XlacError
from xlac.runtime import simt_ops as ops

POISON = 0xFF
_DYNAMIC = -(1 << 63)          # ShapedType's marker for a dynamic size/offset/stride
_CTYPES = {"index": ctypes.c_int64, "i64": ctypes.c_int64, "i32": ctypes.c_int32, "i16": ctypes.c_int16,
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
    return MemRefType(element, dtype, [None if d == _DYNAMIC else d for d in t.shape],
                      [None if s == _DYNAMIC else s for s in strides],
                      None if offset == _DYNAMIC else offset, kind)


def _memory_dtype(element: str) -> np.dtype:
    """How an element sits in memory: i1 and sub-byte integers take a byte, as the host's."""
    if re.fullmatch(r"i\d+", element):
        width = int(element[1:])
        if width not in (8, 16, 32, 64):
            return np.dtype(np.uint8) if width == 1 else \
                np.dtype(f"int{next(w for w in (8, 16, 32, 64) if w >= width)}")
    return ops.storage_dtype(element)


def _attr_value(attr):
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
        return [_attr_value(a) for a in ir.ArrayAttr(attr)]
    return attr                                      # kept as the binding object: read at translation


class _Translator:
    def __init__(self, kernel_name: str, handlers: dict, globals_: dict):
        self.kernel = kernel_name
        self.handlers = handlers
        self.globals = globals_
        self.slots: dict = {}

    def slot(self, value) -> int:
        if value not in self.slots:
            self.slots[value] = len(self.slots)
        return self.slots[value]

    def region(self, region) -> Region | None:
        blocks = list(region.blocks)
        if not blocks:
            return None                              # an absent else branch
        if len(blocks) != 1:
            raise EmulationError(f"kernel {self.kernel}: a region with {len(blocks)} blocks "
                                 "(unstructured control flow) is not supported by the SIMT emulator")
        block = blocks[0]
        operations = [op.operation for op in block.operations]
        body, terminator = operations, None
        if operations and operations[-1].name in _TERMINATORS:
            body, terminator = operations[:-1], operations[-1]
        params = [self.slot(a) for a in block.arguments]
        translated = [self.op(op) for op in body]
        yields = [self.slot(v) for v in terminator.operands] if terminator is not None else []
        return Region(params, translated, yields)

    def op(self, op) -> Op:
        name = op.name
        handler = self.handlers.get(name)
        if handler is None:
            raise EmulationError(f"kernel {self.kernel}: op '{name}' is not supported by the SIMT "
                                 f"emulator ({_first_line(op)})")
        attrs = {key: _attr_value(op.attributes[key]) for key in op.attributes}
        for type_text in [str(r.type) for r in op.results] + [str(v.type) for v in op.operands]:
            if type_text.startswith("memref<"):
                parse_memref(type_text)
        result = Op(name, handler, [self.slot(r) for r in op.results], [self.slot(v) for v in op.operands],
                    [str(r.type) for r in op.results], [str(v.type) for v in op.operands], attrs,
                    [self.region(r) for r in op.regions], _first_line(op))
        prepare = _PREPARE.get(name)
        if prepare is not None:
            prepare(result, op, self)
        return result


_TERMINATORS = {"scf.yield", "scf.condition", "gpu.return", "gpu.yield", "memref.atomic_yield",
                "scf.reduce", "scf.reduce.return", "gpu.terminator"}


def _first_line(op) -> str:
    text = str(op).strip().splitlines()[0] if not op.regions else f"{op.name} ..."
    return text if len(text) < 160 else text[:157] + "..."


def _mode(op, prefix: str) -> str:
    """The keyword printed after the op name (cmpi/cmpf predicate, shuffle/atomic kind)."""
    match = re.search(re.escape(prefix) + r"\s+(\w+)", str(op) if not op.regions else _op_head(op))
    if match is None:
        raise EmulationError(f"cannot read the mode of {_first_line(op)}")
    return match.group(1)


def _op_head(op) -> str:
    return str(op).split("{", 1)[0]


# ---- preparation: attributes decoded once ------------------------------------------

def _prep_constant(result: Op, op, translator) -> None:
    from xlac.mlir import ir
    attr = op.attributes["value"]
    rtype = result.rtypes[0]
    if rtype.startswith("complex<"):
        re_, im = [ir.FloatAttr(a).value for a in ir.ArrayAttr(attr)]
        result.attrs["constant"] = ops.make_complex(re_, im, ops.storage_dtype(rtype))
    elif isinstance(attr, ir.BoolAttr):
        result.attrs["constant"] = np.bool_(ir.BoolAttr(attr).value)
    elif isinstance(attr, ir.IntegerAttr):
        result.attrs["constant"] = ops.scalar(ir.IntegerAttr(attr).value, ops.storage_dtype(rtype))
    elif isinstance(attr, ir.FloatAttr):
        result.attrs["constant"] = _float_constant(attr, rtype)
    else:
        raise EmulationError(f"kernel {translator.kernel}: constant {result.text} is not a scalar; "
                             "vector values are not supported by the SIMT emulator")


def _float_constant(attr, rtype: str):
    text = str(attr)
    dtype = ops.storage_dtype(rtype)
    if text.startswith("0x"):                       # NaN payloads and friends: the exact bits
        bits = int(text.split()[0], 16)
        return np.array(bits, f"u{dtype.itemsize}").view(dtype)[()]
    from xlac.mlir import ir
    return ops.scalar(ir.FloatAttr(attr).value, dtype)


def _prep_mode(prefix):
    def prepare(result: Op, op, translator) -> None:
        result.attrs["mode"] = _mode(op, prefix)
    return prepare


def _prep_dimension(result: Op, op, translator) -> None:
    result.attrs["dim"] = "xyz".index(str(op.attributes["dimension"]).split()[-1].rstrip(">"))


def _prep_parallel(result: Op, op, translator) -> None:
    """scf.reduce's regions (one per result) combine the iterations' values."""
    terminator = list(op.regions[0].blocks[0].operations)[-1].operation
    if terminator.name == "scf.reduce":
        result.attrs["reducers"] = [translator.region(r) for r in terminator.regions]


def _prep_global(result: Op, op, translator) -> None:
    result.attrs["symbol"] = str(op.attributes["name"]).lstrip("@")


_PREPARE = {"arith.constant": _prep_constant, "complex.constant": _prep_constant,
            "arith.cmpi": _prep_mode("arith.cmpi"), "arith.cmpf": _prep_mode("arith.cmpf"),
            "gpu.shuffle": _prep_mode("gpu.shuffle"), "memref.atomic_rmw": _prep_mode("memref.atomic_rmw"),
            "gpu.subgroup_reduce": _prep_mode("gpu.subgroup_reduce"),
            "gpu.thread_id": _prep_dimension, "gpu.block_id": _prep_dimension,
            "gpu.block_dim": _prep_dimension, "gpu.grid_dim": _prep_dimension,
            "gpu.global_id": _prep_dimension, "memref.get_global": _prep_global,
            "scf.parallel": _prep_parallel}


# ---- the emulator -----------------------------------------------------------------------

class Emulator:
    """Kernels of one "kernels" MLIR text, launched on a fake driver's memory."""

    def __init__(self, kernels_text: str):
        from xlac.mlir import ir, new_context
        self._context = new_context()
        with self._context, ir.Location.unknown():
            self._module = ir.Module.parse(kernels_text)
            self._read_modules()
        self._kernels: dict[str, Kernel] = {}

    def _read_modules(self) -> None:
        from xlac.mlir import ir
        self._handlers = HANDLERS
        self._funcs, self._globals = {}, {}
        for op in self._module.body.operations:
            if op.operation.name != "gpu.module":
                continue
            name = ir.StringAttr(op.attributes["sym_name"]).value
            globals_ = {}
            for inner in op.regions[0].blocks[0].operations:
                inner = inner.operation
                if inner.name == "gpu.func" and "kernel" in inner.attributes:
                    self._funcs[name] = inner
                elif inner.name == "memref.global":
                    globals_[ir.StringAttr(inner.attributes["sym_name"]).value] = _global(inner)
            self._globals[name] = globals_

    @property
    def names(self) -> list[str]:
        return sorted(self._funcs)

    def kernel(self, name: str) -> Kernel:
        if name not in self._kernels:
            if name not in self._funcs:
                raise EmulationError(f"no kernel {name} in the kernels module (have: {self.names})")
            with self._context:
                self._kernels[name] = _translate(name, self._funcs[name], self._handlers, self._globals[name])
        return self._kernels[name]

    def launch(self, name: str, grid, block, smem: int, params, memory: dict) -> None:
        """Run kernel ``name``; ``params`` is the ctypes array of argument addresses."""
        self.run(name, grid, block, self.read_params(name, params), memory, smem)

    def read_params(self, name: str, params) -> list:
        """The argument values behind cuLaunchKernel's array of pointers, by the gpu.func's types."""
        return [_read_param(params[i], t) for i, t in enumerate(self.kernel(name).param_types)]

    def run(self, kernel: Kernel | str, grid, block, values, memory: dict, smem: int = 0) -> None:
        """Run with argument values: ints/floats, or device addresses for memrefs."""
        kernel = self.kernel(kernel) if isinstance(kernel, str) else kernel
        if len(values) != len(kernel.params):
            raise EmulationError(f"kernel {kernel.name} takes {len(kernel.params)} arguments, "
                                 f"got {len(values)}")
        Launch(kernel, tuple(grid), tuple(block), memory, smem).run(values)


def _global(op):
    from xlac.mlir import ir
    mtype = parse_memref(str(ir.TypeAttr(op.attributes["type"]).value))
    data = None
    if "initial_value" in op.attributes and not isinstance(op.attributes["initial_value"], ir.UnitAttr):
        from xlac.cuda_schedule import _global_bytes        # the host's reading of the same attribute
        data = np.frombuffer(_global_bytes(op, op.location), np.uint8).copy()
    return mtype, data


def _translate(name: str, func, handlers, globals_) -> Kernel:
    from xlac.mlir import ir
    translator = _Translator(name, handlers, globals_)
    block = func.regions[0].blocks[0]
    arguments = list(block.arguments)
    nparams = len(ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value).inputs)
    workgroup = ir.IntegerAttr(func.attributes["workgroup_attributions"]).value \
        if "workgroup_attributions" in func.attributes else 0
    params = [translator.slot(a) for a in arguments[:nparams]]
    for argument in arguments:
        if str(argument.type).startswith("memref<"):
            parse_memref(str(argument.type))
    attributions = [(translator.slot(a), str(a.type), "workgroup" if i < workgroup else "private")
                    for i, a in enumerate(arguments[nparams:])]
    body = translator.region(func.regions[0])
    return Kernel(name, len(translator.slots), params, [str(a.type) for a in arguments[:nparams]],
                  attributions, body, globals_)


def _read_param(address: int, type_text: str):
    if type_text.startswith("memref<"):
        return ctypes.c_uint64.from_address(address).value
    if type_text not in _CTYPES:
        raise EmulationError(f"kernel argument of type {type_text} is not supported by the SIMT emulator")
    raw = _CTYPES[type_text].from_address(address).value
    if type_text in ("f16", "bf16"):
        return np.array(raw, np.uint16).view(ops.storage_dtype(type_text))[()]
    return ops.scalar(raw, ops.storage_dtype(type_text))


# ---- running a compiled program ------------------------------------------------------

def run_emulated(exe, *args) -> list[np.ndarray]:
    """Run a ``target="cuda"`` Executable with its kernels emulated on the CPU.

    A fresh CudaFunction with the same PTX, schedule and kernels runs against
    an executing FakeDriver, so the executable (and any device memory, stream
    or graph it holds) is left untouched.
    """
    import copy

    from xlac.runtime.fake_cuda import FakeDriver
    original = exe._function
    if getattr(exe, "target", None) != "cuda" or not hasattr(original, "kernels"):
        raise EmulationError(f"run_emulated needs a target='cuda' executable, got {exe!r}")
    inputs = original._inputs
    sizes = original._sizes
    function = type(original)(original.ptx, original.steps, sizes[:inputs], sizes[inputs:],
                              driver=FakeDriver(execute=True, kernels=original.kernels),
                              kernels=original.kernels)
    emulated = copy.copy(exe)
    emulated._function = function
    try:
        return emulated.run(*args)
    finally:
        if hasattr(function, "close"):
            function.close()


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

    def with_layout(self, offset, sizes, strides, mtype: MemRefType | None = None) -> "MemRef":
        return MemRef(self.buf, self.base, self.lo, self.hi, mtype or self.type, offset, list(sizes),
                      list(strides))


def _contiguous_strides(sizes) -> list:
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
        strides = _contiguous_strides(sizes) if mtype.offset in (0, None) and not _has_layout(what) \
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
            return ops._fix(np.asarray(value).astype(np.bool_))
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


# ---- gpu ops ----------------------------------------------------------------------------

def _set(launch: Launch, op: Op, *values) -> None:
    for slot, value in zip(op.res, values):
        launch.env[slot] = value


def _thread_id(launch, op, mask):
    _set(launch, op, launch.thread_ids[op.attrs["dim"]])


def _block_id(launch, op, mask):
    _set(launch, op, launch.block_ids[op.attrs["dim"]])


def _block_dim(launch, op, mask):
    _set(launch, op, np.int64(launch.block[op.attrs["dim"]]))


def _grid_dim(launch, op, mask):
    _set(launch, op, np.int64(launch.grid[op.attrs["dim"]]))


def _global_id(launch, op, mask):
    dim = op.attrs["dim"]
    _set(launch, op, launch.block_ids[dim] * launch.block[dim] + launch.thread_ids[dim])


def _lane_id(launch, op, mask):
    _set(launch, op, launch.lane)


def _subgroup_id(launch, op, mask):
    _set(launch, op, launch.linear // 32)


def _num_subgroups(launch, op, mask):
    _set(launch, op, np.int64((launch.per_block + 31) // 32))


def _subgroup_size(launch, op, mask):
    _set(launch, op, np.int64(32))


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
    _set(launch, op, shuffled, np.broadcast_to(valid, (launch.n,)).copy())


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
    _set(launch, op, np.repeat(total, np.diff(np.r_[starts, launch.n])))


def _dynamic_shared_memory(launch, op, mask):
    if "dynamic_shared" not in launch.instances:
        mtype = parse_memref(op.rtypes[0])
        launch.instances["dynamic_shared"] = launch.allocate(mtype, "workgroup", [launch.smem], op.rtypes[0])
    _set(launch, op, launch.instances["dynamic_shared"])


# ---- scf ----------------------------------------------------------------------------------

def _scf_if(launch, op, mask):
    cond = launch.env[op.args[0]]
    then, other = op.regions[0], op.regions[1] if len(op.regions) > 1 else None
    if np.ndim(cond) == 0:
        region = then if cond else other
        _set(launch, op, *(launch.region(region, mask, []) if region is not None else []))
        return
    yes, no = mask & cond, mask & ~cond
    if other is None or not no.any():
        _set(launch, op, *launch.region(then, yes, []))
    elif not yes.any():
        _set(launch, op, *launch.region(other, no, []))
    else:
        first = launch.region(then, yes, [])
        second = launch.region(other, no, [])
        _set(launch, op, *[merge(cond, a, b) for a, b in zip(first, second)])


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
        _set(launch, op, *carried)
        return
    iv = np.broadcast_to(lower, (launch.n,)).copy()
    live = mask & _less(iv, upper, width, unsigned)
    while live.any():
        new = launch.region(body, live, [iv] + carried)
        carried = [merge(live, a, b) for a, b in zip(new, carried)]
        iv = ops.INT_BINARY["arith.addi"](iv, step, width)
        live = live & _less(iv, upper, width, unsigned)
    _set(launch, op, *carried)


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
    lowers, uppers, steps, inits = _segments(op, launch)
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
    _set(launch, op, *accumulated)


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
    _set(launch, op, *results)


def _index_switch(launch, op, mask):
    value = launch.env[op.args[0]]
    default, *cases = op.regions
    labels = op.attrs["cases"]
    if np.ndim(value) == 0:
        region = cases[labels.index(int(value))] if int(value) in labels else default
        _set(launch, op, *launch.region(region, mask, []))
        return
    results, rest = None, mask
    for label, region in list(zip(labels, cases)) + [(None, default)]:
        chosen = rest if label is None else rest & (value == label)
        rest = rest & ~chosen
        if not chosen.any() and not (label is None and results is None):
            continue
        out = launch.region(region, chosen, [])
        results = out if results is None else [merge(chosen, a, b) for a, b in zip(out, results)]
    _set(launch, op, *results)


def _execute_region(launch, op, mask):
    _set(launch, op, *launch.region(op.regions[0], mask, []))


def _select(launch, op, mask):
    env = launch.env
    _set(launch, op, merge(env[op.args[0]], env[op.args[1]], env[op.args[2]]))


# ---- memref -------------------------------------------------------------------------------

def _load(launch, op, mask):
    env = launch.env
    ref = env[op.args[0]]
    index = launch.address(op, ref, [env[s] for s in op.args[1:]], mask)
    _set(launch, op, launch.load(ref, index, mask))


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
    _set(launch, op, launch.allocate(mtype, space, sizes, op.rtypes[0]))


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
    _set(launch, op, launch.instances[symbol])


def _mixed(static, dynamic) -> list:
    dynamic = iter(dynamic)
    return [next(dynamic) if s == _DYNAMIC else np.int64(s) for s in static]


def _segments(op: Op, launch) -> list[list]:
    """Operands split by operandSegmentSizes."""
    sizes, values, start = op.attrs["operandSegmentSizes"], [launch.env[s] for s in op.args], 0
    parts = []
    for size in sizes:
        parts.append(values[start:start + size])
        start += size
    return parts


def _extract_strided_metadata(launch, op, mask):
    ref = launch.env[op.args[0]]
    base = ref.with_layout(np.int64(0), [], [], parse_memref(op.rtypes[0]))
    _set(launch, op, base, ref.offset, *ref.sizes, *ref.strides)


def _reinterpret_cast(launch, op, mask):
    source, offsets, sizes, strides = _segments(op, launch)
    mtype = parse_memref(op.rtypes[0])
    _set(launch, op, source[0].with_layout(_mixed(op.attrs["static_offsets"], offsets)[0],
                                           _mixed(op.attrs["static_sizes"], sizes),
                                           _mixed(op.attrs["static_strides"], strides), mtype))


def _subview(launch, op, mask):
    source, offsets, sizes, strides = _segments(op, launch)
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
    _set(launch, op, ref.with_layout(offset, [sizes[i] for i in keep], [new_strides[i] for i in keep], mtype))


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
    _set(launch, op, ref.with_layout(ref.offset, sizes, strides, mtype))


def _collapse_shape(launch, op, mask):
    ref = launch.env[op.args[0]]
    sizes, strides = [], []
    for group in op.attrs["reassociation"]:
        size = np.int64(1)
        for dim in group:
            size = None if size is None or ref.sizes[dim] is None else size * ref.sizes[dim]
        sizes.append(size)
        strides.append(ref.strides[group[-1]] if group else np.int64(1))
    _set(launch, op, ref.with_layout(ref.offset, sizes, strides, parse_memref(op.rtypes[0])))


def _same_memref(launch, op, mask):
    if not op.res:                                   # assume_alignment without a result
        return
    ref = launch.env[op.args[0]]
    _set(launch, op, ref.with_layout(ref.offset, ref.sizes, ref.strides, parse_memref(op.rtypes[0])))


def _view(launch, op, mask):
    ref, shift, *dynamic = (launch.env[s] for s in op.args)
    mtype = parse_memref(op.rtypes[0])
    dynamic = iter(dynamic)
    sizes = [next(dynamic) if d is None else np.int64(d) for d in mtype.shape]
    base = ref.base + ref.offset * ref.type.dtype.itemsize + shift
    view = MemRef(ref.buf, base, ref.lo, ref.hi, mtype, np.int64(0), sizes, _contiguous_strides(sizes))
    if np.any(np.asarray(base) % mtype.dtype.itemsize):
        launch.fail(op, "the view is not aligned to its element size")
    _set(launch, op, view)


def _dim(launch, op, mask):
    ref, index = launch.env[op.args[0]], launch.env[op.args[1]]
    _set(launch, op, ref.sizes[int(index)])


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
    _set(launch, op, launch._to_register(ref.type.element, old))


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
    _set(launch, op, launch._to_register(ref.type.element, old))


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
    _set(launch, op, np.zeros((), ops.storage_dtype(op.rtypes[0]))[()])


HANDLERS = {
    "gpu.thread_id": _thread_id, "gpu.block_id": _block_id, "gpu.block_dim": _block_dim,
    "gpu.grid_dim": _grid_dim, "gpu.global_id": _global_id, "gpu.lane_id": _lane_id,
    "gpu.subgroup_id": _subgroup_id, "gpu.num_subgroups": _num_subgroups,
    "gpu.subgroup_size": _subgroup_size, "gpu.barrier": _barrier, "gpu.shuffle": _shuffle,
    "gpu.subgroup_reduce": _subgroup_reduce,
    "gpu.dynamic_shared_memory": _dynamic_shared_memory,
    "scf.if": _scf_if, "scf.for": _scf_for, "scf.while": _scf_while, "scf.index_switch": _index_switch,
    "scf.execute_region": _execute_region, "scf.parallel": _scf_parallel, "arith.select": _select,
    "memref.load": _load, "memref.store": _store, "memref.alloca": _alloca,
    "memref.alloc": _alloca,           # in a kernel: one allocation per thread (device malloc)
    "memref.get_global": _get_global, "memref.extract_strided_metadata": _extract_strided_metadata,
    "memref.reinterpret_cast": _reinterpret_cast, "memref.subview": _subview,
    "memref.expand_shape": _expand_shape, "memref.collapse_shape": _collapse_shape,
    "memref.cast": _same_memref, "memref.memory_space_cast": _same_memref,
    "memref.assume_alignment": _same_memref, "memref.view": _view, "memref.dim": _dim,
    "memref.atomic_rmw": _atomic_rmw, "memref.generic_atomic_rmw": _generic_atomic_rmw,
    "memref.copy": _copy, "memref.dealloc": _noop, "gpu.printf": _noop, "ub.poison": _poison,
    **ops.HANDLERS,
}
