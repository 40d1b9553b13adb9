"""The LAPACK routines behind JAX's CPU custom calls, one per matrix.

``jnp.linalg`` lowers, on the CPU, to ``stablehlo.custom_call @lapack_<t><routine>_ffi``
(``t`` = s, d, c, z): XLA's CPU runtime then calls LAPACK once per matrix of
the batch. For each routine this file says which Fortran function to call
and with what: characters, integers and arrays, the arrays given by their
per-matrix shape as stored (LAPACK's matrices are column-major), whether an
operand fills them, and which of them are the custom call's results.

The workspace sizes are LAPACK's documented ones where jaxlib uses the
documented minimum (syevd, heevd), the optimum itself where jaxlib asks for it
and the result may depend on it (geev, gees, gehrd, sytrd, geqp3:
lapack_workspace.py), else a bound above the optimum a workspace query would
return (geqrf, orgqr, gesdd, gesvd), so that LAPACK takes the same (blocked)
path it takes under XLA, whose numbers it then reproduces.
"""

from __future__ import annotations

from xlac.passes.lower.builders.lapack_workspace import optimal_workspace
from xlac.record import factory, record

_ELEMENT = {"s": "f32", "d": "f64", "c": "complex<f32>", "z": "complex<f64>"}
_REAL = {"s": "f32", "d": "f64", "c": "f32", "z": "f64"}
_INT_MAX = 2**31 - 1

# custom call target -> (routine family, description for messages)
ROUTINES = {
    "potrf": "Cholesky factorization (jnp.linalg.cholesky)",
    "getrf": "LU factorization with partial pivoting (jnp.linalg.solve, inv, det, lu)",
    "geqrf": "QR factorization (jnp.linalg.qr)",
    "orgqr": "Q of a QR factorization (jnp.linalg.qr)",
    "ungqr": "Q of a complex QR factorization (jnp.linalg.qr)",
    "syevd": "symmetric eigendecomposition (jnp.linalg.eigh)",
    "heevd": "Hermitian eigendecomposition (jnp.linalg.eigh)",
    "gesdd": "singular value decomposition (jnp.linalg.svd)",
    "gesvd": "singular value decomposition, QR algorithm (lax.linalg.svd)",
    "trsm": "triangular solve (jax.scipy.linalg.solve_triangular, jnp.linalg.solve)",
    "geev": "eigendecomposition of a general matrix (jnp.linalg.eig, eigvals)",
    "gees": "Schur decomposition (jax.scipy.linalg.schur, lax.linalg.schur)",
    "gehrd": "Hessenberg reduction (jax.scipy.linalg.hessenberg, lax.linalg.hessenberg)",
    "sytrd": "symmetric tridiagonal reduction (lax.linalg.tridiagonal)",
    "hetrd": "Hermitian tridiagonal reduction (lax.linalg.tridiagonal)",
    "gtsv": "tridiagonal solve (lax.linalg.tridiagonal_solve)",
    "geqp3": "QR with column pivoting (jax.scipy.linalg.qr(pivoting=True))",
}
_REAL_ONLY, _COMPLEX_ONLY = ("orgqr", "syevd", "sytrd"), ("ungqr", "heevd", "hetrd")


def lowered_targets() -> set[str]:
    """Every custom call target xlac lowers to LAPACK."""
    return {f"lapack_{t}{r}_ffi" for t in "sdcz" for r in ROUTINES
            if not (r in _REAL_ONLY and t in "cz") and not (r in _COMPLEX_ONLY and t in "sd")}


@record
class Array:
    """One array argument, per matrix: its shape as stored (row-major text of
    the column-major matrix), element type, and the operand that fills it:
    all of it, or (a vector) ``shape`` elements from ``offset`` on, the rest
    of the operand passing through to the result unchanged (gtsv's ``dl + 1``)."""

    shape: tuple[int, ...]
    element: str
    operand: int | None = None
    offset: int = 0


