"""More cases for bench/jax_surface.py: special values, sizes past one tile, jax.scipy,
gradients. Split from jax_surface_cases.py (the house's 400-line limit)."""
import numpy as np
from jax_surface_cases import complex64, ints, normal, spd, uniform


def edge_cases(jnp, jax, lax):
    """Special values and sizes past one vector or tile: where plans and folds differ."""
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 3e38, -3e38,
                        1.0, -1.0, 0.5, 2.5, -2.5, 7.0], np.float32)
    imin = np.array([-2**31, -1, 7, -7, 0, 5, 2**31 - 1, -3], np.int32)
    return [
        ("special.max_min", lambda a, b: (jnp.maximum(a, b), jnp.minimum(a, b)),
         [special, special[::-1].copy()]),
        ("special.sort", jnp.sort, [special]),
        ("special.argmax", jnp.argmax, [special]),
        ("special.cumsum_inf", jnp.cumsum, [special[2:]]),
        ("special.round_half", lambda v: (jnp.round(v), lax.round(v)), [special]),
        # XLA's CPU flushes subnormals (1e-40 -> 0); xlac keeps them, as the interpreter does
        ("special.sign_copysign", lambda v: (jnp.sign(v), jnp.copysign(1.0, v).astype(jnp.float32)),
         [special]),
        ("special.softmax_inf", jax.nn.softmax, [np.array([[-np.inf, 0, 1], [-np.inf] * 3], np.float32)]),
        ("int.div_rem_edges", lambda a, b: (lax.div(a, b), lax.rem(a, b)),
         [imin, np.array([-1, 3, -2, 2, 5, -4, -1, 7], np.int32)]),
        ("int.shift_ge_width", lambda a, s: (a << s, a >> s, lax.shift_right_logical(a, s)),
         [imin, np.array([0, 1, 31, 32, 33, 40, -1, 5], np.int32)]),
        ("u8.wraparound", lambda a, b: (a + b, a - b, a * b),
         [ints(0, 256, 37, dtype="uint8"), ints(0, 256, 37, dtype="uint8")]),
        ("i16.sum", lambda v: jnp.sum(v, dtype=jnp.int16), [ints(-300, 300, 1000, dtype="int16")]),
        ("zero_size", lambda v: (jnp.sum(v, axis=0), v * 2), [normal(0, 5)]),
        ("scalar", lambda v: jnp.sin(v) * 2, [np.float32(0.7)]),
        ("big.matmul.f32", jnp.matmul, [normal(130, 257), normal(257, 67)]),
        ("big.matmul.bf16", jnp.matmul, [normal(129, 200).astype("bfloat16"), normal(200, 70).astype("bfloat16")]),
        ("big.matmul.i8", lambda a, b: jnp.matmul(a, b, preferred_element_type=jnp.int32),
         [ints(-128, 128, 65, 300, dtype="int8"), ints(-128, 128, 300, 33, dtype="int8")]),
        ("big.matmul.u8i8", lambda a, b: jnp.matmul(a.astype(jnp.int32), b.astype(jnp.int32)),
         [ints(0, 256, 33, 100, dtype="uint8"), ints(-128, 128, 100, 17, dtype="int8")]),
        ("big.bmm.f16", lambda a, b: jnp.einsum("bij,bjk->bik", a, b),
         [normal(3, 40, 70).astype("float16"), normal(3, 70, 50).astype("float16")]),
        ("big.conv.f32", lambda a, k: lax.conv_general_dilated(
            a, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
         [normal(2, 30, 30, 17), normal(3, 3, 17, 33)]),
        # grouped convolutions (issue 39): 8 groups of 8 channels, a depthwise one with 2
        # outputs per channel, the weight gradient of a grouped one (batch groups)
        ("big.conv.grouped8", lambda a, k: lax.conv_general_dilated(
            a, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=8),
         [normal(8, 32, 32, 64), normal(3, 3, 8, 64)]),
        ("big.conv.resnext32x4", lambda a, k: lax.conv_general_dilated(
            a, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=32),
         [normal(8, 28, 28, 128), normal(3, 3, 4, 128)]),
        ("big.conv.depthwise_x2", lambda a, k: lax.conv_general_dilated(
            a, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=64),
         [normal(8, 32, 32, 64), normal(3, 3, 1, 128)]),
        # NHWC depthwise 3x3 (issue 39): 144 and 96 channels took 3-vector tiles (24 at AVX2, 48 at
        # AVX-512) that LLVM loaded lane by lane; 192 channels (2 and 4 vectors) the reference
        *[(f"big.conv.depthwise{c}", lambda a, k, c=c: lax.conv_general_dilated(
            a, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=c),
           [normal(8, hw, hw, c), normal(3, 3, 1, c)]) for hw, c in ((56, 144), (56, 96), (28, 192))],
        ("big.grad.conv.grouped4", jax.grad(lambda k, a: jnp.sum(lax.conv_general_dilated(
            a, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=4) ** 2)),
         [normal(3, 3, 8, 32), normal(4, 16, 16, 32)]),
        ("big.grad.conv.depthwise8", jax.grad(lambda k, a: jnp.sum(lax.conv_general_dilated(
            a, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=8) ** 2)),
         [normal(3, 3, 1, 8), normal(8, 32, 32, 8)]),
        ("big.grad.conv.depthwise64", jax.grad(lambda k, a: jnp.sum(lax.conv_general_dilated(
            a, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=64) ** 2)),
         [normal(3, 3, 1, 64), normal(8, 32, 32, 64)]),
        ("big.reduce.bf16", lambda v: jnp.sum(v, axis=1), [normal(7, 5000).astype("bfloat16")]),
        ("big.sort", lambda v: jnp.sort(v, axis=-1), [normal(3, 3000)]),
        ("big.top_k", lambda v: lax.top_k(v, 70), [normal(4, 1000)]),
        ("big.cumsum", lambda v: jnp.cumsum(v, axis=0), [normal(3000, 3)]),
        ("big.softmax", jax.nn.softmax, [normal(33, 1025)]),
        ("big.transpose3", lambda v: jnp.transpose(v, (2, 0, 1)) + 1, [normal(37, 41, 43)]),
        ("f64.matmul", jnp.matmul, [normal(70, 90, dtype="float64"), normal(90, 30, dtype="float64")]),
        ("f64.exp_log", lambda v: jnp.log(jnp.exp(v) + 1), [normal(100, dtype="float64")]),
        ("c64.fft.big", jnp.fft.fft, [complex64(3, 1000)]),
    ]


def more_cases(jnp, jax, lax):
    """Less common entry points: jax.scipy, nan-aware and batched forms, more dtypes."""
    sp, la = jax.scipy, jnp.linalg
    key = np.array([0, 39], dtype=np.uint32)
    wrap = jax.random.wrap_key_data
    x, pos = normal(5, 8), uniform(0.1, 4, 5, 8)
    return [
        ("special.gammaln_xlogy", lambda a, b: (sp.special.gammaln(a), sp.special.xlogy(a, b)), [pos, pos]),
        ("special.erfc_ndtri", lambda a, p: (sp.special.erfc(a), sp.special.ndtri(p)),
         [x, uniform(0.01, 0.99, 5, 8)]),
        ("special.i0e_i1e", lambda a: (sp.special.i0e(a), sp.special.i1e(a)), [x]),
        ("special.betainc", sp.special.betainc, [pos, pos, uniform(0.05, 0.95, 5, 8)]),
        ("special.igamma", lax.igamma, [pos, pos]),
        ("special.zeta_polygamma", lambda a: sp.special.polygamma(1, a), [pos]),
        ("lax.nextafter", lax.nextafter, [x, normal(5, 8)]),
        ("lax.cbrt", lax.cbrt, [x]),
        ("lax.popcnt_clz", lambda v: (lax.population_count(v), lax.clz(v)), [ints(-2**31, 2**31, 40)]),
        ("lax.reduce_precision", lambda v: lax.reduce_precision(v, 5, 10), [x * 1000]),
        # an outer-axis concatenate of computed operands (issue 39's stack)
        ("jnp.stack.computed", lambda a, b: jnp.stack([a * b, a + b, a - b]), [x, normal(5, 8)]),
        ("jnp.nan_reductions", lambda v: (jnp.nanmean(v, 0), jnp.nanargmax(v, 1), jnp.nanmax(v)),
         [np.where(x > 1, np.nan, x).astype(np.float32)]),
        ("jnp.quantile", lambda v: jnp.quantile(v, jnp.array([0.1, 0.5, 0.9], jnp.float32), axis=1), [x]),
        ("jnp.histogram", lambda v: jnp.histogram(v, bins=5, range=(-2.0, 2.0))[0], [normal(100)]),
        ("jnp.bincount", lambda i: jnp.bincount(i, length=6), [ints(0, 6, 30)]),
        ("jnp.lexsort", lambda a, b: jnp.lexsort((a, b)), [ints(0, 3, 20), ints(0, 3, 20)]),
        ("jnp.diff_cross", lambda a, b: (jnp.diff(a, axis=1), jnp.cross(a[:, :3], b[:, :3])), [x, normal(5, 8)]),
        ("jnp.polyval", jnp.polyval, [normal(4), x]),
        ("jnp.argmax.u32", lambda v: jnp.argmax(v, axis=0), [ints(0, 2**32, 6, 9, dtype="uint32")]),
        *narrow_arg_cases(jnp),
        *diagonal_cases(jnp),
        *window_arg_cases(jnp, jax, lax),
        ("jnp.cumsum.i64", lambda v: jnp.cumsum(v), [ints(-2**40, 2**40, 50, dtype="int64")]),
        ("jnp.sort.bf16", lambda v: jnp.sort(v, axis=0), [normal(9, 4).astype("bfloat16")]),
        ("jnp.sort.c64", jnp.sort, [complex64(11)]),
        ("linalg.matrix_power", lambda m: la.matrix_power(m, 5), [normal(4, 4) * 0.5]),
        ("linalg.eigvalsh.c64", la.eigvalsh, [(lambda m: (m + m.conj().T) / 2)(complex64(4, 4))]),
        ("linalg.svd.c64", lambda m: la.svd(m, compute_uv=False), [complex64(5, 3)]),
        ("linalg.batched_solve", la.solve, [spd(4)[None].repeat(3, 0) + normal(3, 4, 4) * 0.1, normal(3, 4, 2)]),
        ("linalg.batched_cholesky", la.cholesky, [np.stack([spd(5), spd(5)])]),
        ("linalg.matrix_rank_cond", lambda m: (la.matrix_rank(m), la.cond(m)), [normal(5, 5)]),
        ("linalg.eig", lambda m: jnp.abs(la.eigvals(m)), [normal(4, 4)]),
        ("scipy.expm", sp.linalg.expm, [normal(4, 4) * 0.3]),
        ("scipy.lu", lambda m: sp.linalg.lu(m)[2], [normal(5, 5)]),
        ("scipy.lu_solve", lambda m, b: sp.linalg.lu_solve(sp.linalg.lu_factor(m), b), [spd(5), normal(5, 2)]),
        ("scipy.cho_solve", lambda m, b: sp.linalg.cho_solve(sp.linalg.cho_factor(m), b), [spd(5), normal(5, 2)]),
        ("scipy.convolve2d", lambda a, k: sp.signal.convolve2d(a, k, mode="same"), [normal(9, 9), normal(3, 3)]),
        ("scipy.logsumexp_b", lambda v, b: sp.special.logsumexp(v, axis=1, b=b), [x, pos]),
        ("fft.fft.f64", jnp.fft.fft, [normal(3, 12, dtype="float64")]),
        ("fft.rfft2_irfftn", lambda v: jnp.fft.irfftn(jnp.fft.rfft2(v), v.shape), [normal(6, 8)]),
        ("fft.fftshift_ifft2", lambda v: jnp.fft.fftshift(jnp.fft.ifft2(v)), [complex64(4, 6)]),
        ("random.gamma", lambda k: jax.random.gamma(wrap(k), 2.5, (6,)), [key]),
        ("random.truncated_normal", lambda k: jax.random.truncated_normal(wrap(k), -1.0, 2.0, (8,)), [key]),
        ("random.choice", lambda k: jax.random.choice(wrap(k), 20, (5,), replace=False), [key]),
        ("random.rbg", lambda k: jax.random.key_data(jax.random.split(
            jax.random.wrap_key_data(k, impl="rbg"), 2)), [ints(0, 2**32, 4, dtype="uint32")]),
        ("vmap.top_k_sort", jax.vmap(lambda v: (lax.top_k(v, 2)[0], jnp.argsort(v))), [normal(3, 7)]),
        ("grad.mlp", jax.grad(lambda w, v: jnp.sum(jnp.tanh(v @ w) ** 2)), [normal(8, 4), x]),
        ("grad.conv_pool", jax.grad(lambda k, v: jnp.sum(lax.reduce_window(
            lax.conv_general_dilated(v, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
            -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"))), [normal(3, 3, 2, 4), normal(1, 6, 6, 2)]),
        ("grad.softmax_xent", jax.grad(lambda lg, y: -jnp.sum(jax.nn.log_softmax(lg) * jax.nn.one_hot(y, 8))),
         [x, ints(0, 8, 5)]),
        ("jacfwd.sin", jax.jacfwd(jnp.sin), [normal(4)]),
        ("checkpoint.scan", jax.grad(lambda v: lax.scan(jax.checkpoint(lambda c, e: (jnp.sin(c * e), None)),
                                                        1.0, v)[0]), [normal(6)]),
    ]


def decomposition_cases(jnp, jax, lax):
    """LAPACK's other custom calls (gees, gehrd, sytrd/hetrd, gtsv, geqp3): the factors
    themselves (xlac calls the routine jaxlib calls, with its workspace) and, since
    Schur and Hessenberg factors are not unique, reconstructions Q T Q^H."""
    sp, la = jax.scipy.linalg, lax.linalg
    a, a64 = normal(6, 6), normal(5, 5, dtype="float64")
    c, c128 = complex64(5, 5), complex64(4, 4).astype(np.complex128)
    herm = (lambda m: m + m.conj().T)(complex64(5, 5))

    def recon(t, q):
        return q @ t @ jnp.conj(q).T

    def diags(m):        # a diagonally dominant tridiagonal system's three diagonals
        return m[..., 0, :].at[..., 0].set(0), m[..., 1, :] + 8, m[..., 2, :].at[..., -1].set(0)
    return [
        ("scipy.schur", sp.schur, [a]),
        ("scipy.schur.recon.f64", lambda m: recon(*sp.schur(m)), [a64]),
        ("scipy.schur.complex", lambda m: sp.schur(m, output="complex"), [a]),
        ("scipy.schur.c64", sp.schur, [c]),
        ("lax.schur.values_only.c128", lambda m: la.schur(m, compute_schur_vectors=False), [c128]),
        ("scipy.hessenberg", lambda m: sp.hessenberg(m, calc_q=True), [a]),
        ("scipy.hessenberg.recon.c128", lambda m: recon(*sp.hessenberg(m, calc_q=True)), [c128]),
        ("lax.hessenberg.batched.f64", jax.vmap(la.hessenberg), [normal(3, 4, 4, dtype="float64")]),
        ("lax.tridiagonal", la.tridiagonal, [spd(6)]),
        ("lax.tridiagonal.upper.c64", lambda m: la.tridiagonal(m, lower=False), [herm]),
        ("lax.tridiagonal_solve", lambda m, b: la.tridiagonal_solve(*diags(m), b),
         [normal(3, 6, 6), normal(3, 6, 2)]),
        ("lax.tridiagonal_solve.c128", lambda m, b: la.tridiagonal_solve(*diags(m), b),
         [c128, c128[:, :3].copy()]),
        ("scipy.qr.pivoting", lambda m: sp.qr(m, pivoting=True), [normal(6, 4)]),
        ("scipy.qr.pivoting.econ.c64", lambda m: sp.qr(m, pivoting=True, mode="economic"),
         [complex64(4, 6)]),
        ("scipy.sqrtm", sp.sqrtm, [spd(4)]),
        ("scipy.funm.exp", lambda m: sp.funm(m, jnp.exp), [spd(4) * 0.1]),
    ]


def narrow_arg_cases(jnp):
    """argmax/argmin of narrow types and over a middle axis (an RNG of their own:
    the other cases' inputs stay as they were)."""
    rng = np.random.default_rng(62)
    small = rng.integers(-3, 4, (8, 4))
    return [
        ("jnp.argmax.bool", lambda v: jnp.argmax(v, axis=1), [small > 2]),
        ("jnp.argmax.bool.ax0", lambda v: jnp.argmax(v, axis=0), [small > 2]),
        ("jnp.argmax.i8.ax0", lambda v: jnp.argmax(v, axis=0), [small.astype("int8")]),
        ("jnp.argmin.u8", lambda v: jnp.argmin(v, axis=1), [(small + 3).astype("uint8")]),
        ("jnp.argmax.bf16", lambda v: jnp.argmax(v, axis=1), [rng.standard_normal((8, 4)).astype("bfloat16")]),
        ("jnp.argmax.bf16.ax0", lambda v: jnp.argmax(v, axis=0), [rng.standard_normal((8, 4)).astype("bfloat16")]),
        ("jnp.argmax.mid", lambda v: jnp.argmax(v, axis=1), [rng.standard_normal((4, 32, 2)).astype("float32")]),
    ]


def window_arg_cases(jnp, jax, lax):
    """argmax with argmin of one array, bool rows, and max-pooling's gradient
    (select_and_scatter: NHWC 2x2/2, 3x3/2 SAME, NCHW 2x2/2 and 3x3/2 SAME); an RNG of their own."""
    rng = np.random.default_rng(64)

    def pool_vjp(window, stride, padding):
        def grad(v, g):
            pool = lambda u: lax.reduce_window(u, -jnp.inf, lax.max, window, stride, padding)   # noqa: E731
            return jax.vjp(pool, v)[1](g)[0]
        return grad
    images = rng.integers(-4, 5, (1, 8, 8, 4)).astype("float32")
    batch = rng.integers(-4, 5, (2, 4, 8, 8)).astype("float32")
    return [
        ("jnp.argmax_argmin", lambda v: (jnp.argmax(v, axis=1), jnp.argmin(v, axis=1)),
         [rng.standard_normal((8, 16)).astype("float32")]),
        ("jnp.argmax_argmin.i8.ax0", lambda v: (jnp.argmax(v, axis=0), jnp.argmin(v, axis=0)),
         [rng.integers(-100, 100, (8, 16)).astype("int8")]),
        ("grad.max_pool", pool_vjp((1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
         [images, rng.standard_normal((1, 4, 4, 4)).astype("float32")]),
        ("grad.max_pool.3x3s2", pool_vjp((1, 3, 3, 1), (1, 2, 2, 1), "SAME"),
         [images, rng.standard_normal((1, 4, 4, 4)).astype("float32")]),
        ("grad.max_pool.nchw", pool_vjp((1, 1, 2, 2), (1, 1, 2, 2), "VALID"),
         [images.transpose(0, 3, 1, 2).copy(), rng.standard_normal((1, 4, 4, 4)).astype("float32")]),
        # PyTorch-style NCHW batches (s=14: 28 x 56 x 112 x 112, a ResNet stem's pool)
        ("grad.max_pool.nchw.b2", pool_vjp((1, 1, 2, 2), (1, 1, 2, 2), "VALID"),
         [batch, rng.standard_normal((2, 4, 4, 4)).astype("float32")]),
        ("grad.max_pool.nchw.3x3s2", pool_vjp((1, 1, 3, 3), (1, 1, 2, 2), "SAME"),
         [batch, rng.standard_normal((2, 4, 4, 4)).astype("float32")]),
    ]


def diagonal_cases(jnp):
    """Offset, non-square and batched diagonals (an RNG of their own)."""
    rng = np.random.default_rng(63)
    return [
        ("jnp.diagonal.k", lambda a: jnp.diagonal(a, 3), [rng.standard_normal((8, 8)).astype("float32")]),
        ("jnp.diag.slice", lambda a: jnp.diag(a[:, :5]), [rng.standard_normal((8, 8)).astype("float32")]),
        ("jnp.diagonal.batched", lambda a: jnp.diagonal(a, -1, 1, 2),
         [rng.standard_normal((4, 8, 8)).astype("float32")]),
        ("jnp.diagonal.axes02", lambda a: jnp.diagonal(a, 0, 0, 2),
         [rng.standard_normal((8, 4, 8)).astype("float32")]),
        ("jnp.trace.k", lambda a: jnp.trace(a, offset=-2), [rng.standard_normal((8, 8)).astype("float32")]),
    ]
