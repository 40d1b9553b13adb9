"""The input/output signature of a compiled entry function."""

from __future__ import annotations

from xlac.dtypes import SUB_BYTE_BITS, numpy_dtype, shape_str, storage_bytes, tensor_type
from xlac.errors import CompileError, InputError, error, format_location
from xlac.record import record

TYPE_CHECKING = False             # typing.TYPE_CHECKING, without importing typing on a hit
if TYPE_CHECKING:                 # loaded on first use: a cache hit needs neither
    import numpy as np

    from xlac.mlir import ir


@record                             # a frozen dataclass, without importing dataclasses
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

    @property
    def nbytes(self) -> int:
        """The bytes an array of this (static) spec holds in memory."""
        count = 1
        for dim in self.shape:
            count *= dim
        return count * storage_bytes(self.element_type)

    def accepts(self, shape: tuple[int, ...]) -> bool:
        """Does an array of ``shape`` fit (same rank, equal static dims)?"""
        return len(shape) == len(self.shape) and \
            all(want is None or want == got for want, got in zip(self.shape, shape))

    def mlir_type(self) -> str:
        """``tensor<4x?xf32>``: the spec as MLIR spells it."""
        return tensor_type(self.shape, self.element_type)

    def __str__(self) -> str:
        return shape_str(self.dtype, tuple("?" if d is None else d for d in self.shape))


@record
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
    constants = _constant_arguments(func)
    inputs = tuple(_spec(t, where, f"argument {i}", allow_dynamic)
                   for i, t in enumerate(ftype.inputs) if i not in constants)
    dynamic_inputs = any(spec.is_dynamic for spec in inputs)
    outputs = tuple(_spec(t, where, f"result {i}", dynamic_inputs)
                    for i, t in enumerate(ftype.results))
    return Signature(inputs, outputs)


def entry_donations(module: ir.Module, entry: str, signature: Signature) -> dict[int, int]:
    """Donated argument -> the result that may take its memory, as jax exports
    ``donate_argnums``: ``tf.aliasing_output = i`` names the result; a
    ``jax.buffer_donor`` argument may become any result of its spec not taken yet."""
    from xlac.mlir import ir
    func = _find_entry(module, entry)
    if "arg_attrs" not in func.attributes:
        return {}
    donations: dict[int, int] = {}
    donors = []
    for index, attrs in enumerate(ir.ArrayAttr(func.attributes["arg_attrs"])):
        attrs = ir.DictAttr(attrs)
        if "tf.aliasing_output" in attrs:
            donations[index] = ir.IntegerAttr(attrs["tf.aliasing_output"]).value
        elif "jax.buffer_donor" in attrs and ir.BoolAttr(attrs["jax.buffer_donor"]).value:
            donors.append(index)
    for index in donors:
        free = [o for o, spec in enumerate(signature.outputs)
                if spec == signature.inputs[index] and o not in donations.values()]
        if free:
            donations[index] = free[0]
    return {i: o for i, o in donations.items() if 0 <= o < len(signature.outputs)}


def entry_function_type(module: ir.Module, entry: str) -> ir.FunctionType:
    from xlac.mlir import ir
    func = _find_entry(module, entry)
    return ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)


# Large constants the CPU target passes as entry arguments of their own
# (xla-constants-to-arguments) and reads back from globals the compiler gives
# their bytes (xla-constant-arguments-to-globals): the names those passes and
# the target (xlac.targets.cpu.constants) share.
CONSTANTS_ATTR = "xla.constant_arguments"   # module: the constants' values, in argument order
ARGUMENT_ATTR = "xla.constant"              # entry argument: its index in that list
CONSTANT_ALIGNMENT = 64                     # bytes: what each constant's data is aligned to


