"""xla-constants-to-arguments: the entry's large constants as arguments of their own."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, nested_ops, public_definitions
from xlac.record import record
from xlac.signature import ARGUMENT_ATTR, CONSTANTS_ATTR

# Where a constant may be used from the entry's own arguments: control flow
# regions see the values above them; other regions (reduce bodies) are kept.
_CAPTURING = ("stablehlo.while", "stablehlo.if", "stablehlo.case")

# MLIR prints a dense constant of more elements than this as one hex string:
# how the compiler reads its bytes (xlac.targets.cpu.constants).
_HEX_ELEMENTS = 100

# A `dense_resource` constant of this many bytes or more is taken whatever its
# element count: its bytes are read from its blob, and it is how exporters
# (torch-mlir) hold a model's weights, small ones (a BatchNorm's 64 scales)
# included. Left in the code, ResNet-18's 81 small ones nearly doubled the
# code its pieces compile (308 kB of bytecode against 169 kB with them as
# arguments) and 0.7 s of a 2-core compile; MLIR cannot fold a resource, so
# none of them was folded before LLVM anyway. Smaller (a scalar) stay: LLVM
# folds those.
_RESOURCE_MIN_BYTES = 64


@record
class ConstantsToArguments(ModulePass):
    """Make each `stablehlo.constant` of the entry holding `min-bytes` or more
    (more than 100 elements, no splat), or a `dense_resource` of 64 bytes or
    more, a new trailing argument of the entry, marked `{xla.constant = i}`;
    the module attribute `xla.constant_arguments` lists the values, the i-th
    for the i-th such argument (the attribute, not a copy of its data).

    Why: a weight left a constant went through every pass and then through
    LLVM as an IR literal: ResNet-18's 46.8 MB of weights doubled its compile
    time (LLVM's object code, pieces printing each global they used as hex).
    As arguments they cost the passes nothing, and the compiler owns their
    bytes (the JIT's symbols, an artifact's read-only data): docs/compile-time.md.
    Small constants stay: LLVM may fold them, and they cost little to compile;
    but a resource (an exporter's weight, which MLIR cannot fold) goes from 64 bytes.

        func.func public @main(%x: tensor<64xf32>) -> tensor<64xf32> {
          %w = stablehlo.constant dense_resource<w> : tensor<64xf32>
      ->
        module attributes {xla.constant_arguments = [dense_resource<w> : tensor<64xf32>]}
        func.func public @main(%x: tensor<64xf32>, %w: tensor<64xf32> {xla.constant = 0})
    """

    name = "xla-constants-to-arguments"
    min_bytes: int = 4096

    def run(self, module: ir.Operation) -> None:
        attributes = module.attributes
        values = list(ir.ArrayAttr(attributes[CONSTANTS_ATTR])) if CONSTANTS_ATTR in attributes \
            else []
        for func in public_definitions(module):
            values += _to_arguments(func, [op for op in nested_ops(func) if self._large(op)],
                                    len(values))
        if values:
            attributes[CONSTANTS_ATTR] = ir.ArrayAttr.get(values)

    def _large(self, op: ir.Operation) -> bool:
        if op.name != "stablehlo.constant" or not _captured(op):
            return False
        tensor = op.results[0].type
        size = _byte_size(tensor)
        if size < min(self.min_bytes, _RESOURCE_MIN_BYTES):
            return False
        value = op.attributes["value"]          # after the type: complex ones cannot be read
        if _is_resource(value):
            return True
        if size < self.min_bytes or _count(tensor) <= _HEX_ELEMENTS:
            return False
        return not (isinstance(value, ir.DenseElementsAttr) and value.is_splat)


def _is_resource(value: ir.Attribute) -> bool:
    """Whether ``value`` is a `dense_resource` (the bindings give it no class of
    its own to test; it prints as its handle, not its blob)."""
    return not isinstance(value, ir.DenseElementsAttr) and str(value).startswith("dense_resource<")


def _captured(op: ir.Operation) -> bool:
    """Whether ``op``'s value can come from the entry's arguments where it is."""
    parent = op.parent
    while parent.name != "func.func":
        if parent.name not in _CAPTURING:
            return False
        parent = parent.parent
    return True


def _byte_size(tensor: ir.Type) -> int:
    """The bytes of a static tensor whose elements take whole bytes each, as
    an array in memory; 0 for any other (i1, i4, f4, index, complex: kept constants)."""
    if not isinstance(tensor, ir.RankedTensorType) or not tensor.has_static_shape:
        return 0
    element = tensor.element_type
    if not isinstance(element, (ir.IntegerType, ir.FloatType)) or element.width % 8 \
            or element.width > 64:
        return 0
    return _count(tensor) * element.width // 8


def _count(tensor: ir.RankedTensorType) -> int:
    count = 1
    for dim in tensor.shape:
        count *= dim
    return count


def _to_arguments(func: ir.Operation, constants: list[ir.Operation], first: int) -> list:
    """Replace ``constants`` by new trailing arguments of ``func`` (one per
    distinct value); their values, in order, numbered from ``first``."""
    block = func.regions[0].blocks[0]
    arguments: dict = {}                 # value attribute -> its argument
    for op in constants:
        value = op.attributes["value"]
        if value not in arguments:
            arguments[value] = block.add_argument(op.results[0].type, op.location)
        op.results[0].replace_all_uses_with(arguments[value])
        op.erase()
    if not arguments:
        return []
    old = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    inputs = [*old.inputs, *[a.type for a in arguments.values()]]
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, old.results))
    marks = [ir.DictAttr.get({ARGUMENT_ATTR: ir.IntegerAttr.get(ir.IntegerType.get_signless(64),
                                                                  first + k)})
             for k in range(len(arguments))]
    given = list(ir.ArrayAttr(func.attributes["arg_attrs"])) if "arg_attrs" in func.attributes \
        else [ir.DictAttr.get({})] * len(old.inputs)
    func.attributes["arg_attrs"] = ir.ArrayAttr.get(given + marks)
    return list(arguments)
