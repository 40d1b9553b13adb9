"""xla-normalize-contractions parses each helper's text once per run
(``helper_calls.named_helper_at``): a helper whose text differs from an
earlier one's only in its name (as long) is a clone of it, renamed and
located at its contraction. The module it makes is the one parsing every
helper made, locations included."""

from __future__ import annotations

from xlac.context import new_context
from xlac.frontend.parse import parse_module
from xlac.mlir import ir
from xlac.passes import helper_calls
from xlac.passes.lower.normalize_contractions import NormalizeContractions
from xlac.pipeline.pass_manager import run_passes

# A [b, m, k] x [b, n, k] contraction (attention's Q.K^T), at two shapes.
GENERIC = """
  %r{i} = linalg.generic {{indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}}
      ins(%q{s}, %k{s} : tensor<{b}x{m}x8xf32>, tensor<{b}x{m}x8xf32>) outs(%c{s} : tensor<{b}x{m}x{m}xf32>) {{
  ^bb0(%a: f32, %x: f32, %acc: f32):
    %p = arith.mulf %a, %x : f32
    %t = arith.addf %acc, %p : f32
    linalg.yield %t : f32
  }} -> tensor<{b}x{m}x{m}xf32> loc("model.py":{i}:1)"""


def _program(count: int) -> str:
    """``count`` contractions, shapes alternating, so helper names reach two
    digits (xla_contraction_9, xla_contraction_10: texts of other lengths)."""
    arguments, body = [], []
    for s, (b, m) in enumerate([(2, 4), (3, 5)]):
        arguments += [f"%q{s}: tensor<{b}x{m}x8xf32>", f"%k{s}: tensor<{b}x{m}x8xf32>",
                      f"%c{s}: tensor<{b}x{m}x{m}xf32>"]
    for i in range(count):
        s = i % 2
        b, m = [(2, 4), (3, 5)][s]
        body.append(GENERIC.format(i=i, s=s, b=b, m=m))
    results = ", ".join(f"%r{i}" for i in range(count))
    types = ", ".join(f"tensor<{[(2, 4), (3, 5)][i % 2][0]}x{[(2, 4), (3, 5)][i % 2][1]}x"
                      f"{[(2, 4), (3, 5)][i % 2][1]}xf32>" for i in range(count))
    return (f"func.func @main({', '.join(arguments)}) -> ({types}) {{{''.join(body)}\n"
            f"  return {results} : {types}\n}}\n")


def _text(module: ir.Module) -> str:
    return module.operation.get_asm(enable_debug_info=True)


def test_helpers_parsed_once_per_text_and_the_same_module(monkeypatch):
    program = _program(14).encode()
    parses: list[str] = []
    real = helper_calls.parse_at
    monkeypatch.setattr(helper_calls, "parse_at", lambda text, op: parses.append(text) or real(text, op))

    reference = parse_module(new_context(), program, "t.mlir")
    with reference.context:
        NormalizeContractions().run(reference.operation)   # outside a pass manager: each parsed
    assert len(parses) == 14

    del parses[:]
    module = parse_module(new_context(), program, "t.mlir")
    run_passes(module, ["xla-normalize-contractions"])
    # two shapes, names of one and of two digits: four texts
    assert len(parses) == 4
    assert _text(module) == _text(reference)
    helpers = [line for line in str(module).splitlines() if "func.func private @xla_contraction_" in line]
    assert len(helpers) == 14
    assert 'loc("model.py":13:1)' in _text(module)         # the last clone is located at its op


def test_clones_compute_the_contraction():
    import numpy as np

    import xlac
    program = """
func.func @main(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>) -> (tensor<2x4x4xf32>, tensor<2x4x4xf32>) {
  %0 = stablehlo.dot_general %q, %k, batching_dims = [0] x [0], contracting_dims = [2] x [2]
       : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x4xf32>
  %1 = stablehlo.dot_general %k, %q, batching_dims = [0] x [0], contracting_dims = [2] x [2]
       : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x4xf32>
  return %0, %1 : tensor<2x4x4xf32>, tensor<2x4x4xf32>
}
"""
    rng = np.random.default_rng(0)
    q, k = (rng.standard_normal((2, 4, 8)).astype(np.float32) for _ in range(2))
    first, second = xlac.compile(program, cache=False)(q, k)
    np.testing.assert_allclose(first, np.einsum("bmk,bnk->bmn", q, k), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(second, np.einsum("bmk,bnk->bmn", k, q), rtol=1e-5, atol=1e-5)
