// f32 2-D convolution, NHWC input and HWCF filter, any strides and dilations.
// Threads take chunks of output rows (scf.forall, the fill of the output
// fused in). Each tw-pixel x tf-filter tile of an output row lives in
// registers while the (kh, kw) filter taps go by, tc channels at a time; with
// kh and the row fixed the tile is a 1-D convolution (`decompose`), which
// vectorizes to one contraction over the channels per tap: a broadcast input
// channel times tf filter values, FMA'd. The 1-D vectorizer has no masks, so
// the planner picks tiles that divide the extents (schedule_plan.py).
// Parameters: the forall tile sizes of (n, oh, ow, f) (0 = not split), then
// the register tile tw (pixels), tf (filters) and the channel step tc.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @xla_conv_2d_nhwc_hwcf(
      %op: !transform.any_op {transform.consumed},
      %cn: !transform.param<i64> {transform.readonly},
      %ch: !transform.param<i64> {transform.readonly},
      %cw: !transform.param<i64> {transform.readonly},
      %cf: !transform.param<i64> {transform.readonly},
      %tw: !transform.param<i64> {transform.readonly},
      %tf: !transform.param<i64> {transform.readonly},
      %tc: !transform.param<i64> {transform.readonly}) {
    %fill = transform.get_producer_of_operand %op[2] : (!transform.any_op) -> !transform.any_op
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%cn, %ch, %cw, %cf]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %fill_chunk, %forall2 = transform.structured.fuse_into_containing_op %fill into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill_tile, %fill_loops:4 = transform.structured.tile_using_for %fill_chunk tile_sizes [1, 1, %tw, %tf]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %fill_tile : !transform.any_op
    %tile, %loops:7 = transform.structured.tile_using_for %chunk tile_sizes [1, 1, %tw, %tf, 1, 1, %tc]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op,
                                !transform.any_op, !transform.any_op, !transform.any_op,
                                !transform.any_op, !transform.any_op)
    %row = transform.structured.decompose %tile : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %row : !transform.any_op
    transform.include @xla_contract_to_fma failures(propagate) (%forall2)
      : (!transform.any_op) -> ()
    transform.yield
  }
}
