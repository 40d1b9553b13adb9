// xla_reduce_rows_<rank>d with each row's partial last step peeled off
// (fused_rows.mlir's xla_peel_partial): the 16-lane steps are whole, only the
// tail is masked. For 8- and 16-bit elements where the CPU has no masked moves
// of them (AVX2), where each masked step was a branch and a scalar load per
// lane (jax's bf16 softmax: its max over rows of 1260 took 1.0-1.4 ms of a
// 1.7-2.4 ms call at x86-64-v3; schedule_plan: peel_tail).
// Parameters as xla_reduce_rows_<rank>d's.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @xla_reduce_rows_peeled_2d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %row, %loop = transform.structured.tile_using_for %chunk tile_sizes [1, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill, %partial, %combine, %rloop = transform.structured.tile_reduction_using_for %row
      by tile_sizes = [0, 16]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %scope = transform.get_parent_op %fill {isolated_from_above} : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %fill : !transform.any_op
    transform.structured.vectorize %combine : !transform.any_op
    transform.include @xla_peel_partial failures(suppress) (%partial, %rloop)
      : (!transform.any_op, !transform.any_op) -> ()
    %partials = transform.structured.match ops{["linalg.generic"]} attributes{xla_row_partial} in %scope
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %partials : !transform.any_op {
    ^bb0(%p: !transform.any_op):
      transform.structured.vectorize %p vector_sizes [1, 16] : !transform.any_op
    }
    transform.yield
  }

  // xla_reduce_1d with its 32 rows' partial last steps peeled (an i16 sum of
  // 524000 elements at x86-64-v3: rows of 16375, every 16-lane step masked,
  // each a branch and a scalar move per lane). Parameters as xla_reduce_1d's.
  transform.named_sequence @xla_reduce_1d_peeled(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly}) {
    %init, %fill, %rows, %combine = transform.structured.split_reduction %op
      {split_factor = 32, insert_split_dimension = 0}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @xla_reduce_rows_peeled_2d failures(propagate) (%rows, %c0)
      : (!transform.any_op, !transform.param<i64>) -> ()
    transform.yield
  }

  transform.named_sequence @xla_reduce_rows_peeled_3d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1, 0]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %row, %loops:2 = transform.structured.tile_using_for %chunk tile_sizes [1, 1, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %fill, %partial, %combine, %rloop = transform.structured.tile_reduction_using_for %row
      by tile_sizes = [0, 0, 16]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %scope = transform.get_parent_op %fill {isolated_from_above} : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %fill : !transform.any_op
    transform.structured.vectorize %combine : !transform.any_op
    transform.include @xla_peel_partial failures(suppress) (%partial, %rloop)
      : (!transform.any_op, !transform.any_op) -> ()
    %partials = transform.structured.match ops{["linalg.generic"]} attributes{xla_row_partial} in %scope
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %partials : !transform.any_op {
    ^bb0(%p: !transform.any_op):
      transform.structured.vectorize %p vector_sizes [1, 1, 16] : !transform.any_op
    }
    transform.yield
  }

  transform.named_sequence @xla_reduce_rows_peeled_4d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1, %c2, 0]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %row, %loops:3 = transform.structured.tile_using_for %chunk tile_sizes [1, 1, 1, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %fill, %partial, %combine, %rloop = transform.structured.tile_reduction_using_for %row
      by tile_sizes = [0, 0, 0, 16]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %scope = transform.get_parent_op %fill {isolated_from_above} : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %fill : !transform.any_op
    transform.structured.vectorize %combine : !transform.any_op
    transform.include @xla_peel_partial failures(suppress) (%partial, %rloop)
      : (!transform.any_op, !transform.any_op) -> ()
    %partials = transform.structured.match ops{["linalg.generic"]} attributes{xla_row_partial} in %scope
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %partials : !transform.any_op {
    ^bb0(%p: !transform.any_op):
      transform.structured.vectorize %p vector_sizes [1, 1, 1, 16] : !transform.any_op
    }
    transform.yield
  }
}
