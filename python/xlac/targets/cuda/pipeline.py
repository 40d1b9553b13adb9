"""The CUDA target's own passes, one named step a line: "linalg" ->
"gpu-loops" -> "kernels" -> "gpu" (host schedule + gpu.modules in NVVM).

The stages before them are every target's (``xlac.pipeline.pipelines``); the
order of them all, and the PTX step after, is the table in
``xlac.targets.cuda.target``. Shapes are static, so the host function that comes
out is a straight line of allocations, view ops, copies and gpu.launch_func
with constant sizes: ``xlac.targets.cuda.schedule`` reads it, no host code is
compiled. the route and its pitfalls: research/gpu.md in the shared notes.
"""

from __future__ import annotations


def bufferize(library: bool = False, tf32: bool = False) -> list[str]:
    """"linalg" -> "gpu-loops": memrefs, every loop nest an scf.parallel on tiles
    (``library``: matmuls as cuBLASLt calls where it can take them)."""
    library_calls = [f"xla-gpu-library-matmuls{{tf32={str(tf32).lower()}}}"] if library else []
    return [
        "xla-gpu-fusable-transposes",                     # a transpose beside a loop nest: a generic, fusable
        "xla-gpu-duplicate-cheap-producers",              # a cheap producer read by two loop nests: one copy each
        "xla-normalize-contractions{outline=true}",       # matmuls in functions of their own: kept out of ...
        "func.func(linalg-fuse-elementwise-ops)",         # ... elementwise fusion, which folds each copy in
        "xla-gpu-inline-helpers",                         # the matmuls back in place (linear; not upstream inline)
        "xla-gpu-weight-gradients-as-one-matmul",         # a matmul per filter tap: one of the patch matrix
        f"xla-gpu-convolutions-as-matmuls{{narrow={str(library).lower()}}}",  # patches x filter: the matmul paths below
        "xla-gpu-counted-loops",                          # a known trip count: the host reads nothing back
        "xla-gpu-whole-carries",                          # loops carry whole buffers (not views) from the start
        "xla-readonly-inputs",                            # inputs are copied to the device once per call
        "xla-own-fills",                                  # a fill per matmul: folded into its kernel, no copy
        f"xla-gpu-epilogue-in-place{{library={str(library).lower()}}}",  # a matmul's epilogue writes C: run in its kernel
        f"xla-gpu-results-in-slices{{library={str(library).lower()}}}",  # padded or concatenated: in place
        "xla-spread-readonly-reads",                      # a weight read 1,000 times: no quadratic analysis
        "xla-own-empties",                                # 1,000 fills into CSE's one empty: no quadratic analysis
        "one-shot-bufferize{bufferize-function-boundaries "
        "function-boundary-type-conversion=identity-layout-map "
        "allow-return-allocs-from-loops "
        "unknown-type-conversion=identity-layout-map}",   # a branch's results: whole buffers, not views
        "func.func(cse)",                                 # a result written in its slice: the copy's two equal
        "canonicalize",                                   # views made one, and the copy onto itself erased
        "xla-distinct-results",                           # `return %v, %v`: out-params would crash on one alloc
        "buffer-results-to-out-params{modify-public-functions=1 hoist-static-allocs=1}",
        "canonicalize",
        "xla-strided-copy-to-linalg{rows=false}",         # strided copies become kernels; plain ones stay DtoD copies
        "xla-gpu-view-copy-to-linalg",                    # so do copies of offset views (a DtoD copy starts at the base)
        "xla-gpu-share-conv-scratch",                     # one im2col scratch for all convolutions, not one each
        *library_calls,                                   # matmuls cuBLASLt takes: calls the host makes
        "xla-gpu-matmul-kernels",                         # shared-memory tiled matmuls
        "func.func(linalg-generalize-named-ops)",
        "xla-gpu-kernels",                                # loop and reduction kernels (what they leave: below)
        "xla-gpu-inline-helpers",                         # the helpers above in place of their calls (linear; not upstream inline)
        "func.func(convert-linalg-to-parallel-loops)",
        "canonicalize",
        # no-min-max-bounds: otherwise partial tiles keep an affine.min bound
        # and the loop silently stays on the host (gpu.md pitfall 1)
        "func.func(scf-parallel-loop-tiling{parallel-loop-tile-sizes=16,16 no-min-max-bounds=1})",
        "xla-gpu-wrap-host-code",                         # full reductions: a 1x1 kernel; no canonicalize before it
    ]


def outline() -> list[str]:
    """"gpu-loops" -> "kernels": each kernel a gpu.func in its own gpu.module (scf, arith, memref)."""
    return [
        "func.func(gpu-map-parallel-loops{mapping-policy=innermost-first})",  # last dim on threadIdx.x: coalesced
        "func.func(convert-parallel-loops-to-gpu)",
        "xla-gpu-horizontal-launches",                    # independent kernels side by side: one launch
        "xla-gpu-own-launch-constants",                   # %c0 read by 2,000 launches: the sink below linear
        "func.func(gpu-launch-sink-index-computations)",
        "gpu-kernel-outlining",                           # one gpu.module per kernel (all kernels named main_kernel)
        "canonicalize",
        "cse",
        "lower-affine",
        "gpu.module(expand-strided-metadata,lower-affine,"  # subviews in kernels (scatter windows)
        "convert-complex-to-standard)",                   # complex math -> arith/math on (re, im)
    ]


def to_nvvm() -> list[str]:
    """"kernels" -> "gpu": the gpu.modules in LLVM + NVVM ops."""
    return [
        "gpu.module(convert-scf-to-cf,"
        "convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1 index-bitwidth=64},"  # one pointer per memref
        "convert-math-to-llvm,"                           # after gpu-to-nvvm, which maps math to libdevice first
        "canonicalize,cse,reconcile-unrealized-casts)",
    ]


def to_gpu() -> list[str]:
    """"gpu-loops" -> "gpu": kernels outlined into gpu.modules of LLVM + NVVM ops."""
    return outline() + to_nvvm()


# The stages' steps as the table names them: (entry, options) -> steps.
def library_contractions(options) -> bool:
    """Do matmuls go to cuBLASLt (``cuda_contractions``; auto: where it is found)?"""
    from xlac.targets.cuda.cublaslt import uses_library
    return uses_library(options.cuda_contractions)


def gpu_loops_stage(entry: str, options) -> list[str]:
    return bufferize(library_contractions(options), options.matmul_precision == "tensorfloat32")


def kernels_stage(entry: str, options) -> list[str]:
    return outline()


def gpu_stage(entry: str, options) -> list[str]:
    return to_nvvm()

