"""xla-bf16-extend-as-shift: bf16 -> f32 as the 16-bit shift it is."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops


class Bf16ExtendAsShift(ModulePass):
    """Every `llvm.fpext` from bf16 (scalar or vector) becomes integer code:
    its bits as i16, widened to i32, shifted left by 16, read as f32 (then
    widened to f64 where that is the result). Exact: a bf16 is the upper half
    of the f32 with the same value.

    Why: where the CPU converts f32 -> bf16 natively (AVX512-BF16) the
    roundings stay `llvm.fptrunc` and the widenings `llvm.fpext`, and LLVM's
    instcombine then shrinks `fptrunc(fadd(fpext a, fpext b))` to an `fadd`
    on bf16 (exact by the double-rounding rule). Its X86 backend cannot
    legalize such bf16 arithmetic on vectors of 16k + 1 lanes (a layer norm's
    33-wide rows): "LLVM ERROR: Do not know how to soft promote this
    operator's operand!" aborted the process. Integer widenings leave
    instcombine nothing to shrink, and are what LLVM emits for the fpext
    anyway (AVX512-BF16 has no bf16 -> f32 instruction). Run on the LLVM
    dialect, only where the roundings are native (elsewhere arith-expand
    already made both conversions integer code).

        %w = llvm.fpext %v : vector<17xbf16> to vector<17xf32>
      ->
        %b = llvm.bitcast %v : vector<17xbf16> to vector<17xi16>
        %z = llvm.zext %b : vector<17xi16> to vector<17xi32>
        %s = llvm.shl %z, %c16 : vector<17xi32>
        %w = llvm.bitcast %s : vector<17xi32> to vector<17xf32>
    """

    name = "xla-bf16-extend-as-shift"
    acts_on = frozenset({"llvm.fpext"})

    def run(self, module: ir.Operation) -> None:
        with ir.Location.unknown(module.context):
            for op in module_ops(module):
                if op.name == "llvm.fpext" and _is_bf16(op.operands[0].type):
                    _as_shift(op)


def _is_bf16(type_: ir.Type) -> bool:
    if isinstance(type_, ir.VectorType):
        type_ = ir.VectorType(type_).element_type
    return isinstance(type_, ir.BF16Type)


def _like(type_: ir.Type, element: ir.Type) -> ir.Type:
    """``element``, or a vector of it shaped as ``type_`` when that is one."""
    if isinstance(type_, ir.VectorType):
        return ir.VectorType.get(ir.VectorType(type_).shape, element)
    return element


def _as_shift(op: ir.Operation) -> None:
    point, location = ir.InsertionPoint(op), op.location
    source, wide = op.operands[0], op.results[0].type
    i16, i32 = (_like(source.type, ir.IntegerType.get_signless(w)) for w in (16, 32))
    f32 = _like(source.type, ir.F32Type.get())

    def make(name, operands, result, attributes=None):
        return ir.Operation.create(name, results=[result], operands=operands,
                                   attributes=attributes or {}, ip=point,
                                   loc=location).results[0]

    bits = make("llvm.bitcast", [source], i16)
    widened = make("llvm.zext", [bits], i32)
    sixteen = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 16)
    if isinstance(i32, ir.VectorType):
        sixteen = ir.DenseElementsAttr.get_splat(i32, sixteen)
    shift = make("llvm.mlir.constant", [], i32, {"value": sixteen})
    shifted = make("llvm.shl", [widened, shift], i32)
    value = make("llvm.bitcast", [shifted], f32)
    if f32 != wide:                    # to f64: the rest of the way in hardware, exact too
        value = make("llvm.fpext", [value], wide)
    op.results[0].replace_all_uses_with(value)
    op.erase()
