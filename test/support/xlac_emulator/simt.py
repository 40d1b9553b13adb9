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

Modules: this one translates kernels and runs launches; ``simt_model`` holds
the records, memrefs and one launch's state; ``simt_control`` the gpu and scf
ops, ``simt_memory`` the memref ops, ``simt_ops`` arith/math/complex.
"""

from __future__ import annotations

import ctypes
import re

import numpy as np

from xlac_emulator import simt_control, simt_handlers, simt_memory, simt_vector
from xlac_emulator import simt_ops as ops
from xlac_emulator.simt_model import CTYPES, EmulationError, Kernel, Launch, Op, Region, attr_value, parse_memref


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
        attrs = {key: attr_value(op.attributes[key]) for key in op.attributes}
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
                "scf.reduce", "scf.reduce.return", "gpu.terminator", "scf.forall.in_parallel"}


def _printed(op) -> str:
    """``str(op)`` numbered within its gpu.func only (what the kernels text shows): str(op)
    numbers the whole module each time, 34 ms an op with 500 kernels."""
    return op.get_asm(use_local_scope=True)


def _first_line(op) -> str:
    text = _printed(op).strip().splitlines()[0] if not op.regions else f"{op.name} ..."
    return text if len(text) < 160 else text[:157] + "..."


def _mode(op, prefix: str) -> str:
    """The keyword printed after the op name (cmpi/cmpf predicate, shuffle/atomic kind)."""
    match = re.search(re.escape(prefix) + r"\s+(\w+)", _printed(op) if not op.regions else _op_head(op))
    if match is None:
        raise EmulationError(f"cannot read the mode of {_first_line(op)}")
    return match.group(1)


def _op_head(op) -> str:
    return op.get_asm(use_local_scope=True, skip_regions=True).split("{", 1)[0]


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
    elif rtype.startswith("vector<") and isinstance(attr, ir.DenseElementsAttr) and \
            ir.DenseElementsAttr(attr).is_splat:          # a fill's 16 bytes: lanes of one value
        splat = ir.DenseElementsAttr(attr).get_splat_value()
        lane = _float_constant(splat, rtype.split("x")[-1][:-1]) if isinstance(splat, ir.FloatAttr) \
            else ops.scalar(ir.IntegerAttr(splat).value, ops.storage_dtype(rtype.split("x")[-1][:-1]))
        result.attrs["constant"] = (lane,) * int(rtype[len("vector<"):].split("x")[0])
    else:
        raise EmulationError(f"kernel {translator.kernel}: constant {result.text} is not a scalar; "
                             "vector values other than a splat are not supported by the SIMT emulator")


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
        from xlac.context import new_context
        from xlac.mlir import ir
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
        from xlac.targets.cuda.schedule import global_bytes  # the host's reading of the same attribute
        data = np.frombuffer(global_bytes(op, op.location), np.uint8).copy()
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
    if type_text not in CTYPES:
        raise EmulationError(f"kernel argument of type {type_text} is not supported by the SIMT emulator")
    raw = CTYPES[type_text].from_address(address).value
    if type_text in ("f16", "bf16"):
        return np.array(raw, np.uint16).view(ops.storage_dtype(type_text))[()]
    return ops.scalar(raw, ops.storage_dtype(type_text))


# ---- running a compiled program ------------------------------------------------------

def run_emulated(exe, *args) -> list[np.ndarray]:
    """Run a ``target="cuda"`` Executable with its kernels emulated on the CPU.

    A fresh CudaFunction with the same PTX, schedule and kernels runs against
    an executing FakeDriver (and a fake cuBLASLt for its matmul calls), so the
    executable (and any device memory, stream or graph it holds) is left untouched.
    """
    from xlac.targets.cuda.cublaslt import CublasLt
    from xlac_emulator.fake_cublaslt import FakeCublasLt
    from xlac_emulator.fake_cuda import FakeDriver
    original = exe.function
    if getattr(exe, "target", None) != "cuda" or not hasattr(original, "with_driver"):
        raise EmulationError(f"run_emulated needs a target='cuda' executable, got {exe!r}")
    driver = FakeDriver(execute=True, kernels=original.kernels)
    function = original.with_driver(driver, blas=CublasLt(FakeCublasLt(driver)))
    try:
        return exe.with_function(function).run(*args)
    finally:
        function.close()


HANDLERS = {**simt_control.HANDLERS, **simt_memory.HANDLERS, **simt_handlers.HANDLERS,
            **simt_vector.HANDLERS}
