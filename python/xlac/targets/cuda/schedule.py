"""The host side of a CUDA program: its entry function read as a list of steps.

After ``xlac.targets.cuda.pipeline`` the entry function is straight-line code with
static sizes. Each op becomes one step the runtime executes with driver
calls, so no host code is compiled:

* ``Alloc(value, nbytes)``: a temporary in device memory (pitfall 9: never host memory);
* ``View(value, source)``: subview/expand/collapse/cast; the bare-pointer
  kernel ABI takes the base pointer and applies the view's offset itself;
* ``Const(value, data)``: memref.get_global: a device buffer holding the
  global's bytes, uploaded by the runtime (kernels receive it as an argument);
* ``Copy(source, target, nbytes)``: memref.copy of contiguous buffers, device to device;
* ``Launch(kernel, grid, block, smem, args)``: args are ``("buf", value)`` or
  ``("i64"|"i32"|"f32"|..., number)`` for scalars;
* ``Collective(kind, ...)``: a call of xla-lower-collectives' buffer calls,
  run with NCCL (``xlac.targets.cuda.nccl``);
* ``Gemm(a, b, c, ...)``: a matmul xla-gpu-library-matmuls made a call of cuBLASLt
  (``xlac.targets.cuda.gemm_step``, run by ``gemm_calls``);
* ``Loop``, ``Branch``, ``ReadBack``: host control flow, its regions step
  lists of their own (``xlac.targets.cuda.control_flow``).

Values are named ``argN`` (the entry's arguments: inputs, then outputs) or ``tN``.
"""

from __future__ import annotations

import re

import numpy as np

from xlac.dtypes import element_bytes, numpy_dtype
from xlac.errors import CompileError, error
from xlac.mlir import ir
from xlac.targets.cuda.control_flow import FLOW_OPS, TERMINATORS, read_flow
from xlac.targets.cuda.gemm_step import Gemm, gemm_step, is_gemm  # noqa: F401 (a step kind)
from xlac.targets.cuda.nccl_types import reduction_for
from xlac.targets.cuda.steps import Alloc, Collective, Const, Copy, Launch, View

_VIEWS = {"memref.subview", "memref.expand_shape", "memref.collapse_shape", "memref.cast",
          "memref.reinterpret_cast"}


def read_schedule(module: ir.Module, entry: str) -> list:
    """The steps of ``entry``; CompileError if it does anything the runtime cannot."""
    func = _entry(module, entry)
    return _Reader(module, func).steps(func.regions[0].blocks[0])


class _Reader:
    """Reads a block's ops as steps; host control flow's regions as step lists of
    their own (``xlac.targets.cuda.control_flow``)."""

    def __init__(self, module: ir.Module, func: ir.Operation):
        self.collectives = collective_declarations(module)
        self.gemms = {ir.StringAttr(op.attributes["sym_name"]).value: op.operation
                      for op in module.body.operations
                      if op.operation.name == "func.func" and is_gemm(op.operation)}
        self.names = {arg: f"arg{i}" for i, arg in enumerate(func.regions[0].blocks[0].arguments)}
        self.constants = {}
        self.globals = {ir.StringAttr(op.attributes["sym_name"]).value: op.operation
                        for op in module.body.operations if op.operation.name == "memref.global"}

    def steps(self, block) -> list:
        steps = []
        for op in block.operations:
            op = op.operation
            if op.name == "memref.get_global":
                step = _const(op, self.names, self.globals)
            elif op.name == "func.call" and self._callee(op) in self.gemms:
                step = gemm_step(op, self.names, self.gemms[self._callee(op)])
            elif op.name == "func.call":
                step = collective_step(op, self.names, self.collectives)
            elif op.name in FLOW_OPS:
                step = read_flow(op, self)
            elif op.name in TERMINATORS:
                step = None                            # what a region yields: its parent reads it
            else:
                step = _step(op, self.names, self.constants)
            if step is not None:
                steps.append(step)
        return steps

    @staticmethod
    def _callee(op) -> str:
        return ir.FlatSymbolRefAttr(op.attributes["callee"]).value

    def bind(self, value) -> str:
        return _name(value, self.names)

    def ref(self, value) -> str:
        if value not in self.names:
            message = "a value the GPU host code needs is computed on the host (not supported on cuda)"
            owner = value.owner
            raise CompileError(error(message) if isinstance(owner, ir.Block) else error(message, owner.location))
        return self.names[value]

    def alias(self, value, source) -> None:
        self.names[value] = self.ref(source)

    def constant(self, value):
        found = self.constants.get(value)
        return found[1] if found else None

    @staticmethod
    def nbytes(memref_type) -> int:
        return _nbytes(memref_type)


