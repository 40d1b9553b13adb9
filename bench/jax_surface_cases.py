"""The jax functions bench/jax_surface.py exports and compares: programs users bring.

Each case is ``(name, fn, args)``: ``fn`` a function jax can jit, ``args`` a list
of numpy arrays (made here once, from a fixed seed, so a run repeats). Kept
small: the point is which ops compile and agree with XLA, not their speed.
"""
import functools

import numpy as np

RNG = np.random.default_rng(57)


def normal(*shape, dtype="float32"):
    return RNG.standard_normal(shape).astype(dtype)


def uniform(lo, hi, *shape, dtype="float32"):
    return RNG.uniform(lo, hi, shape).astype(dtype)


def ints(lo, hi, *shape, dtype="int32"):
    return RNG.integers(lo, hi, shape).astype(dtype)


def spd(n, dtype="float32"):
    """A well-conditioned symmetric positive definite matrix."""
    a = RNG.standard_normal((n, n))
    return (a @ a.T + n * np.eye(n)).astype(dtype)


def complex64(*shape):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(np.complex64)


def _elementwise(jnp, jax, lax):
    x, pos, unit = normal(4, 33), uniform(0.1, 5, 4, 33), uniform(-0.9, 0.9, 4, 33)
    cases = [(f"jnp.{n}", getattr(jnp, n), [x]) for n in
             ("exp", "tanh", "sin", "cos", "abs", "sign", "floor", "round", "expm1", "log1p")]
    cases += [(f"jnp.{n}", getattr(jnp, n), [pos]) for n in ("log", "sqrt", "reciprocal")]
    cases += [
        ("jnp.arctan2", jnp.arctan2, [x, normal(4, 33)]),
        ("jnp.power", jnp.power, [pos, normal(4, 33)]),
        ("jnp.fmod", jnp.fmod, [x * 10, pos]),
        ("jnp.remainder", jnp.remainder, [x * 10, pos]),
        ("lax.rem.i32", lax.rem, [ints(-50, 50, 40), ints(1, 9, 40)]),
        ("jnp.floor_divide.i32", jnp.floor_divide, [ints(-50, 50, 40), ints(1, 9, 40)]),
        ("lax.clamp", lambda v: lax.clamp(np.float32(-0.5), v, np.float32(0.5)), [x]),
        ("lax.integer_pow3", lambda v: lax.integer_pow(v, 3), [x]),
        ("lax.integer_pow-2", lambda v: lax.integer_pow(v, -2), [pos]),
        ("lax.erf_inv", lax.erf_inv, [unit]),
        ("lax.erf", lax.erf, [x]),
        ("lax.lgamma", lax.lgamma, [pos]),
        ("lax.digamma", lax.digamma, [pos]),
        ("jnp.isnan_where", lambda v: jnp.where(jnp.isnan(v), 0.0, v), [x]),
        ("jnp.logaddexp", jnp.logaddexp, [x, normal(4, 33)]),
        ("jnp.clip.i8", lambda v: jnp.clip(v, -3, 7), [ints(-100, 100, 64, dtype="int8")]),
        ("add.u32", lambda a, b: a * b + (a >> 3), [ints(0, 2**32, 64, dtype="uint32"),
                                                    ints(0, 2**32, 64, dtype="uint32")]),
        ("mul.i64", lambda a, b: a * b - a // 7, [ints(-2**40, 2**40, 64, dtype="int64"),
                                                  ints(-999, 999, 64, dtype="int64")]),
        ("tanh.bf16", jnp.tanh, [x.astype("bfloat16")]),
        ("exp.f16", jnp.exp, [x.astype("float16")]),
        ("erf_inv.f16", lax.erf_inv, [unit.astype("float16")]),
        ("mul.c64", lambda a, b: a * b + jnp.conj(a), [complex64(16), complex64(16)]),
        ("exp.c64", jnp.exp, [complex64(16)]),
        ("abs.c64", jnp.abs, [complex64(16)]),
        ("div.c64", jnp.divide, [complex64(16), complex64(16)]),
        *[(f"{n}.c64", getattr(jnp, n), [complex64(16)]) for n in
          ("log", "sqrt", "sin", "cos", "tan", "tanh", "log1p", "expm1", "sign")],
        ("rsqrt.c64", lax.rsqrt, [complex64(16)]),
        ("power.c64", jnp.power, [complex64(16), complex64(16)]),
        ("slice.stride2", lambda v: jnp.exp(v[::2]) * v[1::2], [normal(64)]),
        ("convert.f32->i8", lambda v: v.astype(jnp.int8), [x * 50]),
        ("convert.f32->u32", lambda v: v.astype(jnp.uint32), [pos * 1000]),
        ("bitcast.f32->u32", lambda v: lax.bitcast_convert_type(v, jnp.uint32), [x]),
    ]
    return cases


