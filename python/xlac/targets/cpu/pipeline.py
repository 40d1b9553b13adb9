"""The CPU target's own passes, one named step a line: "linalg" -> "bufferized"
-> "llvm". The stages before them are every target's
(``xlac.pipeline.pipelines``), the "stablehlo" stage with one step of the
CPU's own; the order of them all is the table in ``xlac.targets.cpu.target``,
and the stage functions below (``*_stage``) are the one place that derives
these lists' options from the Options and the CPU model (``xla-cpu-pipeline``
runs the same stages: ``xlac.targets.cpu.target.whole_pipeline``).
"""

from __future__ import annotations

from xlac.cpu_model import cpu_model
from xlac.options import SPLIT_COPY_BYTES
from xlac.pipeline.pipelines import ingest, true_flag

TYPE_CHECKING = False             # typing.TYPE_CHECKING, without importing typing on a hit
if TYPE_CHECKING:
    from xlac.options import Options


def ingest_cpu(entry: str = "main", vector_bytes: int | str = 0) -> list[str]:
    """input -> "stablehlo": every target's ingest, scans' input products out of
    their loops, then the weights out of the code. With AVX-512 or AVX2
    (``vector_bytes`` 64, 32) a select of two like computations is one
    computation on selected operands: with AVX-512 a select is one masked move,
    with AVX2 a select of two constants one permute (see lower_to_llvm); as
    AVX2's vblendvps (2-3 uops on Intel's cores) the merged erf-GELU measured
    9% slower at x86-64-v3."""
    merge = ["xla-merge-select-branches"] if int(vector_bytes) >= 32 else []
    return ingest(entry, "cpu") + [
        "xla-outer-dots-as-multiplies",                   # BERT's head mask: fused, not a 2 MB pass of its own
        "xla-diagonal-sums",                              # jnp.trace: a sum of the diagonal, not of the masked matrix
        "xla-diagonal-gathers",                           # jnp.diagonal(a, k): a strided slice, not a gather loop
        "xla-small-table-gathers-as-selects",             # a searchsorted over 6 bin edges: vector selects, not scalar loads
        "xla-scalar-scatter-indices",                     # ids[M] broadcast to [M, 1]: their kernel a vector loop
        "xla-constant-scatters-as-selects",               # v.at[2, 3].set(x) read by a kernel: a select in it, no copy of v
        *merge,                                           # erfc's two Horner chains as one
        # a scan's input projection: one product before the loop (the CPU's
        # matmuls sum k in the same order whatever the rows: the same bits)
        "xla-hoist-scan-products",
        "xla-constants-to-arguments",                     # weights as arguments: no IR literal reaches LLVM
    ]


