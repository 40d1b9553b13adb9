"""``xlac.jit(f, target="cuda")`` as ``jax.jit`` on a GPU: device arrays in
without a copy, device arrays out, a result fed back in read where it lies.
Against the fake driver and the SIMT emulator."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("llvmlite", reason="the cuda extra is not installed: pip install 'xlac[cuda]'")
jnp = pytest.importorskip("jax.numpy", reason="xlac.jit needs jax: pip install 'xlac[bench]'")

import xlac  # noqa: E402
from xlac.targets.cuda import driver  # noqa: E402
from xlac.targets.cuda.device_array import DeviceArray  # noqa: E402
from xlac_emulator.fake_cuda import FakeDriver  # noqa: E402

TRANSFERS = ("to_device", "to_host", "to_device_async", "to_host_async")
X = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
W = np.linspace(0, 2, 4, dtype=np.float32)


def _step(x, params):
    return {"y": jnp.tanh(x * params["w"]), "total": jnp.sum(x)}


def _transfers(fake) -> int:
    return sum(fake.calls[name] for name in TRANSFERS)


@pytest.fixture
def fake(monkeypatch):
    """The process's driver (``open_driver(0)``): records until kernels are attached."""
    fake = FakeDriver()
    monkeypatch.setattr(driver, "_DRIVERS", {(0, False): fake})
    return fake


def _executing(fake, jitted) -> None:
    """Make ``fake`` run the kernels of ``jitted``'s one compiled program."""
    (compiled,) = jitted._compiled.values()
    fake.attach_kernels(compiled.executable.function.kernels)
    fake.execute = True


def test_results_are_device_arrays_in_the_function_s_pytree(fake):
    step = xlac.jit(_step, target="cuda")
    step(X, {"w": W})                                       # compiles; the fake records
    _executing(fake, step)
    out = step(X, {"w": W})
    assert set(out) == {"y", "total"}
    assert all(isinstance(value, DeviceArray) for value in out.values())
    np.testing.assert_allclose(out["y"].numpy(), np.tanh(X * W), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(out["total"]), X.sum(), rtol=1e-6)


def test_a_result_fed_back_in_crosses_to_neither_side(fake):
    step = xlac.jit(_step, target="cuda")
    step(X, {"w": W})
    _executing(fake, step)
    first = step(X, {"w": W})
    x_on_device, w_on_device = first["y"], xlac.device_put(W)
    before = _transfers(fake)
    second = step(x_on_device, {"w": w_on_device})
    assert _transfers(fake) == before                        # nothing copied either way
    assert step.signatures == 1                              # the same program as for numpy
    want = np.tanh(np.tanh(X * W) * W)
    np.testing.assert_allclose(second["y"].numpy(), want, rtol=1e-6)


def test_the_cpu_target_still_returns_numpy():
    out = xlac.jit(_step)(X, {"w": W})
    assert isinstance(out["y"], np.ndarray)
    np.testing.assert_allclose(out["y"], np.tanh(X * W), rtol=1e-6)
