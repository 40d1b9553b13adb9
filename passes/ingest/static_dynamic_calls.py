"""xla-static-dynamic-calls: jax.export's shape-polymorphic custom calls as static ops
once the call's shapes made their operands constants."""

from __future__ import annotations

from xlac.mlir import ir, passmanager
from xlac.passes.base import ModulePass, PassFailure, module_ops
from xlac.passes.ingest.approx_top_k import is_approx_top_k, lower_approx_top_k
from xlac.passes.ingest.function_bodies import body_function, copy_body_into

DYNAMIC_REDUCE_WINDOW = "stablehlo.dynamic_reduce_window"
DYNAMIC_TOP_K = "stablehlo.dynamic_top_k"
# After a rewrite: the reducers no call names any more dropped, the static
# results' shapes carried to their users and the function's results, then
# chlo.top_k (refined first: legalized with `?` results it casts) as the sort
# and slice that xla-sort-slice-to-top-k, next, takes.
_REFINE_AGAIN = ("builtin.module(symbol-dce,stablehlo-refine-shapes,"
                 "func.func(chlo-legalize-to-stablehlo),func.func(stablehlo-canonicalize-dynamism))")


class StaticDynamicCalls(ModulePass):
    """Rewrite the custom calls jax.export writes for symbolic shapes whose
    shape operands are constants now (stablehlo-refine-shapes folded the
    program's `get_dimension_size`s) as the static ops they stand for:
    `custom_call @stablehlo.dynamic_reduce_window` (jnp.cumsum/cumprod,
    lax.cummax/cumlogsumexp over a symbolic dim: a reduce_window whose
    padding is `b - 1`) as `stablehlo.reduce_window`,
    `custom_call @stablehlo.dynamic_top_k` (lax.top_k whose k is symbolic) as
    `chlo.top_k`, legalized to its sort and slice here, and a
    `custom_call @ApproxTopK` whose shapes are static now (approx_max_k over
    a symbolic batch) as the exact sort and slice (approx_top_k.py). Then
    the shapes are refined again (stablehlo-refine-shapes): the new results
    are static, their users and the function's results still `?`.

    Why: upstream stablehlo-refine-shapes and canonicalize-dynamism know the
    dynamic ops (dynamic_pad, dynamic_reshape, ...) and the custom calls that
    name their shape operands (`indices_of_shape_operands`), not these calls;
    they stayed dynamic and the program was refused. Run after
    stablehlo-canonicalize-dynamism.
    Example: `custom_call @stablehlo.dynamic_reduce_window(%x, %zero, %c, ...)`
    with constant windows becomes `stablehlo.reduce_window`.
    """

    name = "xla-static-dynamic-calls"
    acts_on = frozenset({"stablehlo.custom_call"})

    def run(self, module: ir.Operation) -> None:
        rewritten = False
        for op in module_ops(module):
            if op.name != "stablehlo.custom_call":
                continue
            if _target(op) == DYNAMIC_REDUCE_WINDOW:
                results = static_reduce_window(module, op)
            elif _target(op) == DYNAMIC_TOP_K:
                results = static_top_k(op)
            elif is_approx_top_k(op):
                results = lower_approx_top_k(module, op)
            else:
                continue
            if results is not None:
                for old, new in zip(op.results, results):
                    old.replace_all_uses_with(new)
                op.erase()
                rewritten = True
        if rewritten:
            _refine_again(module)


def _target(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["call_target_name"]).value


def _refine_again(module: ir.Operation) -> None:
    try:
        with module.context:
            passmanager.PassManager.parse(_REFINE_AGAIN).run(module)
    except ir.MLIRError as exc:
        raise PassFailure(module.location, "refining the shapes after the static ops "
                          f"failed: {exc}") from None


