"""xla-decompose-batch-norm: batch_norm_* ops as plain StableHLO arithmetic."""

from __future__ import annotations

import math

from xlac.dtypes import tensor_type
from xlac.mlir import ir
from xlac.passes.base import ModulePass, PassFailure, module_ops
from xlac.passes.helper_calls import fresh_symbol, replace_with_call
from xlac.record import record

_KINDS = {
    "stablehlo.batch_norm_inference": "inference",
    "stablehlo.batch_norm_training": "training",
    "stablehlo.batch_norm_grad": "grad",
}


class DecomposeBatchNorm(ModulePass):
    """Replace `stablehlo.batch_norm_{inference,training,grad}` by calls to
    helpers made of broadcast_in_dim, reduce and elementwise StableHLO ops.

    Why: upstream stablehlo-legalize-to-linalg has no pattern for them, but it
    lowers every op of their decomposition. The formulas are the StableHLO
    spec's (variance as the mean of squared deviations, the gradient as in
    XLA's batchnorm expander). Run before the upstream legalization.

    Example:
        %y = "stablehlo.batch_norm_inference"(%x, %s, %o, %m, %v) {...}
    becomes
        %y = call @xla_batch_norm_inference_0(%x, %s, %o, %m, %v)
    with (x - m) / sqrt(v + epsilon) * s + o in the helper.
    """

    name = "xla-decompose-batch-norm"

    acts_on = frozenset(_KINDS)

    def run(self, module: ir.Operation) -> None:
        for op in [o for o in module_ops(module) if o.name in _KINDS]:
            kind = _KINDS[op.name]
            helper = fresh_symbol(module, f"xla_batch_norm_{kind}")
            replace_with_call(module, op, _helper_text(helper, kind, _Shapes.of(op)), helper)


@record
class _Shapes:
    """What the decomposition needs to know about one batch_norm op."""

    operand: str       # tensor type of the operand, as MLIR text
    feature: str       # tensor type of scale/offset/mean/variance
    element: str       # element type
    index: int         # feature_index
    reduced: list[int]  # every dimension but the feature one
    count: int         # elements per feature
    epsilon: float

    @staticmethod
    def of(op: ir.Operation) -> _Shapes:
        operand = ir.RankedTensorType(op.operands[0].type)
        if not operand.has_static_shape:
            raise PassFailure(op.location, f"{op.name} with dynamic shapes is not "
                              "supported; run stablehlo-refine-shapes first")
        index = ir.IntegerAttr(op.attributes["feature_index"]).value
        shape = list(operand.shape)
        element = str(operand.element_type)
        return _Shapes(str(operand), tensor_type([shape[index]], element), element, index,
                       [d for d in range(len(shape)) if d != index],
                       math.prod(shape) // max(shape[index], 1),
                       ir.FloatAttr(op.attributes["epsilon"]).value)


def _helper_text(helper: str, kind: str, s: _Shapes) -> str:
    params, results, body = _BUILDERS[kind](s)
    x, f = s.operand, s.feature
    types = {"x": x, "f": f}
    args = ", ".join(f"%{name}: {types[t]}" for name, t in params)
    outs = ", ".join(types[t] for _, t in results)
    lines = [f"func.func private @{helper}({args}) -> ({outs}) {{",
             f"  %zero = stablehlo.constant dense<0.0> : tensor<{s.element}>",
             f"  %eps = stablehlo.constant dense<{s.epsilon:.17e}> : {x}",
             f"  %count = stablehlo.constant dense<{s.count:.1f}> : {f}",
             f"  %count_x = stablehlo.constant dense<{s.count:.1f}> : {x}"]
    lines += ["  " + line.format(x=x, f=f, dims=s.reduced, index=s.index, elem=s.element)
              for line in body]
    lines.append("  return " + ", ".join(f"%{name}" for name, _ in results) + f" : {outs}")
    return "\n".join(lines) + "\n}\n"


