"""The stages every target shares, top to bottom, one named step a line:
input -> "stablehlo" -> "fused" -> "linalg". Each target's table
(``xlac.targets.<name>.target``) puts them first and adds its own.

Each is also a named pipeline (usable in ``--pass-pipeline`` like a pass).
A stage's steps come from ``(entry, options)``: what the options decide
(remarks, threads, the CPU's vector width) is filled in there; the passes
themselves never read the options.
"""

from __future__ import annotations

TYPE_CHECKING = False             # typing.TYPE_CHECKING, without importing typing on a hit
if TYPE_CHECKING:
    from xlac.options import Options

# k from which a counted top-k (``lower_to_linalg``'s ``counted_top_k``) counts:
# below it the walk up the buffer is as fast (k = 96, 128 measured even on Zen 4)
COUNTED_TOP_K = 128


def ingest(entry: str = "main", target: str = "cpu") -> list[str]:
    """input -> "stablehlo": one verified StableHLO function with static shapes."""
    return [
        f"xla-select-entry{{entry={entry}}}",            # one public entry; the rest can inline
        "xla-check-ranked",                               # chlo's legalization aborts on tensor<*x..>
        "xla-logical-booleans",                           # true + true is true: before any folding takes it for xor
        # !quant.uniform -> integer math, before refine-shapes (which crashes on
        # per-axis types) and before chlo legalization (the math uses chlo.broadcast_*)
        "func.func(stablehlo-legalize-quantized-op-to-qdq)",  # e.g. quantized sin: dequantize, sin, quantize
        "func.func(stablehlo-legalize-quant-to-math)",    # uniform_(de)quantize, int dot/conv/add
        "xla-outline-top-k",                              # top_k (chlo, jax.export's composite) kept from the full sort
        "func.func(chlo-legalize-to-stablehlo)",          # JAX emits chlo.erf, chlo.top_k, ...
        "func.func(stablehlo-legalize-composite-to-call)",  # composites run their decomposition
        "inline",                                         # one function body to lower
        "symbol-dce",                                     # drop the inlined private functions
        "stablehlo-refine-shapes",                        # `?` dims from the entry's arguments
        "func.func(stablehlo-canonicalize-dynamism)",     # dynamic_pad/reshape... with constant shapes -> static ops
        "xla-static-dynamic-calls",                       # jax.export's dynamic_reduce_window, ApproxTopK -> static ops; refine again
        "xla-unroll-short-loops",                         # fori_loops of <= 8 trips (threefry): one fusion, not 5 kernels
        "xla-sort-slice-to-top-k",                        # sort + slice of its head (torch, jnp.argsort): a top-k
        "canonicalize",
        "cse",
        "xla-check-shape-assertions",                     # jax.export's checks of symbolic dims, now constants
        f"xla-check-support{{target={target}}}",         # every unsupported op, before lowering
    ]


def fuse(remarks: bool | str = False, producer_kernels: bool | str = True) -> list[str]:
    """"stablehlo" -> "fused": ops grouped into xla.fusion kernels, as XLA does.
    ``producer_kernels``: elementwise kernels join the elementwise kernels that
    read them (the CPU's, whose xla-merge-kernel-generics makes one loop nest of each)."""
    options = (["remarks=true"] if true_flag(remarks) else []) \
        + ([] if true_flag(producer_kernels) else ["producer-kernels=false"])
    why = "{" + " ".join(options) + "}" if options else ""
    return [
        "xla-fold-transposes",                            # transpose(dot(a, b)) -> dot(b, a): gradients' layout
        "xla-fold-broadcast-operands",                    # batched dot with a broadcast weight -> one unbatched dot
        "xla-constants-into-loops",                       # a loop body's splats, hoisted by canonicalize, back in
        f"xla-fuse{why}",                                 # loop/input/output/multi-output kernels; why not: remarks
    ]


