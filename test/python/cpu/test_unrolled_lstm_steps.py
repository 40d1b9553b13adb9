"""An LSTM whose steps are unrolled into straight-line code, as torch.export
writes torch.nn.LSTM (torch_lstm): each step's gate product and its 4-D
1 x 1 x 8 x G epilogue (an addmm's alpha from a 0-D tensor, the bias, the
step's slice of the input projection) get the matmul's epilogue plan
(xla-collapse-unit-epilogue-dims) and read B from panels packed once before
the first step (xla-pack-invariant-panels, straight-line runs), and the input projection plus its bias,
inlined once per step's slice, is computed once (cse after the linalg stage,
xla-fuse's group numbers dropped). Bit for bit the code without them, and
within rounding of the reference interpreter."""

from __future__ import annotations

import functools
import re

import numpy as np
import pytest

import xlac
from conftest import runnable_levels
from xlac.reference.server import shared_server

pytestmark = pytest.mark.heavy      # each compile ~3 s (the passes' own tests: lit)

STEPS, HIDDEN = 3, 64
GATES = 4 * HIDDEN


def _step(t: int, h: str, c: str) -> list[str]:
    g, n = GATES, HIDDEN
    gate = [f"  %gate{t}_{i} = stablehlo.slice %q{t} [0:1, 0:8, {i * n}:{(i + 1) * n}] "
            f": (tensor<1x8x{g}xf32>) -> tensor<1x8x{n}xf32>" for i in range(4)]
    return [
        f"  %s{t} = stablehlo.slice %xs [{t}:{t + 1}, 0:8, 0:{g}] : (tensor<{STEPS}x8x{g}xf32>) -> tensor<1x8x{g}xf32>",
        f"  %s2_{t} = stablehlo.reshape %s{t} : (tensor<1x8x{g}xf32>) -> tensor<8x{g}xf32>",
        f"  %d{t} = stablehlo.dot_general {h}, %wt, contracting_dims = [1] x [0] "
        f": (tensor<8x{n}xf32>, tensor<{n}x{g}xf32>) -> tensor<8x{g}xf32>",
        f"  %m{t} = stablehlo.multiply %d{t}, %alpha2 : tensor<8x{g}xf32>",
        f"  %p{t} = stablehlo.add %m{t}, %bias2 : tensor<8x{g}xf32>",
        f"  %r{t} = stablehlo.reshape %p{t} : (tensor<8x{g}xf32>) -> tensor<1x8x{g}xf32>",
        f"  %sb{t} = stablehlo.broadcast_in_dim %s2_{t}, dims = [1, 2] : (tensor<8x{g}xf32>) -> tensor<1x8x{g}xf32>",
        f"  %q{t} = stablehlo.add %r{t}, %sb{t} : tensor<1x8x{g}xf32>",
        *gate,
        f"  %li{t} = stablehlo.logistic %gate{t}_0 : tensor<1x8x{n}xf32>",
        f"  %lf{t} = stablehlo.logistic %gate{t}_1 : tensor<1x8x{n}xf32>",
        f"  %tg{t} = stablehlo.tanh %gate{t}_2 : tensor<1x8x{n}xf32>",
        f"  %lo{t} = stablehlo.logistic %gate{t}_3 : tensor<1x8x{n}xf32>",
        f"  %fc{t} = stablehlo.multiply %lf{t}, {c} : tensor<1x8x{n}xf32>",
        f"  %ig{t} = stablehlo.multiply %li{t}, %tg{t} : tensor<1x8x{n}xf32>",
        f"  %c{t} = stablehlo.add %fc{t}, %ig{t} : tensor<1x8x{n}xf32>",
        f"  %tc{t} = stablehlo.tanh %c{t} : tensor<1x8x{n}xf32>",
        f"  %hn{t} = stablehlo.multiply %lo{t}, %tc{t} : tensor<1x8x{n}xf32>",
        f"  %h{t} = stablehlo.reshape %hn{t} : (tensor<1x8x{n}xf32>) -> tensor<8x{n}xf32>",
    ]


