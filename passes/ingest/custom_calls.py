"""Which ``stablehlo.custom_call`` targets xlac compiles, and what to do about the rest.

A custom call names code outside the program. xlac has LAPACK's (``lapack_*_ffi``:
jnp.linalg on the CPU, ``xla-lower-custom-calls``) and rewrites ``@ApproxTopK``
(lax.approx_max_k) at ingest (approx_top_k.py); for every other target the
refusal names it and says what the user can do instead.
"""

from __future__ import annotations

_CALLBACKS = ("xla_python_cpu_callback", "xla_ffi_python_cpu_callback",
              "xla_ffi_partial_python_cpu_callback", "xla_python_gpu_callback",
              "xla_ffi_python_gpu_callback", "xla_ffi_partial_python_gpu_callback")
_GPU_PREFIXES = ("cusolver_", "cublas", "cu_", "cuda_", "hipsolver_", "hipblas", "hip_",
                 "__cublas", "__cudnn", "triton_kernel_call", "__gpu$", "mosaic_gpu")
_LAPACK_REST = {       # jaxlib registers these too; jax 0.10 lowers lax.linalg.ormqr without them
    "ormqr": "applying Q of a QR factorization", "unmqr": "applying Q of a QR factorization",
}


# The custom calls of shape-polymorphic programs (jax.export with symbolic dims):
# kept while the entry takes `?` dims, decided once a call's shapes specialize
# the program (xla-check-shape-assertions; stablehlo-canonicalize-dynamism and
# xla-static-dynamic-calls make the stablehlo.dynamic_* ones static ops), and
# ApproxTopK, whose static form xla-static-dynamic-calls rewrites once refined.
DECIDED_PER_SHAPE = frozenset({"shape_assertion", "stablehlo.dynamic_reduce_window",
                               "stablehlo.dynamic_rng_bit_generator", "stablehlo.dynamic_top_k",
                               "ApproxTopK"})


# The targets whose code can call LAPACK (the host's: SciPy's OpenBLAS).
LAPACK_PLATFORMS = ("cpu",)


def custom_call_reason(target: str, platform: str) -> str | None:
    """Why a custom call to ``target`` cannot be compiled for ``platform``, or None."""
    # here, not with the module: xla-check-support imports this on every program,
    # and the LAPACK tables are wanted only where it has a custom call
    from xlac.passes.lower.builders.lapack_calls import ROUTINES, lowered_targets
    if target in lowered_targets():
        if platform in LAPACK_PLATFORMS:
            return None
        routine = ROUTINES[target[len("lapack_") + 1:-len("_ffi")]]
        return (f"@{target} ({routine}) calls LAPACK, which xlac runs on the CPU only: "
                "compile for target='cpu'")
    if target == "ApproxTopK":          # the forms approx_top_k.py takes are rewritten before
        return ("@ApproxTopK (lax.approx_max_k / approx_min_k) is compiled in the form jax writes "
                "(a comparator, one init value per operand, shapes static once the call's are "
                "known); this one is not: use lax.top_k")
    if target in DECIDED_PER_SHAPE:
        return (f"@{target} is one of the ops jax.export writes for symbolic shapes; it becomes a "
                "static op (or goes away) once the shapes are known, and it did not here: "
                "export the function with concrete shapes")
    if target in _CALLBACKS:
        return (f"@{target} is a jax.pure_callback, io_callback or jax.debug.print: it calls back "
                "into the Python process that lowered the program, which xlac cannot reach; "
                "remove it from the exported function (compute its value outside and pass it "
                "in as an argument)")
    if target.startswith("lapack_"):
        routine = target[len("lapack_") + 1:].removesuffix("_ffi")
        what = _LAPACK_REST.get(routine, f"LAPACK's {routine}")
        return (f"@{target} ({what}) has no xlac lowering yet (xlac lowers "
                f"{', '.join(sorted(ROUTINES))}): compute it outside the exported function, "
                "e.g. with numpy.linalg, and pass the result in")
    if target.startswith(_GPU_PREFIXES):
        return (f"@{target} calls a GPU library or kernel: the program was lowered for a GPU; "
                "lower it for the CPU (jax.jit(f).lower(x) on a CPU backend, or "
                "jax.export(..., platforms=['cpu']))")
    if target in ("tpu_custom_call",) or target.startswith("mosaic"):
        return (f"@{target} is a Pallas/Mosaic kernel for a TPU; xlac cannot compile it: "
                "export the function with its plain-jnp reference implementation")
    return (f"@{target} names code outside the program that xlac does not have: export the "
            "function without it, or write that part in StableHLO ops")


# The op-support table's cells for stablehlo.custom_call, per target.
TABLE_CELLS = {
    "cpu": "by target: JAX's LAPACK calls (`lapack_*_ffi`: eigh, eig, svd, qr, lu, cholesky, "
           "triangular solve, schur, hessenberg, tridiagonal, tridiagonal solve, pivoted qr; "
           "docs/lapack.md); `@ApproxTopK` (lax.approx_max_k) as the exact "
           "sort and slice, at ingest; any other target is refused, by name",
    "cuda": "no: LAPACK calls run on the CPU only (`@ApproxTopK` becomes a sort at ingest, "
            "as on the CPU); any other target is refused, by name",
}