def _entry(module: ir.Module, entry: str) -> ir.Operation:
    for op in module.body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == entry:
            return op.operation
    raise CompileError(error(f"no function '{entry}' after GPU lowering"))


def _step(op, names, constants):
    kind = op.name
    if kind == "arith.constant":
        constants[op.result] = _scalar(op)
        return None
    if kind == "memref.dealloc":                     # temporaries live until the call ends
        return None
    if kind == "memref.alloc":
        return Alloc(_name(op.result, names), _nbytes(op.result.type))
    if kind in _VIEWS:
        return View(_name(op.result, names), names[op.operands[0]])
    if kind == "memref.copy" and _contiguous(op.operands[0].type):
        return Copy(names[op.operands[0]], names[op.operands[1]], _nbytes(op.operands[0].type))
    if kind == "gpu.launch_func":
        return _launch(op, names, constants)
    raise CompileError(error(f"'{kind}' is left in the GPU host code; "
                       "it would touch device memory from the CPU (not supported on cuda)", op.location))


def _const(op, names, globals_) -> Const:
    symbol = ir.FlatSymbolRefAttr(op.attributes["name"]).value
    if symbol not in globals_ or "initial_value" not in globals_[symbol].attributes:
        raise CompileError(error(f"memref.global @{symbol} has no "
                           "initial value; not supported on cuda", op.location))
    return Const(_name(op.result, names), global_bytes(globals_[symbol], op.location))


def global_bytes(global_op, location) -> bytes:
    """The global's contents as the device stores them (i1 and sub-byte types: a byte each)."""
    memref = ir.MemRefType(ir.TypeAttr(global_op.attributes["type"]).value)
    count = int(np.prod(memref.shape, dtype=np.int64))
    try:
        array = np.array(global_op.attributes["initial_value"])
        if array.dtype == object:
            raise TypeError("no numpy view")
    except (TypeError, ValueError):                   # bf16, fp8, i4, complex: read the text
        try:
            array = _from_text(str(global_op), numpy_dtype(str(memref.element_type)))
        except ValueError:
            raise CompileError(error(f"a constant of type {memref} cannot "
                               "be uploaded to the device yet; not supported on cuda", location)) from None
    if isinstance(array, bytes):                       # a hex blob; one element if a splat
        itemsize = numpy_dtype(str(memref.element_type)).itemsize
        return array * count if len(array) == itemsize else array
    return np.ascontiguousarray(np.broadcast_to(array.reshape(-1), (count,))).tobytes()   # splats: one value


_TOKEN = re.compile(r"0x[0-9A-Fa-f]+|true|false|[-+]?(?:inf|nan|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)")


def _from_text(text: str, dtype: np.dtype):
    """``dense<...>`` as printed -> an array of ``dtype`` (or the raw bytes of a hex blob)."""
    start = text.index("dense<") + len("dense<")
    depth, end = 1, start
    while depth:                                       # the matching '>' (complex<f32> nests)
        depth += {"<": 1, ">": -1}.get(text[end], 0)
        end += 1
    body = text[start:end - 1].strip()
    if body.startswith('"0x'):
        return bytes.fromhex(body[3:-1])
    part = np.dtype(np.float32 if dtype == np.complex64 else np.float64) if dtype.kind == "c" else dtype
    values = np.array([_token(t, part) for t in _TOKEN.findall(body)], dtype=part)
    return values.view(dtype) if dtype.kind == "c" else values


def _token(token: str, dtype: np.dtype):
    if token.startswith("0x"):                         # a float's bit pattern
        return np.array(int(token, 16), dtype=f"u{dtype.itemsize}").view(dtype)[()]
    if token in ("true", "false"):
        return token == "true"
    return int(token) if dtype.kind in "iub" else float(token)


def _name(value, names) -> str:
    names[value] = f"t{len(names)}"
    return names[value]


