"""xla-reshaped-results: a result that is a reshape of a computed buffer is
written in place into the caller's array (no copy kernel), bit for bit."""

import numpy as np

import xlac

_TRANSPOSED = """
func.func @main(%x: tensor<6x4x10xf32>) -> (tensor<10x24xf32>, tensor<6x40xf32>) {
  %t = stablehlo.transpose %x, dims = [2, 0, 1] : (tensor<6x4x10xf32>) -> tensor<10x6x4xf32>
  %r = stablehlo.reshape %t : (tensor<10x6x4xf32>) -> tensor<10x24xf32>
  %e = stablehlo.exponential %x : tensor<6x4x10xf32>
  %s = stablehlo.reshape %e : (tensor<6x4x10xf32>) -> tensor<6x40xf32>
  return %r, %s : tensor<10x24xf32>, tensor<6x40xf32>
}"""


def test_a_reshaped_result_is_no_copy():
    exe = xlac.compile(_TRANSPOSED, cpu="x86-64-v3", cache=False)
    assert "memref.copy" not in exe.as_text("bufferized")
    x = np.random.default_rng(0).standard_normal((6, 4, 10)).astype(np.float32)
    r, s = exe.run(x)
    np.testing.assert_array_equal(r, x.transpose(2, 0, 1).reshape(10, 24))
    np.testing.assert_allclose(s, np.exp(x).reshape(6, 40), rtol=1e-6)


def test_a_reshaped_argument_and_a_repeated_result_still_run():
    text = """
func.func @main(%x: tensor<6x4xf32>) -> (tensor<24xf32>, tensor<4x6xf32>, tensor<4x6xf32>) {
  %r = stablehlo.reshape %x : (tensor<6x4xf32>) -> tensor<24xf32>
  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<6x4xf32>) -> tensor<4x6xf32>
  return %r, %t, %t : tensor<24xf32>, tensor<4x6xf32>, tensor<4x6xf32>
}"""
    x = np.arange(24, dtype=np.float32).reshape(6, 4)
    r, t, u = xlac.compile(text, cpu="x86-64-v3", cache=False).run(x)
    np.testing.assert_array_equal(r, x.reshape(24))
    np.testing.assert_array_equal(t, x.T)
    np.testing.assert_array_equal(u, x.T)
