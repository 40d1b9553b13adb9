"""The input/output signature of a compiled entry function."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xlac.dtypes import numpy_dtype, shape_str
from xlac.errors import CompileError, format_location
from xlac.mlir import ir


@dataclass(frozen=True)
class TensorSpec:
    """Shape and element type of one argument or result."""

    shape: tuple[int, ...]
    element_type: str          # MLIR spelling: f32, ui8, complex<f64>, bf16 ...

    @property
    def dtype(self) -> np.dtype:
        return numpy_dtype(self.element_type)

    def __str__(self) -> str:
        return shape_str(self.dtype, self.shape)


@dataclass(frozen=True)
class Signature:
    """What an executable takes and returns."""

    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]

    def __str__(self) -> str:
        ins = ", ".join(str(s) for s in self.inputs)
        outs = ", ".join(str(s) for s in self.outputs)
        return f"({ins}) -> ({outs})"


def entry_signature(module: ir.Module, entry: str) -> Signature:
    """Read the signature of public ``@entry`` from a StableHLO module."""
    func = _find_entry(module, entry)
    ftype = entry_function_type(module, entry)
    where = format_location(func.location)
    inputs = tuple(_spec(t, where, f"argument {i}") for i, t in enumerate(ftype.inputs))
    outputs = tuple(_spec(t, where, f"result {i}") for i, t in enumerate(ftype.results))
    return Signature(inputs, outputs)


def entry_function_type(module: ir.Module, entry: str) -> ir.FunctionType:
    func = _find_entry(module, entry)
    return ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)


def _find_entry(module: ir.Module, entry: str) -> ir.Operation:
    for op in module.body.operations:
        if op.operation.name == "func.func" and \
                ir.StringAttr(op.attributes["sym_name"]).value == entry:
            return op.operation
    raise CompileError(f"<unknown>: error: no function @{entry} after ingestion")


def _spec(mlir_type: ir.Type, where: str, what: str) -> TensorSpec:
    if not isinstance(mlir_type, ir.RankedTensorType):
        raise CompileError(f"{where}: error: {what} has type {mlir_type}; the entry function "
                           "must take and return ranked tensors")
    tensor = ir.RankedTensorType(mlir_type)
    if not tensor.has_static_shape:
        raise CompileError(f"{where}: error: {what} has dynamic shape {mlir_type} that "
                           "stablehlo-refine-shapes could not make static",
                           "export the program with static shapes")
    element = str(tensor.element_type)
    try:
        numpy_dtype(element)
    except ValueError:
        raise CompileError(f"{where}: error: {what} has element type {element}, which "
                           "has no numpy equivalent") from None
    return TensorSpec(tuple(tensor.shape), element)