def aligned_copy(data) -> np.ndarray:
    """A read-only copy of ``data``'s bytes starting at a ``CONSTANT_ALIGNMENT`` boundary."""
    import numpy as np
    size = len(data)
    room = np.empty(size + CONSTANT_ALIGNMENT, np.uint8)
    offset = -room.ctypes.data % CONSTANT_ALIGNMENT
    array = room[offset:offset + size]
    array[:] = np.frombuffer(data, np.uint8)
    array.flags.writeable = False
    return array


def constant_symbol(index: int) -> str:
    """The global holding constant ``index`` of ``xla.constant_arguments``."""
    return f"__xlac_constant_{index}"


def constant_index(symbol: str) -> int | None:
    """The index ``constant_symbol`` made ``symbol`` from, or None if it did not."""
    prefix = "__xlac_constant_"
    digits = symbol[len(prefix):]
    return int(digits) if symbol.startswith(prefix) and digits.isdigit() else None


# xla-constant-table: the code reads constant i's address from entry i of this
# table, which the loader fills (the JIT, a library's loader) or an
# xla-compile library defines over the data it links.
CONSTANT_TABLE_SYMBOL = "__xlac_constant_table"


def _constant_arguments(func: ir.Operation) -> set[int]:
    """The arguments holding the program's own constants (xla-constants-to-arguments):
    the compiled code gives them, not the caller."""
    from xlac.mlir import ir
    if "arg_attrs" not in func.attributes:
        return set()
    return {i for i, attrs in enumerate(ir.ArrayAttr(func.attributes["arg_attrs"]))
            if ARGUMENT_ATTR in ir.DictAttr(attrs)}


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


def check_inputs(signature: Signature, arrays, names: list[str] | None = None) -> list[np.ndarray]:
    """Arrays ready to pass by pointer; ``InputError`` names every mismatch.

    Arrays must have the compiled dtype and shape (byte order aside: a
    big-endian array is converted to native order, same values; a strided
    one is made contiguous). Python values (lists, scalars, bools) and numpy
    scalars take the compiled dtype where numpy's same-kind casting allows
    it and every value fits; ragged lists, strings and objects are refused.
    ``names``: each argument's pytree path, for the message.
    """
    problems: list[str] = []
    expected = signature.inputs
    if len(arrays) != len(expected):
        problems.append(f"expected {len(expected)} argument(s) {_specs(expected)}, "
                        f"got {len(arrays)}")
    ready = []
    for index, (value, spec) in enumerate(zip(arrays, expected)):
        array, problem = as_input(value, spec)
        if problem:
            label = f"argument {index}" + (f" ({names[index]})" if names else "")
            problems.append(f"{label} compiled for {spec}, called with {problem}")
        ready.append(array)
    if problems:
        raise InputError("; ".join(problems) + f"; the executable takes {_specs(expected)}")
    return ready


def as_input(value, spec: TensorSpec) -> tuple[np.ndarray | None, str]:
    """``(array, "")`` for ``value`` as ``spec`` takes it, or ``(None, what it is)``."""
    import numpy as np
    if value is None:
        return None, "None"
    if isinstance(value, (bool, int, float, complex, list, tuple, np.generic)):
        array, problem = _from_python(value, spec)
    else:
        array, problem = _from_array(value, spec)
    if problem:
        return None, problem
    if not spec.accepts(tuple(array.shape)):
        return None, shape_str(array.dtype, array.shape)
    # a 0-d array is contiguous; np.ascontiguousarray would make it 1-d, and a
    # shape-polymorphic program was then specialized for f32[1] (refused)
    return (np.ascontiguousarray(array) if array.ndim else array), ""


def _from_array(value, spec: TensorSpec) -> tuple[np.ndarray | None, str]:
    import numpy as np
    try:
        array = np.asarray(value)
    except Exception:  # noqa: BLE001 - anything numpy cannot read is a bad input
        return None, f"an object of type {type(value).__name__}"
    if array.dtype.kind in "OSUM" or array.dtype.names is not None:
        return None, f"an array of {array.dtype} ({type(value).__name__})"
    if not array.dtype.isnative:           # same values in this machine's byte order
        array = array.astype(array.dtype.newbyteorder("="))
    if array.dtype != spec.dtype:
        return None, _dtype_mismatch(array, spec)
    return array, ""


