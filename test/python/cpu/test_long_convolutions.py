"""Convolutions with many taps and one filter per input channel (jnp.convolve,
jnp.correlate, jax.vmap of them, jax.scipy.signal's 2-D forms) run as a
depthwise convolution over chunks of the output row (convolution_chunks.py):
right against numpy in float64 at every CPU level this host runs, a loop over
the taps rather than a term per tap, and products only of the convolution's
own (an inf stays where the reference has it)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import xlac
from conftest import runnable_levels

jax = pytest.importorskip("jax", reason="the programs come from jax: pip install 'xlac[bench]'")
jnp = pytest.importorskip("jax.numpy")
lax = jax.lax
jss = pytest.importorskip("jax.scipy.signal")
F64 = np.float64


def _ncw(x, w, stride, padding, dilation):
    """lax.conv_general_dilated, NCW x OIW -> NCW (one channel), in float64;
    a negative padding crops."""
    lo, hi = padding
    x = np.pad(x.astype(F64), ((0, 0), (0, 0), (max(lo, 0), max(hi, 0))))
    x = x[:, :, max(-lo, 0):x.shape[2] - max(-hi, 0)]
    taps = w[0, 0].astype(F64)
    span = (len(taps) - 1) * dilation + 1
    out = np.stack([sum(x[b, 0, k * dilation:k * dilation + x.shape[2] - span + 1] * taps[k]
                        for k in range(len(taps))) for b in range(x.shape[0])])
    return out[:, None, ::stride]


def _corr2d(x, w):
    """A valid 2-D cross-correlation in float64."""
    kh, kw = w.shape
    oh, ow = x.shape[0] - kh + 1, x.shape[1] - kw + 1
    return sum(x[a:a + oh, b:b + ow].astype(F64) * F64(w[a, b]) for a in range(kh) for b in range(kw))


def _conv2d(x, w, stride, padding, dilation):
    """A 2-D cross-correlation, strided, padded and dilated, in float64."""
    x = np.pad(x.astype(F64), padding)
    (sh, sw), (dh, dw) = stride, dilation
    kh, kw = w.shape
    oh = (x.shape[0] - (kh - 1) * dh - 1) // sh + 1
    ow = (x.shape[1] - (kw - 1) * dw - 1) // sw + 1
    return sum(x[a * dh:a * dh + (oh - 1) * sh + 1:sh, b * dw:b * dw + (ow - 1) * sw + 1:sw] * F64(w[a, b])
               for a in range(kh) for b in range(kw))


def _cases():
    rng = np.random.default_rng(64)

    def normal(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    x, w = normal(1500), normal(300)
    cases = {f"convolve_{m}": (lambda a, b, m=m: jnp.convolve(a, b, mode=m), [x, w],
                               lambda a, b, m=m: np.convolve(a.astype(F64), b.astype(F64), m))
             for m in ("full", "same", "valid")}
    cases["correlate_full"] = (lambda a, b: jnp.correlate(a, b, mode="full"), [x, w],
                               lambda a, b: np.correlate(a.astype(F64), b.astype(F64), "full"))
    xs, ws = normal(5, 700), normal(5, 100)
    cases["vmap_convolve"] = (jax.vmap(jnp.convolve), [xs, ws],
                              lambda a, b: np.stack([np.convolve(u.astype(F64), v.astype(F64)) for u, v in zip(a, b)]))
    xb, wb = normal(2, 1, 900), normal(1, 1, 70)
    cases["ncw_strided_dilated"] = (
        lambda a, b: lax.conv_general_dilated(a, b, (3,), ((5, -2),), rhs_dilation=(2,)), [xb, wb],
        lambda a, b: _ncw(a, b, 3, (5, -2), 2))
    xd, wd = normal(2, 1, 1500), normal(1, 1, 200)     # 4 segments of 50 taps
    cases["ncw_strided_dilated_segments"] = (
        lambda a, b: lax.conv_general_dilated(a, b, (3,), ((5, -2),), rhs_dilation=(2,)), [xd, wd],
        lambda a, b: _ncw(a, b, 3, (5, -2), 2))
    cases["image_strided_dilated_segments"] = (      # 12 x 20 taps: 4 segments of 12 x 5
        lambda a, b: lax.conv_general_dilated(a[None, None], b[None, None], (2, 3), ((3, 1), (2, 4)),
                                              rhs_dilation=(1, 2))[0, 0],
        [normal(80, 300), normal(12, 20)], lambda a, b: _conv2d(a, b, (2, 3), ((3, 1), (2, 4)), (1, 2)))
    img, k = normal(72, 90), normal(13, 11)
    cases["image_13x11"] = (
        lambda a, b: lax.conv_general_dilated(a[None, None], b[None, None], (1, 1), "VALID")[0, 0],
        [img, k], _corr2d)
    cases["template_nhwc"] = (
        lambda a, b: lax.conv_general_dilated(a[None, :, :, None], b[:, :, None, None], (1, 1), "VALID",
                                              dimension_numbers=("NHWC", "HWIO", "NHWC"))[0, :, :, 0],
        [normal(60, 70), normal(16, 16)], _corr2d)
    return cases


CASES = _cases()


@pytest.mark.parametrize("cpu", ["host", "x86-64-v3", "x86-64-v4"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_long_convolution_matches_numpy(name, cpu):
    chunked_matches(*CASES[name], cpu)


def chunked_matches(fn, args, reference, cpu, bound=1e-5):
    """``fn`` compiled at ``cpu`` takes a depthwise convolution and, where this
    host runs that level, is within ``bound`` of the largest output of ``reference``."""
    exe = xlac.compile(jax.jit(fn).lower(*args).as_text(), cache=False, cpu=None if cpu == "host" else cpu)
    assert "linalg.depthwise_conv_2d_nhwc_hwc" in exe.as_text("linalg")
    if cpu not in runnable_levels(cpu):
        return
    want = reference(*args)
    got = np.asarray(exe(*args), F64)
    assert got.shape == want.shape
    assert np.abs(got - want).max() <= bound * np.abs(want).max()


def test_many_taps_compile_to_a_loop_not_a_term_each():
    """jnp.convolve of 5120 by 1280 taps: the LLVM text stays small (a term per
    tap made 247 MB of LLVM dialect and took 40 s to compile), a loop goes over
    each segment's 80 taps, and no kernel is left as scalar loops but the
    reverse of the kernel (jnp.convolve's flip)."""
    x, w = np.zeros(5120, np.float32), np.zeros(1280, np.float32)
    exe = xlac.compile(jax.jit(jnp.convolve).lower(x, w).as_text(), cache=False)
    assert len(exe.as_text("llvm")) < 2_000_000
    assert re.search(r"scf\.for %\w+ = %c0 to %c80 step %c1 ", exe.as_text("bufferized"))  # a segment's taps
    unscheduled = exe.fusion_report().partition("not scheduled:")[2]
    assert "depthwise" not in unscheduled and "conv" not in unscheduled


def test_an_inf_stays_where_the_reference_has_it():
    """Chunks multiply only the convolution's own products: an inf in the
    signal gives inf or nan exactly where numpy's convolution does."""
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal(2000).astype(np.float32), rng.standard_normal(200).astype(np.float32)
    x[[37, 1500]] = np.inf
    x[900] = np.nan
    exe = xlac.compile(jax.jit(jnp.convolve).lower(x, w).as_text(), cache=False)
    got = np.asarray(exe(x, w))
    want = np.convolve(x.astype(F64), w.astype(F64))
    np.testing.assert_array_equal(np.isfinite(got), np.isfinite(want))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))


