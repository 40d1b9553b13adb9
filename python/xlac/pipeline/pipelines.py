"""The compilation pipelines, top to bottom, one named step a line.

Each stage is a named pipeline (usable in ``--pass-pipeline`` like a pass)
whose output is addressable by name: ``exe.as_text("linalg")``,
``xla-opt --xla-stage=linalg``. ``cpu_stages(entry, options)`` fills in
what the options decide (threads, the CPU's vector width, remarks); the
passes themselves never read the options.
"""

from __future__ import annotations

from xlac.cpu_model import cpu_model
from xlac.options import Options


def ingest(entry: str = "main", target: str = "cpu") -> list[str]:
    """input -> "stablehlo": one verified StableHLO function with static shapes."""
    return [
        f"xla-select-entry{{entry={entry}}}",            # one public entry; the rest can inline
        "xla-check-ranked",                               # chlo's legalization aborts on tensor<*x..>
        # !quant.uniform -> integer math, before refine-shapes (which crashes on
        # per-axis types) and before chlo legalization (the math uses chlo.broadcast_*)
        "func.func(stablehlo-legalize-quantized-op-to-qdq)",  # e.g. quantized sin: dequantize, sin, quantize
        "func.func(stablehlo-legalize-quant-to-math)",    # uniform_(de)quantize, int dot/conv/add
        "xla-outline-top-k",                              # top_k kept from the full sort chlo's legalization makes
        "func.func(chlo-legalize-to-stablehlo)",          # JAX emits chlo.erf, chlo.top_k, ...
        "func.func(stablehlo-legalize-composite-to-call)",  # composites run their decomposition
        "inline",                                         # one function body to lower
        "symbol-dce",                                     # drop the inlined private functions
        "stablehlo-refine-shapes",                        # `?` dims from the entry's arguments
        "func.func(stablehlo-canonicalize-dynamism)",     # dynamic_pad/reshape... with constant shapes -> static ops
        "xla-unroll-short-loops",                         # fori_loops of <= 8 trips (threefry): one fusion, not 5 kernels
        "canonicalize",
        "cse",
        f"xla-check-support{{target={target}}}",         # every unsupported op, before lowering
    ]


def fuse(remarks: bool | str = False) -> list[str]:
    """"stablehlo" -> "fused": ops grouped into xla.fusion kernels, as XLA does."""
    why = "{remarks=true}" if _true(remarks) else ""
    return [
        "xla-fold-transposes",                            # transpose(dot(a, b)) -> dot(b, a): gradients' layout
        "xla-fold-broadcast-operands",                    # batched dot with a broadcast weight -> one unbatched dot
        f"xla-fuse{why}",                                 # loop/input/output/multi-output kernels; why not: remarks
    ]