def _reductions(jnp, jax, lax):
    x = normal(6, 10)
    cases = [(f"jnp.{n}.ax{ax}", functools.partial(getattr(jnp, n), axis=ax), [x])
             for n in ("sum", "max", "argmax", "argmin", "cumsum", "cumprod", "sort", "argsort")
             for ax in (0, 1)]
    cases += [
        ("lax.cummax", lambda v: lax.cummax(v, axis=1), [x]),
        ("lax.cumlogsumexp", lambda v: lax.cumlogsumexp(v, axis=0), [x]),
        ("jnp.cumsum.i32", lambda v: jnp.cumsum(v, axis=1), [ints(-9, 9, 6, 10)]),
        ("jnp.argmax.nan", lambda v: jnp.argmax(v.at[2, 3].set(jnp.nan), axis=1), [x]),
        ("jnp.argsort.stable.i32", lambda v: jnp.argsort(v, stable=True), [ints(0, 4, 40)]),
        ("jnp.sort.desc", lambda v: jnp.sort(v, descending=True), [x]),
        ("jnp.mean_var", lambda v: (jnp.mean(v, 0), jnp.var(v, 1)), [x]),
        ("jnp.prod.bf16", lambda v: jnp.prod(v, axis=1), [uniform(0.5, 1.5, 6, 10, dtype="bfloat16")]),
        ("jnp.sum.f16", lambda v: jnp.sum(v, axis=0), [x.astype("float16")]),
        ("jnp.sum.c64", lambda v: jnp.sum(v, axis=0), [complex64(5, 3)]),
        ("jnp.any_all", lambda v: (jnp.any(v > 1, 1), jnp.all(v > -3, 0)), [x]),
        ("logsumexp", lambda v: jax.nn.logsumexp(v, axis=1), [x]),
        ("lax.sort.multi", lambda k, v: lax.sort((k, v), num_keys=1), [ints(0, 5, 30), normal(30)]),
        ("lax.sort.2keys", lambda a, b: lax.sort((a, b), num_keys=2), [ints(0, 3, 30), ints(0, 5, 30)]),
        ("lax.top_k", lambda v: lax.top_k(v, 3), [x]),
        ("lax.approx_max_k", lambda v: lax.approx_max_k(v, 3), [x]),
        ("lax.associative_scan", lambda v: lax.associative_scan(jnp.add, v, axis=1), [x]),
        ("assoc_scan.mul.rev", lambda v: lax.associative_scan(jnp.multiply, v, reverse=True),
         [uniform(0.5, 1.5, 9)]),
        ("jnp.median", jnp.median, [normal(7, 5)]),
    ]
    return cases


def _linalg(jnp, jax, lax):
    la = jnp.linalg
    a, b = spd(6) + normal(6, 6), normal(6, 3)
    return [
        ("linalg.solve", la.solve, [a, b]),
        ("linalg.cholesky", la.cholesky, [spd(6)]),
        ("linalg.qr", la.qr, [normal(7, 5)]),
        ("linalg.svd.vals", lambda m: la.svd(m, compute_uv=False), [normal(7, 5)]),
        ("linalg.svd.recon", lambda m: (lambda u, s, v: (u * s) @ v)(*la.svd(m, full_matrices=False)),
         [normal(7, 5)]),
        ("linalg.eigh.vals", lambda m: la.eigh(m)[0], [spd(6)]),
        ("linalg.inv", la.inv, [a]),
        ("linalg.det", la.det, [a]),
        ("linalg.slogdet", la.slogdet, [a]),
        ("linalg.norm.fro", la.norm, [a]),
        ("linalg.norm.2", lambda m: la.norm(m, 2), [a]),
        ("linalg.norm.vec", lambda v: la.norm(v, axis=1), [a]),
        ("linalg.lstsq", lambda m, r: la.lstsq(m, r)[0], [normal(8, 4), normal(8, 2)]),
        ("linalg.pinv", la.pinv, [normal(6, 4)]),
        ("linalg.solve.f64", la.solve, [a.astype("float64"), b.astype("float64")]),
        ("linalg.inv.c64", la.inv, [complex64(4, 4) + 4 * np.eye(4, dtype=np.complex64)]),
        ("triangular_solve", lambda m, r: jax.scipy.linalg.solve_triangular(m, r, lower=True),
         [np.tril(a) + 6 * np.eye(6, dtype=np.float32), b]),
    ]


