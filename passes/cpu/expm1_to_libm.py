"""xla-expm1-to-libm: `math.expm1` as a call of libm's expm1/expm1f."""

from __future__ import annotations

from xlac.mlir import ir, passmanager
from xlac.passes.base import ModulePass, module_ops, symbol_name
from xlac.passes.helper_calls import call_and_erase

# bf16 <-> f32 as integer ops: the JIT has no __truncsfbf2
_HELPER_PIPELINE = "builtin.module(convert-math-to-libm, arith-expand{include-bf16=true})"


class Expm1ToLibm(ModulePass):
    """Replace every `math.expm1` by a call of a helper that calls libm's
    `expm1f` (f32, and f16/bf16 extended to f32 around it) or `expm1` (f64);
    vectors call it once per lane.

    Why: upstream convert-math-to-llvm lowers `math.expm1` as `exp(x) - 1`
    in the operand's type, which loses every digit for small |x| (bf16:
    -0.0078 for -0.0065; f32: 150 ulp). The helper is upstream
    convert-math-to-libm run on that one op, so the promotion to f32 and the
    per-lane calls are upstream's (with arith-expand for bf16, whose
    pipeline step has run already). It runs after convert-complex-to-standard
    (a complex expm1 becomes a real one) and before the vector lowering
    (which must see the helper's vector.extract/insert). Other math ops keep
    their LLVM intrinsics.

        %y = math.expm1 %x : bf16
      ->
        %y = call @xla_expm1_bf16(%x) : (bf16) -> bf16
        // @xla_expm1_bf16: arith.extf to f32, call @expm1f, arith.truncf
    """

    name = "xla-expm1-to-libm"

    acts_on = frozenset({"math.expm1"})

    def run(self, module: ir.Operation) -> None:
        helpers: dict[str, str] = {}
        for op in module_ops(module):
            if op.name == "math.expm1":
                type_ = str(op.results[0].type)
                if type_ not in helpers:
                    helpers[type_] = _add_helper(module, type_)
                call_and_erase(op, helpers[type_])


def _add_helper(module: ir.Operation, type_: str) -> str:
    """Add ``@xla_expm1_<type>`` (and libm's declaration) to ``module``."""
    name = "xla_expm1_" + type_.replace("vector<", "v").rstrip(">")   # f32, v16xf32
    helper = ir.Module.parse(
        f"func.func private @{name}(%x: {type_}) -> {type_} {{\n"
        f"  %y = math.expm1 %x : {type_}\n  return %y : {type_}\n}}\n",
        context=module.context)
    passmanager.PassManager.parse(_HELPER_PIPELINE, context=module.context).run(helper.operation)
    body = module.regions[0].blocks[0]
    taken = {symbol_name(op.operation) for op in body.operations
             if "sym_name" in op.operation.attributes}
    for func in list(helper.body.operations):
        if symbol_name(func.operation) not in taken:   # expm1f is declared once
            func.operation.move_before(list(body.operations)[0].operation)
    return name
