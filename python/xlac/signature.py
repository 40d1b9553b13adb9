"""The input/output signature of a compiled entry function."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from xlac.dtypes import numpy_dtype, shape_str, tensor_type
from xlac.errors import CompileError, error, format_location

if TYPE_CHECKING:                 # loaded on first use: a cache hit needs neither
    import numpy as np

    from xlac.mlir import ir


@dataclass(frozen=True)
class TensorSpec:
    """Shape and element type of one argument or result.

    A dimension the program leaves dynamic (``?`` in ``tensor<?x4xf32>``) is
    ``None`` in ``shape``; it prints as ``?``: ``f32[?,4]``.
    """

    shape: tuple[int | None, ...]
    element_type: str          # MLIR spelling: f32, ui8, complex<f64>, bf16 ...

    @property
    def dtype(self) -> np.dtype:
        return numpy_dtype(self.element_type)

    @property
    def is_dynamic(self) -> bool:
        return None in self.shape

    def accepts(self, shape: tuple[int, ...]) -> bool:
        """Does an array of ``shape`` fit (same rank, equal static dims)?"""
        return len(shape) == len(self.shape) and \
            all(want is None or want == got for want, got in zip(self.shape, shape))

    def mlir_type(self) -> str:
        """``tensor<4x?xf32>``: the spec as MLIR spells it."""
        return tensor_type(self.shape, self.element_type)

    def __str__(self) -> str:
        return shape_str(self.dtype, tuple("?" if d is None else d for d in self.shape))


@dataclass(frozen=True)
class Signature:
    """What an executable takes and returns."""

    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]

    @property
    def is_dynamic(self) -> bool:
        """Does an input have a ``?`` dimension (compiled per call shape)?"""
        return any(spec.is_dynamic for spec in self.inputs)

    def to_json(self) -> dict:
        """``{"inputs": [{"shape": [...], "type": "f32"}, ...], "outputs": [...]}``."""
        return {side: [{"shape": list(s.shape), "type": s.element_type}
                       for s in getattr(self, side)] for side in ("inputs", "outputs")}

    @classmethod
    def from_json(cls, description: dict) -> Signature:
        """The inverse of ``to_json``; ValueError if ``description`` is not one."""
        try:
            return cls(*(tuple(TensorSpec(tuple(int(d) for d in item["shape"]), str(item["type"]))
                               for item in description[side]) for side in ("inputs", "outputs")))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a signature ({exc!r})") from None

    def __str__(self) -> str:
        ins = ", ".join(str(s) for s in self.inputs)
        outs = ", ".join(str(s) for s in self.outputs)
        return f"({ins}) -> ({outs})"


def entry_signature(module: ir.Module, entry: str, allow_dynamic: bool = False) -> Signature:
    """Read the signature of public ``@entry`` from a StableHLO module.

    ``allow_dynamic``: arguments may keep ``?`` dims (``None`` in the spec);
    results too, but only when an argument does: each call's shapes then fix
    theirs (``xlac.dynamic``).
    """
    func = _find_entry(module, entry)
    ftype = entry_function_type(module, entry)
    where = format_location(func.location)
    inputs = tuple(_spec(t, where, f"argument {i}", allow_dynamic)
                   for i, t in enumerate(ftype.inputs))
    dynamic_inputs = any(spec.is_dynamic for spec in inputs)
    outputs = tuple(_spec(t, where, f"result {i}", dynamic_inputs)
                    for i, t in enumerate(ftype.results))
    return Signature(inputs, outputs)


def entry_function_type(module: ir.Module, entry: str) -> ir.FunctionType:
    from xlac.mlir import ir
    func = _find_entry(module, entry)
    return ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)


def _find_entry(module: ir.Module, entry: str) -> ir.Operation:
    from xlac.mlir import ir
    for op in module.body.operations:
        if op.operation.name == "func.func" and \
                ir.StringAttr(op.attributes["sym_name"]).value == entry:
            return op.operation
    raise CompileError(error(f"no function @{entry} after ingestion"))


def _spec(mlir_type: ir.Type, where: str, what: str, allow_dynamic: bool = False) -> TensorSpec:
    from xlac.mlir import ir
    if not isinstance(mlir_type, ir.RankedTensorType):
        raise CompileError(error(f"{what} has type {mlir_type}; the entry function "
                           "must take and return ranked tensors", where))
    tensor = ir.RankedTensorType(mlir_type)
    if not tensor.has_static_shape and not allow_dynamic:
        raise CompileError(error(f"{what} has dynamic shape {mlir_type} that "
                           "stablehlo-refine-shapes could not make static", where),
                           "export the program with static shapes")
    element = str(tensor.element_type)
    try:
        numpy_dtype(element)
    except ValueError:
        raise CompileError(error(f"{what} has element type {element}, which "
                           "has no numpy equivalent", where)) from None
    shape = tuple(None if tensor.is_dynamic_dim(i) else d for i, d in enumerate(tensor.shape))
    return TensorSpec(shape, element)
