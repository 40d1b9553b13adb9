"""The ops each Python pass acts on (``ModulePass.acts_on``), by pass name, for
the passes that have any: a pass manager takes such a pass without importing
its module (``xlac.passes.deferred``), which is imported only where the
module's op census holds one of them. Why: a first compile imported all ~115
pass modules and their helpers (builders, plans, texts; ~35 ms of a tiny
program's ~150 ms of CPU), half of them for passes with nothing to do.

Each entry equals its class's ``acts_on`` (test_registry.py checks every pass).
"""

from __future__ import annotations

ACTS_ON: dict[str, frozenset[str]] = {
    "xla-additive-reductions": frozenset({"linalg.generic"}),
    "xla-amx-calls": frozenset({"linalg.batch_matmul", "linalg.matmul"}),
    "xla-amx-contractions": frozenset({"linalg.batch_matmul", "linalg.matmul"}),
    "xla-bf16-extend-as-shift": frozenset({"llvm.fpext"}),
    "xla-canonicalize-convolutions": frozenset({"stablehlo.convolution"}),
    "xla-check-masked-transfers": frozenset({"vector.transfer_read"}),
    "xla-check-shape-assertions": frozenset({"stablehlo.custom_call"}),
    "xla-collapse-unit-epilogue-dims": frozenset({"linalg.generic"}),
    "xla-concatenate-as-slices": frozenset({"stablehlo.concatenate", "stablehlo.pad"}),
    "xla-constant-scatters-as-selects": frozenset({"stablehlo.dynamic_update_slice", "stablehlo.scatter"}),
    "xla-constant-selects-as-permutes": frozenset({"llvm.select"}),
    "xla-constants-into-loops": frozenset({"stablehlo.while"}),
    "xla-contiguous-contraction-operands": frozenset({"linalg.batch_matmul", "linalg.matmul"}),
    "xla-decompose-batch-norm": frozenset({
        "stablehlo.batch_norm_grad", "stablehlo.batch_norm_inference", "stablehlo.batch_norm_training"}),
    "xla-diagonal-gathers": frozenset({"stablehlo.gather"}),
    "xla-diagonal-sums": frozenset({"stablehlo.reduce"}),
    "xla-double-buffer-loop-carries": frozenset({"scf.while"}),
    "xla-duplicate-index-producers": frozenset({"linalg.generic"}),
    "xla-expand-complex-ops": frozenset({
        "stablehlo.bitcast_convert", "stablehlo.cbrt", "stablehlo.maximum", "stablehlo.minimum"}),
    "xla-expand-constant-powers": frozenset({"stablehlo.power"}),
    "xla-expand-f8-casts": frozenset({"arith.extf", "arith.truncf"}),
    "xla-expm1-to-libm": frozenset({"math.expm1"}),
    "xla-fold-empty-reductions": frozenset({"stablehlo.reduce"}),
    "xla-fold-transposes": frozenset({"stablehlo.transpose"}),
    "xla-gpu-duplicate-cheap-producers": frozenset({"linalg.generic"}),
    "xla-gpu-fusable-transposes": frozenset({"linalg.transpose"}),
    "xla-gpu-horizontal-launches": frozenset({"gpu.launch"}),
    "xla-gpu-results-in-slices": frozenset({"tensor.insert_slice", "tensor.pad"}),
    "xla-hand-over-loop-carries": frozenset({"scf.while"}),
    "xla-hoist-loop-invariants": frozenset({"scf.for"}),
    "xla-hoist-window-accumulators": frozenset({"scf.for"}),
    "xla-hoist-scan-products": frozenset({"stablehlo.while"}),
    "xla-horner-fma": frozenset({"arith.addf"}),
    "xla-integer-arithmetic": frozenset({"stablehlo.power"}),
    "xla-keep-roundings": frozenset({"arith.extf", "arith.truncf"}),
    "xla-lane-arg-reductions": frozenset({"linalg.generic"}),
    "xla-lower-collectives": frozenset({
        "stablehlo.all_gather", "stablehlo.all_reduce", "stablehlo.all_to_all", "stablehlo.collective_broadcast",
        "stablehlo.collective_permute", "stablehlo.partition_id", "stablehlo.reduce_scatter",
        "stablehlo.replica_id"}),
    "xla-lower-control-flow": frozenset({"stablehlo.case", "stablehlo.if", "stablehlo.while"}),
    "xla-lower-custom-calls": frozenset({"stablehlo.custom_call"}),
    "xla-lower-fft": frozenset({"stablehlo.fft"}),
    "xla-lower-linalg-ops": frozenset({"stablehlo.cholesky", "stablehlo.triangular_solve"}),
    "xla-lower-scatter": frozenset({"stablehlo.scatter"}),
    "xla-lower-select-and-scatter": frozenset({"stablehlo.select_and_scatter"}),
    "xla-lower-sort": frozenset({"stablehlo.sort"}),
    "xla-merge-select-branches": frozenset({"stablehlo.select"}),
    "xla-micro-kernel-calls": frozenset({"vector.contract"}),
    "xla-narrow-index-vectors": frozenset({"arith.cmpi", "arith.index_cast", "arith.index_castui", "vector.gather"}),
    "xla-outer-dots-as-multiplies": frozenset({"stablehlo.dot_general"}),
    "xla-outline-top-k": frozenset({"chlo.top_k", "stablehlo.composite", "stablehlo.custom_call"}),
    "xla-pack-invariant-panels": frozenset({"scf.for", "scf.forall", "scf.while"}),
    "xla-peel-roll-columns": frozenset({"linalg.generic"}),
    "xla-reduce-precision-nans": frozenset({"stablehlo.reduce_precision"}),
    "xla-rewrite-reduce-windows": frozenset({"stablehlo.reduce_window"}),
    "xla-scalar-loop-carries": frozenset({"scf.while"}),
    "xla-scalar-scatter-indices": frozenset({"stablehlo.scatter"}),
    "xla-shared-parallel-dispatch": frozenset({"omp.parallel"}),
    "xla-small-table-gathers-as-selects": frozenset({"stablehlo.gather"}),
    "xla-sort-slice-to-top-k": frozenset({"stablehlo.sort"}),
    "xla-split-complex-contractions": frozenset({"stablehlo.convolution", "stablehlo.dot_general"}),
    "xla-split-f64-truncation": frozenset({"stablehlo.convert"}),
    "xla-static-dynamic-calls": frozenset({"stablehlo.custom_call"}),
    "xla-unroll-short-loops": frozenset({"stablehlo.while"}),
    "xla-widen-f8-predicates": frozenset({"stablehlo.is_finite"}),
    "xla-widen-narrow-iotas": frozenset({"stablehlo.iota"}),
    "xla-widen-narrow-sums": frozenset({"stablehlo.reduce"}),
    "xla-write-blocks-in-place": frozenset({"tensor.insert_slice"}),
}

# Boolean options a deferred pass may take from its pipeline text, checked (a
# name here, true or false) when the pipeline is built as the class would: the
# CPU pipeline's own spellings (test_registry.py checks each is a bool field).
FLAGS: dict[str, frozenset[str]] = {
    "xla-lower-fft": frozenset({"kernels"}),
}