def lower_to_linalg(complex_as_real: bool = True, collective_bucket_bytes: int | str = 0,
                    parallel_rows: bool = True, library_contractions: bool | str = False,
                    narrow_sums_in_f32: bool | str = False, counted_top_k: bool | str = False,
                    integer_kernel: bool | str = False, fft_kernels: bool | str = False) -> list[str]:
    """"stablehlo" -> "linalg": linalg on tensors, elementwise chains fused.

    ``complex_as_real``: complex contractions as four real ones, for a target
    whose real contraction schedules keep the interpreter's rounding (the
    CPU's). CUDA's matmul kernel multiplies and adds in one fma: its four
    fused sums of a cancelling complex dot drift up to 60 ulp from the
    interpreter (four conformance programs), so there the complex loop kernel
    stays. ``collective_bucket_bytes``: all-reduces combined up to this size
    (0: never). ``parallel_rows``: the rows of a sort on the target's threads
    (scf.forall), for a target that runs scf.forall in parallel (the CPU's).
    ``library_contractions``: matmuls go to a library (cuBLASLt on
    cuda) that reads bf16/f16 operands as they are and computes f32 dots at
    their precision_config: the operands stay narrow (the result is widened),
    and a HIGHEST precision is marked on the dot for its matmul.
    ``narrow_sums_in_f32``: f16/bf16/f8 sums accumulate in f32, rounded once
    (xla-widen-narrow-sums), for a target whose f32 reductions run in vector
    lanes (the CPU's); with them, complex tensors of sums and moves as pairs
    of their parts (xla-complex-as-pairs). ``counted_top_k``: a top-k of k >= 128
    finds each slot by vector compares (the CPU's with AVX-512; with AVX2 the
    walk measured faster, PERFORMANCE.md). ``integer_kernel``: the target has an
    integer micro-kernel for 8-bit matmuls (the CPU's at x86-64-v3/-v4): those it
    takes are one i32 dot over the whole k, not exact f32 chunks. ``fft_kernels``: the FFTs'
    Rader stages call micro-kernels built once per machine (the CPU's with micro-kernels on).
    """
    top_k = f"xla-lower-top-k{{counted-insert-k={COUNTED_TOP_K}}}" if true_flag(counted_top_k) \
        else "xla-lower-top-k"
    sort = "xla-lower-sort{parallel-rows=true}" if parallel_rows else "xla-lower-sort"
    split_complex = ["xla-split-complex-contractions"] if complex_as_real else []
    contiguous = ["xla-contiguous-contraction-operands"] if complex_as_real else []
    library = true_flag(library_contractions)
    widen = "xla-widen-contractions{keep-narrow=true}" if library else \
        "xla-widen-contractions{integer-kernel=true}" if true_flag(integer_kernel) else "xla-widen-contractions"
    mark = ["xla-mark-contraction-precision"] if library else []
    # complex sums and moves as f32/f64 pairs: for the same targets, whose real
    # reduction schedules are the vector ones
    widen_sums = ["xla-widen-narrow-sums", "xla-complex-as-pairs"] if true_flag(narrow_sums_in_f32) else []
    # pads as slices: for the CPU's row copies (the target of ``parallel_rows``); CUDA's
    # convolution lowerings (im2col, weight gradients as one matmul) find a padded input as a pad
    concatenate = "xla-concatenate-as-slices" if parallel_rows else \
        "xla-concatenate-as-slices{kernel-results=false pads=false}"
    # grouped convolutions as ungrouped ones: the CPU's schedules (CUDA has a grouped kernel);
    # a weight gradient's dots per row of positions: the CPU's (CUDA's one-matmul pass takes them per position)
    canonicalize_convs = "xla-canonicalize-convolutions" if parallel_rows else \
        "xla-canonicalize-convolutions{groups=false rows=false}"
    # sums along short rows 8 rows at a time in place: vector transfers, for the CPU
    reduce_windows = "xla-rewrite-reduce-windows" if parallel_rows else "xla-rewrite-reduce-windows{rows=false}"
    # each kernel one loop nest with several results: for the CPU's elementwise schedules
    merge = ["xla-merge-kernel-generics"] if parallel_rows else []
    # max-pool gradients over window positions as elementwise ops: the CPU's vector schedules
    select_scatter = "xla-lower-select-and-scatter{windows=true}" if parallel_rows else "xla-lower-select-and-scatter"
    # an iota read by several loop nests: a copy each, fused as linalg.index (the CPU's argmax loops)
    iotas = ["xla-duplicate-index-producers"] if parallel_rows else []
    combine = [f"xla-combine-all-reduces{{bucket-bytes={int(collective_bucket_bytes)}}}"] \
        if int(collective_bucket_bytes) > 0 else []
    return [
        "xla-inline-fusions",                             # plain ops again, each tagged with its kernel (xla.fusion_group)
        # xlac's lowerings for what upstream stablehlo-legalize-to-linalg lacks
        # come first; each emits scf/tensor/linalg (or simpler StableHLO).
        "xla-lower-structural",                           # fold tuples, drop barriers/dot algorithm hints
        *combine,                                         # small all-reduces as one (a bucket)
        "xla-lower-collectives",                          # all_reduce, all_gather ...: calls on send/receive buffers
        "xla-lower-custom-calls",                         # jnp.linalg's LAPACK custom calls -> calls of LAPACK
        select_scatter,                                   # max-pool gradient: window positions as vector ops, else loops
        "xla-lower-linalg-ops",                           # triangular_solve, cholesky: substitution loops
        # fft: f64 Cooley-Tukey matmuls per axis, or butterfly stages (Rader's: kernel calls)
        "xla-lower-fft{kernels=true}" if true_flag(fft_kernels) else "xla-lower-fft",
        "xla-expand-complex-ops",                         # complex max/min order, complex bitcast, cbrt
        "xla-integer-arithmetic",                         # integer power by square-and-multiply, as the interpreter
        "xla-expand-constant-powers",                     # x^-1.5, x^0.5, x^2 ...: sqrt/multiply/divide, not scalar powf
        "xla-reduce-precision-nans",                      # e?m0 has no NaN: NaN -> inf, as XLA
        "xla-widen-f8-predicates",                        # is_finite of f8 in f32: FN/FNUZ formats have no inf
        "xla-widen-narrow-iotas",                         # an f16 iota past 32767 counted in f32, not a wrapped i16
        "xla-split-f64-truncation",                       # f64 -> f16/bf16 via f32: the JIT lacks __truncdfhf2
        "xla-fold-empty-reductions",                      # reduce of a zero-size tensor = init; upstream leaves it
        sort,                                             # merge sort in scf loops; no upstream pattern
        top_k,                                            # top_k: one pass per row against a k-buffer
        *split_complex,                                   # complex dot/conv as four real ones: the real schedules
        widen,                                            # narrow/mixed dot/conv in f32 or i32, as XLA: one rounding, wide schedules
        *mark,                                            # precision=HIGHEST: the matmul's compute type
        *widen_sums,                                      # f16/bf16 sums in f32, rounded once; complex sums as part pairs: vector lanes
        canonicalize_convs,                               # any layout, dilated input, weight gradients -> NHWC x HWIO
        "xla-flatten-reductions",                         # reduce over neighbouring dims: one dim, rows or columns
        reduce_windows,                                   # cumsum & co as log-step scans; padded windows -> pad + pooling
        "xla-decompose-batch-norm",                       # batch_norm_* as reduce + elementwise ops
        "xla-lower-scatter",                              # scatter as scf loops of slice updates; no upstream pattern
        "xla-lower-control-flow",                         # while/if/case -> scf; after the others, which may emit them
        "inline",                                         # helpers some lowerings call
        "xla-outline-fusions",                            # each kernel a function until elementwise fusion ...
        concatenate,                                      # innermost-axis concatenates (and pads) as row copies, not gathers
        "func.func(stablehlo-legalize-to-linalg)",        # upstream StableHLO -> linalg/tensor/arith
        "xla-verify-lowered",                             # nothing of StableHLO may be left
        "stablehlo-convert-to-signless",                  # ui32 in the signature -> i32, no casts
        "xla-saturate-float-to-int",                      # NaN -> 0, clamp out-of-range, as XLA
        # each kernel alone (a function of its own here): on the threads (run_passes' threads)
        "func.func(canonicalize)",
        "func.func(cse)",
        *iotas,                                           # an iota read by several loop nests: a copy each
        "xla-normalize-contractions{outline=true}",       # dot_generals in functions of their own: kept ...
        "func.func(linalg-fuse-elementwise-ops)",         # ... out of the elementwise producer->consumer fusion
        *merge,                                           # a kernel's shared values computed once, in one loop nest
        "xla-normalize-contractions",                     # then as transposes + linalg.(batch_)matmul
        "xla-outline-fusions{release=true}",              # ... has fused inside kernels only
        "inline",                                         # kernels and contractions back in place, canonicalized
        #                                                   (the inliner's own pipeline): no canonicalize after it
        "loop-invariant-code-motion",                     # while bodies: weights concatenated once, not per step
        *contiguous,                                      # a matmul's strided view (a complex part) copied: contiguous reads
    ]


