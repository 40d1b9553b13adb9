"""xlac's Python passes: one pass per file, and the registry of them all.

The registry imports a pass only when it is asked for, so ``xla-opt --help``
does not import the world. Every key equals its pass's ``name`` (a test
checks it) and starts with ``xla-``.
"""

from __future__ import annotations

import importlib

# pass name -> "module:Class" inside xlac.passes
_REGISTRY: dict[str, str] = {
    "xla-select-entry": "select_entry:SelectEntry",
    "xla-check-support": "check_support:CheckSupport",
    "xla-verify-lowered": "verify_lowered:VerifyLowered",
    "xla-readonly-inputs": "readonly_inputs:ReadonlyInputs",
    "xla-saturate-float-to-int": "saturate_float_to_int:SaturateFloatToInt",
    "xla-strided-copy-to-linalg": "strided_copy_to_linalg:StridedCopyToLinalg",
    "xla-lower-sort": "lower_sort:LowerSort",
    "xla-decompose-batch-norm": "decompose_batch_norm:DecomposeBatchNorm",
    "xla-lower-control-flow": "lower_control_flow:LowerControlFlow",
    "xla-lower-structural": "lower_structural:LowerStructural",
    "xla-empty-entry-buffers": "empty_entry_buffers:EmptyEntryBuffers",
    "xla-lower-select-and-scatter": "lower_select_and_scatter:LowerSelectAndScatter",
    "xla-lower-linalg-ops": "lower_linalg_ops:LowerLinalgOps",
    "xla-lower-fft": "lower_fft:LowerFft",
    "xla-expand-complex-ops": "expand_complex_ops:ExpandComplexOps",
    "xla-split-f64-truncation": "split_f64_truncation:SplitF64Truncation",
    "xla-distinct-results": "distinct_results:DistinctResults",
    "xla-expm1-to-libm": "expm1_to_libm:Expm1ToLibm",
    "xla-fold-empty-reductions": "fold_empty_reductions:FoldEmptyReductions",
    "xla-lower-scatter": "lower_scatter:LowerScatter",
    "xla-fuse": "fuse:Fuse",
    "xla-inline-fusions": "inline_fusions:InlineFusions",
    "xla-approximate-math": "approximate_math:ApproximateMath",
    "xla-apply-schedules": "apply_schedules:ApplySchedules",
    "xla-normalize-contractions": "normalize_contractions:NormalizeContractions",
    "xla-openmp-dynamic-schedule": "openmp_schedule:OpenmpDynamicSchedule",
    "xla-gpu-wrap-host-code": "gpu_wrap_host_code:GpuWrapHostCode",
    "xla-gpu-matmul-kernels": "gpu_kernels:GpuMatmulKernels",
    "xla-gpu-kernels": "gpu_kernels:GpuKernels",
    "xla-gpu-view-copy-to-linalg": "gpu_view_copy_to_linalg:GpuViewCopyToLinalg",
}


def pass_names() -> list[str]:
    return sorted(_REGISTRY)


def get_pass_class(name: str):
    """The ModulePass subclass registered as ``name`` (KeyError if none)."""
    module_name, class_name = _REGISTRY[name].split(":")
    module = importlib.import_module(f"xlac.passes.{module_name}")
    return getattr(module, class_name)