def lower_to_linalg() -> list[str]:
    """"stablehlo" -> "linalg": linalg on tensors, elementwise chains fused."""
    return [
        "xla-inline-fusions",                             # plain ops again, each tagged with its kernel (xla.fusion_group)
        # xlac's lowerings for what upstream stablehlo-legalize-to-linalg lacks
        # come first; each emits scf/tensor/linalg (or simpler StableHLO).
        "xla-lower-structural",                           # fold tuples, drop barriers/dot algorithm hints
        "xla-lower-collectives",                          # all_reduce, all_gather ...: calls on send/receive buffers
        "xla-lower-custom-calls",                         # jnp.linalg's LAPACK custom calls -> calls of LAPACK
        "xla-lower-select-and-scatter",                   # max-pool gradient: window loops
        "xla-lower-linalg-ops",                           # triangular_solve, cholesky: substitution loops
        "xla-lower-fft",                                  # fft: one f64 DFT linalg.generic per axis
        "xla-expand-complex-ops",                         # complex max/min order, complex bitcast, cbrt
        "xla-integer-arithmetic",                         # i1 add/multiply -> or/and (upstream: xor); integer power
        "xla-expand-constant-powers",                     # x^-1.5, x^0.5, x^2 ...: sqrt/multiply/divide, not scalar powf
        "xla-reduce-precision-nans",                      # e?m0 has no NaN: NaN -> inf, as XLA
        "xla-widen-f8-predicates",                        # is_finite of f8 in f32: FN/FNUZ formats have no inf
        "xla-split-f64-truncation",                       # f64 -> f16/bf16 via f32: the JIT lacks __truncdfhf2
        "xla-fold-empty-reductions",                      # reduce of a zero-size tensor = init; upstream leaves it
        "xla-lower-sort",                                 # merge sort in scf loops; no upstream pattern
        "xla-lower-top-k",                                # top_k: one pass per row against a k-buffer
        "xla-widen-contractions",                         # bf16/f16 dot/conv in f32, as XLA: one rounding, f32 schedules
        "xla-canonicalize-convolutions",                  # any layout, dilated input, weight gradients -> NHWC x HWIO
        "xla-flatten-reductions",                         # reduce over neighbouring dims: one dim, rows or columns
        "xla-rewrite-reduce-windows",                     # cumsum & co as log-step scans; padded windows -> pad + pooling
        "xla-decompose-batch-norm",                       # batch_norm_* as reduce + elementwise ops
        "xla-lower-scatter",                              # scatter as scf loops of slice updates; no upstream pattern
        "xla-lower-control-flow",                         # while/if/case -> scf; after the others, which may emit them
        "inline",                                         # helpers some lowerings call
        "xla-outline-fusions",                            # each kernel a function until elementwise fusion ...
        "func.func(stablehlo-legalize-to-linalg)",        # upstream StableHLO -> linalg/tensor/arith
        "xla-verify-lowered",                             # nothing of StableHLO may be left
        "stablehlo-convert-to-signless",                  # ui32 in the signature -> i32, no casts
        "xla-saturate-float-to-int",                      # NaN -> 0, clamp out-of-range, as XLA
        "canonicalize",
        "cse",
        "xla-normalize-contractions{outline=true}",       # dot_generals in functions of their own: kept ...
        "func.func(linalg-fuse-elementwise-ops)",         # ... out of the elementwise producer->consumer fusion
        "xla-normalize-contractions",                     # then as transposes + linalg.(batch_)matmul
        "xla-outline-fusions{release=true}",              # ... has fused inside kernels only
        "inline",                                         # kernels and contractions back in place
        "canonicalize",
        "loop-invariant-code-motion",                     # while bodies: weights concatenated once, not per step
    ]


def bufferize(threads: int | str = 0, vector_bytes: int | str = 0) -> list[str]:
    """"linalg" -> "bufferized": memrefs; results written into caller-owned buffers.

    ``threads`` and ``vector_bytes`` are the schedules' (0: this host's).
    """
    return [
        "xla-splat-constants-to-fill",                    # a 10^8-element splat: a fill loop, not a 400 MB global
        "xla-update-windows-in-place",                    # a scatter's window combined into itself: no copy per index
        "xla-collapse-reduction-loops",                   # (n, g, c | h, w) -> (n, g*c | h*w): a column reduction
        "xla-speculate-branch-reads",                     # a concatenate's branch per element: a select of clamped reads
        # per op class: scf.forall over the threads' chunks, tiles for caches
        # and registers, vector ops (passes/cpu/schedules/); on tensors, so the
        # bufferization below sees only in-place slices and needs no copies
        f"xla-apply-schedules{{threads={int(threads)} vector-bytes={int(vector_bytes)}}}",
        "xla-unmask-contractions",                        # the rows a register tile leaves: no mask bits per lane
        "xla-readonly-inputs",                            # never write into the caller's arrays
        "xla-spread-readonly-reads",                      # a weight read 1,000 times: no quadratic analysis
        "one-shot-bufferize{bufferize-function-boundaries "
        "function-boundary-type-conversion=identity-layout-map "
        "allow-return-allocs-from-loops}",                # scf.while from stablehlo.while yields new tensors
        "canonicalize",                                   # a tiled loop's result is its init buffer: return that, no copy
        "drop-equivalent-buffer-results",                 # a kernel function's result is the buffer it was passed
        "xla-distinct-results",                           # `return %v, %v`: out-params would crash on one alloc
        "buffer-results-to-out-params{modify-public-functions=1 hoist-static-allocs=1}",
        "func.func(buffer-loop-hoisting)",                # a fused row's temporaries: one malloc per chunk, not per row
        # buffer-deallocation-pipeline (temporaries are freed each call), in its
        # parts: its simplification is quadratic in one dealloc's buffers
        "expand-realloc{emit-deallocs=false}",
        "canonicalize",
        "ownership-based-buffer-deallocation",
        "canonicalize",
        "xla-split-alloc-deallocs",                       # a dealloc per fresh buffer: they never alias
        "buffer-deallocation-simplification",
        "bufferization-lower-deallocations",
        "cse",
        "canonicalize",
        "canonicalize",
    ]