def _fft(jnp, jax, lax):
    x = normal(4, 16)
    return [
        ("fft.fft", jnp.fft.fft, [complex64(4, 16)]),
        ("fft.ifft", jnp.fft.ifft, [complex64(4, 16)]),
        ("fft.rfft", jnp.fft.rfft, [x]),
        ("fft.irfft", jnp.fft.irfft, [complex64(4, 9)]),
        ("fft.fft2", jnp.fft.fft2, [complex64(8, 6)]),
        ("fft.rfft.odd", jnp.fft.rfft, [normal(3, 15)]),
        ("fft.fft.f32in", lambda v: jnp.fft.fft(v, axis=0), [x]),
    ]


def _conv(jnp, jax, lax):
    dn = ("NHWC", "HWIO", "NHWC")

    def conv(**kw):
        return lambda x, w: lax.conv_general_dilated(x, w, dimension_numbers=dn, **kw)
    x, w = normal(2, 9, 9, 4), normal(3, 3, 4, 6)
    return [
        ("conv.same", conv(window_strides=(1, 1), padding="SAME"), [x, w]),
        ("conv.stride2.valid", conv(window_strides=(2, 2), padding="VALID"), [x, w]),
        ("conv.rhs_dilation", conv(window_strides=(1, 1), padding="VALID", rhs_dilation=(2, 2)), [x, w]),
        ("conv.lhs_dilation", conv(window_strides=(1, 1), padding=((1, 1), (1, 1)),
                                   lhs_dilation=(2, 2)), [x, w]),
        ("conv.groups2", conv(window_strides=(1, 1), padding="SAME", feature_group_count=2),
         [x, normal(3, 3, 2, 6)]),
        ("conv.depthwise", conv(window_strides=(1, 1), padding="SAME", feature_group_count=4),
         [x, normal(3, 3, 1, 8)]),
        ("conv.asym_pad", conv(window_strides=(1, 1), padding=((0, 2), (1, 0))), [x, w]),
        ("conv.batch_group", lambda a, k: lax.conv_general_dilated(
            a, k, (1, 1), "VALID", dimension_numbers=dn, batch_group_count=2),
         [normal(4, 5, 5, 3), normal(2, 2, 3, 6)]),
        ("conv1d.NCH", lambda a, k: lax.conv_general_dilated(a, k, (1,), "SAME"),
         [normal(2, 3, 10), normal(5, 3, 3)]),
        ("conv.bf16", conv(window_strides=(1, 1), padding="SAME"),
         [x.astype("bfloat16"), w.astype("bfloat16")]),
        ("conv_transpose", lambda a, k: lax.conv_transpose(a, k, (2, 2), "SAME", dimension_numbers=dn),
         [x, w]),
        ("reduce_window.max", lambda v: lax.reduce_window(v, -jnp.inf, lax.max, (1, 3, 3, 1),
                                                          (1, 2, 2, 1), "SAME"), [x]),
        ("reduce_window.avg", lambda v: lax.reduce_window(v, 0.0, lax.add, (1, 2, 2, 1),
                                                          (1, 2, 2, 1), "VALID") / 4, [x]),
        ("reduce_window.dilated", lambda v: lax.reduce_window(
            v, 0.0, lax.add, (1, 2, 2, 1), (1, 1, 1, 1), "VALID", window_dilation=(1, 2, 2, 1)), [x]),
        ("cumsum.reduce_window", lambda v: lax.cumsum(v, axis=0, reverse=True), [normal(50, 3)]),
    ]


