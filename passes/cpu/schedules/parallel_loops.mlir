// Loop nests no vector schedule fits (a body with control flow, i1 or f64
// accumulators, strided windows, more loops than the vector schedules take):
// split their outer parallel loops among the threads with scf.forall and
// leave each chunk's loops scalar (LLVM may still vectorize the innermost).
// Without this such an op ran on one core. Parameters: the forall tile size
// of each loop (0 = not split; reduction loops are never split).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @xla_parallel_loops_1d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }

  transform.named_sequence @xla_parallel_loops_2d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }

  transform.named_sequence @xla_parallel_loops_3d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1, %c2]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }

  transform.named_sequence @xla_parallel_loops_4d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly},
      %c3: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1, %c2, %c3]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }

  transform.named_sequence @xla_parallel_loops_5d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly},
      %c3: !transform.param<i64> {transform.readonly},
      %c4: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1, %c2, %c3, %c4]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }

  transform.named_sequence @xla_parallel_loops_6d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly},
      %c3: !transform.param<i64> {transform.readonly},
      %c4: !transform.param<i64> {transform.readonly},
      %c5: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1, %c2, %c3, %c4, %c5]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }

  transform.named_sequence @xla_parallel_loops_7d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly},
      %c3: !transform.param<i64> {transform.readonly},
      %c4: !transform.param<i64> {transform.readonly},
      %c5: !transform.param<i64> {transform.readonly},
      %c6: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1, %c2, %c3, %c4, %c5, %c6]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }

  transform.named_sequence @xla_parallel_loops_8d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly},
      %c3: !transform.param<i64> {transform.readonly},
      %c4: !transform.param<i64> {transform.readonly},
      %c5: !transform.param<i64> {transform.readonly},
      %c6: !transform.param<i64> {transform.readonly},
      %c7: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
