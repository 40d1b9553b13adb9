"""xla-pack-matmul-panels: B of a large f32 matmul packed once, in column panels."""

from __future__ import annotations

from dataclasses import dataclass

from xlac.mlir import ir
from xlac.passes.base import ModulePass, functions, nested_ops
from xlac.passes.cpu.apply_schedules import ApplySchedules
from xlac.passes.cpu.contraction_plan import PANEL_ATTR, panel_params
from xlac.passes.helper_calls import parse_at


@dataclass(frozen=True)
class PackMatmulPanels(ModulePass):
    """Rewrite a linalg.matmul whose schedule would be @xla_matmul (AVX-512's
    register tiles, C cut into chunks of rows) into a copy of B in column
    panels, ``Bp[k / bk, n / tn, bk, tn]`` (a linalg.transpose of B seen as
    ``[k / bk, bk, n / tn, tn]``, a reshape: no copy), and a linalg.generic
    reading it into the same C: loops m, panel p, column j of the panel,
    k block q, k in the block; A(m, q * bk + k), Bp(q, p, k, j), C(m, p * tn + j).

    Why: with B packed inside each thread's chunk, every thread packed every
    panel of B again for its own rows, and the panel loop had to go outside
    the row loop, so the rows' slice of A streamed from L2 for every panel.
    Packed once (the copy is an elementwise op of its own, split among the
    threads), the schedule (schedules/matmul_panels.mlir) walks blocks of 32
    rows and, within each, all the panels of a k block, the block's slice of
    A staying in L1 (1024^3 f32 on two threads, best of 200 runs: 6.15 ->
    5.81 ms). A k block's panels are contiguous (1 MiB for n = 1024): as
    [n / tn, k, tn] they started 128 KiB apart, in the same L2 sets.
    Options as xla-apply-schedules' (the plan must be the one it would make).

    Example:
        %c = linalg.matmul ins(%a, %b : tensor<1024x1024xf32>, tensor<1024x1024xf32>) outs(%fill ...)
    becomes
        %b4 = tensor.expand_shape %b [[0, 1], [2, 3]] ... into tensor<4x256x32x32xf32>
        %bp = linalg.transpose ins(%b4) outs(...) permutation = [0, 2, 1, 3]
        %c = linalg.generic {(m, p, j, q, k) -> (m, q * 256 + k), (q, p, k, j), (m, p * 32 + j)}
               ins(%a, %bp) outs(%fill) {xla_panel_matmul = array<i64: cm, bm, bk, tm, tn>}
    """

    name = "xla-pack-matmul-panels"
    threads: int = 0
    vector_bytes: int = 0

    def run(self, module: ir.Operation) -> None:
        machine = ApplySchedules(self.threads, self.vector_bytes).machine()
        for func in functions(module):
            for op in nested_ops(func):
                if op.name == "linalg.matmul" and (params := panel_params(op, machine)):
                    _rewrite(op, params)


def _rewrite(matmul: ir.Operation, params: tuple[int, ...]) -> None:
    """Put the packing and the panel generic in ``matmul``'s place."""
    a, b, init = matmul.operands
    text = _helper_text(ir.RankedTensorType(a.type).shape, ir.RankedTensorType(b.type).shape,
                        params)
    helper = parse_at(text, matmul)                # owns the ops until they are moved
    body = helper.body.operations[0].regions[0].blocks[0]
    for argument, value in zip(body.arguments, (a, b, init)):
        argument.replace_all_uses_with(value)
    *ops, ret = list(body.operations)
    for op in ops:
        op.move_before(matmul)
    matmul.results[0].replace_all_uses_with(ret.operands[0])
    matmul.erase()


def _helper_text(a_shape, b_shape, params: tuple[int, ...]) -> str:
    (m, k), (_, n), bk, tn = a_shape, b_shape, params[2], params[-1]
    p, kb = n // tn, k // bk
    a, b, c = f"tensor<{m}x{k}xf32>", f"tensor<{k}x{n}xf32>", f"tensor<{m}x{n}xf32>"
    b4, bp = f"tensor<{kb}x{bk}x{p}x{tn}xf32>", f"tensor<{kb}x{p}x{bk}x{tn}xf32>"
    attr = ", ".join(map(str, params))
    return f"""
func.func private @panels(%a: {a}, %b: {b}, %c: {c}) -> {c} {{
  %b4 = tensor.expand_shape %b [[0, 1], [2, 3]] output_shape [{kb}, {bk}, {p}, {tn}] : {b} into {b4}
  %pe = tensor.empty() : {bp}
  %bp = linalg.transpose ins(%b4 : {b4}) outs(%pe : {bp}) permutation = [0, 2, 1, 3]
  %r = linalg.generic {{indexing_maps = [affine_map<(m, p, j, q, k) -> (m, q * {bk} + k)>,
      affine_map<(m, p, j, q, k) -> (q, p, k, j)>, affine_map<(m, p, j, q, k) -> (m, p * {tn} + j)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}}
      ins(%a, %bp : {a}, {bp}) outs(%c : {c}) attrs = {{{PANEL_ATTR} = array<i64: {attr}>}} {{
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %xy = arith.mulf %x, %y : f32
    %sum = arith.addf %acc, %xy : f32
    linalg.yield %sum : f32
  }} -> {c}
  return %r : {c}
}}
"""