@record(mutable=True)
class Call:
    """One LAPACK call per matrix: ``symbol(args...)``; ``results`` name the
    arrays that are the custom call's results, in order."""

    symbol: str
    args: list = factory(list)     # ("char", "V") | ("int", 4) | ("array", name)
    arrays: dict[str, Array] = factory(dict)
    results: list[str | None] = factory(list)   # None: a result of zeros
    # result array -> the array of the imaginary parts of the eigenvalues: real
    # geev's packed eigenvectors, unpacked into the complex result (as jaxlib does)
    unpack: dict[str, str] = factory(dict)

    def char(self, letter: str) -> Call:
        self.args.append(("char", letter))
        return self

    def int(self, value: int) -> Call:
        self.args.append(("int", min(int(value), _INT_MAX)))
        return self

    def array(self, name: str, shape, element: str, operand: int | None = None,
              offset: int = 0) -> Call:
        self.arrays[name] = Array(tuple(max(0, d) for d in shape), element, operand, offset)
        self.args.append(("array", name))
        return self


def stored(rows: int, cols: int) -> tuple[int, int]:
    """A column-major rows x cols matrix, as the shape of its row-major storage."""
    return (cols, rows)


def lapack_call(kind: str, routine: str, operands: list[tuple[int, ...]],
                results: list[tuple[int, ...]], config: dict[str, str]) -> Call:
    """The call for one matrix; shapes are per matrix (batch dims removed).
    ValueError says what is not supported."""
    build = _BUILDERS.get(routine)
    if build is None:
        raise ValueError(f"no lowering for LAPACK routine '{routine}'")
    return build(kind, _ELEMENT[kind], _REAL[kind], operands, results, config)


def _potrf(t, el, real, ops, res, cfg) -> Call:
    n = ops[0][0]
    call = Call(f"{t}potrf_").char(cfg.get("uplo", "L")).int(n)
    call.array("a", stored(n, n), el, 0).int(max(1, n)).array("info", (1,), "i32")
    call.results = ["a", "info"]
    return call


def _getrf(t, el, real, ops, res, cfg) -> Call:
    m, n = ops[0]
    call = Call(f"{t}getrf_").int(m).int(n).array("a", stored(m, n), el, 0).int(max(1, m))
    call.array("ipiv", (min(m, n),), "i32").array("info", (1,), "i32")
    call.results = ["a", "ipiv", "info"]
    return call


def _geqrf(t, el, real, ops, res, cfg) -> Call:
    m, n = ops[0]
    work = max(1, 64 * n)
    call = Call(f"{t}geqrf_").int(m).int(n).array("a", stored(m, n), el, 0).int(max(1, m))
    call.array("tau", (min(m, n),), el).array("work", (work,), el).int(work)
    call.array("info", (1,), "i32")
    call.results = ["a", "tau"]
    return call


def _orgqr(t, el, real, ops, res, cfg) -> Call:
    (m, n), (k,) = ops[0], ops[1]
    work = max(1, 64 * n)
    name = "ungqr" if t in "cz" else "orgqr"
    call = Call(f"{t}{name}_").int(m).int(n).int(k).array("a", stored(m, n), el, 0)
    call.int(max(1, m)).array("tau", (k,), el, 1).array("work", (work,), el).int(work)
    call.array("info", (1,), "i32")
    call.results = ["a"]
    return call


def _syevd(t, el, real, ops, res, cfg) -> Call:
    n, vectors = ops[0][0], cfg.get("mode", "V") == "V"
    work = 1 + 6 * n + 2 * n * n if vectors else 2 * n + 1
    iwork = 3 + 5 * n if vectors else 1
    name = "heevd" if t in "cz" else "syevd"
    call = Call(f"{t}{name}_").char("V" if vectors else "N").char(cfg.get("uplo", "L")).int(n)
    call.array("a", stored(n, n), el, 0).int(max(1, n)).array("w", (n,), real)
    if t in "cz":     # heevd: complex and real workspaces (jaxlib's sizes)
        work = 2 * n + n * n if vectors else n + 1
        rwork = 1 + 5 * n + 2 * n * n if vectors else n
        call.array("work", (max(1, work),), el).int(max(1, work))
        call.array("rwork", (max(1, rwork),), real).int(max(1, rwork))
    else:
        call.array("work", (max(1, work),), el).int(max(1, work))
    call.array("iwork", (max(1, iwork),), "i32").int(max(1, iwork)).array("info", (1,), "i32")
    call.results = ["a", "w", "info"]
    return call