def lower_to_llvm(native_bf16: bool | str = False, profile: bool | str = False,
                  cpu: str = "host", native_f16: bool | str = True) -> list[str]:
    """"bufferized" -> "llvm": the LLVM dialect, entry with the bare-pointer ABI.

    bf16 and f16 math runs in f32 on every CPU (the same numbers everywhere);
    the f32 -> bf16 rounding is integer code unless the CPU converts natively
    (AVX512-BF16): without it LLVM would call libgcc's ``__truncsfbf2``,
    which the JIT cannot find. The same for f16 where the CPU lacks F16C
    (x86-64-v2): its arithmetic in f32 too, its conversions integer code.
    """
    expand = "arith-expand" if _true(native_bf16) else "arith-expand{include-bf16=true}"
    emulated, casts, math_types = (_EMULATED, "xla-expand-f8-casts", "extra-types=f16 ") \
        if _true(native_f16) else (_EMULATED + ",f16", "xla-expand-f8-casts{f16=true}", "")
    clock = ["xla-profile-kernels"] if _true(profile) else []   # exe.profile(): a clock around each kernel
    return [
        "xla-check-memory",                               # buffers past this machine's memory: an error, not a NULL malloc
        "xla-collectives-to-mpi",                         # collective buffer calls -> the MPI shim (inlined below)
        "xla-strided-copy-to-linalg",                     # no memrefCopy runtime call
        "xla-empty-entry-buffers",                        # memref<2x0x1xf32> args have no bare-pointer form
        "xla-approximate-math",                           # f32 exp/tanh as polynomials: no libm call per lane
        "xla-inline-schedule-calls",                      # each kernel function a copy per call, at the call's line
        "inline",                                         # ... whose helpers go back in place
        "xla-outline-kernels",                            # a function per kernel, one per distinct kernel
        "func.func(scf-forall-to-parallel)",              # the schedules' thread chunks ...
        "convert-scf-to-openmp",                          # ... run as omp.parallel + omp.wsloop (libiomp5)
        "xla-openmp-dynamic-schedule",                    # chunks go to whichever thread is running
        "canonicalize",                                   # drop the memref.alloca_scope it adds: nothing to free
        *clock,
        "func.func(convert-linalg-to-loops)",             # ops no schedule took: scalar loops
        "func.func(lower-vector-multi-reduction)",        # reductions' vector.multi_reduction -> 1-D adds
        "func.func(convert-vector-to-scf{full-unroll=true target-rank=1})",  # n-D transfers -> 1-D
        "lower-affine",
        "xla-no-unroll-fill-loops",                       # zeroing loops stay rolled: unrolled, 8x the code, no speed
        "xla-no-unroll-elementwise-loops",                # so do elementwise kernels' vector loops: a fifth of their LLVM time
        "convert-scf-to-cf",
        f"func.func(math-extend-to-supported-types{{{math_types}target-type=f32}})",  # bf16 math in f32 ...
        f"func.func(arith-emulate-unsupported-floats{{source-types={emulated} target-type=f32}})",  # ... and bf16, f8 arithmetic
        casts,                                            # f8 (and f16 without F16C) <-> f32 as integer code
        "convert-complex-to-standard",
        "xla-expm1-to-libm",                              # libm's expm1: convert-math-to-llvm's exp(x)-1 loses small x
        "expand-strided-metadata",
        "lower-affine",                                   # dynamic subview offsets -> affine.apply
        "finalize-memref-to-llvm",
        # exp, log, sqrt ... as LLVM intrinsics; not log1p: its log(1+x) loses
        # all digits for small x, so libm's log1p takes it below
        "convert-math-to-llvm{approximate-log1p=false}",
        "convert-math-to-libm",                           # tanh, erf, atan2 ... from libm
        expand,                                           # after libm, whose f32 calls add truncations to bf16
        # 1-D vectors -> LLVM (after libm, which splits vectors into scalar calls);
        # a matmul tile's vector.contract -> one FMA per row
        "convert-vector-to-llvm{vector-contract-lowering=outerproduct vector-transpose-lowering=shuffle1d}",
        "convert-complex-to-llvm",
        "convert-arith-to-llvm",
        "convert-index-to-llvm",
        "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1}",  # entry(ptr in..., ptr out...)
        "convert-openmp-to-llvm",                         # after func: it would convert func without bare pointers
        "convert-ub-to-llvm",                             # ub.poison padding of vector reads
        "convert-cf-to-llvm",
        "xla-loop-annotations-to-llvm",                   # ... where the translation to LLVM IR reads it
        "reconcile-unrealized-casts",
        "xla-bf16-memory-as-i16",                         # no per-lane bf16 store LLVM would truncate via __truncsfbf2
        "xla-split-long-blocks",                          # an entry of thousands of calls: parts compiled in parallel
        f"xla-target-cpu{{cpu={cpu}}}",                   # code for the chosen CPU level, not the JIT's host
    ]


