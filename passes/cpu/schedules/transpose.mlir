// Transposes that swap the two innermost dims (a matmul operand made
// [k, n]): 16x16 blocks, read as 16 rows of 16 contiguous elements and
// transposed in registers (shuffles), instead of gathering 16 elements 4 KiB
// apart per vector. Parameters: the forall tile sizes (0 = not split).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @xla_transpose_2d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %tile, %loops:2 = transform.structured.tile_using_for %chunk tile_sizes [16, 16]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %tile vector_sizes [16, 16] : !transform.any_op
    transform.include @xla_transpose_in_registers failures(propagate) (%forall)
      : (!transform.any_op) -> ()
    transform.yield
  }

  transform.named_sequence @xla_transpose_3d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1, %c2]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %tile, %loops:3 = transform.structured.tile_using_for %chunk tile_sizes [1, 16, 16]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %tile vector_sizes [1, 16, 16] : !transform.any_op
    transform.include @xla_transpose_in_registers failures(propagate) (%forall)
      : (!transform.any_op) -> ()
    transform.yield
  }

  // Any other permutation whose input and output walk different dims
  // contiguously (attention's K made [b, h, d, s] from [b, s, h, d]): 16x16
  // blocks of those two dims, every other dim one at a time. Parameters: the
  // forall tile sizes, then the block (16 or 1 per dim).
  transform.named_sequence @xla_transpose_blocks_3d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly},
      %t0: !transform.param<i64> {transform.readonly},
      %t1: !transform.param<i64> {transform.readonly},
      %t2: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1, %c2]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %tile, %loops:3 = transform.structured.tile_using_for %chunk tile_sizes [%t0, %t1, %t2]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %tile vector_sizes [%t0, %t1, %t2]
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>
    transform.include @xla_transpose_in_registers failures(propagate) (%forall)
      : (!transform.any_op) -> ()
    transform.yield
  }

  transform.named_sequence @xla_transpose_blocks_4d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly},
      %c3: !transform.param<i64> {transform.readonly},
      %t0: !transform.param<i64> {transform.readonly},
      %t1: !transform.param<i64> {transform.readonly},
      %t2: !transform.param<i64> {transform.readonly},
      %t3: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1, %c2, %c3]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %tile, %loops:4 = transform.structured.tile_using_for %chunk tile_sizes [%t0, %t1, %t2, %t3]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %tile vector_sizes [%t0, %t1, %t2, %t3]
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
        !transform.param<i64>
    transform.include @xla_transpose_in_registers failures(propagate) (%forall)
      : (!transform.any_op) -> ()
    transform.yield
  }

  // A transposing read -> 16 row reads + vector.transpose (shuffles in LLVM).
  transform.named_sequence @xla_transpose_in_registers(%scope: !transform.any_op {transform.readonly}) {
    transform.apply_patterns to %scope {
      transform.apply_patterns.vector.transfer_permutation_patterns
    } : !transform.any_op
    transform.yield
  }
}
