"""A `stablehlo.composite` xlac does not know (anything but chlo.top_k, which
test_top_k_forms.py covers) runs its decomposition, inlined: no call is left,
and the results are the interpreter's (issue 39, item 2)."""

import numpy as np

import xlac
from xlac.reference.server import shared_server

_TEXT = """
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = stablehlo.composite "my.tanh_gate" %x {composite_attributes = {approximate = "tanh"},
         decomposition = @my.tanh_gate.impl, version = 3 : i32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
func.func private @my.tanh_gate.impl(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = stablehlo.tanh %x : tensor<4x8xf32>
  %1 = stablehlo.multiply %0, %x : tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
"""


def test_unknown_composite_runs_its_decomposition_inlined():
    x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    exe = xlac.compile(_TEXT, cpu="x86-64-v3", cache=False)
    linalg = exe.as_text("linalg")
    assert "composite" not in linalg and "call @" not in linalg
    (want,) = shared_server().run(_TEXT.encode(), [x])
    np.testing.assert_allclose(np.asarray(exe(x)), want, rtol=4e-7, atol=1e-7)