def bufferize(threads: int | str = 0, vector_bytes: int | str = 0,
              i1_vectors: bool | str = True, overlap_collectives: str = "auto",
              amx: bool | str = False, l1d_bytes: int | str = 0, integer_kernel: str = "") -> list[str]:
    """"linalg" -> "bufferized": memrefs; results written into caller-owned buffers.

    ``threads`` and ``vector_bytes`` are the schedules' (0: this host's),
    ``l1d_bytes`` the L1 data cache they size blocks for (0: not known);
    ``i1_vectors`` off where xla-i1-memory-as-i8 is disabled (see there);
    ``overlap_collectives``: auto (collectives as start/done pairs where
    computation lies between), always, or off (docs/distributed.md).
    ``amx``: large bf16 matmuls (and exact ones of 8-bit integers) on a bf16
    kernel; else ``integer_kernel`` (one of xlac.targets.cpu.imad_kernels'
    variants, "" none): the 8-bit integer ones on it.
    """
    i1 = "true" if true_flag(i1_vectors) else "false"
    overlap = [] if overlap_collectives == "off" else \
        ["xla-overlap-collectives" + ("{always=true}" if overlap_collectives == "always" else "")]
    return [
        # a kernel inlined once per reader (torch_lstm's input projection plus
        # bias, 16 x 8 x 1024, for each of its 16 steps' slices): computed once
        "cse",
        *overlap,                                         # MPI_I<collective> early, MPI_Wait late
        "xla-splat-constants-to-fill",                    # a 10^8-element splat: a fill loop, not a 400 MB global
        "xla-update-windows-in-place",                    # a scatter's window combined into itself: no copy per index
        "xla-split-full-reductions",                      # any(m) over 405 x 648: rows on the threads, not one serial loop
        "xla-results-in-slices",                          # an FFT stage's results written into their slices: no copies
        "xla-write-blocks-in-place",                      # a stacked operand's kernel writes its block of the result
        "xla-collapse-reduction-loops",                   # (n, g, c | h, w) -> (n, g*c | h*w): a column reduction
        # a roll's pick per column: each thread's rows one kernel of column stretches
        f"xla-peel-roll-columns{{threads={int(threads)} vector-bytes={int(vector_bytes)}}}",
        "xla-speculate-branch-reads",                     # a concatenate's branch per element: a select of clamped reads
        "xla-collapse-unit-read-dims",                    # a gather's 256x1 indices read as 256: a vector load, not a gather
        "xla-collapse-unit-epilogue-dims",                # torch_lstm's 1x1x8x1024 step epilogue as 8x1024: its matmul's plan
        "xla-additive-reductions",                        # `out - v` folds as `out + (-v)`: a vectorizable sum
        *_kernel_contractions(amx, integer_kernel),        # bf16 (8-bit integer) matmuls left to a kernel
        # per op class: scf.forall over the threads' chunks, tiles for caches
        # and registers, vector ops (passes/cpu/schedules/); on tensors, so the
        # bufferization below sees only in-place slices and needs no copies
        f"xla-apply-schedules{{threads={int(threads)} vector-bytes={int(vector_bytes)} i1-vectors={i1}"
        + (f" l1d-bytes={int(l1d_bytes)}}}" if int(l1d_bytes) else "}"),
        "xla-unmask-contractions",                        # the rows a register tile leaves: no mask bits per lane
        "xla-narrow-index-vectors",                       # an i8 iota's lanes added in i8, not i64 then packed
        "xla-hoist-loop-invariants",                      # a row's x[i] and cos(x[i]) once per row, not per vector
        "xla-readonly-inputs",                            # never write into the caller's arrays
        "xla-spread-readonly-reads",                      # a weight read 1,000 times: no quadratic analysis
        "xla-scalar-loop-carries",                        # a scan's counter and scalar carry in registers, not buffers
        "one-shot-bufferize{bufferize-function-boundaries "
        "function-boundary-type-conversion=identity-layout-map "
        "allow-return-allocs-from-loops}",                # scf.while from stablehlo.while yields new tensors
        # from here the kernels are functions (xla_scheduled_<n>): the function-local
        # upstream passes run on each alone, in parallel (run_passes' threads)
        "func.func(canonicalize)",                        # a tiled loop's result is its init buffer: return that, no copy
        "xla-forward-slice-copies",                       # an FFT stage's results written in their slices, no copies
        "drop-equivalent-buffer-results",                 # a kernel function's result is the buffer it was passed
        "xla-distinct-results",                           # `return %v, %v`: out-params would crash on one alloc
        "xla-reshaped-results",                           # a returned reshape of an alloc: written in place, no copy
        "buffer-results-to-out-params{modify-public-functions=1 hoist-static-allocs=1}",
        "func.func(buffer-loop-hoisting)",                # a fused row's temporaries: one malloc per chunk, not per row
        # a while's recomputed carry: no copy into a fresh buffer per trip (after
        # the hoisting: only an alloc that stays in the loop is handed over)
        "xla-hand-over-loop-carries",
        "xla-double-buffer-loop-carries",                 # ... and alternates between two buffers: no alloc, copy, free per trip
        # buffer-deallocation-pipeline (temporaries are freed each call), in its
        # parts: its simplification is quadratic in one dealloc's buffers. Not
        # its canonicalize before ownership-based-buffer-deallocation: the one
        # after it leaves the same code without it (22 of 22 programs), and it
        # cost 6% of this stage's upstream passes. Nor the one after it: the
        # canonicalize after the lowered deallocations leaves the same code
        # without it too (22 of 22 programs at host level and x86-64-v3,
        # docs/compile-time.md), 5-10 ms of a model's serial compile
        "expand-realloc{emit-deallocs=false}",
        "ownership-based-buffer-deallocation",
        "xla-split-alloc-deallocs",                       # a dealloc per fresh buffer: they never alias
        "func.func(buffer-deallocation-simplification)",
        "bufferization-lower-deallocations",
        "func.func(cse)",
        "func.func(canonicalize)",
        "xla-hoist-window-accumulators",                  # a pooling tile in registers through its taps: no store per tap
        "xla-pack-invariant-panels",                      # a loop's matmul reads its invariant B packed once before it
    ]


def _kernel_contractions(amx: bool | str, integer_kernel: str) -> list[str]:
    """xla-amx-contractions where there is a bf16 kernel (the pipeline's text as
    it was), else where there is an integer kernel alone: 8-bit integers only."""
    if true_flag(amx):
        return ["xla-amx-contractions"]
    return ["xla-amx-contractions{bf16=false integers=i16}"] if integer_kernel else []