def _svd(t, el, real, ops, res, cfg, divide_and_conquer: bool) -> Call:
    (m, n), mode = ops[0], cfg.get("mode", "A")
    if mode not in ("A", "S", "N"):
        raise ValueError(f"SVD mode '{mode}' is not supported (A, S and N are)")
    mn, mx = min(m, n), max(m, n)
    (um, uc), (vr, vn) = res[2], res[3]
    work = max(1, m * n + 4 * mn * mn + 8 * mn + mx + 128 * (m + n))   # >= LAPACK's optimum
    name = "gesdd" if divide_and_conquer else "gesvd"
    call = Call(f"{t}{name}_").char(mode)
    if not divide_and_conquer:
        call.char(mode)                                                 # jobu, jobvt
    call.int(m).int(n).array("a", stored(m, n), el, 0).int(max(1, m)).array("s", (mn,), real)
    call.array("u", stored(um, uc), el).int(max(1, um))
    call.array("vt", stored(vr, vn), el).int(max(1, vr))
    call.array("work", (work,), el).int(work)
    if t in "cz":
        rwork = (max(5 * mn * mn + 7 * mn, 2 * mx * mn + 2 * mn * mn + mn) + 7 * mn
                 if divide_and_conquer else 5 * mn)
        call.array("rwork", (max(1, rwork),), real)
    if divide_and_conquer:
        call.array("iwork", (max(1, 8 * mn),), "i32")
    call.array("info", (1,), "i32")
    call.results = ["a", "s", "u", "vt", "info"]
    return call


def _trsm(t, el, real, ops, res, cfg) -> Call:
    (m, n), side = ops[1], cfg.get("side", "L")
    k = m if side == "L" else n
    call = Call(f"{t}trsm_").char(side).char(cfg.get("uplo", "L"))
    call.char(cfg.get("trans_x", "N")).char(cfg.get("diag", "N")).int(m).int(n)
    call.array("alpha", (1,), el, 2 if len(ops) > 2 else None)
    call.array("a", stored(k, k), el, 0).int(max(1, k))
    call.array("b", stored(m, n), el, 1).int(max(1, m))
    call.results = ["b"]
    return call


def _geev(t, el, real, ops, res, cfg) -> Call:
    """jaxlib's geev: eigenvalues (real: as real and imaginary parts) and, where
    asked ('V'), left and right eigenvectors, complex; a vector not asked for
    is a result of zeros (jaxlib leaves it unwritten)."""
    n = ops[0][0]
    left, right = cfg.get("compute_left", "N"), cfg.get("compute_right", "N")
    work = optimal_workspace(t, "geev", 130 * n + 2 * n * n, n=n, left=left, right=right)
    call = Call(f"{t}geev_").char(left).char(right).int(n)
    call.array("a", stored(n, n), el, 0).int(max(1, n))
    values = ["wr", "wi"] if t in "sd" else ["w"]
    for name in values:
        call.array(name, (n,), el)
    call.array("vl", stored(n, n), el).int(max(1, n)).array("vr", stored(n, n), el).int(max(1, n))
    call.array("work", (work,), el).int(work)
    if t in "cz":
        call.array("rwork", (max(1, 2 * n),), real)
    call.array("info", (1,), "i32")
    call.results = [*values, "vl" if left == "V" else None, "vr" if right == "V" else None, "info"]
    if t in "sd":
        call.unpack = dict.fromkeys(("vl", "vr"), "wi")
    return call


def _gees(t, el, real, ops, res, cfg) -> Call:
    """jaxlib's gees: the Schur form T, the Schur vectors Z where asked ('V'; else a
    result of zeros, jaxlib leaves it unwritten), the eigenvalues (real: as real and
    imaginary parts), sdim (0: nothing sorted) and info. SELECT is never called
    without sorting; a buffer stands for it (jaxlib passes null)."""
    n, mode, sort = ops[0][0], cfg.get("mode", "V"), cfg.get("sort", "N")
    if mode not in ("V", "N"):
        raise ValueError(f"Schur mode '{mode}' is not supported (V and N are)")
    if sort != "N":
        raise ValueError(f"sorting the eigenvalues (sort = '{sort}') is not supported: it needs "
                         "a SELECT function, which the call does not carry (jax refuses it too)")
    work = optimal_workspace(t, "gees", 3 * n + 64 * n + n * n, n=n, vectors=mode == "V")
    call = Call(f"{t}gees_").char(mode).char("N").array("select", (1,), "i32").int(n)
    call.array("a", stored(n, n), el, 0).int(max(1, n)).array("sdim", (1,), "i32")
    values = ["wr", "wi"] if t in "sd" else ["w"]
    for name in values:
        call.array(name, (n,), el)
    call.array("vs", stored(n, n), el).int(max(1, n)).array("work", (work,), el).int(work)
    if t in "cz":
        call.array("rwork", (max(1, n),), real)
    call.array("bwork", (max(1, n),), "i32").array("info", (1,), "i32")
    call.results = ["a", "vs" if mode == "V" else None, *values, "sdim", "info"]
    return call