def true_flag(flag: bool | str) -> bool:
    """A pipeline option: a bool, or its text in --pass-pipeline."""
    return str(flag).lower() in ("1", "true")


# Each stage's steps as the targets' tables name them: (entry, options) -> steps.
def ingest_stage(target: str):
    """The "stablehlo" stage of ``target``: its support check is the target's."""
    def stablehlo(entry: str, options: Options) -> list[str]:
        return ingest(entry, target)
    return stablehlo


def fused_stage(entry: str, options: Options) -> list[str]:
    return fuse(options.fusion_remarks)


def fused_stage_apart(entry: str, options: Options) -> list[str]:
    """The "fused" stage without producer kernels joining their readers (CUDA's)."""
    return fuse(options.fusion_remarks, producer_kernels=False)


def linalg_stage(complex_as_real: bool, parallel_rows: bool = True, library_contractions=None,
                 narrow_sums_in_f32: bool = False, counted_top_k=None, integer_kernel=None,
                 fft_kernels=None):
    """The "linalg" stage (``lower_to_linalg``'s ``complex_as_real``, ``parallel_rows`` and
    ``narrow_sums_in_f32``; ``library_contractions``: options -> whether the target's matmuls
    go to a library; ``integer_kernel``: options -> whether 8-bit matmuls have an integer kernel)."""
    def linalg(entry: str, options: Options) -> list[str]:
        library = bool(library_contractions and library_contractions(options))
        counted = bool(counted_top_k and counted_top_k(options))
        integers = bool(integer_kernel and integer_kernel(options))
        ffts = bool(fft_kernels and fft_kernels(options))
        return lower_to_linalg(complex_as_real, options.collective_bucket_bytes, parallel_rows,
                               library, narrow_sums_in_f32, counted, integers, ffts)
    return linalg