def _program() -> str:
    """torch_lstm's layer at small sizes: the input projection plus its bias
    sliced per step, each step's addmm (alpha = 1 converted from an i64)."""
    g, n = GATES, HIDDEN
    lines = [
        f"func.func @main(%x: tensor<{STEPS}x8x{g}xf32>, %w: tensor<{g}x{n}xf32>, %bias: tensor<{g}xf32>, "
        f"%bias_x: tensor<{g}xf32>) -> tensor<8x{n}xf32> {{",
        f"  %h_init = stablehlo.constant dense<0.000000e+00> : tensor<8x{n}xf32>",
        f"  %c_init = stablehlo.constant dense<0.000000e+00> : tensor<1x8x{n}xf32>",
        "  %one = stablehlo.constant dense<1> : tensor<1xi64>",
        f"  %bx = stablehlo.broadcast_in_dim %bias_x, dims = [2] : (tensor<{g}xf32>) -> tensor<{STEPS}x8x{g}xf32>",
        f"  %xs = stablehlo.add %x, %bx : tensor<{STEPS}x8x{g}xf32>",
        f"  %wt = stablehlo.transpose %w, dims = [1, 0] : (tensor<{g}x{n}xf32>) -> tensor<{n}x{g}xf32>",
        "  %onef = stablehlo.convert %one : (tensor<1xi64>) -> tensor<1xf32>",
        "  %alpha = stablehlo.reshape %onef : (tensor<1xf32>) -> tensor<f32>",
        f"  %alpha2 = stablehlo.broadcast_in_dim %alpha, dims = [] : (tensor<f32>) -> tensor<8x{g}xf32>",
        f"  %alpha1 = stablehlo.broadcast_in_dim %alpha, dims = [] : (tensor<f32>) -> tensor<{g}xf32>",
        f"  %bias1 = stablehlo.multiply %bias, %alpha1 : tensor<{g}xf32>",
        f"  %bias2 = stablehlo.broadcast_in_dim %bias1, dims = [1] : (tensor<{g}xf32>) -> tensor<8x{g}xf32>",
    ]
    h, c = "%h_init", "%c_init"
    for t in range(STEPS):
        lines += _step(t, h, c)
        h, c = f"%h{t}", f"%c{t}"
    return "\n".join([*lines, f"  return {h} : tensor<8x{n}xf32>", "}"])


def _inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(5)
    return [rng.standard_normal((STEPS, 8, GATES), dtype=np.float32),
            rng.standard_normal((GATES, HIDDEN), dtype=np.float32) / 8,
            rng.standard_normal(GATES, dtype=np.float32),
            rng.standard_normal(GATES, dtype=np.float32)]


def _allocs(text: str) -> set[str]:
    return set(re.findall(r"memref\.alloc\(\)[^\n]*? : (memref<[^>]*>)", text))


@functools.cache
def _compile(cpu: str, disabled: tuple[str, ...] = ()):
    options = xlac.Options.from_env().replace(disable_passes=disabled)
    return xlac.compile(_program(), cache=False, cpu=cpu, options=options)


@pytest.mark.parametrize("cpu", ["x86-64-v4", "x86-64-v3"])
def test_step_product_takes_its_epilogue_plan(cpu):
    """C never goes to memory before its epilogue (no 8 x G buffer), and B is
    read in place (no K x w panel buffer); without the pass, both."""
    with_pass = _allocs(_compile(cpu).as_text("bufferized"))
    without = _allocs(_compile(cpu, ("xla-collapse-unit-epilogue-dims",)).as_text("bufferized"))
    c_buffer = f"memref<8x{GATES}xf32>"
    assert c_buffer in without and c_buffer not in with_pass
    panel = re.compile(rf"memref<{HIDDEN}x(?!{GATES}x)\d+xf32>")       # B itself is {HIDDEN}x{GATES}
    assert any(panel.fullmatch(a) for a in without)
    assert not any(panel.fullmatch(a) for a in with_pass)


@pytest.mark.parametrize("cpu", ["x86-64-v4", "x86-64-v3"])
def test_steps_read_b_packed_once(cpu):
    """The steps' products read B (the same weights, unwritten between them)
    from one packing before the first step: one packing call, each step's B
    reads from its panels."""
    text = _compile(cpu).as_text("bufferized")
    main = text[text.index("func.func public @main"):]
    main = main[:main.index("\n  }\n")]
    packs = re.findall(r"call @xla_scheduled_panels_(\d+)x(\d+)x(\d+)\(", main)
    assert len(packs) == 1 and packs[0][:2] == (str(HIDDEN), str(GATES))
    width = int(packs[0][2])
    assert main.count(f"memref<{GATES // width * HIDDEN}x{width}xf32>, vector<{width}xf32>") == STEPS


@pytest.mark.parametrize("cpu", ["x86-64-v4", "x86-64-v3"])
def test_input_projection_is_computed_once(cpu):
    """Each step's slice of x + bias reads one buffer written once, not a
    copy of the whole sum per step."""
    text = _compile(cpu).as_text("bufferized")
    main = text[text.index("func.func public @main"):]
    main = main[:main.index("\n  }\n")]
    assert main.count(f"memref<{STEPS}x8x{GATES}xf32>) -> ()") == 1


@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v4", "x86-64-v3"))
def test_results_match_the_reference_bit_for_bit_without_the_pass(cpu):
    inputs = _inputs()
    got = _compile(cpu)(*inputs)
    for disabled in ("xla-collapse-unit-epilogue-dims", "xla-pack-invariant-panels"):
        before = _compile(cpu, (disabled,))(*inputs)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(before))
    (want,) = shared_server().run(_program().encode(), inputs)
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=2e-6)