def _gehrd(t, el, real, ops, res, cfg) -> Call:
    """Hessenberg form and the reflectors' taus; jax passes ilo = 1, ihi = n."""
    n = ops[0][0]
    low, high = cfg.get("low", 1), cfg.get("high", n)
    if not (isinstance(low, int) and isinstance(high, int)
            and 1 <= low <= max(1, high) and min(low, n) <= high <= n):
        raise ValueError(f"low = {low}, high = {high} are not LAPACK's 1 <= ilo <= max(1, ihi), "
                         f"min(ilo, n) <= ihi <= n for n = {n}")
    work = optimal_workspace(t, "gehrd", 64 * n + 4160, n=n, low=low, high=high)
    call = Call(f"{t}gehrd_").int(n).int(low).int(high)
    call.array("a", stored(n, n), el, 0).int(max(1, n)).array("tau", res[1], el)
    call.array("work", (work,), el).int(work).array("info", (1,), "i32")
    call.results = ["a", "tau", "info"]
    return call


def _sytrd(t, el, real, ops, res, cfg) -> Call:
    """Tridiagonal form: the reflectors in a, the diagonal and off-diagonal (real), taus."""
    n = ops[0][0]
    work = optimal_workspace(t, "sytrd", 64 * n, n=n)
    name = "hetrd" if t in "cz" else "sytrd"
    call = Call(f"{t}{name}_").char(cfg.get("uplo", "L")).int(n)
    call.array("a", stored(n, n), el, 0).int(max(1, n))
    call.array("d", res[1], real).array("e", res[2], real).array("tau", res[3], el)
    call.array("work", (work,), el).int(work).array("info", (1,), "i32")
    call.results = ["a", "d", "e", "tau", "info"]
    return call


def _gtsv(t, el, real, ops, res, cfg) -> Call:
    """jaxlib's gtsv: dl, d, du of n elements each (dl's first and du's last are not
    LAPACK's: it is given dl + 1), b (n x nrhs) overwritten by the solution."""
    n, nrhs = ops[3]
    if not ops[0] == ops[1] == ops[2] == (n,):
        raise ValueError(f"the diagonals {ops[:3]} must have the n = {n} elements of b's rows")
    call = Call(f"{t}gtsv_").int(n).int(nrhs).array("dl", (n - 1,), el, 0, offset=1)
    call.array("d", (n,), el, 1).array("du", (n - 1,), el, 2)
    call.array("b", stored(n, nrhs), el, 3).int(max(1, n)).array("info", (1,), "i32")
    call.results = ["dl", "d", "du", "b", "info"]
    return call


def _geqp3(t, el, real, ops, res, cfg) -> Call:
    """QR with column pivoting: R and the reflectors in a, jpvt (1-based, in and out), taus."""
    m, n = ops[0]
    work = optimal_workspace(t, "geqp3", 2 * n + (n + 1) * 64, m=m, n=n)
    call = Call(f"{t}geqp3_").int(m).int(n).array("a", stored(m, n), el, 0).int(max(1, m))
    call.array("jpvt", (n,), "i32", 1).array("tau", (min(m, n),), el)
    call.array("work", (work,), el).int(work)
    if t in "cz":
        call.array("rwork", (max(1, 2 * n),), real)
    call.array("info", (1,), "i32")
    call.results = ["a", "jpvt", "tau"]
    return call

_BUILDERS = {
    "potrf": _potrf, "getrf": _getrf, "geqrf": _geqrf, "orgqr": _orgqr, "ungqr": _orgqr,
    "syevd": _syevd, "heevd": _syevd, "trsm": _trsm, "geev": _geev, "gees": _gees,
    "gehrd": _gehrd, "sytrd": _sytrd, "hetrd": _sytrd, "gtsv": _gtsv, "geqp3": _geqp3,
    "gesdd": lambda *a: _svd(*a, divide_and_conquer=True),
    "gesvd": lambda *a: _svd(*a, divide_and_conquer=False),
}