def test_f64_from_more_taps_is_chunked_and_right():
    """f64 (no depthwise schedule: scalar loops) is chunked from 192 taps, below
    that it keeps a term per tap (convolution_chunks.MIN_TAPS_F64)."""
    def text(n, k):
        o = n + k - 1
        return f"""func.func @main(%x: tensor<1x1x{n}xf64>, %w: tensor<1x1x{k}xf64>) -> tensor<1x1x{o}xf64> {{
          %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0],
               window = {{pad = [[{k - 1}, {k - 1}]]}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}}
               : (tensor<1x1x{n}xf64>, tensor<1x1x{k}xf64>) -> tensor<1x1x{o}xf64>
          return %0 : tensor<1x1x{o}xf64>
        }}"""
    rng = np.random.default_rng(2)
    for k, chunked in ((100, False), (200, True)):
        exe = xlac.compile(text(900, k), cache=False)
        assert ("linalg.depthwise_conv_2d_nhwc_hwc" in exe.as_text("linalg")) == chunked
        x, w = rng.standard_normal((1, 1, 900)), rng.standard_normal((1, 1, k))
        want = np.correlate(np.pad(x[0, 0], k - 1), w[0, 0], "valid")
        np.testing.assert_allclose(exe(x, w)[0, 0], want, rtol=1e-12, atol=1e-12 * np.abs(want).max())