def _launch(op, names, constants) -> Launch:
    # operandSegmentSizes: asyncDeps, grid xyz, block xyz, cluster xyz, dynamicSharedMemorySize, args, asyncObject
    sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    operands = list(op.operands)
    start = sizes[0]
    dims = [constants[v][1] for v in operands[start:start + 6]]
    smem_at = start + 6 + sizes[7] + sizes[8] + sizes[9]
    smem = constants[operands[smem_at]][1] if sizes[10] else 0
    arg_start = smem_at + sizes[10]
    args = tuple(("buf", names[v]) if isinstance(v.type, ir.MemRefType) else constants[v]
                 for v in operands[arg_start:arg_start + sizes[11]])
    kernel = ir.SymbolRefAttr(op.attributes["kernel"])
    return Launch(str(kernel).split("::")[0].lstrip("@"), tuple(dims[:3]), tuple(dims[3:]), smem, args)


def _scalar(op) -> tuple[str, object]:
    attr = op.attributes["value"]
    if isinstance(attr, ir.IntegerAttr):
        width = 64 if isinstance(attr.type, ir.IndexType) else attr.type.width
        return (f"i{width}", attr.value)
    if isinstance(attr, ir.FloatAttr):
        return (str(attr.type), attr.value)
    return ("other", str(attr))                      # dense constants: never a kernel argument


def _nbytes(memref_type) -> int:
    memref = ir.MemRefType(memref_type)
    count = 1
    for dim in memref.shape:
        count *= dim
    size = element_bytes(memref.element_type)         # index: 8, as index-bitwidth=64 in the kernels
    if size is None:
        raise CompileError(error(f"element type {memref.element_type} is not supported on cuda"))
    return count * size


def _contiguous(memref_type) -> bool:
    """Row-major from the buffer's start (identity layouts print no layout; a view at
    offset 0 with the row-major strides, such as ``strided<[1]>``, is one too)."""
    if "strided" not in str(memref_type):
        return True
    memref = ir.MemRefType(memref_type)
    strides, offset = memref.get_strides_and_offset()
    expected, row_major = 1, []
    for dim in reversed(memref.shape):
        row_major.insert(0, expected)
        expected *= dim
    return memref.has_static_shape and offset == 0 and all(
        s == r or d == 1 for s, r, d in zip(strides, row_major, memref.shape))


def collective_declarations(module: ir.Module) -> dict[str, ir.Operation]:
    """xla-lower-collectives' buffer-call declarations, by name."""
    return {ir.StringAttr(op.attributes["sym_name"]).value: op.operation
            for op in module.body.operations
            if op.operation.name == "func.func" and "xla.collective" in op.attributes}


def collective_step(op, names, declarations) -> Collective:
    """The step of a call of a collective declaration (anything else is refused)."""
    callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
    if callee not in declarations:
        raise CompileError(error(f"a call of @{callee} is left in the GPU host code "
                                 "(not supported on cuda)", op.location))
    attrs = declarations[callee].attributes
    kind = ir.StringAttr(attrs["xla.collective"]).value
    element = ir.StringAttr(attrs["xla.element_type"]).value
    reduction = ir.StringAttr(attrs["xla.reduction"]).value if "xla.reduction" in attrs else ""
    if reduction:
        try:
            reduction_for(element, reduction)
        except ValueError as exc:
            raise CompileError(error(f"'{kind}': {exc}", op.location),
                               "compile for target='cpu' (MPI has it)") from None
    groups, pairs = _table(attrs, "xla.groups"), _table(attrs, "xla.pairs")
    shapes = [ir.MemRefType(v.type).shape for v in op.operands]
    count = int(np.prod(shapes[-1 if kind == "reduce_scatter" else 0], dtype=np.int64))
    if kind == "all_to_all":
        count //= len(groups[0])
    return Collective(kind, element, tuple(names[v] for v in op.operands), count,
                      _nbytes(op.operands[-1].type), groups, pairs, reduction)


def _table(attrs, name: str) -> tuple:
    if name not in attrs:
        return ()
    shape = ir.RankedTensorType(attrs[name].type).shape
    values = np.array(ir.DenseIntElementsAttr(attrs[name]), dtype=np.int64).reshape(shape)
    return tuple(tuple(int(x) for x in row) for row in values)
