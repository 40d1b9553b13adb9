"""The sweep's cases: op class x element type x layout, as jax functions (the
StableHLO both compilers get) with their numpy counterparts and inputs.

Sizes are moderate, about 1-4 MB per operand (512 x 1024 elements; a dot
512 x 512 x 512, a convolution 8 x 32 x 32 x 64): past the L2 cache, short
enough that a scalar kernel still finishes. Layouts: "row" reads each operand
in its own order; "transposed" (or "strided") reads one operand across its
rows; a reduction, sort or scan runs over the "inner" or the "outer" axis.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TYPES = ("f32", "f64", "f16", "bf16", "i8", "i32", "i64", "ui8", "i1", "c64", "c128")
QUICK_TYPES = ("f32", "bf16", "i8", "i1")
ROWS, COLS = 512, 1024


@dataclass(frozen=True)
class Case:
    op_class: str
    element: str
    layout: str
    jax_fn: object
    numpy_fn: object | None
    inputs: tuple

    @property
    def name(self) -> str:
        return f"{self.op_class}-{self.element}-{self.layout}"


def dtype(element: str):
    import ml_dtypes
    return {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": ml_dtypes.bfloat16,
            "i8": np.int8, "i32": np.int32, "i64": np.int64, "ui8": np.uint8, "i1": np.bool_,
            "c64": np.complex64, "c128": np.complex128}[element]


def _array(rng, shape, element):
    kind = np.dtype(dtype(element)).kind
    if kind == "b":
        return rng.random(shape) < 0.5
    if kind in "iu":
        return rng.integers(0, 8, shape).astype(dtype(element))
    if kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype(element))
    return rng.standard_normal(shape, dtype=np.float32).astype(dtype(element))


def cases(types=TYPES, classes=None) -> list[Case]:
    """Every case of ``types`` (and ``classes``, all if None) jax can express."""
    rng = np.random.default_rng(0)
    found = []
    for element in types:
        for op_class, layouts in _builders().items():
            if classes and op_class not in classes:
                continue
            for layout, build in layouts.items():
                made = build(rng, element)
                if made is not None:
                    found.append(Case(op_class, element, layout, *made))
    return found


def _combine(element):
    """The elementwise op of the type: add, or for booleans (whose add is or) or."""
    import jax.numpy as jnp
    return (jnp.logical_or, np.logical_or) if element == "i1" else (jnp.add, np.add)


def _builders():
    import jax.numpy as jnp
    from jax import lax

    def a(rng, e, shape=(ROWS, COLS)):
        return _array(rng, shape, e)

    def elementwise(transposed):
        def build(rng, e):
            op, np_op = _combine(e)
            if transposed:
                return (lambda x, y: op(x.T, y), lambda x, y: np_op(x.T, y),
                        (a(rng, e, (COLS, ROWS)), a(rng, e)))
            return lambda x, y: op(x, y), np_op, (a(rng, e), a(rng, e))
        return build

    def broadcast(axis):
        def build(rng, e):
            n = COLS if axis == 0 else ROWS
            expand = (lambda v: v[None, :]) if axis == 0 else (lambda v: v[:, None])
            return (lambda v: jnp.broadcast_to(expand(v), (ROWS, COLS)),
                    lambda v: np.ascontiguousarray(np.broadcast_to(expand(v), (ROWS, COLS))),
                    (a(rng, e, (n,)),))
        return build

    def reduce(axis):
        def build(rng, e):
            if e == "i1":
                return lambda x: jnp.any(x, axis), lambda x: np.any(x, axis), (a(rng, e),)
            return (lambda x: jnp.sum(x, axis, dtype=x.dtype),
                    lambda x: np.sum(x, axis, dtype=x.dtype), (a(rng, e),))
        return build

    def reduce_window(rng, e):
        if e == "i1":
            return None                      # jax's reduce_window on booleans: no monoid it knows
        def numpy_pool(x):
            view = np.lib.stride_tricks.sliding_window_view(x, (3, 3))
            return view.sum((-1, -2), dtype=x.dtype)
        return (lambda x: lax.reduce_window(x, np.array(0, x.dtype), lax.add, (3, 3), (1, 1), "VALID"),
                numpy_pool, (a(rng, e),))

    def transpose(perm):
        def build(rng, e):
            shape = (ROWS, COLS) if len(perm) == 2 else (8, ROWS // 8, COLS)
            return (lambda x: jnp.transpose(x, perm),
                    lambda x: np.ascontiguousarray(np.transpose(x, perm)), (a(rng, e, shape),))
        return build

    def dot(transposed):
        def build(rng, e):
            if e == "i1":
                return None                  # jnp.matmul of booleans: no such op in XLA's dot
            n = 512
            lhs = a(rng, e, (n, n))
            if transposed:
                return lambda x, y: x.T @ y, lambda x, y: x.T @ y, (lhs, a(rng, e, (n, n)))
            return lambda x, y: x @ y, lambda x, y: x @ y, (lhs, a(rng, e, (n, n)))
        return build

    def convolution(layout):
        def build(rng, e):
            if e in ("i1", "c64", "c128") or e.startswith(("i", "ui")):
                return None                  # XLA CPU: float convolutions only
            dims = ("NHWC", "HWIO", "NHWC") if layout == "nhwc" else ("NCHW", "OIHW", "NCHW")
            x = a(rng, e, (8, 32, 32, 64) if layout == "nhwc" else (8, 64, 32, 32))
            w = a(rng, e, (3, 3, 64, 64) if layout == "nhwc" else (64, 64, 3, 3))
            return (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dims),
                    None, (x, w))
        return build

    def gather(axis):
        def build(rng, e):
            ids = rng.integers(0, ROWS if axis == 0 else COLS, 256).astype(np.int32)
            if axis == 0:
                return lambda t, i: t[i], lambda t, i: t[i], (a(rng, e), ids)
            return lambda t, i: t[:, i], lambda t, i: t[:, i], (a(rng, e), ids)
        return build

    def scatter(rng, e):
        if e == "i1":
            return None                      # segment_sum of booleans: jax promotes
        ids = rng.integers(0, 64, ROWS).astype(np.int32)
        def numpy_sum(d, s):
            out = np.zeros((64, COLS), d.dtype)
            np.add.at(out, s, d)
            return out
        import jax
        return (lambda d, s: jax.ops.segment_sum(d, s, 64), numpy_sum, (a(rng, e), ids))

    def scatter_columns(_, e):
        """x.at[:, ids].add(u): windows down whole columns (every row hit). Its own
        generator: the later cases keep the inputs they had before it came."""
        if e == "i1":
            return None                      # as segment_sum: jax promotes booleans
        rng = np.random.default_rng(1)
        ids = rng.integers(0, COLS, 256).astype(np.int32)
        def numpy_add(x, i, u):
            out = x.copy()
            np.add.at(out, (slice(None), i), u)
            return out
        return (lambda x, i, u: x.at[:, i].add(u), numpy_add, (a(rng, e), ids, a(rng, e, (ROWS, 256))))

    def sort(axis):
        def build(rng, e):
            if e in ("c64", "c128"):
                return None                  # StableHLO's compare has no order for complex
            return lambda x: jnp.sort(x, axis), lambda x: np.sort(x, axis), (a(rng, e),)
        return build

    def concatenate(axis):
        def build(rng, e):
            return (lambda x, y: jnp.concatenate([x, y], axis),
                    lambda x, y: np.concatenate([x, y], axis), (a(rng, e), a(rng, e)))
        return build

    def pad(rng, e):
        return (lambda x: jnp.pad(x, ((1, 1), (8, 8))), lambda x: np.pad(x, ((1, 1), (8, 8))),
                (a(rng, e),))

    def slice_(strided):
        def build(rng, e):
            if strided:
                return lambda x: x[:, 1::2], lambda x: np.ascontiguousarray(x[:, 1::2]), (a(rng, e),)
            return lambda x: x[1:-1, 8:-8], lambda x: np.ascontiguousarray(x[1:-1, 8:-8]), (a(rng, e),)
        return build

    def select(transposed):
        def build(rng, e):
            p = rng.random((ROWS, COLS)) < 0.5
            if transposed:
                return (lambda p, x, y: jnp.where(p, x.T, y), lambda p, x, y: np.where(p, x.T, y),
                        (p, a(rng, e, (COLS, ROWS)), a(rng, e)))
            return lambda p, x, y: jnp.where(p, x, y), np.where, (p, a(rng, e), a(rng, e))
        return build

    def convert(transposed):
        def build(rng, e):
            to = {"f32": np.int32, "c64": np.complex128, "c128": np.complex64}.get(e, np.float32)
            if transposed:
                return (lambda x: x.T.astype(to), lambda x: x.T.astype(to),
                        (a(rng, e, (COLS, ROWS)),))
            return lambda x: x.astype(to), lambda x: x.astype(to), (a(rng, e),)
        return build

    def iota(axis):
        def build(rng, e):
            if e == "i1":
                return None                  # iota's type: integer, float or complex
            t = dtype(e)
            def numpy_iota():
                line = np.arange(COLS if axis == 1 else ROWS).astype(t)
                return np.ascontiguousarray(np.broadcast_to(line[None, :] if axis == 1 else line[:, None],
                                                            (ROWS, COLS)))
            return lambda: lax.broadcasted_iota(t, (ROWS, COLS), axis), numpy_iota, ()
        return build

    def cumsum(axis):
        def build(rng, e):
            if e == "i1":
                return None                  # jnp.cumsum of booleans counts in int32
            return (lambda x: jnp.cumsum(x, axis, dtype=x.dtype),
                    lambda x: np.cumsum(x, axis, dtype=x.dtype), (a(rng, e),))
        return build

    return {
        "elementwise": {"row": elementwise(False), "transposed": elementwise(True)},
        "broadcast": {"row": broadcast(0), "column": broadcast(1)},
        "reduce": {"inner": reduce(1), "outer": reduce(0)},
        "reduce_window": {"row": reduce_window},
        "transpose": {"2d": transpose((1, 0)), "3d_inner": transpose((0, 2, 1))},
        "dot_general": {"row": dot(False), "transposed": dot(True)},
        "convolution": {"nhwc": convolution("nhwc"), "nchw": convolution("nchw")},
        "gather": {"rows": gather(0), "columns": gather(1)},
        "scatter": {"rows": scatter, "columns": scatter_columns},
        "sort": {"inner": sort(1), "outer": sort(0)},
        "concatenate": {"outer": concatenate(0), "inner": concatenate(1)},
        "pad": {"row": pad},
        "slice": {"row": slice_(False), "strided": slice_(True)},
        "select": {"row": select(False), "transposed": select(True)},
        "convert": {"row": convert(False), "transposed": convert(True)},
        "iota": {"inner": iota(1), "outer": iota(0)},
        "cumsum": {"inner": cumsum(1), "outer": cumsum(0)},
    }