# Element types whose arithmetic runs in f32 (LLVM has bf16 but no CPU arithmetic on it, and no f8).
_EMULATED = ",".join(("bf16", "f8E5M2", "f8E4M3", "f8E3M4", "f8E4M3FN", "f8E4M3FNUZ", "f8E5M2FNUZ",
                      "f8E4M3B11FNUZ"))


def _true(flag: bool | str) -> bool:
    """A pipeline option: a bool, or its text in --pass-pipeline."""
    return str(flag).lower() in ("1", "true")


def cpu(entry: str = "main", threads: int | str = 0, vector_bytes: int | str = 0,
        remarks: bool | str = False, native_bf16: bool | str = False) -> list[str]:
    """The whole CPU pipeline: input -> LLVM dialect ready for the JIT."""
    return (ingest(entry, "cpu") + fuse(remarks) + lower_to_linalg()
            + bufferize(threads, vector_bytes) + lower_to_llvm(native_bf16))


# The stages of the CPU pipeline, in order; each stage's steps: cpu_stages().
CPU_STAGES = ("input", "stablehlo", "fused", "linalg", "bufferized", "llvm")


def cpu_stages(entry: str = "main", options: Options | None = None) -> dict[str, list[str]]:
    """Each CPU stage's steps, with what ``options`` decides filled in."""
    options = options or Options()
    model = cpu_model(options.cpu)
    return {
        "input": [],
        "stablehlo": ingest(entry, "cpu"),
        "fused": fuse(options.fusion_remarks),
        "linalg": lower_to_linalg(),
        "bufferized": bufferize(options.threads(), model.vector_bytes),
        "llvm": lower_to_llvm(model.native_bf16, options.profile, model.name, model.native_f16),
    }


# Named pipelines usable inside --pass-pipeline: name -> (builder, summary).
NAMED_PIPELINES: dict[str, tuple[callable, str]] = {
    "xla-ingest": (ingest, "input -> one StableHLO function, checked for support"),
    "xla-fuse-stage": (fuse, "StableHLO -> StableHLO grouped into xla.fusion kernels"),
    "xla-lower-to-linalg": (lower_to_linalg, "StableHLO -> linalg on tensors"),
    "xla-bufferize": (bufferize, "tensors -> memrefs with out-params"),
    "xla-lower-to-llvm": (lower_to_llvm, "memrefs/loops -> LLVM dialect"),
    "xla-cpu-pipeline": (cpu, "the whole CPU pipeline"),
}


# A pass that must run whenever another does: disabling it alone breaks the program.
NEEDED_WITH = {
    "xla-inline-fusions": ("xla-fuse", "it turns xla-fuse's xla.fusion kernels back into ops "
                                       "the lowerings understand"),
}


def steps_until(stage: str, entry: str = "main", options: Options | None = None) -> list[str]:
    """Every step from the input up to and including ``stage``."""
    if stage not in CPU_STAGES:
        raise KeyError(stage)
    steps: list[str] = []
    for name, stage_steps in cpu_stages(entry, options).items():
        steps += stage_steps
        if name == stage:
            return steps
    return steps
