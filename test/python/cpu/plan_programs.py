"""Linalg programs whose one contraction's plan the register-tile tests read
(test_register_tiles.py, test_conv_register_tiles.py): a matmul whose B an
argument makes directly, by a transpose or by a widening; and the plan
xla-apply-schedules makes for an op of a program."""

from __future__ import annotations

from xlac.passes.cpu.plans.schedule_plan import Machine

_TRANSPOSE = ("  %bt = tensor.empty() : tensor<{k}x{n}xf32>\n"
              "  %b = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, "
              "affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [\"parallel\", \"parallel\"]}} "
              "ins(%w : tensor<{n}x{k}xf32>) outs(%bt : tensor<{k}x{n}xf32>) {{\n"
              "  ^bb0(%in: f32, %out: f32):\n    linalg.yield %in : f32\n  }} -> tensor<{k}x{n}xf32>\n")


_NAMED_TRANSPOSE = ("  %bt = tensor.empty() : tensor<{k}x{n}xf32>\n"
                    "  %b = linalg.transpose ins(%w : tensor<{n}x{k}xf32>) "
                    "outs(%bt : tensor<{k}x{n}xf32>) permutation = [1, 0]\n")


_WIDEN = ("  %bt = tensor.empty() : tensor<{k}x{n}xf32>\n"
          "  %b = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, "
          "affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [\"parallel\", \"parallel\"]}} "
          "ins(%w : tensor<{k}x{n}xbf16>) outs(%bt : tensor<{k}x{n}xf32>) {{\n"
          "  ^bb0(%in: bf16, %out: f32):\n    %x = arith.extf %in : bf16 to f32\n"
          "    linalg.yield %x : f32\n  }} -> tensor<{k}x{n}xf32>\n")


def matmul_plan(m: int, k: int, n: int, machine: Machine, b_transposed: bool = False,
                b_widened: bool = False, named: bool = False, element: str = "f32"):
    """The one plan for a linalg.matmul of ``element`` (f32 or f64), B made by
    a transpose of an n x k f32 argument when ``b_transposed`` (the named
    linalg.transpose when ``named``), by widening a bf16 one when ``b_widened``."""
    b = (f"%w: tensor<{n}x{k}xf32>" if b_transposed else f"%w: tensor<{k}x{n}xbf16>" if b_widened
         else f"%b: tensor<{k}x{n}x{element}>")
    producer = (_NAMED_TRANSPOSE if named else _TRANSPOSE) if b_transposed \
        else _WIDEN if b_widened else ""
    e = element
    text = (f"func.func @main(%a: tensor<{m}x{k}x{e}>, {b}) -> tensor<{m}x{n}x{e}> {{\n"
            + producer.format(k=k, n=n) +
            f"  %z = arith.constant 0.0 : {e}\n  %e = tensor.empty() : tensor<{m}x{n}x{e}>\n"
            f"  %f = linalg.fill ins(%z : {e}) outs(%e : tensor<{m}x{n}x{e}>) -> tensor<{m}x{n}x{e}>\n"
            f"  %r = linalg.matmul ins(%a, %b : tensor<{m}x{k}x{e}>, tensor<{k}x{n}x{e}>) "
            f"outs(%f : tensor<{m}x{n}x{e}>) -> tensor<{m}x{n}x{e}>\n"
            f"  return %r : tensor<{m}x{n}x{e}>\n}}")
    return plan_of(text, "linalg.matmul", machine)


def plan_of(text: str, op_name: str, machine: Machine):
    """The one plan xla-apply-schedules makes for the ``op_name`` op of ``text``."""
    from xlac.context import new_context
    from xlac.mlir import ir
    from xlac.passes.cpu import apply_schedules
    with new_context():
        module = ir.Module.parse(text)
        planned = apply_schedules._plans(apply_schedules._linalg_ops(module.operation), machine)
        [plan] = [plan for op, plan in planned if op.name == op_name]
        return plan