def _indexing(jnp, jax, lax):
    x = normal(8, 6)
    idx = ints(0, 8, 5)
    return [
        ("dynamic_slice", lambda v, i: lax.dynamic_slice(v, (i, np.int32(1)), (3, 4)), [x, np.int32(6)]),
        ("dynamic_update_slice", lambda v, u, i: lax.dynamic_update_slice(v, u, (i, np.int32(2))),
         [x, normal(3, 3), np.int32(-2)]),
        ("take.rows", lambda v, i: v[i], [x, idx]),
        ("take.oob_clip", lambda v, i: jnp.take(v, i, axis=0, mode="clip"), [x, ints(-3, 12, 5)]),
        ("take.fill", lambda v, i: jnp.take(v, i, axis=1, mode="fill", fill_value=-1.0),
         [x, ints(-3, 9, 5)]),
        ("take_along_axis", lambda v, i: jnp.take_along_axis(v, i, axis=1), [x, ints(0, 6, 8, 2)]),
        ("gather.2d_points", lambda v, i, j: v[i, j], [x, idx, ints(0, 6, 5)]),
        ("scatter.add", lambda v, i, u: v.at[i].add(u), [x, idx, normal(5, 6)]),
        ("scatter.set", lambda v, i, u: v.at[i].set(u), [x, ints(0, 8, 3), normal(3, 6)]),
        ("scatter.max", lambda v, i, u: v.at[:, i].max(u), [x, ints(0, 6, 4), normal(8, 4)]),
        ("scatter.mul.i32", lambda v, i, u: v.at[i].multiply(u), [ints(1, 5, 8), ints(0, 8, 4),
                                                                   ints(1, 4, 4)]),
        # constant indices: a select in the consumer's kernel, not a copy of v (but the last: in place)
        ("scatter.const.add_row", lambda v: jnp.sum(v.at[2].add(1.0), axis=0), [x]),
        ("scatter.const.mul_points", lambda v: v.at[np.array([1, 5]), np.array([0, 3])].mul(2.0) * 3 + 1, [x]),
        ("dynamic_update_slice.const", lambda v, u: jnp.tanh(lax.dynamic_update_slice(v, u, (2, 0))),
         [x, normal(1, 6)]),
        ("scatter.const.returned", lambda v: v.at[0, 0].set(1.0), [x]),
        ("segment_sum", lambda v, s: jax.ops.segment_sum(v, s, num_segments=4), [x, ints(0, 4, 8)]),
        ("one_hot", lambda i: jax.nn.one_hot(i, 7), [ints(0, 9, 10)]),
        ("boolean_mask_where", lambda v: jnp.where(v > 0, v, 0).sum(), [x]),
        ("jnp.roll", lambda v: jnp.roll(v, 3, axis=1), [x]),
        ("jnp.pad.reflect", lambda v: jnp.pad(v, 2, mode="reflect"), [x]),
        ("jnp.tril_triu", lambda v: jnp.tril(v) - jnp.triu(v, 1), [x]),
        ("jnp.flip_transpose", lambda v: jnp.flip(v, 0).T, [x]),
        ("jnp.searchsorted", lambda s, v: jnp.searchsorted(s, v), [np.sort(normal(20)), normal(7)]),
        ("jnp.interp", jnp.interp, [normal(7), np.sort(normal(12)), normal(12)]),
    ]


def _control(jnp, jax, lax):
    x = normal(5)
    return [
        ("lax.cond", lambda p, v: lax.cond(p > 0, jnp.sin, jnp.cos, v), [np.float32(-1), x]),
        ("lax.switch", lambda i, v: lax.switch(i, [jnp.sin, jnp.cos, jnp.exp], v), [np.int32(5), x]),
        ("lax.while", lambda v: lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 1.1),
                                               (0, v))[1], [x]),
        ("lax.fori_loop", lambda v: lax.fori_loop(0, 7, lambda i, c: c + i * c, v), [x * 0.1]),
        ("lax.scan", lambda v: lax.scan(lambda c, e: (c + e, c * e), 0.0, v), [normal(12)]),
        ("lax.scan.rev2d", lambda v: lax.scan(lambda c, e: (c * 0.5 + e, jnp.tanh(c)),
                                              jnp.zeros(4), v, reverse=True), [normal(9, 4)]),
        ("lax.map", lambda v: lax.map(jnp.linalg.norm, v), [normal(6, 4)]),
        ("vmap.cond", jax.vmap(lambda p, v: lax.cond(p > 0, jnp.sin, jnp.cos, v)), [normal(5), x]),
    ]


def _random(jnp, jax, lax):
    key = np.array([0, 57], dtype=np.uint32)
    wrap = jax.random.wrap_key_data

    return [
        ("random.uniform", lambda k: jax.random.uniform(wrap(k), (4, 5)), [key]),
        ("random.normal", lambda k: jax.random.normal(wrap(k), (4, 5)), [key]),
        ("random.categorical", lambda k, lg: jax.random.categorical(wrap(k), lg, shape=(7,)),
         [key, normal(5)]),
        ("random.randint", lambda k: jax.random.randint(wrap(k), (10,), 0, 100), [key]),
        ("random.bits.u32", lambda k: jax.random.bits(wrap(k), (9,)), [key]),
        ("random.split", lambda k: jax.random.key_data(jax.random.split(wrap(k), 3)), [key]),
        ("random.permutation", lambda k: jax.random.permutation(wrap(k), 10), [key]),
        ("random.bernoulli", lambda k: jax.random.bernoulli(wrap(k), 0.3, (12,)), [key]),
        ("rng_bit_generator", lambda k: lax.rng_bit_generator(k, (4, 3), dtype=jnp.uint32),
         [np.array([1, 2, 3, 4], dtype=np.uint32)]),
    ]