def static_reduce_window(module: ir.Operation, op: ir.Operation) -> list[ir.Value] | None:
    """The results of a ``stablehlo.reduce_window`` built before ``op``, a
    ``dynamic_reduce_window`` call (N inputs, N init values, then the window's
    dimensions, strides, base and window dilations, padding), or None where
    those are not constants yet or the call is not of that form."""
    count = len(op.results)
    operands = list(op.operands)
    if len(operands) != 2 * count + 5 or "called_computations" not in op.attributes:
        return None
    window = [_constant_ints(v) for v in operands[2 * count:]]
    reducers = ir.ArrayAttr(op.attributes["called_computations"])
    reducer = body_function(module, ir.FlatSymbolRefAttr(reducers[0]).value) if len(reducers) == 1 else None
    inputs = [ir.RankedTensorType(v.type) for v in operands[:count]]
    if any(w is None for w in window) or reducer is None or not all(t.has_static_shape for t in inputs):
        return None
    rank = inputs[0].rank
    if not all(len(w) == rank for w in window[:4]) or len(window[4]) != 2 * rank:
        return None
    with op.context, op.location:
        return _build_reduce_window(op, window, reducer)


def _build_reduce_window(op: ir.Operation, window: list[list[int]], reducer: ir.Operation) -> list[ir.Value]:
    """A stablehlo.reduce_window before ``op`` of its inputs and init values
    (within ``op``'s context and location). Its results keep the call's types,
    `?` dims and all: stablehlo-refine-shapes infers them."""
    result_types = [r.type for r in op.results]
    dims, strides, base, dilations, padding = window
    array = ir.DenseI64ArrayAttr.get
    padding_type = ir.RankedTensorType.get([len(dims), 2], ir.IntegerType.get_signless(64))
    ip = ir.InsertionPoint(op)
    reduce = ir.Operation.create(
        "stablehlo.reduce_window", results=result_types, operands=list(op.operands)[:2 * len(result_types)],
        attributes={"window_dimensions": array(dims), "window_strides": array(strides),
                    "base_dilations": array(base), "window_dilations": array(dilations),
                    "padding": ir.DenseElementsAttr.get(_i64_rows(padding), type=padding_type)},
        regions=1, ip=ip)
    copy_body_into(reduce, reducer, ip)
    return list(reduce.results)


def static_top_k(op: ir.Operation) -> list[ir.Value] | None:
    """The results of a ``chlo.top_k`` built before ``op``, a ``dynamic_top_k``
    call (operand, k), or None while k or the operand's shape is not known."""
    operands = list(op.operands)
    k = _constant_ints(operands[1]) if len(operands) == 2 and len(op.results) == 2 else None
    source = ir.RankedTensorType(operands[0].type)
    if k is None or len(k) != 1 or not source.has_static_shape or source.rank < 1 \
            or not 0 <= k[0] <= source.shape[-1]:
        return None
    with op.context, op.location:          # the call's types, `?` and all: refined after
        top_k = ir.Operation.create(
            "chlo.top_k", results=[r.type for r in op.results], operands=[operands[0]],
            attributes={"k": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), k[0])},
            ip=ir.InsertionPoint(op))
    return list(top_k.results)


def _constant_ints(value: ir.Value) -> list[int] | None:
    """The integers a constant ``value`` holds (row-major), else None."""
    owner = value.owner
    owner = getattr(owner, "operation", owner)       # an OpView, or a Block (an argument)
    if not isinstance(owner, ir.Operation) or owner.name != "stablehlo.constant":
        return None
    try:
        elements = ir.DenseIntElementsAttr(owner.attributes["value"])
    except ValueError:
        return None
    size = 1
    for d in ir.RankedTensorType(value.type).shape:
        size *= d
    if elements.is_splat:
        return [int(elements.get_splat_value().value)] * size
    return [int(elements[i]) for i in range(size)]


def _i64_rows(padding: list[int]):
    import numpy as np
    return np.array(padding, dtype=np.int64).reshape(len(padding) // 2, 2)
