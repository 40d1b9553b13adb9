"""On a GPU only: xlac.DeviceArray with jax, PyTorch and CuPy arrays, both ways,
without a copy (the same device pointer), with the values checked. Without a GPU
(or without the library, or a jax without its CUDA plugin) each test is skipped
saying why; test_device_arrays.py checks the same paths against the fake driver."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("llvmlite", reason="the cuda extra is not installed: pip install 'xlac[cuda]'")

import xlac  # noqa: E402
from xlac.targets.cuda import runtime  # noqa: E402
from xlac.targets.cuda.errors import CudaUnavailable  # noqa: E402

ADD_ONE = """
func.func @main(%a: tensor<1024xf32>) -> tensor<1024xf32> {
  %c = stablehlo.constant dense<1.0> : tensor<1024xf32>
  %0 = stablehlo.add %a, %c : tensor<1024xf32>
  return %0 : tensor<1024xf32>
}"""
X = np.linspace(-1, 1, 1024, dtype=np.float32)


@pytest.fixture(scope="module")
def gpu():
    try:
        return runtime.open_driver()
    except CudaUnavailable as error:
        pytest.skip(f"no GPU: {error}")


@pytest.fixture(scope="module")
def exe(gpu):
    return xlac.compile(ADD_ONE, target="cuda")


def _jax_gpu():
    jax = pytest.importorskip("jax", reason="jax is not installed")
    try:
        return jax, jax.devices("gpu")[0]
    except RuntimeError as error:
        pytest.skip(f"jax has no GPU backend here (jax[cuda] plugin): {error}")


def test_results_stay_on_the_device_and_feed_the_next_call(exe):
    out = exe(exe(X))
    assert isinstance(out, xlac.DeviceArray) and str(out.device) == "cuda:0"
    np.testing.assert_allclose(np.asarray(out), X + 2, rtol=1e-6)
    assert exe.run(X)[0].dtype == np.float32                        # run: numpy, as before


def test_many_calls_reuse_pool_memory(exe):
    x = xlac.device_put(X)
    for _ in range(200):
        x = exe(x)
    np.testing.assert_allclose(x.numpy(), X + 200, rtol=1e-5)
    assert len(exe.function._graphs) <= 8


def test_jax_array_in_and_out_without_a_copy(exe):
    jax, device = _jax_gpu()
    x = jax.device_put(X, device)
    out = exe(x)
    assert xlac.device_put(x).pointer == x.unsafe_buffer_pointer()
    back = jax.numpy.from_dlpack(out)
    assert back.unsafe_buffer_pointer() == out.pointer
    np.testing.assert_allclose(np.asarray(back), X + 1, rtol=1e-6)


def test_torch_tensor_in_and_out_without_a_copy(exe):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("this PyTorch has no CUDA")
    t = torch.from_numpy(X).cuda()
    assert xlac.device_put(t).pointer == t.data_ptr()
    out = exe(t)
    back = torch.from_dlpack(out)
    assert back.data_ptr() == out.pointer and back.device.type == "cuda"
    np.testing.assert_allclose(back.cpu().numpy(), X + 1, rtol=1e-6)
    stream = torch.cuda.Stream()                                     # their stream, not ours
    with torch.cuda.stream(stream):
        u = t * 2
        np.testing.assert_allclose(np.asarray(exe(u)), X * 2 + 1, rtol=1e-6)


def test_cupy_array_in_and_out_without_a_copy(exe):
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    c = cupy.asarray(X)
    assert xlac.device_put(c).pointer == c.data.ptr
    out = exe(c)
    back = cupy.asarray(out)                                         # __cuda_array_interface__
    assert back.data.ptr == out.pointer
    np.testing.assert_allclose(cupy.asnumpy(back), X + 1, rtol=1e-6)
    assert cupy.from_dlpack(out).data.ptr == out.pointer