def _nn(jnp, jax, lax):
    x = normal(4, 12)
    cases = [(f"nn.{n}", getattr(jax.nn, n), [x]) for n in
             ("relu", "gelu", "silu", "sigmoid", "softplus", "elu", "selu", "log_sigmoid",
              "softmax", "log_softmax", "standardize", "celu", "leaky_relu", "hard_tanh", "mish")]
    cases += [
        ("nn.gelu.exact", lambda v: jax.nn.gelu(v, approximate=False), [x]),
        ("nn.softmax.bf16", jax.nn.softmax, [x.astype("bfloat16")]),
        ("nn.dot_product_attention", jax.nn.dot_product_attention,
         [normal(1, 5, 2, 8), normal(1, 5, 2, 8), normal(1, 5, 2, 8)]),
        ("image.resize.bilinear", lambda v: jax.image.resize(v, (2, 13, 7, 3), "bilinear"),
         [normal(2, 6, 5, 3)]),
        ("image.resize.nearest", lambda v: jax.image.resize(v, (2, 12, 10, 3), "nearest"),
         [normal(2, 6, 5, 3)]),
        ("image.resize.cubic", lambda v: jax.image.resize(v, (1, 4, 9), "cubic"), [normal(1, 7, 4)]),
    ]
    return cases


def _einsum(jnp, jax, lax):
    return [
        ("einsum.bmm", lambda a, b: jnp.einsum("bij,bjk->bik", a, b), [normal(3, 4, 5), normal(3, 5, 2)]),
        ("einsum.trace", lambda a: jnp.einsum("ii->", a), [normal(5, 5)]),
        ("einsum.diag", lambda a: jnp.einsum("ii->i", a), [normal(5, 5)]),
        ("einsum.outer", lambda a, b: jnp.einsum("i,j->ij", a, b), [normal(4), normal(3)]),
        ("einsum.contract3", lambda a, b, c: jnp.einsum("ij,jk,kl->il", a, b, c),
         [normal(3, 4), normal(4, 5), normal(5, 2)]),
        ("einsum.heads", lambda q, k: jnp.einsum("bqhd,bkhd->bhqk", q, k),
         [normal(2, 3, 2, 4), normal(2, 5, 2, 4)]),
        ("matmul.i8->i32", lambda a, b: jnp.matmul(a, b, preferred_element_type=jnp.int32),
         [ints(-100, 100, 5, 7, dtype="int8"), ints(-100, 100, 7, 3, dtype="int8")]),
        ("matmul.bf16", jnp.matmul, [normal(5, 7, dtype="float32").astype("bfloat16"),
                                     normal(7, 3).astype("bfloat16")]),
        ("matmul.f16", jnp.matmul, [normal(5, 7).astype("float16"), normal(7, 3).astype("float16")]),
        ("matmul.c64", jnp.matmul, [complex64(3, 4), complex64(4, 2)]),
        ("matmul.i64", jnp.matmul, [ints(-9, 9, 3, 4, dtype="int64"), ints(-9, 9, 4, 2, dtype="int64")]),
        ("dot.u32", jnp.dot, [ints(0, 9, 6, dtype="uint32"), ints(0, 9, 6, dtype="uint32")]),
        ("jnp.kron", jnp.kron, [normal(2, 3), normal(2, 2)]),
        ("jnp.convolve", jnp.convolve, [normal(20), normal(5)]),
    ]


from jax_surface_more import decomposition_cases, edge_cases, more_cases  # noqa: E402  (the helpers above first)

GROUPS = (_elementwise, _reductions, _linalg, _fft, _conv, _indexing, _control, _random, _nn,
          _einsum, edge_cases, more_cases, decomposition_cases)


def all_cases():
    """Every case, in order: ``[(name, fn, args)]`` (jax imported here, 64-bit on)."""
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from jax import lax
    cases = [c for group in GROUPS for c in group(jnp, jax, lax)]
    names = [c[0] for c in cases]
    assert len(names) == len(set(names)), "duplicate case names"
    return cases
