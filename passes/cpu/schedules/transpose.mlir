// Transposes, and elementwise ops reading an operand transposed, where the
// input walks another dim contiguously than the output (a matmul operand
// made [k, n]; attention's K made [b, h, d, s] from [b, s, h, d]; x.T + y):
// square blocks of those two dims (the side schedule_plan.transpose_block
// picks per element width), every other dim one at a time. Each block is
// read as rows of the input, transposed in registers (shuffles) and written
// as rows of the output, instead of gathering each output vector's elements
// one cache line apiece. Parameters: the forall tile sizes (0 = not split),
// then the block (the side or 1 per dim).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @xla_transpose_blocks_2d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %t0: !transform.param<i64> {transform.readonly},
      %t1: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %tile, %loops:2 = transform.structured.tile_using_for %chunk tile_sizes [%t0, %t1]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %tile vector_sizes [%t0, %t1]
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.include @xla_transpose_in_registers failures(propagate) (%forall)
      : (!transform.any_op) -> ()
    transform.include @xla_transpose_by_unpacks failures(propagate) (%forall)
      : (!transform.any_op) -> ()
    transform.yield
  }

  // xla_transpose_blocks_2d with the blocks swept along the input's rows (the
  // output's columns innermost): for an input whose rows lie a multiple of
  // 4 KiB apart, where a block's 16 rows fall in one L1 set and sweeping down
  // the input's columns evicted the lines prefetched for the next block
  // (256x1024 f32 0.105 -> 0.087 ms, 128x4096 0.20 -> 0.10-0.13, AVX-512).
  transform.named_sequence @xla_transpose_rows_2d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %t0: !transform.param<i64> {transform.readonly},
      %t1: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %tile, %loops:2 = transform.structured.tile_using_for %chunk tile_sizes [%t0, %t1] interchange = [1, 0]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %tile vector_sizes [%t0, %t1]
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.include @xla_transpose_in_registers failures(propagate) (%forall)
      : (!transform.any_op) -> ()
    transform.include @xla_transpose_by_unpacks failures(propagate) (%forall)
      : (!transform.any_op) -> ()
    transform.yield
  }

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
    transform.include @xla_transpose_by_unpacks failures(propagate) (%forall)
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
    transform.include @xla_transpose_by_unpacks failures(propagate) (%forall)
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

  // A 16x16 block's transpose -> four rounds of two-row unpacks (the shuffles
  // LLVM makes single unpack/permute instructions of); other sides stay one
  // flat shuffle, which LLVM lowers well for 8x8.
  transform.named_sequence @xla_transpose_by_unpacks(%scope: !transform.any_op {transform.readonly}) {
    transform.apply_patterns to %scope {
      transform.apply_patterns.vector.lower_transpose lowering_strategy = "shuffle_16x16"
    } : !transform.any_op
    transform.yield
  }
}
