// AVX-512's plain plan (@xla_matmul: column panels packed one at a time,
// BERT's and ViT's [k, n] weights) and the elementwise epilogue reading its
// C, where k is longer than one block (ViT's second MLP dot, k = 768; BERT's,
// k = 1024): the epilogue is tiled into the matmul's thread chunks, the
// matmul and its fill fused into each chunk and scheduled as in its own plan
// (@xla_matmul_chunk), then the epilogue walks the chunk a row vector of tn
// lanes at a time, C's chunk still in cache, as
// @xla_matmul_block_packed_epilogue_*d does for AVX2's plan (epilogue_plan.py).
// Before, the epilogue was a thread loop of its own over all of C.
// Parameters: the epilogue's chunk sizes (0 = not split), then bm, bn, bk, tm, tn.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @xla_matmul_epilogue_2d(
      %epilogue: !transform.any_op {transform.consumed},
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %bm: !transform.param<i64> {transform.readonly},
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
    transform.include @xla_matmul_chunk failures(propagate)
        (%chunk, %fill_chunk, %forall3, %bm, %bn, %bk, %tm, %tn)
      : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.param<i64>,
         !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>) -> ()
    %row, %rows:2 = transform.structured.tile_using_for %epilogue_chunk tile_sizes [1, %tn]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %row vector_sizes [1, %tn] {vectorize_nd_extract}
      : !transform.any_op, !transform.param<i64>
    transform.yield
  }

  transform.named_sequence @xla_matmul_epilogue_3d(
      %epilogue: !transform.any_op {transform.consumed},
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly},
      %bm: !transform.param<i64> {transform.readonly},
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
    transform.include @xla_matmul_chunk failures(propagate)
        (%chunk, %fill_chunk, %forall3, %bm, %bn, %bk, %tm, %tn)
      : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.param<i64>,
         !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>) -> ()
    %row, %rows:3 = transform.structured.tile_using_for %epilogue_chunk tile_sizes [1, 1, %tn]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %row vector_sizes [1, 1, %tn] {vectorize_nd_extract}
      : !transform.any_op, !transform.param<i64>
    transform.yield
  }
}
