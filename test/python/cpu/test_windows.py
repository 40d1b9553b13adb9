"""reduce_window rewritten (scans, explicit padding) agrees with the interpreter."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from conftest import runnable_levels
from xlac.reference.server import shared_server


def _window(shape, element, padding, window, body, init, strides=None) -> str:
    t = f"tensor<{'x'.join(map(str, shape))}x{element}>"
    out = [(n + lo + hi - w) // (s or 1) + 1
           for n, (lo, hi), w, s in zip(shape, padding, window, strides or [1] * len(shape))]
    r = f"tensor<{'x'.join(map(str, out))}x{element}>"
    extra = f", window_strides = array<i64: {', '.join(map(str, strides))}>" if strides else ""
    pads = ", ".join(f"[{lo}, {hi}]" for lo, hi in padding)
    return (f"func.func @main(%x: {t}) -> {r} {{\n"
            f"  %init = stablehlo.constant dense<{init}> : tensor<{element}>\n"
            f"  %0 = \"stablehlo.reduce_window\"(%x, %init) <{{padding = dense<[{pads}]> : "
            f"tensor<{len(shape)}x2xi64>, window_dimensions = array<i64: {', '.join(map(str, window))}>"
            f"{extra}}}> ({{\n  ^bb0(%a: tensor<{element}>, %b: tensor<{element}>):\n"
            f"    %s = stablehlo.{body} %a, %b : tensor<{element}>\n"
            f"    stablehlo.return %s : tensor<{element}>\n"
            f"  }}) : ({t}, tensor<{element}>) -> {r}\n  return %0 : {r}\n}}\n")


CASES = {
    "cumsum_rows": _window((4, 37), "f32", [(0, 0), (36, 0)], [1, 37], "add", "0.0"),
    "cumsum_cols": _window((33, 5), "f32", [(32, 0), (0, 0)], [33, 1], "add", "0.0"),
    # longer than 16: blocks of 16 scanned in order, then their totals, then the offsets
    "cumsum_in_blocks": _window((3, 64), "f32", [(0, 0), (63, 0)], [1, 64], "add", "0.0"),
    "reverse_cumsum_in_blocks": _window((2, 48), "f32", [(0, 0), (0, 47)], [1, 48], "add", "0.0"),
    "reverse_cummax": _window((3, 20), "f32", [(0, 0), (0, 19)], [1, 20], "maximum", "0xFF800000"),
    "cumprod_int": _window((9,), "i32", [(8, 0)], [9], "multiply", "1"),
    # exact combiners along the innermost dim: scanned down a transposed copy
    "cumsum_int_rows_3d": _window((2, 3, 40), "i64", [(0, 0), (0, 0), (39, 0)], [1, 1, 40], "add", "0"),
    "reverse_cummin_int_rows": _window((5, 33), "i8", [(0, 0), (0, 32)], [1, 33], "minimum", "127"),
    "same_max_pool": _window((2, 9, 9, 8), "f32", [(0, 0), (1, 1), (1, 1), (0, 0)], [1, 3, 3, 1],
                             "maximum", "0xFF800000", [1, 2, 2, 1]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rewritten_windows_match_the_interpreter(name):
    program = CASES[name]
    exe = xlac.compile(program, cache=False)
    spec = exe.signature.inputs[0]
    rng = np.random.default_rng(0)
    x = (rng.integers(1, 3, spec.shape) if spec.dtype.kind == "i" else rng.standard_normal(spec.shape))
    x = x.astype(spec.dtype)
    (want,) = shared_server().run(program.encode(), [x])
    np.testing.assert_allclose(exe(x), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("element", ["f32", "bf16", pytest.param("f16", marks=pytest.mark.heavy)])
@pytest.mark.parametrize("body", ["add", "multiply", "maximum"])
def test_scans_round_as_xla_does(element, body):
    """Scans of floats, forward and reversed, short (one block) and long (the
    blocks' totals scanned in blocks again), equal XLA's results bit for bit:
    rounded in XLA's CPU order, which users compare with (a log-step or dot
    scan rounded differently: 264 ULP in bf16, 4 in f32, on 8 elements)."""
    jax = pytest.importorskip("jax")
    from jax import lax
    dtype = xlac.Signature.from_json({"inputs": [{"shape": [1], "type": element}],
                                      "outputs": []}).inputs[0].dtype
    rng = np.random.default_rng(3)
    identity = {"add": 0.0, "multiply": 1.0, "maximum": -np.inf}[body]
    init = {"add": "0.0", "multiply": "1.0",
            "maximum": {"f32": "0xFF800000", "bf16": "0xFF80", "f16": "0xFC00"}[element]}[body]
    combine = {"add": lax.add, "multiply": lax.mul, "maximum": lax.max}[body]
    for n, reverse in ((8, False), (8, True), (300, False), (300, True)):
        pad = [(0, 0), (0, n - 1)] if reverse else [(0, 0), (n - 1, 0)]
        x = rng.standard_normal((3, n)) * (0.1 if body == "multiply" else 3)
        x = (x + (1.0 if body == "multiply" else 0.0)).astype(dtype)
        exe = xlac.compile(_window((3, n), element, pad, [1, n], body, init), cache=False)
        want = lax.reduce_window(jax.numpy.asarray(x), jax.numpy.array(identity, dtype), combine,
                                 (1, n), (1, 1), pad)
        np.testing.assert_array_equal(exe(x), np.asarray(want), err_msg=f"n={n} reverse={reverse}")


def test_an_infinity_in_a_cumsum_reaches_only_what_follows_it():
    x = np.zeros((2, 64), np.float32)
    x[0, 40] = np.inf
    exe = xlac.compile(_window((2, 64), "f32", [(0, 0), (63, 0)], [1, 64], "add", "0.0"), cache=False)
    got = exe(x)
    assert not np.isnan(got).any() and (got[0, :40] == 0).all() and np.isinf(got[0, 40:]).all()


@pytest.mark.parametrize("body,init,padding", [
    ("maximum", "0xFF800000", [(0, 0), (0, 1), (0, 1), (0, 0)]),     # SAME on an even size
    ("add", "0.0", [(0, 0), (1, 1), (1, 1), (0, 0)]),
])
def test_padded_pooling_pads_per_thread_chunk(body, init, padding):
    """The padded input is made inside each thread's chunk, not copied whole
    on one thread first (2x112x112x64 SAME max pool: 1.41 -> 0.56 ms)."""
    program = _window((2, 64, 64, 64), "f32", padding, [1, 3, 3, 1], body, init, [1, 2, 2, 1])
    exe = xlac.compile(program, cache=False, options=xlac.Options().replace(num_threads=2))
    whole = "x".join(str(64 + lo + hi) for lo, hi in padding[1:3])
    bufferized = exe.as_text("bufferized")
    assert "scf.forall" in bufferized and f"memref<2x{whole}x64xf32>" not in bufferized
    x = np.random.default_rng(2).standard_normal((2, 64, 64, 64)).astype(np.float32)
    (want,) = shared_server().run(program.encode(), [x])
    np.testing.assert_allclose(exe(x), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4"])
@pytest.mark.parametrize("element", ["f32", "f64"])
def test_float_inner_scans_run_down_a_transposed_copy(element, cpu):
    """A float cumsum along the innermost dim is scanned as the outermost dim
    of a transposed copy (each step a contiguous row; f64 512x1024 at
    AVX-512: 6.2 -> 2.2 ms, 1.9x XLA before): the same adds in the same order,
    so it agrees with the interpreter as the inner scan did."""
    program = _window((5, 70), element, [(0, 0), (69, 0)], [1, 70], "add", "0.0")
    exe = xlac.compile(program, cache=False, cpu=cpu)
    assert "not scheduled:" not in exe.fusion_report(), exe.fusion_report()
    if cpu not in runnable_levels(cpu):
        pytest.skip(f"this CPU cannot run {cpu} code (compiled and scheduled: checked)")
    x = np.random.default_rng(2).standard_normal((5, 70)).astype(exe.signature.inputs[0].dtype)
    (want,) = shared_server().run(program.encode(), [x])
    tolerance = 1e-5 if element == "f32" else 1e-13       # blocks of 16, not one by one
    np.testing.assert_allclose(exe(x), want, rtol=tolerance, atol=tolerance * np.abs(want).max())
