#!/usr/bin/env python
"""Single-op programs, one per op class users' models lean on, against XLA.

    python bench/single_ops.py                     # export them, then one interleaved run
    python bench/single_ops.py --only conv,top_k   # the cases whose names contain these
    python bench/single_ops.py --export-only DIR   # just write the programs (StableHLO from jax)

Each case is a jax function lowered with ``jax.jit(f).lower(*args).as_text()``
(the ``*_export`` cases with ``jax.export``, whose text differs: top_k there is a
``stablehlo.composite "chlo.top_k"`` around a full sort) into a folder
(default: <tmp>/xlac-single-ops), then handed to bench/run.py as extra
programs, so xlac and XLA compile the same text and take turns.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def _cases():
    import jax
    import jax.numpy as jnp
    from jax import lax

    rng = np.random.default_rng(0)

    def r(*shape, dtype=np.float32):
        return rng.standard_normal(shape).astype(dtype)

    def conv(x, w, stride=1, pad="SAME", dims=("NHWC", "HWIO", "NHWC"), groups=1):
        return lax.conv_general_dilated(x, w, (stride, stride), pad, dimension_numbers=dims,
                                        feature_group_count=groups)

    def grad_x(stride):
        def f(dy, w):
            x = jnp.zeros((dy.shape[0], dy.shape[1] * stride, dy.shape[2] * stride, w.shape[2]))
            return jax.vjp(lambda x: conv(x, w, stride), x)[1](dy)[0]
        return f

    def grad_w(stride):
        def f(x, dy):
            w = jnp.zeros((3, 3, x.shape[3], dy.shape[3]))
            return jax.vjp(lambda w: conv(x, w, stride), w)[1](dy)[0]
        return f

    def lstm(wx, wh, b, xs, h0, c0):
        def cell(carry, x):
            h, c = carry
            i, f, o, u = jnp.split(x @ wx + h @ wh + b, 4, axis=-1)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(u)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), h
        return lax.scan(cell, (h0, c0), xs)[1]

    def mlp(x, w1, w2):
        return jnp.maximum(x @ w1, 0) @ w2

    def mlp_f32_sums(x, w1, w2):
        h = jnp.maximum(jnp.dot(x, w1, preferred_element_type=jnp.float32), 0)
        return jnp.dot(h.astype(x.dtype), w2, preferred_element_type=jnp.float32)

    def embedding_bag(table, ids, weights, segments):
        return jax.ops.segment_sum(table[ids] * weights[:, None], segments, 1000,
                                   indices_are_sorted=True)

    def layernorm_grad(x, g, dy):
        def layernorm(x, g, b):   # its gradient does not read b: not an argument
            mu = jnp.mean(x, axis=-1, keepdims=True)
            xc = x - mu
            return xc * lax.rsqrt(jnp.mean(xc * xc, axis=-1, keepdims=True) + 1e-5) * g + b
        return jax.vjp(layernorm, x, g, jnp.zeros_like(g))[1](dy)

    bf16 = jnp.bfloat16
    return {
        "conv3x3_s1": (lambda x, w: conv(x, w), [r(2, 28, 28, 128), r(3, 3, 128, 128)]),
        "conv3x3_s2": (lambda x, w: conv(x, w, 2), [r(2, 56, 56, 64), r(3, 3, 64, 128)]),
        "conv7x7_s2_stem": (lambda x, w: conv(x, w, 2, [(3, 3), (3, 3)]), [r(2, 224, 224, 3), r(7, 7, 3, 64)]),
        "conv1x1_s2": (lambda x, w: conv(x, w, 2, "VALID"), [r(2, 56, 56, 64), r(1, 1, 64, 128)]),
        "conv_patch16_s16": (lambda x, w: conv(x, w, 16, "VALID"), [r(4, 224, 224, 3), r(16, 16, 3, 192)]),
        "conv_depthwise3x3": (lambda x, w: conv(x, w, groups=128), [r(1, 56, 56, 128), r(3, 3, 1, 128)]),
        "conv3x3_nchw": (lambda x, w: conv(x, w, dims=("NCHW", "OIHW", "NCHW")), [r(1, 64, 56, 56), r(64, 64, 3, 3)]),
        "conv_grad_input_s2": (grad_x(2), [r(2, 28, 28, 128), r(3, 3, 64, 128)]),
        "conv_grad_weight_s2": (grad_w(2), [r(2, 56, 56, 64), r(2, 28, 28, 128)]),
        "conv_grad_input_s1": (grad_x(1), [r(8, 32, 32, 64), r(3, 3, 32, 64)]),
        "conv_grad_weight_s1": (grad_w(1), [r(8, 32, 32, 32), r(8, 32, 32, 64)]),
        "matmul_1024": (lambda a, b: a @ b, [r(1024, 1024), r(1024, 1024)]),
        "matmul_788x192x768": (lambda a, b: a @ b, [r(788, 192), r(192, 768)]),
        "batch_matmul_16x256": (lambda a, b: a @ b, [r(16, 256, 256), r(16, 256, 256)]),
        "transpose_8000x256": (lambda a: a.T, [r(8000, 256)]),
        "maxpool3x3_s2": (lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"),
                          [r(2, 112, 112, 64)]),
        "cumsum_256x1024": (lambda x: jnp.cumsum(x, axis=1), [r(256, 1024)]),
        "sort_1M": (lambda x: jnp.sort(x), [r(1 << 20)]),
        "top_k8_512x4096": (lambda x: lax.top_k(x, 8), [r(512, 4096)]),
        "top_k8_128x4096_export": (lambda x: lax.top_k(x, 8), [r(128, 4096)]),
        "top_k64_128x4096_export": (lambda x: lax.top_k(x, 64), [r(128, 4096)]),
        "top_k8_128x4096_bf16_export": (lambda x: lax.top_k(x, 8), [r(128, 4096).astype(bf16)]),
        "top_k64_128x4096_bf16_export": (lambda x: lax.top_k(x, 64), [r(128, 4096).astype(bf16)]),
        "gather_embedding": (lambda t, i: t[i], [r(8000, 256), rng.integers(0, 8000, 256).astype(np.int32)]),
        "scatter_segment_sum": (lambda d, s: jax.ops.segment_sum(d, s, 512),
                                [r(16384, 64), rng.integers(0, 512, 16384).astype(np.int32)]),
        "embedding_bag_100kx64": (embedding_bag, [
            r(100_000, 64), rng.integers(0, 100_000, 16384).astype(np.int32), r(16384),
            np.sort(rng.integers(0, 1000, 16384)).astype(np.int32)]),
        "layernorm_grad_4096x1024": (layernorm_grad, [r(4096, 1024), r(1024), r(4096, 1024)]),
        "lstm_scan_100": (lstm, [r(128, 1024) * .05, r(256, 1024) * .05, r(1024), r(100, 32, 128),
                                 r(32, 256), r(32, 256)]),
        "threefry_normal_1M": (lambda k: jax.random.normal(jax.random.wrap_key_data(k), (1 << 20,)),
                               [np.array([0, 42], np.uint32)]),
        "mlp_f32": (mlp, [r(256, 1024), r(1024, 1024) * .03, r(1024, 1024) * .03]),
        "mlp_bf16": (mlp, [r(256, 1024).astype(bf16), (r(1024, 1024) * .03).astype(bf16),
                           (r(1024, 1024) * .03).astype(bf16)]),
        # mixed-precision training's layers: bf16 operands, f32 sums (issue 39)
        "mlp_bf16_f32acc": (mlp_f32_sums, [r(256, 1024).astype(bf16), (r(1024, 1024) * .03).astype(bf16),
                                           (r(1024, 1024) * .03).astype(bf16)]),
        "matmul_bf16_1024": (lambda a, b: a @ b, [r(1024, 1024).astype(bf16), r(1024, 1024).astype(bf16)]),
        "matmul_i8_i32_1024": (lambda a, b: jnp.matmul(a, b, preferred_element_type=jnp.int32),
                               [rng.integers(-128, 128, (1024, 1024)).astype(np.int8),
                                rng.integers(-128, 128, (1024, 1024)).astype(np.int8)]),
        "matmul_f64_1024": (lambda a, b: a @ b, [r(1024, 1024, dtype=np.float64),
                                                  r(1024, 1024, dtype=np.float64)]),
    }


def export(folder: Path, only: list[str]) -> list[Path]:
    import jax
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, (fn, args) in _cases().items():
        if only and not any(word in name for word in only):
            continue
        path = folder / f"{name}.mlir"
        with jax.enable_x64(any(np.asarray(a).dtype == np.float64 for a in args)):   # f64 stays f64
            path.write_text(_lowered_text(jax, fn, args, exported=name.endswith("_export")))
        _save_inputs(folder / f"{name}.inputs.npz", args)
        written.append(path)
    return written


def _lowered_text(jax, fn, args, exported: bool) -> str:
    """The program as ``jax.jit(...).lower`` writes it, or as ``jax.export`` does."""
    if exported:
        from jax import export as jax_export
        return jax_export.export(jax.jit(fn))(*args).mlir_module()
    return jax.jit(fn).lower(*args).as_text()


def _save_inputs(path: Path, args) -> None:
    """The case's own inputs beside its program, for run.py (scaled weights: an
    LSTM's with the N(0, 1) inputs run.py makes otherwise is chaotic, and
    XLA's own result differs from float64's by 190% after 50 steps). bf16 is
    saved as f32 (exact; numpy has no bf16); run.py casts it back."""
    arrays = [np.asarray(a) for a in args]
    np.savez(path, **{f"arg{i:03d}": a.astype(np.float32) if a.dtype.kind == "V" or
                      a.dtype.name == "bfloat16" else a for i, a in enumerate(arrays)})


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="", help="comma-separated words: cases whose names contain one")
    parser.add_argument("--export-only", type=Path, metavar="DIR", help="write the programs and stop")
    parser.add_argument("--out", type=Path, help="also write the table as Markdown here")
    args, rest = parser.parse_known_args(argv)
    only = [word for word in args.only.split(",") if word]
    folder = args.export_only or Path(tempfile.gettempdir()) / "xlac-single-ops"
    files = export(folder, only)
    print(f"{len(files)} programs in {folder}", file=sys.stderr)
    if args.export_only:
        return 0
    names = ",".join(path.stem for path in files)
    command = [sys.executable, str(HERE / "run.py"), *map(str, files), "--only", names, *rest]
    if args.out:
        command += ["--out", str(args.out)]
    return subprocess.call(command)


if __name__ == "__main__":
    sys.exit(main())
