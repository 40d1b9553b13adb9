"""xla-constant-selects-as-permutes: AVX2's select of two f32 constants as one
in-lane permute of a two-entry table."""

from __future__ import annotations

import array

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops

_PERMUTE = "llvm.x86.avx.vpermilvar.ps.256"
_LANES = 8                              # f32 lanes of a ymm register


class ConstantSelectsAsPermutes(ModulePass):
    """Every `llvm.select` of two splat f32 constants on a vector of 8k lanes
    becomes `vpermilps` (variable form) of the table [f, f, f, t] in each
    128-bit lane, indexed by the condition sign-extended to i32: its low two
    bits are 3 where true (-1) and 0 where false, so each lane reads t or f,
    the values the select would give (bit for bit: the same constants).

    Why: at x86-64-v3 LLVM emits `vblendvps` for such a select, 2-3 uops on
    Intel's cores on the ports the FMAs use; the permute is one uop on the
    shuffle port, which elementwise arithmetic leaves idle. erfc's merged
    branches (xla-merge-select-branches) select 7 coefficient pairs on one
    condition per element. Run on the LLVM dialect, only for AVX2 code (with
    AVX-512 a select is one masked move already).

        %r = llvm.select %c, %t, %f : vector<16xi1>, vector<16xf32>
      ->
        %i = llvm.sext %c : vector<16xi1> to vector<16xi32>
        %i0 = llvm.shufflevector %i, %i [0, ..., 7]; %i1 = ... [8, ..., 15]
        %r0 = llvm.call_intrinsic "llvm.x86.avx.vpermilvar.ps.256"(%table, %i0)
        %r1 = ...; %r = llvm.shufflevector %r0, %r1 [0, ..., 15]
    """

    name = "xla-constant-selects-as-permutes"
    acts_on = frozenset({"llvm.select"})

    def run(self, module: ir.Operation) -> None:
        with ir.Location.unknown(module.context):
            for op in module_ops(module):
                if op.name == "llvm.select" and _splat_pair(op) is not None:
                    _as_permute(op, *_splat_pair(op))


def _splat(value: ir.Value):
    """The f32 splat constant ``value`` holds, or None: a splat vector, or a
    row of an n-D one (convert-vector-to-llvm's arrays of vectors)."""
    owner = _defining_op(value)
    while owner is not None and owner.name == "llvm.extractvalue":
        owner = _defining_op(owner.operands[0])
    if owner is None or owner.name != "llvm.mlir.constant":
        return None
    attr = owner.attributes["value"]
    if not isinstance(attr, ir.DenseFPElementsAttr) or not attr.is_splat:
        return None
    return attr.get_splat_value()


def _defining_op(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    return owner.operation if isinstance(owner, (ir.Operation, ir.OpView)) else None


def _splat_pair(op: ir.Operation):
    """(t, f) for a select of two f32 splats on 8k lanes, else None."""
    type_ = op.results[0].type
    if not isinstance(type_, ir.VectorType):
        return None
    vector = ir.VectorType(type_)
    parts = vector.shape[0] // _LANES if vector.rank == 1 else 0
    # whole ymm registers, joined pairwise back (a power of two of them)
    if vector.shape[0] % _LANES or parts & (parts - 1) or not isinstance(vector.element_type, ir.F32Type):
        return None
    if not isinstance(op.operands[0].type, ir.VectorType):
        return None                       # one i1 for every lane: a branch-free move already
    true, false = _splat(op.operands[1]), _splat(op.operands[2])
    if true is None or false is None or true.value != true.value or false.value != false.value:
        return None                       # NaNs left alone: their payloads stay LLVM's to keep
    if _is_positive_zero(true) or _is_positive_zero(false) or true.value == false.value:
        return None                       # LLVM's one `vandps` with the mask, or no select at all
    return true, false


def _is_positive_zero(value: ir.FloatAttr) -> bool:
    return value.value == 0.0 and str(value.value)[0] != "-"


def _as_permute(op: ir.Operation, true: ir.FloatAttr, false: ir.FloatAttr) -> None:
    point, location = ir.InsertionPoint(op), op.location
    lanes = ir.VectorType(op.results[0].type).shape[0]
    f32, i32 = ir.F32Type.get(), ir.IntegerType.get_signless(32)

    def make(name, operands, result, attributes=None):
        return ir.Operation.create(name, results=[result], operands=operands,
                                   attributes=attributes or {}, ip=point,
                                   loc=location).results[0]

    def shuffle(a, b, mask, element):
        type_ = ir.VectorType.get([len(mask)], element)
        return make("llvm.shufflevector", [a, b], type_,
                    {"mask": ir.DenseI32ArrayAttr.get(mask)})

    ymm = ir.VectorType.get([_LANES], f32)
    entries = [false.value] * 3 + [true.value]
    table = make("llvm.mlir.constant", [], ymm,
                 {"value": ir.DenseElementsAttr.get(_f32_array(entries * 2), type=ymm)})
    index = make("llvm.sext", [op.operands[0]], ir.VectorType.get([lanes], i32))
    parts = []
    for start in range(0, lanes, _LANES):
        part = index if lanes == _LANES else \
            shuffle(index, index, list(range(start, start + _LANES)), i32)
        parts.append(make("llvm.call_intrinsic", [table, part], ymm, {
            "intrin": ir.StringAttr.get(_PERMUTE),
            "fastmathFlags": ir.Attribute.parse("#llvm.fastmath<none>"),
            "op_bundle_sizes": ir.DenseI32ArrayAttr.get([]),
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([2, 0])}))
    while len(parts) > 1:                 # halves joined pairwise: 8 -> 16 -> 32 lanes
        width = 2 * ir.VectorType(parts[0].type).shape[0]
        parts = [shuffle(a, b, list(range(width)), f32) for a, b in zip(parts[::2], parts[1::2])]
    op.results[0].replace_all_uses_with(parts[0])
    op.erase()


def _f32_array(values: list[float]) -> array.array:
    # not numpy: this pass runs in the piece workers, which keep numpy out
    # (xlac.targets.cpu.piece_worker); the bindings take any buffer
    return array.array("f", values)