def _accuracy_cases():
    rng = np.random.default_rng(39)

    def normal(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    x, w = normal(5120), normal(1280)
    xv, wv = normal(8, 4096), normal(8, 512)
    img, tmpl = normal(256, 256), normal(64, 64)
    square, k21 = normal(100, 100), normal(21, 21)
    return {
        "convolve_1280": (jnp.convolve, [x, w], lambda a, b: np.convolve(a.astype(F64), b.astype(F64))),
        "vmap_convolve_512": (jax.vmap(jnp.convolve), [xv, wv],
                              lambda a, b: np.stack([np.convolve(u.astype(F64), v.astype(F64)) for u, v in zip(a, b)])),
        "template_64x64": (lambda a, b: lax.conv_general_dilated(a[None, None], b[None, None], (1, 1), "VALID")[0, 0],
                           [img, tmpl], _corr2d),
        "convolve2d_21x21": (lambda a, b: jss.convolve2d(a, b, mode="same"), [square, k21],
                             lambda a, b: _corr2d(np.pad(a, 10), b[::-1, ::-1])),
    }


# error of the largest output, f32 against float64 (bench/long_convolutions.py, this
# host): XLA 1.95e-7, 1.41e-7, 1.73e-7; the taps summed in one sequence 1.43e-6,
# 8.3e-7, 2.1e-6; in segments 1.9e-7 (16 of 80), 3.1e-7 (4 of 128), 3.8e-7 (16 of 256);
# a 21x21 kernel (XLA 1.0-1.6e-7): in one sequence 5.8-7.4e-7, in 3 segments of 147
# taps (48 lanes) 3.0-3.5e-7 (this case: 8.8e-7 in one, 4.2e-7 in 3, XLA 1.4e-7)
ACCURACY = {"convolve_1280": 4e-7, "vmap_convolve_512": 5e-7, "template_64x64": 7e-7, "convolve2d_21x21": 5e-7}


@pytest.mark.parametrize("cpu", ["host", "x86-64-v3"])
@pytest.mark.parametrize("name", sorted(ACCURACY))
def test_many_taps_sum_in_segments_as_accurate_as_xla(name, cpu):
    """The taps are summed in segments, each its own lanes, the segments'
    sums added in pairs: the error stays near XLA's where one sum over all
    the taps in order was 4-12x it."""
    if cpu not in runnable_levels(cpu):
        pytest.skip(f"{cpu} does not run here")
    fn, args, reference = _accuracy_cases()[name]
    exe = xlac.compile(jax.jit(fn).lower(*args).as_text(), cache=False, cpu=None if cpu == "host" else cpu)
    want = reference(*args)
    got = np.asarray(exe(*args), F64).reshape(want.shape)
    assert np.abs(got - want).max() <= ACCURACY[name] * np.abs(want).max()


def test_a_21x21_kernel_takes_three_segments_of_48_lanes():
    """21 columns split only into 3, 7 or 21 segments: 3 segments x 16 chunks
    take 48 lanes (convolution_chunks.WIDE_LANES, taken where 32 lanes leave one
    segment), 147 taps each."""
    args = _accuracy_cases()["convolve2d_21x21"][1]
    text = jax.jit(lambda a, b: jss.convolve2d(a, b, mode="same")).lower(*args).as_text()
    linalg = xlac.compile(text, cache=False).as_text("linalg")
    assert re.search(r"linalg\.depthwise_conv_2d_nhwc_hwc .*x48xf32>", linalg)