# Named pipelines usable inside --pass-pipeline: name -> (its builder, summary).
# A target's own are named "module:function", imported when expanded.
NAMED_PIPELINES: dict[str, tuple[object, str]] = {
    "xla-ingest": (ingest, "input -> one StableHLO function, checked for support"),
    "xla-fuse-stage": (fuse, "StableHLO -> StableHLO grouped into xla.fusion kernels"),
    "xla-lower-to-linalg": (lower_to_linalg, "StableHLO -> linalg on tensors"),
    "xla-bufferize": ("xlac.targets.cpu.pipeline:bufferize", "tensors -> memrefs with out-params (cpu)"),
    "xla-lower-to-llvm": ("xlac.targets.cpu.pipeline:lower_to_llvm", "memrefs/loops -> LLVM dialect (cpu)"),
    # a target's stages in a row, as its compiler runs them (options: Options fields)
    "xla-cpu-pipeline": ("xlac.targets.cpu.target:whole_pipeline", "the whole CPU pipeline"),
    "xla-cuda-pipeline": ("xlac.targets.cuda.target:whole_pipeline", "the whole CUDA pipeline, up to the gpu.modules"),
}


def named_pipeline(name: str):
    """The builder of named pipeline ``name`` (steps from keyword options)."""
    builder = NAMED_PIPELINES[name][0]
    if isinstance(builder, str):
        import importlib
        module_name, function = builder.split(":")
        builder = getattr(importlib.import_module(module_name), function)
    return builder


# A pass that must run whenever another does: disabling it alone breaks the program.
NEEDED_WITH = {
    "xla-inline-fusions": ("xla-fuse", "it turns xla-fuse's xla.fusion kernels back into ops "
                                       "the lowerings understand"),
}


def check_disabled(disabled, pipeline: list[str]) -> None:
    """A misspelt name would silently disable nothing: refuse it; and refuse to
    disable a pass another pass that still runs needs (``NEEDED_WITH``)."""
    from xlac.errors import CompileError, DisabledPassError, error
    from xlac.pipeline.text import pass_names
    present = set(pass_names(pipeline))
    unknown = [name for name in disabled if name not in present]
    if unknown:
        raise CompileError(error(f"cannot disable {', '.join(unknown)}: not in the pipeline"),
                           "passes: " + ", ".join(sorted(present)))
    for name in disabled:
        other, why = NEEDED_WITH.get(name, ("", ""))
        if other and other in present and other not in disabled:
            raise DisabledPassError(error(f"cannot disable {name} while {other} runs: {why}"),
                                    f"disable both: --disable-passes={other},{name} "
                                    f"(or XLAC_DISABLE_PASSES={other},{name})")
