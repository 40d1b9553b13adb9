"""LAPACK's optimal workspace sizes, asked at compile time of the LAPACK the code will call.

jaxlib asks LAPACK for the optimum (a call with ``lwork = -1``) at run time and passes
exactly that. For geev, gees, gehrd, sytrd/hetrd and geqp3 xlac does the same, at compile
time, through SciPy's wrappers of the same library (docs/lapack.md; gees through the
function cython_lapack exports, with null arrays as jaxlib passes): geev's eigenvectors
depend on the size given (trevc3 takes its block size from it, and a bound above the
optimum gave vectors 2e-8 off XLA's), and gees runs geev's steps (gehrd, orghr, hseqr);
asking is the one way to be sure of taking jaxlib's path for every routine and size.

Without SciPy there is no LAPACK to call either (the program then fails to compile, saying
what to install); the sizes returned then are LAPACK's documented bounds, never used.
"""

from __future__ import annotations

_DTYPE = {"s": "float32", "d": "float64", "c": "complex64", "z": "complex128"}


def optimal_workspace(t: str, routine: str, bound: int, **shape) -> int:
    """The ``lwork`` jaxlib passes to ``{t}{routine}_`` for ``shape`` (n; m, n for
    geqp3; the routine's options), or ``bound`` without SciPy."""
    try:
        from scipy.linalg import lapack
    except ImportError:
        return max(1, bound)
    work = _QUERIES[routine](lapack, t, **shape)
    return max(1, int(abs(work)))


def _geev(lapack, t, n, left, right):
    query = getattr(lapack, f"{t}geev_lwork")
    return query(max(1, n), compute_vl=int(left == "V"), compute_vr=int(right == "V"))[0]


def _gees(lapack, t, n, vectors):
    """``?gees`` with ``lwork = -1`` and null arrays, as jaxlib asks it, through the
    function SciPy's cython_lapack exports (SciPy's Python ``gees`` would allocate
    and clear n x n outputs first: 2.5 s and 256 MiB at n = 4000, complex)."""
    import ctypes

    from scipy.linalg import cython_lapack
    capsule = ctypes.py_object(cython_lapack.__pyx_capi__[f"{t}gees"])
    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype, api.PyCapsule_GetName.argtypes = ctypes.c_char_p, [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    address = api.PyCapsule_GetPointer(capsule, api.PyCapsule_GetName(capsule))
    gees = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 15)(address)
    jobvs, sort = ctypes.c_char(b"V" if vectors else b"N"), ctypes.c_char(b"N")
    order, lwork, info = ctypes.c_int(max(1, n)), ctypes.c_int(-1), ctypes.c_int(0)
    work = (ctypes.c_double * 2)()                  # room for one complex<f64>
    ref = ctypes.addressof
    head = [ref(jobvs), ref(sort), None, ref(order), None, ref(order), None]   # ..., a, lda, sdim
    if t in "sd":        # wr, wi, vs, ldvs, work, lwork, bwork, info
        tail = [None, None, None, ref(order), ref(work), ref(lwork), None, ref(info)]
    else:                # w, vs, ldvs, work, lwork, rwork, bwork, info
        tail = [None, None, ref(order), ref(work), ref(lwork), None, None, ref(info)]
    args = head + tail
    gees(*args)
    if info.value != 0:
        raise ValueError(f"{t}gees's workspace query failed (info = {info.value})")
    first = ctypes.c_float.from_buffer(work) if t in "sc" else ctypes.c_double.from_buffer(work)
    return first.value


def _gehrd(lapack, t, n, low, high):
    # SciPy's lo/hi are 0-based (it adds one); jax's low/high are LAPACK's ilo/ihi
    return getattr(lapack, f"{t}gehrd_lwork")(max(1, n), lo=low - 1, hi=max(low, high) - 1)[0].real


def _sytrd(lapack, t, n):
    name = "hetrd" if t in "cz" else "sytrd"
    return getattr(lapack, f"{t}{name}_lwork")(max(1, n), lower=1)[0].real   # as jaxlib: 'L'


def _geqp3(lapack, t, m, n):
    import numpy as np
    a = np.zeros((max(1, m), max(1, n)), _DTYPE[t], order="F")
    return getattr(lapack, f"{t}geqp3")(a, lwork=-1, overwrite_a=1)[-2][0].real


_QUERIES = {"geev": _geev, "gees": _gees, "gehrd": _gehrd, "sytrd": _sytrd, "geqp3": _geqp3}