# a function per kernel: the llvm stage's steps after it each lower one function
# alone, which big programs' piece workers do (xlac.targets.cpu.early_pieces)
KERNELS_OUTLINED = "xla-outline-kernels"
KERNELS_CALLED = "xla-micro-kernel-calls"            # after it, the micro-kernels called are declared


def lower_to_llvm(native_bf16: bool | str = False, profile: bool | str = False,
                  cpu: str = "host", native_f16: bool | str = True,
                  micro_kernels: bool | str = False, threads: int | str = 0,
                  permute_selects: bool | str = False, bf16_kernel: str = "amx",
                  fma: bool | str = False, split_copy_bytes: int | str = SPLIT_COPY_BYTES,
                  integer_kernel: str = "", i1_vectors: bool | str = True,
                  arg_row_pairs: int | str = 1) -> list[str]:
    """"bufferized" -> "llvm": the LLVM dialect, entry with the bare-pointer ABI.

    bf16 and f16 math runs in f32 on every CPU (the same numbers everywhere);
    the f32 -> bf16 rounding is integer code unless the CPU converts natively
    (AVX512-BF16): without it LLVM would call libgcc's ``__truncsfbf2``,
    which the JIT cannot find. The same for f16 where the CPU lacks F16C
    (x86-64-v2): its arithmetic in f32 too, its conversions integer code.
    ``micro_kernels``: f32 matmul register tiles call the kernels built once
    per machine (xlac.targets.cpu.micro_kernels; the link or the JIT binds them).
    ``permute_selects``: AVX2 without AVX-512, where a select of two f32
    constants is one vpermilps rather than a vblendvps. ``bf16_kernel``: the
    kernel of the bf16 matmuls xla-amx-contractions marked (``bf16_kernel()``).
    ``fma``: the CPU has FMA (x86-64-v3 and up), so f32 Horner chains fuse.
    ``split_copy_bytes``: copies moving at least this many bytes run on the
    threads (0: one thread; ``Options.split_copy_bytes``). ``integer_kernel``:
    the kernel of the 8-bit integer matmuls xla-amx-contractions marked i16
    (``integer_kernel()``; "" none). ``i1_vectors``: off where
    xla-i1-memory-as-i8 is disabled (bool argmaxes then keep their scalar loops).
    """
    expand = "arith-expand" if true_flag(native_bf16) else "arith-expand{include-bf16=true}"
    emulated, casts, math_types = (_EMULATED, "xla-expand-f8-casts", "extra-types=f16 ") \
        if true_flag(native_f16) else (_EMULATED + ",f16", "xla-expand-f8-casts{f16=true}", "")
    clock = ["xla-profile-kernels"] if true_flag(profile) else []   # exe.profile(): a clock around each kernel
    # native roundings keep LLVM's fpext, which instcombine would shrink into bf16 arithmetic
    widen_bf16 = ["xla-bf16-extend-as-shift"] if true_flag(native_bf16) else []
    # the AMX matmuls xla-amx-contractions marked (none: a no-op), then the f32 register tiles
    kernel = "" if bf16_kernel == "amx" else f" kernel={bf16_kernel}"      # amx: the pipeline text as it was
    kernel += f" integer-kernel={integer_kernel}" if integer_kernel else ""
    calls = [f"xla-amx-calls{{threads={int(threads)}{kernel}}}", KERNELS_CALLED] \
        if true_flag(micro_kernels) else []
    return [
        *calls,                                           # register tiles -> calls of prebuilt kernels
        "xla-constant-arguments-to-globals",              # ... read from symbols the compiler gives their bytes
        "xla-check-memory",                               # buffers past this machine's memory: an error, not a NULL malloc
        "xla-collectives-to-mpi",                         # collective buffer calls -> the MPI shim (inlined below)
        _strided_copies(threads, split_copy_bytes),       # no memrefCopy runtime call
        "xla-empty-entry-buffers",                        # memref<2x0x1xf32> args have no bare-pointer form
        # argmax/argmin rows, columns: 16-lane vector loops (bools: only if i1 vectors move as bytes)
        _lane_arg_reductions(i1_vectors, arg_row_pairs),
        "xla-approximate-math",                           # f32 exp/tanh as polynomials: no libm call per lane
        # chlo's polynomials (erfc's, GELU's in BERT and ViT): one FMA a step
        *(["xla-horner-fma"] if true_flag(fma) else []),
        # each kernel function a copy per call, at the call's line; a repeated kernel's
        # calls left to xla-outline-kernels, which copies one in per kind (kernel_repeats)
        "xla-inline-schedule-calls{leave-repeats=true}",
        # ... whose helpers go back in place; without the inliner's canonicalize of every
        # function (0.03-0.06 s of a model's serial compile): it only reordered constants,
        # which LLVM IR has no order for (the same object code on 12 models)
        "inline{default-pipeline=}",
        # a called register tile's epilogue (GELU): a rolled loop over its rows, one row's code
        *(["xla-epilogue-rows"] if true_flag(micro_kernels) else []),
        KERNELS_OUTLINED,                                 # a function per kernel, one per distinct kernel
        "func.func(scf-forall-to-parallel)",              # the schedules' thread chunks ...
        "convert-scf-to-openmp",                          # ... run as omp.parallel + omp.wsloop (libiomp5)
        "xla-openmp-dynamic-schedule",                    # chunks go to whichever thread is running
        "canonicalize",                                   # drop the memref.alloca_scope it adds: nothing to free
        *clock,
        "xla-flatten-minor-transfers",                    # W x 2 vectors of pairs -> one 2W-lane vector
        "func.func(convert-linalg-to-loops)",             # ops no schedule took: scalar loops
        "func.func(lower-vector-multi-reduction)",        # reductions' vector.multi_reduction -> 1-D adds
        "xla-strided-reads-as-shuffles",                  # a read of every 2nd lane: one load and a shuffle
        "xla-check-masked-transfers",                     # a masked read the next pass lowers wrong: an error
        "func.func(convert-vector-to-scf{full-unroll=true target-rank=1})",  # n-D transfers -> 1-D
        "lower-affine",
        "xla-no-unroll-fill-loops",                       # zeroing loops stay rolled: unrolled, 8x the code, no speed
        "xla-no-unroll-elementwise-loops",                # so do elementwise kernels' vector loops: a fifth of their LLVM time
        "convert-scf-to-cf",
        f"func.func(math-extend-to-supported-types{{{math_types}target-type=f32}})",  # bf16 math in f32 ...
        f"func.func(arith-emulate-unsupported-floats{{source-types={emulated} target-type=f32}})",  # ... and bf16, f8 arithmetic
        "xla-keep-roundings",                             # ... each op's result rounded to its type, as StableHLO says
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
        # no convert-cf-to-llvm: convert-openmp-to-llvm above applies cf's patterns to the whole module
        "reconcile-unrealized-casts",
        # before the constants go to the table: it matches selects of constants
        *(["xla-constant-selects-as-permutes"] if true_flag(permute_selects) else []),
        # the Python fix-ups of the LLVM dialect, in a row: one walk of the module for the
        # first four (base.py's module_ops), not one each
        "xla-constant-table",                             # constants' addresses from a table the loader fills
        "xla-loop-annotations-to-llvm",                   # loop annotations where the translation to LLVM IR reads them
        "xla-bf16-memory-as-i16",                         # no per-lane bf16 store LLVM would truncate via __truncsfbf2
        "xla-i1-memory-as-i8",                            # bool vectors move as bytes: LLVM packs vector<Nxi1> as bits
        *widen_bf16,                                      # bf16 -> f32 as a shift: no bf16 arithmetic for LLVM to legalize
        "xla-shared-parallel-dispatch",                   # one OpenMP region per module, the loops' bodies called from it
        "xla-split-long-blocks",                          # an entry of thousands of calls: parts compiled in parallel
        f"xla-target-cpu{{cpu={cpu}}}",                   # code for the chosen CPU level, not the JIT's host
    ]