def _bcast(name: str, value: str) -> str:
    return f"%{name} = stablehlo.broadcast_in_dim %{value}, dims = [{{index}}] : ({{f}}) -> {{x}}"


def _sum(name: str, value: str) -> str:
    return (f"%{name} = stablehlo.reduce(%{value} init: %zero) applies stablehlo.add "
            f"across dimensions = {{dims}} : ({{x}}, tensor<{{elem}}>) -> {{f}}")


def _op(name: str, opname: str, *values: str, ty: str = "x") -> str:
    operands = ", ".join(f"%{v}" for v in values)
    return f"%{name} = stablehlo.{opname} {operands} : {{{ty}}}"


def _normalize(mean_x: str, var_x: str) -> list[str]:
    """%normalized = (x - mean) / sqrt(var + epsilon), and its parts."""
    return [_op("centered", "subtract", "x", mean_x), *_divide_by_stddev(var_x)]


def _divide_by_stddev(var_x: str) -> list[str]:
    """%normalized = %centered / sqrt(var + epsilon), and its parts."""
    return [_op("var_eps", "add", var_x, "eps"),
            _op("stddev", "sqrt", "var_eps"),
            _op("normalized", "divide", "centered", "stddev")]


def _inference(s: _Shapes):
    params = [("x", "x"), ("scale", "f"), ("offset", "f"), ("mean", "f"), ("var", "f")]
    body = [_bcast("scale_x", "scale"), _bcast("offset_x", "offset"),
            _bcast("mean_x", "mean"), _bcast("var_x", "var"),
            *_normalize("mean_x", "var_x"),
            _op("scaled", "multiply", "scale_x", "normalized"),
            _op("out", "add", "scaled", "offset_x")]
    return params, [("out", "x")], body


def _training(s: _Shapes):
    params = [("x", "x"), ("scale", "f"), ("offset", "f")]
    body = [_sum("total", "x"), _op("mean", "divide", "total", "count", ty="f"),
            _bcast("mean_x", "mean"), _op("centered", "subtract", "x", "mean_x"),
            _op("centered_sq", "multiply", "centered", "centered"),
            _sum("total_sq", "centered_sq"),
            _op("var", "divide", "total_sq", "count", ty="f"), _bcast("var_x", "var"),
            _bcast("scale_x", "scale"), _bcast("offset_x", "offset"),
            *_divide_by_stddev("var_x"),
            _op("scaled", "multiply", "scale_x", "normalized"),
            _op("out", "add", "scaled", "offset_x")]
    return params, [("out", "x"), ("mean", "f"), ("var", "f")], body


def _grad(s: _Shapes):
    """The spec's batch_norm_grad (XLA's batchnorm expander formulation)."""
    params = [("x", "x"), ("scale", "f"), ("mean", "f"), ("var", "f"), ("dy", "x")]
    body = [_bcast("scale_x", "scale"), _bcast("mean_x", "mean"), _bcast("var_x", "var"),
            *_normalize("mean_x", "var_x"),
            _op("i1", "multiply", "dy", "count_x"),
            _sum("grad_offset", "dy"), _bcast("i2", "grad_offset"),
            _op("dy_centered", "multiply", "dy", "centered"),
            _sum("dy_centered_sum", "dy_centered"), _bcast("i3", "dy_centered_sum"),
            _op("i4", "multiply", "i3", "centered"),
            _op("i5", "divide", "i4", "var_eps"),
            _op("i12", "subtract", "i1", "i2"), _op("i6", "subtract", "i12", "i5"),
            _op("scale_std", "divide", "scale_x", "stddev"),
            _op("scale_std_n", "divide", "scale_std", "count_x"),
            _op("grad_x", "multiply", "scale_std_n", "i6"),
            _op("dy_normalized", "multiply", "dy", "normalized"),
            _sum("grad_scale", "dy_normalized")]
    return params, [("grad_x", "x"), ("grad_scale", "f"), ("grad_offset", "f")], body


_BUILDERS = {"inference": _inference, "training": _training, "grad": _grad}
