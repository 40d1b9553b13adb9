"""The registry of xlac's Python passes: pass name -> the module and class.

It imports a pass only when it is asked for, so ``xla-opt --help``
does not import the world. Every key equals its pass's ``name`` (a test
checks it) and starts with ``xla-``.
"""

from __future__ import annotations

import importlib

# pass name -> "phase.module:Class" inside xlac.passes
_REGISTRY: dict[str, str] = {
    "xla-select-entry": "ingest.select_entry:SelectEntry",
    "xla-check-support": "ingest.check_support:CheckSupport",
    "xla-check-shape-assertions": "ingest.check_shape_assertions:CheckShapeAssertions",
    "xla-check-ranked": "ingest.check_ranked:CheckRanked",
    "xla-constants-to-arguments": "ingest.constants_to_arguments:ConstantsToArguments",
    "xla-verify-lowered": "lower.verify_lowered:VerifyLowered",
    "xla-readonly-inputs": "buffers.readonly_inputs:ReadonlyInputs",
    "xla-spread-readonly-reads": "buffers.spread_readonly_reads:SpreadReadonlyReads",
    "xla-scalar-loop-carries": "buffers.scalar_loop_carries:ScalarLoopCarries",
    "xla-hand-over-loop-carries": "buffers.hand_over_loop_carries:HandOverLoopCarries",
    "xla-double-buffer-loop-carries": "buffers.double_buffer_loop_carries:DoubleBufferLoopCarries",
    "xla-split-alloc-deallocs": "buffers.split_alloc_deallocs:SplitAllocDeallocs",
    "xla-saturate-float-to-int": "numerics.saturate_float_to_int:SaturateFloatToInt",
    "xla-strided-copy-to-linalg": "buffers.strided_copy_to_linalg:StridedCopyToLinalg",
    "xla-lower-sort": "lower.lower_sort:LowerSort",
    "xla-decompose-batch-norm": "lower.decompose_batch_norm:DecomposeBatchNorm",
    "xla-lower-control-flow": "lower.lower_control_flow:LowerControlFlow",
    "xla-lower-structural": "lower.lower_structural:LowerStructural",
    "xla-empty-entry-buffers": "buffers.empty_entry_buffers:EmptyEntryBuffers",
    "xla-constant-table": "cpu.constant_table:ConstantTable",
    "xla-constant-arguments-to-globals":
        "buffers.constant_arguments_to_globals:ConstantArgumentsToGlobals",
    "xla-lower-select-and-scatter": "lower.lower_select_and_scatter:LowerSelectAndScatter",
    "xla-lower-linalg-ops": "lower.lower_linalg_ops:LowerLinalgOps",
    "xla-lower-fft": "lower.lower_fft:LowerFft",
    "xla-lower-custom-calls": "lower.lower_custom_calls:LowerCustomCalls",
    "xla-expand-complex-ops": "numerics.expand_complex_ops:ExpandComplexOps",
    "xla-split-complex-contractions": "numerics.split_complex_contractions:SplitComplexContractions",
    "xla-contiguous-contraction-operands": "cpu.contiguous_contraction_operands:ContiguousContractionOperands",
    "xla-integer-arithmetic": "numerics.integer_arithmetic:IntegerArithmetic",
    "xla-keep-roundings": "numerics.keep_roundings:KeepRoundings",
    "xla-logical-booleans": "numerics.logical_booleans:LogicalBooleans",
    "xla-expand-constant-powers": "numerics.expand_constant_powers:ExpandConstantPowers",
    "xla-widen-f8-predicates": "numerics.widen_f8_predicates:WidenF8Predicates",
    "xla-reduce-precision-nans": "numerics.reduce_precision_nans:ReducePrecisionNans",
    "xla-split-f64-truncation": "numerics.split_f64_truncation:SplitF64Truncation",
    "xla-distinct-results": "buffers.distinct_results:DistinctResults",
    "xla-reshaped-results": "buffers.reshaped_results:ReshapedResults",
    "xla-own-fills": "buffers.own_fills:OwnFills",
    "xla-own-empties": "buffers.own_empties:OwnEmpties",
    "xla-gpu-own-launch-constants": "gpu.gpu_own_launch_constants:GpuOwnLaunchConstants",
    "xla-gpu-horizontal-launches": "gpu.gpu_horizontal_launches:GpuHorizontalLaunches",
    "xla-update-windows-in-place": "buffers.update_windows_in_place:UpdateWindowsInPlace",
    "xla-results-in-slices": "buffers.results_in_slices:ResultsInSlices",
    "xla-forward-slice-copies": "buffers.forward_slice_copies:ForwardSliceCopies",
    "xla-write-blocks-in-place": "buffers.write_blocks_in_place:WriteBlocksInPlace",
    "xla-bf16-memory-as-i16": "cpu.bf16_memory_as_i16:Bf16MemoryAsI16",
    "xla-bf16-extend-as-shift": "cpu.bf16_extend_as_shift:Bf16ExtendAsShift",
    "xla-constant-selects-as-permutes": "cpu.constant_selects_as_permutes:ConstantSelectsAsPermutes",
    "xla-i1-memory-as-i8": "cpu.i1_memory_as_i8:I1MemoryAsI8",
    "xla-check-memory": "buffers.check_memory:CheckMemory",
    "xla-splat-constants-to-fill": "buffers.splat_constants_to_fill:SplatConstantsToFill",
    "xla-expm1-to-libm": "cpu.expm1_to_libm:Expm1ToLibm",
    "xla-expand-f8-casts": "cpu.expand_f8_casts:ExpandF8Casts",
    "xla-fold-empty-reductions": "lower.fold_empty_reductions:FoldEmptyReductions",
    "xla-lower-scatter": "lower.lower_scatter:LowerScatter",
    "xla-lower-collectives": "lower.lower_collectives:LowerCollectives",
    "xla-combine-all-reduces": "lower.combine_all_reduces:CombineAllReduces",
    "xla-collectives-to-mpi": "cpu.collectives_to_mpi:CollectivesToMpi",
    "xla-overlap-collectives": "cpu.overlap_collectives:OverlapCollectives",
    "xla-fuse": "fusion.fuse:Fuse",
    "xla-fold-transposes": "fusion.fold_transposes:FoldTransposes",
    "xla-fold-broadcast-operands": "fusion.fold_broadcast_operands:FoldBroadcastOperands",
    "xla-constants-into-loops": "fusion.constants_into_loops:ConstantsIntoLoops",
    "xla-inline-fusions": "fusion.inline_fusions:InlineFusions",
    "xla-outline-fusions": "fusion.outline_fusions:OutlineFusions",
    "xla-merge-kernel-generics": "fusion.merge_kernel_generics:MergeKernelGenerics",
    "xla-duplicate-index-producers": "fusion.duplicate_index_producers:DuplicateIndexProducers",
    "xla-approximate-math": "cpu.approximate_math:ApproximateMath",
    "xla-horner-fma": "cpu.horner_fma:HornerFma",
    "xla-epilogue-rows": "cpu.epilogue_rows:EpilogueRows",
    "xla-lane-arg-reductions": "cpu.lane_arg_reductions:LaneArgReductions",
    "xla-apply-schedules": "cpu.apply_schedules:ApplySchedules",
    "xla-additive-reductions": "cpu.additive_reductions:AdditiveReductions",
    "xla-split-full-reductions": "cpu.split_full_reductions:SplitFullReductions",
    "xla-collapse-reduction-loops": "cpu.collapse_reduction_loops:CollapseReductionLoops",
    "xla-peel-roll-columns": "cpu.peel_roll_columns:PeelRollColumns",
    "xla-speculate-branch-reads": "cpu.speculate_branch_reads:SpeculateBranchReads",
    "xla-collapse-unit-read-dims": "cpu.collapse_unit_read_dims:CollapseUnitReadDims",
    "xla-collapse-unit-epilogue-dims": "cpu.collapse_unit_epilogue_dims:CollapseUnitEpilogueDims",
    "xla-split-long-blocks": "cpu.split_long_blocks:SplitLongBlocks",
    "xla-outline-top-k": "ingest.outline_top_k:OutlineTopK",
    "xla-static-dynamic-calls": "ingest.static_dynamic_calls:StaticDynamicCalls",
    "xla-merge-select-branches": "ingest.merge_select_branches:MergeSelectBranches",
    "xla-outer-dots-as-multiplies": "ingest.outer_dots_as_multiplies:OuterDotsAsMultiplies",
    "xla-diagonal-sums": "ingest.diagonal_sums:DiagonalSums",
    "xla-diagonal-gathers": "ingest.diagonal_gathers:DiagonalGathers",
    "xla-small-table-gathers-as-selects": "ingest.small_table_gathers_as_selects:SmallTableGathersAsSelects",
    "xla-scalar-scatter-indices": "ingest.scalar_scatter_indices:ScalarScatterIndices",
    "xla-constant-scatters-as-selects": "ingest.constant_scatters_as_selects:ConstantScattersAsSelects",
    "xla-sort-slice-to-top-k": "ingest.sort_slice_to_top_k:SortSliceToTopK",
    "xla-unroll-short-loops": "ingest.unroll_short_loops:UnrollShortLoops",
    "xla-hoist-scan-products": "ingest.hoist_scan_products:HoistScanProducts",
    "xla-lower-top-k": "lower.lower_top_k:LowerTopK",
    "xla-concatenate-as-slices": "lower.concatenate_as_slices:ConcatenateAsSlices",
    "xla-rewrite-reduce-windows": "lower.rewrite_reduce_windows:RewriteReduceWindows",
    "xla-flatten-reductions": "lower.flatten_reductions:FlattenReductions",
    "xla-canonicalize-convolutions": "lower.canonicalize_convolutions:CanonicalizeConvolutions",
    "xla-widen-contractions": "numerics.widen_contractions:WidenContractions",
    "xla-widen-narrow-sums": "numerics.widen_narrow_sums:WidenNarrowSums",
    "xla-complex-as-pairs": "numerics.complex_as_pairs:ComplexAsPairs",
    "xla-widen-narrow-iotas": "numerics.widen_narrow_iotas:WidenNarrowIotas",
    "xla-mark-contraction-precision": "numerics.mark_contraction_precision:MarkContractionPrecision",
    "xla-normalize-contractions": "lower.normalize_contractions:NormalizeContractions",
    "xla-profile-kernels": "cpu.profile_kernels:ProfileKernels",
    "xla-outline-kernels": "cpu.outline_kernels:OutlineKernels",
    "xla-inline-schedule-calls": "cpu.inline_schedule_calls:InlineScheduleCalls",
    "xla-target-cpu": "cpu.target_cpu:TargetCpu",
    "xla-openmp-dynamic-schedule": "cpu.openmp_dynamic_schedule:OpenmpDynamicSchedule",
    "xla-shared-parallel-dispatch": "cpu.shared_parallel_dispatch:SharedParallelDispatch",
    "xla-unmask-contractions": "cpu.unmask_contractions:UnmaskContractions",
    "xla-narrow-index-vectors": "cpu.narrow_index_vectors:NarrowIndexVectors",
    "xla-hoist-loop-invariants": "cpu.hoist_loop_invariants:HoistLoopInvariants",
    "xla-hoist-window-accumulators": "cpu.hoist_window_accumulators:HoistWindowAccumulators",
    "xla-micro-kernel-calls": "cpu.micro_kernel_calls:MicroKernelCalls",
    "xla-pack-invariant-panels": "cpu.pack_invariant_panels:PackInvariantPanels",
    "xla-amx-contractions": "cpu.amx_contractions:AmxContractions",
    "xla-amx-calls": "cpu.amx_calls:AmxCalls",
    "xla-no-unroll-fill-loops": "cpu.no_unroll_fill_loops:NoUnrollFillLoops",
    "xla-no-unroll-elementwise-loops": "cpu.no_unroll_elementwise_loops:NoUnrollElementwiseLoops",
    "xla-flatten-minor-transfers": "cpu.flatten_minor_transfers:FlattenMinorTransfers",
    "xla-check-masked-transfers": "cpu.check_masked_transfers:CheckMaskedTransfers",
    "xla-strided-reads-as-shuffles": "cpu.strided_reads_as_shuffles:StridedReadsAsShuffles",
    "xla-loop-annotations-to-llvm": "cpu.loop_annotations_to_llvm:LoopAnnotationsToLlvm",
    "xla-gpu-wrap-host-code": "gpu.gpu_wrap_host_code:GpuWrapHostCode",
    "xla-gpu-matmul-kernels": "gpu.gpu_matmul_kernels:GpuMatmulKernels",
    "xla-gpu-library-matmuls": "gpu.gpu_library_matmuls:GpuLibraryMatmuls",
    "xla-gpu-convolutions-as-matmuls": "gpu.gpu_convolutions_as_matmuls:GpuConvolutionsAsMatmuls",
    "xla-gpu-weight-gradients-as-one-matmul":
        "gpu.gpu_weight_gradients_as_one_matmul:GpuWeightGradientsAsOneMatmul",
    "xla-gpu-share-conv-scratch": "gpu.gpu_share_conv_scratch:GpuShareConvScratch",
    "xla-gpu-epilogue-in-place": "gpu.gpu_epilogue_in_place:GpuEpilogueInPlace",
    "xla-gpu-results-in-slices": "gpu.gpu_results_in_slices:GpuResultsInSlices",
    "xla-gpu-kernels": "gpu.gpu_kernels:GpuKernels",
    "xla-gpu-inline-helpers": "gpu.gpu_inline_helpers:GpuInlineHelpers",
    "xla-gpu-counted-loops": "gpu.gpu_counted_loops:GpuCountedLoops",
    "xla-gpu-whole-carries": "gpu.gpu_whole_carries:GpuWholeCarries",
    "xla-gpu-view-copy-to-linalg": "gpu.gpu_view_copy_to_linalg:GpuViewCopyToLinalg",
    "xla-gpu-fusable-transposes": "gpu.gpu_fusable_transposes:GpuFusableTransposes",
    "xla-gpu-duplicate-cheap-producers":
        "gpu.gpu_duplicate_cheap_producers:GpuDuplicateCheapProducers",
}


def pass_names() -> list[str]:
    return sorted(_REGISTRY)


def is_pass(name: str) -> bool:
    """Whether ``name`` is a registered pass (without sorting the names)."""
    return name in _REGISTRY


def pass_module(name: str) -> str:
    """``phase.module`` of the pass registered as ``name`` (KeyError if none)."""
    return _REGISTRY[name].split(":")[0]


def get_pass_class(name: str):
    """The ModulePass subclass registered as ``name`` (KeyError if none)."""
    module_name, class_name = _REGISTRY[name].split(":")
    module = importlib.import_module(f"xlac.passes.{module_name}")
    return getattr(module, class_name)