def _from_python(value, spec: TensorSpec) -> tuple[np.ndarray | None, str]:
    """numpy's reading of ``value``, cast to the compiled dtype when same-kind allows."""
    import numpy as np
    try:
        array = np.asarray(value)
    except (ValueError, OverflowError, TypeError) as exc:
        return None, f"a {type(value).__name__} numpy cannot read as one array ({exc})"
    limits = _integer_range(spec)
    if limits is not None and array.dtype.kind in "fO" and _only_ints(value):
        return _exact_ints(value, spec, limits)     # [2**63, 1]: numpy would go through f64
    if array.dtype.kind == "O" and _has_big_int(value):
        return None, f"a {type(value).__name__} with an integer out of the range of any dtype"
    if array.dtype.kind not in "biufc":
        shown = "strings" if array.dtype.kind in "SU" else \
            "objects, ragged lists or integers no one dtype holds"
        return None, f"a {type(value).__name__} of {shown}"
    target = spec.dtype
    if not _same_kind(array.dtype, target, not isinstance(value, np.generic)):
        return None, (f"{shape_str(array.dtype, array.shape)} from a {type(value).__name__} "
                      f"({array.dtype} values do not cast to {target} under numpy's "
                      "same-kind rule)")
    if limits is not None and array.size and array.dtype.kind in "iu" and \
            not (limits[0] <= int(array.min()) and int(array.max()) <= limits[1]):
        return None, (f"{shape_str(array.dtype, array.shape)} from a {type(value).__name__} "
                      f"with values outside {spec.element_type}'s range {limits[0]}..{limits[1]}")
    return array.astype(target), ""


def _same_kind(source: np.dtype, target: np.dtype, python: bool) -> bool:
    """numpy's same-kind rule; Python ints are weak (NEP 50): any integer dtype
    they fit takes them, signed or not (the range is checked after)."""
    import numpy as np
    if target.kind == "V":                 # bf16, fp8 (ml_dtypes): floats
        return source.kind in "biuf"
    if python and source.kind in "iu" and target.kind in "iu":
        return True
    return bool(np.can_cast(source, target, "same_kind"))


def _integer_range(spec: TensorSpec) -> tuple[int, int] | None:
    """The values an integer element type holds (sub-byte ones by their bits)."""
    dtype = spec.dtype
    if dtype.kind not in "iu":
        return None
    bits = SUB_BYTE_BITS.get(spec.element_type, dtype.itemsize * 8)
    if dtype.kind == "u":
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def _exact_ints(value, spec: TensorSpec, limits) -> tuple[np.ndarray | None, str]:
    import numpy as np
    exact = np.array(value, dtype=object)
    if not all(limits[0] <= item <= limits[1] for item in exact.flat):
        return None, (f"a {type(value).__name__} of ints outside {spec.element_type}'s "
                      f"range {limits[0]}..{limits[1]}")
    return exact.astype(spec.dtype), ""


def _only_ints(value) -> bool:
    if isinstance(value, (list, tuple)):
        return all(_only_ints(item) for item in value)
    return isinstance(value, int) and not isinstance(value, bool)


def _has_big_int(value) -> bool:
    if isinstance(value, (list, tuple)):
        return any(_has_big_int(item) for item in value)
    return isinstance(value, int) and not -(1 << 63) <= value < (1 << 64)


def _dtype_mismatch(array: np.ndarray, spec: TensorSpec) -> str:
    """The array's type, spelled so that it never reads like the expected one."""
    got = shape_str(array.dtype, array.shape)
    if got.split("[")[0] != str(spec).split("[")[0]:
        return got
    return f"{got} (dtype {array.dtype.str}; the program takes {spec.dtype.str})"


def _specs(specs) -> str:
    return "(" + ", ".join(str(s) for s in specs) + ")"
