"""Wrapping an entry function so every result comes out of the interpreter
as a plain integer (or f32/f64 pair) array numpy can read."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from xlac.dtypes import numpy_dtype, tensor_type
from xlac.mlir import ir

_INT_OF_WIDTH = {16: "i16", 32: "i32", 64: "i64"}


@dataclass
class ResultLayout:
    input_types: list[str]
    results: list[tuple[str, str]] = field(default_factory=list)  # (kind, element type)

    def unpack(self, flat: list[np.ndarray]) -> list[np.ndarray]:
        out, k = [], 0
        for kind, element in self.results:
            dtype = numpy_dtype(element)
            if kind == "complex":
                value = flat[k].astype(dtype) + 1j * flat[k + 1].astype(dtype)
                out.append(value.astype(dtype))
                k += 2
            elif kind == "bits":
                out.append(flat[k].view(dtype))
                k += 1
            else:
                out.append(flat[k].astype(dtype))
                k += 1
        return out


def wrap_for_interpreter(module: ir.Module, entry: str,
                         literals: list[str]) -> tuple[ir.Module, ResultLayout]:
    """A module whose argument-less @main calls @entry on constant inputs.

    ``literals`` are the inputs as ``dense<...> : type`` text: the bindings
    cannot pass every element type (complex) as an argument.
    """
    func = next(op for op in module.body.operations
                if op.operation.name == "func.func"
                and ir.StringAttr(op.attributes["sym_name"]).value == entry)
    ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    func.attributes["sym_name"] = ir.StringAttr.get("__xlac_entry")
    func.attributes["sym_visibility"] = ir.StringAttr.get("private")
    layout = ResultLayout([str(t) for t in ftype.inputs])
    text = str(module).rstrip()
    wrapper = _wrapper_text(ftype, layout, literals)
    wrapped = ir.Module.parse(text[:text.rfind("}")] + wrapper + "\n}\n")
    return wrapped, layout


def _wrapper_text(ftype: ir.FunctionType, layout: ResultLayout, literals: list[str]) -> str:
    names = ", ".join(f"%a{i}" for i in range(len(ftype.inputs)))
    ins = ", ".join(str(t) for t in ftype.inputs)
    outs = ", ".join(str(t) for t in ftype.results)
    count = len(ftype.results)
    call = "%r" if count == 1 else f"%r:{count}"
    lines = [f"  %a{i} = stablehlo.constant {literal}" for i, literal in enumerate(literals)]
    lines.append(f"  {call} = func.call @__xlac_entry({names}) : ({ins}) -> ({outs})")
    values, types = [], []
    for i, result_type in enumerate(ftype.results):
        value = "%r" if count == 1 else f"%r#{i}"
        convert_result(value, ir.RankedTensorType(result_type), i, lines, values, types, layout)
    body = "\n".join(lines)
    return (f"func.func public @main() -> ({', '.join(types)}) {{\n{body}\n"
            f"  func.return {', '.join(values)} : {', '.join(types)}\n}}")


def convert_result(value, tensor, i, lines, values, types, layout) -> None:
    """Lines turning result ``value`` into something numpy can read (see ResultLayout)."""
    element = str(tensor.element_type)
    shape = list(tensor.shape)
    if element.startswith("complex<"):
        part = element[len("complex<"):-1]
        for name, op in (("re", "real"), ("im", "imag")):
            lines.append(f"  %{name}{i} = stablehlo.{op} {value} : ({tensor}) -> "
                         f"{tensor_type(shape, part)}")
            values.append(f"%{name}{i}")
            types.append(tensor_type(shape, part))
        layout.results.append(("complex", element))
    elif isinstance(tensor.element_type, ir.FloatType):
        width = tensor.element_type.width
        target = tensor_type(shape, _INT_OF_WIDTH.get(width, "i8"))
        lines.append(f"  %b{i} = stablehlo.bitcast_convert {value} : ({tensor}) -> {target}")
        values.append(f"%b{i}")
        types.append(target)
        layout.results.append(("bits", element))
    else:
        target = tensor_type(shape, "i64") if element not in ("i1",) else str(tensor)
        if element.startswith("ui"):
            target = tensor_type(shape, "ui64")
        lines.append(f"  %c{i} = stablehlo.convert {value} : ({tensor}) -> {target}")
        values.append(f"%c{i}")
        types.append(target)
        layout.results.append(("int", element))


def wrap_parallel_for_interpreter(module: ir.Module, entry: str, literals: list[list[str]],
                                  grid) -> tuple[ir.Module, ResultLayout]:
    """A module whose @main runs @entry on every device of ``grid`` at once
    (``interpreter.run_parallel``), device d on constants ``literals[d]``;
    its results are every device's, device after device."""
    func = next(op for op in module.body.operations
                if op.operation.name == "func.func"
                and ir.StringAttr(op.attributes["sym_name"]).value == entry)
    ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    func.attributes["sym_name"] = ir.StringAttr.get("__xlac_device")
    func.attributes["sym_visibility"] = ir.StringAttr.get("private")
    layout = ResultLayout([str(t) for t in ftype.inputs])
    lines, operands = [], []
    for d, device in enumerate(literals):
        for i, text in enumerate(device):
            lines.append(f"  %a{d}_{i} = stablehlo.constant {text}")
            operands.append(f"%a{d}_{i}")
    ins = ", ".join(str(t) for _ in literals for t in ftype.inputs)
    results = [r for _ in literals for r in ftype.results]
    grid_text = "[" + ", ".join(["[" + ", ".join(["@__xlac_device"] * grid.partitions) + "]"]
                                * grid.replicas) + "]"
    lines.append(f'  %r:{len(results)} = "interpreter.run_parallel"({", ".join(operands)}) '
                 f'{{programs = {grid_text}}} : ({ins}) -> ({", ".join(str(r) for r in results)})')
    values, types = [], []
    for k, result_type in enumerate(results):
        convert_result(f"%r#{k}", ir.RankedTensorType(result_type), k, lines, values, types,
                       layout)
    per_device = ResultLayout(layout.input_types, layout.results[:len(ftype.results)])
    text = str(module).rstrip()
    wrapper = (f"func.func public @main() -> ({', '.join(types)}) {{\n" + "\n".join(lines)
               + f"\n  func.return {', '.join(values)} : {', '.join(types)}\n}}")
    return ir.Module.parse(text[:text.rfind("}")] + wrapper + "\n}\n"), per_device
