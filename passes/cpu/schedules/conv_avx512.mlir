// f32 2-D convolution, NHWC input and HWCF filter, for AVX-512. Threads take
// chunks of output rows (scf.forall, the fill of the output fused in). Each
// 8-pixel x 32-filter tile of an output row lives in 16 zmm registers while
// the (kh, kw) filter taps go by; with kh and the row fixed the tile is a 1-D
// convolution (`decompose`), which vectorizes to one contraction over the
// channels per tap: a broadcast input channel times 32 filter values, FMA'd.
// Parameters: the forall tile sizes of (n, oh, ow, f) (0 = not split).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @xla_conv_2d_nhwc_hwcf(
      %op: !transform.any_op {transform.consumed},
      %cn: !transform.param<i64> {transform.readonly},
      %ch: !transform.param<i64> {transform.readonly},
      %cw: !transform.param<i64> {transform.readonly},
      %cf: !transform.param<i64> {transform.readonly}) {
    %fill = transform.get_producer_of_operand %op[2] : (!transform.any_op) -> !transform.any_op
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%cn, %ch, %cw, %cf]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %fill_chunk, %forall2 = transform.structured.fuse_into_containing_op %fill into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill_tile, %fill_loops:4 = transform.structured.tile_using_for %fill_chunk tile_sizes [1, 1, 8, 32]
      : (!transform.any_op)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %fill_tile vector_sizes [1, 1, 8, 32] : !transform.any_op
    %tile, %loops:7 = transform.structured.tile_using_for %chunk tile_sizes [1, 1, 8, 32, 1, 1, 16]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op,
                                !transform.any_op, !transform.any_op, !transform.any_op,
                                !transform.any_op, !transform.any_op)
    %row = transform.structured.decompose %tile : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %row : !transform.any_op
    transform.include @xla_contract_to_fma failures(propagate) (%forall2)
      : (!transform.any_op) -> ()
    transform.yield
  }
}
