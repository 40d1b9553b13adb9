"""The bufferized stage canonicalizes once after the deallocations are lowered,
not also right after ownership-based-buffer-deallocation: the later one leaves
the same code without the earlier (docs/compile-time.md), which cost a model's
serial compile 5-10 ms."""

from __future__ import annotations

from xlac.context import new_context
from xlac.frontend.parse import parse_module
from xlac.options import Options
from xlac.pipeline.pass_manager import run_passes
from xlac.targets import get_target

_DEALLOCATION = "ownership-based-buffer-deallocation"
_CANONICALIZE = "func.func(canonicalize)"

# a softmax and a matmul whose temporaries the deallocation frees
_PROGRAM = """
func.func public @main(%x: tensor<64x96xf32>, %w: tensor<96x32xf32>) -> (tensor<64x96xf32>, tensor<64x32xf32>) {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1]
    : (tensor<64x96xf32>, tensor<f32>) -> tensor<64xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<64xf32>) -> tensor<64x96xf32>
  %d = stablehlo.subtract %x, %mb : tensor<64x96xf32>
  %e = stablehlo.exponential %d : tensor<64x96xf32>
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1]
    : (tensor<64x96xf32>, tensor<f32>) -> tensor<64xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<64xf32>) -> tensor<64x96xf32>
  %p = stablehlo.divide %e, %sb : tensor<64x96xf32>
  %y = stablehlo.dot_general %p, %w, contracting_dims = [1] x [0]
    : (tensor<64x96xf32>, tensor<96x32xf32>) -> tensor<64x32xf32>
  %t = stablehlo.tanh %y : tensor<64x32xf32>
  return %p, %t : tensor<64x96xf32>, tensor<64x32xf32>
}
"""


def _steps() -> list[str]:
    options = Options(cpu="x86-64-v3", micro_kernels=False)
    return get_target("cpu").steps_until("llvm", "main", options)


def _text(steps: list[str]) -> str:
    module = parse_module(new_context(), _PROGRAM.encode(), "program.mlir")
    run_passes(module, steps, verify_each=False)
    return module.operation.get_asm(enable_debug_info=False)


def _with_canonicalize_after_deallocation(steps: list[str]) -> list[str]:
    at = steps.index(_DEALLOCATION) + 1
    return [*steps[:at], _CANONICALIZE, *steps[at:]]


def test_no_canonicalize_right_after_the_deallocation():
    steps = _steps()
    assert steps[steps.index(_DEALLOCATION) + 1] != _CANONICALIZE


def test_the_code_is_that_of_the_canonicalize_after_the_deallocation():
    steps = _steps()
    upto = steps[:steps.index(_DEALLOCATION) + 1]
    assert _text(upto) != _text([*upto, _CANONICALIZE])      # it had something to do there
    assert _text(steps) == _text(_with_canonicalize_after_deallocation(steps))
