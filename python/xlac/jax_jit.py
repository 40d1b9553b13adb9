"""``xlac.jit``: JAX traces and lowers, xlac compiles and runs.

    @xlac.jit
    def f(x, w):
        return jax.nn.gelu(x @ w)

    y = f(x, w)          # numpy or JAX arrays in, numpy arrays out

    g = xlac.jit(f, target="cuda")
    y = g(x, w)          # xlac.DeviceArrays out, as jax.jit returns jax Arrays

On a GPU, arrays already there (a ``jax.Array`` on a GPU, a CUDA
``torch.Tensor``, a CuPy array, an ``xlac.DeviceArray``) go in without a
copy, and the results stay on the device until read (``.numpy()``,
``np.asarray``) or handed on, to this function's next call or to jax,
torch or CuPy through DLPack. Each new input signature (the argument tree, every leaf's shape and dtype,
and the values of ``static_argnums``) is lowered once with
``jax.jit(f).lower`` and compiled once with ``xlac.compile`` (which also
hits the persistent cache across processes). JAX arrays on the CPU are
read through DLPack without a copy. ``xlac.compile(jax.jit(f).lower(x))``
works too, without this wrapper.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from xlac.errors import XlacError


@dataclass(frozen=True)
class _Compiled:
    executable: object
    out_tree: object

    @functools.cached_property
    def _flat(self):
        """The executable called with the flat leaves (its own pytrees are f's)."""
        return self.executable.with_pytrees(None)

    def outputs(self, inputs: list) -> list:
        """The flat results: numpy arrays from the CPU, DeviceArrays from a GPU."""
        if not _on_device(self.executable):
            return self.executable.run(*inputs)
        results = self._flat(*inputs)
        return list(results) if isinstance(results, tuple) else [results]


class JitFunction:
    """A Python function compiled by xlac once per input signature."""

    def __init__(self, fun, static_argnums=(), target: str = "cpu"):
        self._fun = fun
        self._static = (static_argnums,) if isinstance(static_argnums, int) \
            else tuple(static_argnums)
        self._target = target
        self._compiled: dict = {}
        functools.update_wrapper(self, fun)

    def __call__(self, *args, **kwargs):
        jax = _jax()
        dynamic, static = self._split(args)
        leaves, tree = jax.tree_util.tree_flatten((dynamic, kwargs))
        arrays = [leaf if self._stays(leaf) else as_numpy(leaf) for leaf in leaves]
        key = (tree, static, tuple((tuple(a.shape), np.dtype(a.dtype).str) for a in arrays))
        compiled = self._compiled.get(key)
        if compiled is None:
            compiled = self._compiled[key] = self._compile(args, kwargs, arrays, tree)
        inputs = [a if not isinstance(a, np.ndarray) or a.dtype == s.dtype
                  else a.astype(s.dtype)                     # JAX's dtype canonicalization
                  for a, s in zip(arrays, compiled.executable.signature.inputs)]
        return jax.tree_util.tree_unflatten(compiled.out_tree, compiled.outputs(inputs))

    def _stays(self, leaf) -> bool:
        """Is ``leaf`` an array on the GPU this function runs on (read in place)?"""
        if self._target != "cuda" or isinstance(leaf, np.ndarray):
            return False
        from xlac.targets.cuda.device_array import is_device_value
        return is_device_value(leaf)

    def lower(self, *args, **kwargs):
        """``jax.jit(f).lower(*args)`` with the settings xlac.jit uses."""
        jax = _jax()
        jitted = jax.jit(self._fun, static_argnums=self._static, keep_unused=True)
        return jitted.lower(*args, **kwargs)

    @property
    def signatures(self) -> int:
        """How many input signatures have been compiled."""
        return len(self._compiled)

    def _compile(self, args, kwargs, arrays, tree) -> _Compiled:
        from xlac.compiler import compile as xlac_compile
        jax = _jax()
        specs = iter(jax.ShapeDtypeStruct(a.shape, a.dtype) for a in arrays)
        dynamic_specs, kwarg_specs = jax.tree_util.tree_unflatten(tree, list(specs))
        full = list(dynamic_specs)
        for index in sorted(self._static):            # put the static values back
            full.insert(index, args[index])
        lowered = self.lower(*full, **kwarg_specs)
        return _Compiled(xlac_compile(lowered, target=self._target), lowered.out_tree)

    def _split(self, args) -> tuple[tuple, tuple]:
        static = tuple(args[i] for i in self._static if i < len(args))
        dynamic = tuple(a for i, a in enumerate(args) if i not in self._static)
        return dynamic, static


def jit(fun=None, *, static_argnums=(), target: str = "cpu"):
    """Compile ``fun`` with xlac (lowered by JAX) once per input signature.

    Usable as ``@xlac.jit``, ``@xlac.jit(static_argnums=1)`` or ``xlac.jit(f)``.
    """
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums, target=target)
    return JitFunction(fun, static_argnums, target)


def _on_device(executable) -> bool:
    """Does ``executable`` run on a GPU, taking and returning device arrays?"""
    return getattr(executable.function, "device_call", None) is not None


def as_numpy(value) -> np.ndarray:
    """A numpy view of ``value``: zero-copy through DLPack where the producer
    allows it (JAX and torch CPU arrays), else a conversion."""
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "__dlpack__"):
        try:
            return np.from_dlpack(value)
        except (TypeError, BufferError, RuntimeError, ValueError):
            pass                     # on a GPU, or a dtype DLPack cannot carry
    return np.asarray(value)


def _jax():
    try:
        import jax
    except ImportError:
        raise XlacError("xlac.jit needs JAX: pip install 'xlac[bench]' (jax, jaxlib)") from None
    return jax
