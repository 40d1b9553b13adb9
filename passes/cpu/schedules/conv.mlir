// f32 2-D convolution, NHWC input and HWCF filter, any strides and dilations.
// Threads take chunks of output rows (scf.forall, the fill of the output
// fused in). Each tw-pixel x tf-filter tile of an output row lives in
// registers while the (kh, kw) filter taps go by, tc channels at a time; with
// kh and the row fixed the tile is a 1-D convolution (`decompose`), which
// vectorizes to one contraction over the channels per tap: a broadcast input
// channel times tf filter values, FMA'd. The 1-D vectorizer has no masks, so
// the planner picks tiles that divide the extents, or tiles whose loops' last,
// short steps @xla_peel_tails peels into static tiles of their own (conv_plan.py).
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
    %chunk, %forall2 = transform.include @xla_conv_chunks failures(propagate)
      (%op, %cn, %ch, %cw, %cf, %tw, %tf)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %tile, %loops:7 = transform.structured.tile_using_for %chunk tile_sizes [1, 1, %tw, %tf, 1, 1, %tc]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op,
                                !transform.any_op, !transform.any_op, !transform.any_op,
                                !transform.any_op, !transform.any_op)
    transform.include @xla_peel failures(suppress) (%loops#6) : (!transform.any_op) -> ()
    transform.include @xla_peel_tails failures(propagate) (%loops#2, %loops#3, %forall2)
      : (!transform.any_op, !transform.any_op, !transform.any_op) -> ()
    %tiles = transform.structured.match ops{["linalg.conv_2d_nhwc_hwcf"]} in %forall2
      : (!transform.any_op) -> !transform.any_op
    transform.include @xla_conv_register_tiles failures(propagate) (%tiles, %forall2)
      : (!transform.any_op, !transform.any_op) -> ()
    transform.yield
  }

  // The same tiles with the filters' loop outside the pixels': where the
  // filter is larger than the input (ResNet's 3x3x512x512 at 7x7 pixels,
  // 9.4 MB), rows outside read all of it once per output row, from memory.
  // With tf filters outside, their kh x kw x c x tf slice stays in L2 while
  // every row of the chunk goes by, and threads take chunks of filters
  // (the planner's %cf), so each filter is read from memory once.
  transform.named_sequence @xla_conv_2d_nhwc_hwcf_filters_outer(
      %op: !transform.any_op {transform.consumed},
      %cn: !transform.param<i64> {transform.readonly},
      %ch: !transform.param<i64> {transform.readonly},
      %cw: !transform.param<i64> {transform.readonly},
      %cf: !transform.param<i64> {transform.readonly},
      %tw: !transform.param<i64> {transform.readonly},
      %tf: !transform.param<i64> {transform.readonly},
      %tc: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall2 = transform.include @xla_conv_chunks failures(propagate)
      (%op, %cn, %ch, %cw, %cf, %tw, %tf)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %filters, %filter_loop = transform.structured.tile_using_for %chunk tile_sizes [0, 0, 0, %tf]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %packed = transform.include @xla_pack_filter_slice failures(propagate) (%filters, %forall2)
      : (!transform.any_op, !transform.any_op) -> !transform.any_op
    %tile, %loops:6 = transform.structured.tile_using_for %packed tile_sizes [1, 1, %tw, 0, 1, 1, %tc]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op,
                                !transform.any_op, !transform.any_op, !transform.any_op,
                                !transform.any_op)
    transform.include @xla_peel failures(suppress) (%loops#5) : (!transform.any_op) -> ()
    transform.include @xla_peel_tails failures(propagate) (%loops#2, %filter_loop, %forall2)
      : (!transform.any_op, !transform.any_op, !transform.any_op) -> ()
    %tiles = transform.structured.match ops{["linalg.conv_2d_nhwc_hwcf"]} in %forall2
      : (!transform.any_op) -> !transform.any_op
    transform.include @xla_conv_register_tiles failures(propagate) (%tiles, %forall2)
      : (!transform.any_op, !transform.any_op) -> ()
    transform.yield
  }

  // A tile of one output row is a 1-D convolution: one contraction over the
  // channels per filter tap, FMA'd.
  transform.named_sequence @xla_conv_register_tiles(
      %tile: !transform.any_op {transform.consumed},
      %forall: !transform.any_op {transform.readonly}) {
    %row = transform.structured.decompose %tile : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %row : !transform.any_op
    transform.include @xla_contract_to_fma failures(propagate) (%forall)
      : (!transform.any_op) -> ()
    transform.yield
  }

  // Threads' chunks of (n, oh, ow, f), the output's fill fused into each and
  // vectorized in register tiles.
  transform.named_sequence @xla_conv_chunks(
      %op: !transform.any_op {transform.consumed},
      %cn: !transform.param<i64> {transform.readonly},
      %ch: !transform.param<i64> {transform.readonly},
      %cw: !transform.param<i64> {transform.readonly},
      %cf: !transform.param<i64> {transform.readonly},
      %tw: !transform.param<i64> {transform.readonly},
      %tf: !transform.param<i64> {transform.readonly})
      -> (!transform.any_op, !transform.any_op) {
    %fill = transform.get_producer_of_operand %op[2] : (!transform.any_op) -> !transform.any_op
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%cn, %ch, %cw, %cf]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %fill_chunk, %forall2 = transform.structured.fuse_into_containing_op %fill into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill_tile, %fill_loops:4 = transform.structured.tile_using_for %fill_chunk tile_sizes [1, 1, %tw, %tf]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @xla_peel_tails failures(propagate) (%fill_loops#2, %fill_loops#3, %forall2)
      : (!transform.any_op, !transform.any_op, !transform.any_op) -> ()
    %fill_tiles = transform.structured.match ops{["linalg.fill"]} in %forall2
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %fill_tiles : !transform.any_op
    transform.yield %chunk, %forall2 : !transform.any_op, !transform.any_op
  }


  // The filter's kh x kw x c x tf slice copied to a buffer of its own (a
  // nofold pad, bufferized; no padding, so no fill), one vector copy per
  // tf-wide row. In place its rows are f floats apart, a power of two in most
  // networks, so they fall into a few cache sets and evict each other.
  transform.named_sequence @xla_pack_filter_slice(
      %conv: !transform.any_op {transform.consumed},
      %scope: !transform.any_op {transform.readonly}) -> !transform.any_op {
    %padded, %pad, %copy_back = transform.structured.pad %conv {
        padding_values = ["0x0", "0x0", "0x0"], padding_dimensions = [3],
        nofold_flags = [0, 1, 0], copy_back_op = "none"}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %buffer, %new = transform.structured.bufferize_to_allocation %pad
      {memcpy_op = "linalg.copy"} : !transform.any_op
    %copies = transform.structured.match ops{["linalg.copy"]} in %scope
      : (!transform.any_op) -> !transform.any_op
    %row, %rows:3 = transform.structured.tile_using_for %copies tile_sizes [1, 1, 1, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op,
                                !transform.any_op)
    transform.structured.vectorize %row : !transform.any_op
    transform.yield %padded : !transform.any_op
  }

  // Tiles that do not divide the row (tw pixels) or the filters (tf): each
  // loop's last, partial step peeled off (the filters' first, so the row's
  // tail holds both the whole filter tiles and the short one), and the
  // peeled steps' sizes folded to constants, so that every tile has a static
  // shape for the maskless 1-D vectorizer. A main tile of whole vectors and a
  // short tail, where a tile dividing 33 filters was 11 wide (3 ymm pieces at
  // AVX2) and one dividing a 26-pixel row 2 pixels (docs/PERFORMANCE.md).
  // A loop its tile divides fails to peel: nothing to do. The channels'
  // loop (17 channels: 8 + 8 + 1, not 17 steps of one) is peeled before.
  transform.named_sequence @xla_peel_tails(
      %pixels: !transform.any_op {transform.readonly},
      %filters: !transform.any_op {transform.readonly},
      %scope: !transform.any_op {transform.readonly}) {
    transform.include @xla_peel failures(suppress) (%filters) : (!transform.any_op) -> ()
    transform.include @xla_peel failures(suppress) (%pixels) : (!transform.any_op) -> ()
    transform.apply_patterns to %scope {
      transform.apply_patterns.linalg.tiling_canonicalization
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }

}