# Element types whose arithmetic runs in f32 (LLVM has bf16 but no CPU arithmetic on it, and no f8).
_EMULATED = ",".join(("bf16", "f8E5M2", "f8E4M3", "f8E3M4", "f8E4M3FN", "f8E4M3FNUZ", "f8E5M2FNUZ",
                      "f8E4M3B11FNUZ"))


def counted_top_k(options: Options) -> bool:
    """Large top-ks find slots by vector compares with AVX-512 (64-byte vectors);
    with AVX2 the walk up the buffer measured faster (PERFORMANCE.md)."""
    return cpu_model(options.cpu).vector_bytes >= 64


def has_fft_kernels(options: Options) -> bool:
    """Whether the stages of FFTs with a Rader prime call FFT micro-kernels (xlac.pipeline.fft_kernels)."""
    return true_flag(options.micro_kernels)


def has_integer_kernel(options: Options) -> bool:
    """Whether 8-bit integer matmuls run on an integer micro-kernel
    (``integer_kernel``): then xla-widen-contractions makes those it takes one
    i32 dot over the whole k (no f32 chunks)."""
    return integer_kernel(cpu_model(options.cpu), options.micro_kernels) is not None


def stablehlo_stage(entry: str, options: Options) -> list[str]:
    """The "stablehlo" stage's steps on the CPU."""
    return ingest_cpu(entry, cpu_model(options.cpu).vector_bytes)


