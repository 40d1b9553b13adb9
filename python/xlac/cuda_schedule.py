"""The host side of a CUDA program: its entry function read as a list of steps.

After ``xlac.cuda_pipeline`` the entry function is straight-line code with
static sizes. Each op becomes one step the runtime executes with driver
calls, so no host code is compiled:

* ``Alloc(value, nbytes)``: a temporary in device memory (pitfall 9: never host memory);
* ``View(value, source)``: subview/expand/collapse/cast; the bare-pointer
  kernel ABI takes the base pointer and applies the view's offset itself;
* ``Copy(source, target, nbytes)``: memref.copy of contiguous buffers, device to device;
* ``Launch(kernel, grid, block, smem, args)``: args are ``("buf", value)`` or
  ``("i64"|"i32"|"f32"|..., number)`` for scalars.

Values are named ``argN`` (the entry's arguments: inputs, then outputs) or ``tN``.
"""

from __future__ import annotations

from dataclasses import dataclass

from xlac.errors import CompileError
from xlac.mlir import ir

_VIEWS = {"memref.subview", "memref.expand_shape", "memref.collapse_shape", "memref.cast",
          "memref.reinterpret_cast"}


@dataclass(frozen=True)
class Alloc:
    value: str
    nbytes: int


@dataclass(frozen=True)
class View:
    value: str
    source: str


@dataclass(frozen=True)
class Copy:
    source: str
    target: str
    nbytes: int


@dataclass(frozen=True)
class Launch:
    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    smem: int
    args: tuple[tuple[str, object], ...]


def read_schedule(module: ir.Module, entry: str) -> list:
    """The steps of ``entry``; CompileError if it does anything the runtime cannot."""
    func = _entry(module, entry)
    names = {arg: f"arg{i}" for i, arg in enumerate(func.regions[0].blocks[0].arguments)}
    constants, steps = {}, []
    for op in func.regions[0].blocks[0].operations:
        op = op.operation
        step = _step(op, names, constants)
        if step is not None:
            steps.append(step)
    return steps


def _entry(module: ir.Module, entry: str) -> ir.Operation:
    for op in module.body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == entry:
            return op.operation
    raise CompileError(f"<unknown>: error: no function '{entry}' after GPU lowering")


def _step(op, names, constants):
    kind = op.name
    if kind == "arith.constant":
        constants[op.result] = _scalar(op)
        return None
    if kind in ("func.return", "memref.dealloc"):    # temporaries live until the call ends
        return None
    if kind == "memref.alloc":
        return Alloc(_name(op.result, names), _nbytes(op.result.type))
    if kind in _VIEWS:
        return View(_name(op.result, names), names[op.operands[0]])
    if kind == "memref.copy" and _contiguous(op.operands[0].type):
        return Copy(names[op.operands[0]], names[op.operands[1]], _nbytes(op.operands[0].type))
    if kind == "gpu.launch_func":
        return _launch(op, names, constants)
    raise CompileError(f"{op.location}: error: '{kind}' is left in the GPU host code; "
                       "it would touch device memory from the CPU (not supported on cuda)")


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
    return count * max(1, (_element_bits(memref.element_type) + 7) // 8)


def _element_bits(element) -> int:
    if isinstance(element, (ir.IntegerType, ir.FloatType)):
        return element.width
    raise CompileError(f"<unknown>: error: element type {element} is not supported on cuda")


def _contiguous(memref_type) -> bool:
    return "strided" not in str(memref_type)        # identity layouts print no layout
