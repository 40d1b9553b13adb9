"""reduce_window rewritten (scans, explicit padding) agrees with the interpreter."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
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
    "reverse_cummax": _window((3, 20), "f32", [(0, 0), (0, 19)], [1, 20], "maximum", "0xFF800000"),
    "cumprod_int": _window((9,), "i32", [(8, 0)], [9], "multiply", "1"),
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