def bufferized_stage(entry: str, options: Options) -> list[str]:
    """The "bufferized" stage's steps: threads and vector width of the chosen CPU."""
    i1_vectors = "xla-i1-memory-as-i8" not in options.disable_passes
    model = cpu_model(options.cpu)
    return bufferize(options.threads(), model.vector_bytes, i1_vectors,
                     options.overlap_collectives, bf16_kernel(model, options.micro_kernels) is not None,
                     model.l1d_bytes, integer_kernel(model, options.micro_kernels) or "")


def _strided_copies(threads: int | str, split_copy_bytes: int | str) -> str:
    """xla-strided-copy-to-linalg, its big copies split among the threads where
    ``split_copy_bytes`` says so (unsplit: the pipeline's text as it was)."""
    if not int(split_copy_bytes):
        return "xla-strided-copy-to-linalg"
    return f"xla-strided-copy-to-linalg{{split-bytes={int(split_copy_bytes)} threads={int(threads)}}}"


def uses_amx(model, micro_kernels: bool) -> bool:
    """Whether programs for ``model`` run large bf16 matmuls on the AMX
    micro-kernel: at the host level only (AMX is in no named level), where the
    CPU has it and this process got the tile state from Linux (asked here, at
    compile time), and the micro-kernels are on (the kernel is one of them)."""
    from xlac.targets.cpu.amx_kernels import usable
    return bool(micro_kernels) and model.name == "host" and usable(model.features)


def bf16_kernel(model, micro_kernels: bool) -> str | None:
    """The kernel (xla-amx-calls' option) of large bf16 matmuls for ``model``:
    "amx" where ``uses_amx``; else "dpbf16" where the CPU has AVX512-BF16 and
    no AMX at all (``dpbf16_kernels.usable``: AMD Zen 4, in no named level
    either) and the micro-kernels are on; else None (the f32 register tiles
    on widened operands: also on an AMX CPU whose tile state Linux refused,
    where ``vdpbf16ps`` measured half the f32 tile's speed, docs/pipeline.md)."""
    from xlac.targets.cpu import dpbf16_kernels
    if uses_amx(model, micro_kernels):
        return "amx"
    return "dpbf16" if micro_kernels and dpbf16_kernels.usable(model.features) else None


def integer_kernel(model, micro_kernels: bool) -> str | None:
    """The kernel (xlac.targets.cpu.imad_kernels' variant, xla-amx-calls'
    ``integer-kernel``) of the large exact 8-bit integer matmuls for ``model``
    where it has no bf16 kernel (``bf16_kernel``: those take that, as they
    did), the micro-kernels are on and the CPU has FMA (as they need): AVX2's
    or AVX-512's ``vpmaddwd``, or ``vpdpwssd`` with VNNI (chosen by features)."""
    from xlac.targets.cpu import imad_kernels
    if not micro_kernels or "fma" not in model.features or bf16_kernel(model, micro_kernels) is not None:
        return None
    return imad_kernels.variant_for(model.features)


def _lane_arg_reductions(i1_vectors, row_pairs) -> str:
    """xla-lane-arg-reductions' step: i1 buffers only where they move as bytes;
    rows as two 8-lane accumulator pairs at AVX2 (``row_pairs`` 2: no 16-lane
    i1 masks packed across two registers)."""
    options = ([] if true_flag(i1_vectors) else ["i1-vectors=false"]) \
        + ([f"row-pairs={int(row_pairs)}"] if int(row_pairs) != 1 else [])
    return "xla-lane-arg-reductions" + (f"{{{' '.join(options)}}}" if options else "")


def llvm_stage(entry: str, options: Options) -> list[str]:
    """The "llvm" stage's steps: code for the chosen CPU level."""
    model = cpu_model(options.cpu)
    # no micro-kernels without FMA (x86-64-v2): they are FMA loops
    micro_kernels = options.micro_kernels and "fma" in model.features
    return lower_to_llvm(model.native_bf16, options.profile, model.name, model.native_f16,
                         micro_kernels, options.threads(), model.vector_bytes == 32,
                         bf16_kernel(model, options.micro_kernels) or "amx", "fma" in model.features,
                         options.split_copy_bytes, integer_kernel(model, options.micro_kernels) or "",
                         "xla-i1-memory-as-i8" not in options.disable_passes,
                         2 if model.vector_bytes == 32 else 1)

