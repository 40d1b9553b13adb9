// f32 2-D pooling (sum, max, min), NHWC, any strides and dilations. Threads
// take chunks of output rows (scf.forall, the fill of the output fused in);
// each tw-pixel x tc-channel tile of an output row stays in registers while
// the window's taps go by; with the window row fixed the tile is a 1-D
// pooling (`decompose`), vectorized along the channels. Tiles divide ow and c
// (the 1-D vectorizer has no masks: schedule_plan/contraction_plan.py).
// Parameters: the forall tile sizes of (n, oh) (0 = not split), then tw, tc.
// @xla_pooling_nhwc_padded: the same, its input a tensor.pad only it reads,
// fused into the chunks: each thread pads the input rows of its chunk (in
// cache) instead of one thread copying the whole input first.
// The tap loops (kh, kw; a window of one row or column has one) are tagged
// `xla.window_taps`: after bufferization xla-hoist-window-accumulators carries
// the output tile through them in registers.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @xla_pooling_nhwc(
      %op: !transform.any_op {transform.consumed},
      %cn: !transform.param<i64> {transform.readonly},
      %ch: !transform.param<i64> {transform.readonly},
      %tw: !transform.param<i64> {transform.readonly},
      %tc: !transform.param<i64> {transform.readonly}) {
    %fill = transform.get_producer_of_operand %op[2] : (!transform.any_op) -> !transform.any_op
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%cn, %ch, 0, 0]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %fill_chunk, %forall2 = transform.structured.fuse_into_containing_op %fill into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill_tile, %fill_loops:4 = transform.structured.tile_using_for %fill_chunk tile_sizes [1, 1, %tw, %tc]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %fill_tile : !transform.any_op
    %tile, %loops:6 = transform.structured.tile_using_for %chunk tile_sizes [1, 1, %tw, %tc, 1, 1]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op,
          !transform.any_op, !transform.any_op, !transform.any_op)
    transform.annotate %loops#4 "xla.window_taps" : !transform.any_op
    transform.annotate %loops#5 "xla.window_taps" : !transform.any_op
    %row = transform.structured.decompose %tile : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %row : !transform.any_op
    transform.yield
  }

  transform.named_sequence @xla_pooling_nhwc_padded(
      %op: !transform.any_op {transform.consumed},
      %cn: !transform.param<i64> {transform.readonly},
      %ch: !transform.param<i64> {transform.readonly},
      %tw: !transform.param<i64> {transform.readonly},
      %tc: !transform.param<i64> {transform.readonly}) {
    %fill = transform.get_producer_of_operand %op[2] : (!transform.any_op) -> !transform.any_op
    %pad = transform.get_producer_of_operand %op[0] : (!transform.any_op) -> !transform.any_op
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%cn, %ch, 0, 0]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %fill_chunk, %forall2 = transform.structured.fuse_into_containing_op %fill into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %pad_chunk, %forall3 = transform.structured.fuse_into_containing_op %pad into %forall2
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill_tile, %fill_loops:4 = transform.structured.tile_using_for %fill_chunk tile_sizes [1, 1, %tw, %tc]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %fill_tile : !transform.any_op
    %tile, %loops:6 = transform.structured.tile_using_for %chunk tile_sizes [1, 1, %tw, %tc, 1, 1]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op,
          !transform.any_op, !transform.any_op, !transform.any_op)
    transform.annotate %loops#4 "xla.window_taps" : !transform.any_op
    transform.annotate %loops#5 "xla.window_taps" : !transform.any_op
    %row = transform.structured.decompose %tile : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %row : !transform.any_op
    transform.yield
  }
}
