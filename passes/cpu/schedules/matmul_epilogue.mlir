// A matmul and the elementwise epilogue reading its C (a bias add, a
// residual add: xla-fuse's output fusion), in the same thread chunks
// (epilogue_plan.py). The epilogue is tiled into the matmul's chunks, the
// matmul and its zero fill are fused into each chunk (C's rows may reach the
// epilogue through a tensor.expand_shape: its slice is moved above it first),
// the matmul's chunk is scheduled as in its own plan, and the epilogue then
// walks the chunk a row vector of tn lanes at a time, C still in cache.
// Before, the epilogue was a pass of its own over all of C after every
// thread had written it. Parameters: the epilogue's chunk sizes (0 = not
// split), then the matmul's plan's parameters after its chunk sizes.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @xla_matmul_block_packed_epilogue_2d(
      %epilogue: !transform.any_op {transform.consumed},
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %bn: !transform.param<i64> {transform.readonly},
      %bk: !transform.param<i64> {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) {
    %fill = transform.get_producer_of_operand %op[2] : (!transform.any_op) -> !transform.any_op
    %epilogue_chunk, %forall = transform.structured.tile_using_forall %epilogue tile_sizes [%c0, %c1]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    transform.apply_patterns to %forall {
      transform.apply_patterns.tensor.bubble_up_extract_slice
    } : !transform.any_op
    %chunk, %forall2 = transform.structured.fuse_into_containing_op %op into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill_chunk, %forall3 = transform.structured.fuse_into_containing_op %fill into %forall2
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.include @xla_matmul_block_packed_chunk failures(propagate)
        (%chunk, %fill_chunk, %forall3, %bn, %bk, %tm, %tn)
      : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.param<i64>,
         !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
    %row, %rows:2 = transform.structured.tile_using_for %epilogue_chunk tile_sizes [1, %tn]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %row vector_sizes [1, %tn] {vectorize_nd_extract}
      : !transform.any_op, !transform.param<i64>
    transform.yield
  }

  transform.named_sequence @xla_matmul_block_packed_epilogue_3d(
      %epilogue: !transform.any_op {transform.consumed},
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly},
      %bn: !transform.param<i64> {transform.readonly},
      %bk: !transform.param<i64> {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) {
    %fill = transform.get_producer_of_operand %op[2] : (!transform.any_op) -> !transform.any_op
    %epilogue_chunk, %forall = transform.structured.tile_using_forall %epilogue tile_sizes [%c0, %c1, %c2]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    transform.apply_patterns to %forall {
      transform.apply_patterns.tensor.bubble_up_extract_slice
    } : !transform.any_op
    %chunk, %forall2 = transform.structured.fuse_into_containing_op %op into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill_chunk, %forall3 = transform.structured.fuse_into_containing_op %fill into %forall2
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.include @xla_matmul_block_packed_chunk failures(propagate)
        (%chunk, %fill_chunk, %forall3, %bn, %bk, %tm, %tn)
      : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.param<i64>,
         !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
    %row, %rows:3 = transform.structured.tile_using_for %epilogue_chunk tile_sizes [1, 1, %tn]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %row vector_sizes [1, 1, %tn] {vectorize_nd_extract}
      : !transform.any_op, !transform.param<i64>
    transform.yield
  }

  transform.named_sequence @xla_matmul_block_packed_epilogue_4d(
      %epilogue: !transform.any_op {transform.consumed},
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly},
      %c3: !transform.param<i64> {transform.readonly},
      %bn: !transform.param<i64> {transform.readonly},
      %bk: !transform.param<i64> {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) {
    %fill = transform.get_producer_of_operand %op[2] : (!transform.any_op) -> !transform.any_op
    %epilogue_chunk, %forall = transform.structured.tile_using_forall %epilogue tile_sizes [%c0, %c1, %c2, %c3]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    transform.apply_patterns to %forall {
      transform.apply_patterns.tensor.bubble_up_extract_slice
    } : !transform.any_op
    %chunk, %forall2 = transform.structured.fuse_into_containing_op %op into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill_chunk, %forall3 = transform.structured.fuse_into_containing_op %fill into %forall2
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.include @xla_matmul_block_packed_chunk failures(propagate)
        (%chunk, %fill_chunk, %forall3, %bn, %bk, %tm, %tn)
      : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.param<i64>,
         !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
    %row, %rows:4 = transform.structured.tile_using_for %epilogue_chunk tile_sizes [1, 1, 1, %tn]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %row vector_sizes [1, 1, 1, %tn] {vectorize_nd_extract}
      : !transform.any_op, !transform.param<i64>
    transform.yield
  }

}
