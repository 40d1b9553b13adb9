// xla_elementwise_<rank>d with the innermost loop's partial last vector peeled
// off (xla_peel_row): the vectors of the loop are whole, no mask, and only the
// tail is masked. Below AVX-512, for every element width (schedule_plan:
// peel_tail). First for 8- and 16-bit elements, which AVX2 has no masked moves
// of (vmaskmovps/pd take 32- and 64-bit lanes only; AVX-512BW has
// vmovdqu8/16): LLVM splits each masked load and store into a branch and a
// scalar move per lane, in every step: a bf16 add over rows of 630 took 0.24
// ms at x86-64-v3 where rows of 640 took 0.064. Then for f32/f64 too: AMD's
// vmaskmovps stores are microcoded (rows of 1485 f32: jnp.round 0.160 -> 0.061
// ms). Parameters as xla_elementwise_<rank>d's.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @xla_elementwise_peeled_1d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %v: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %tile, %loop = transform.structured.tile_using_for %chunk tile_sizes [%v]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    // marked, as the peel clones the tile into the tail; found again after it
    %scope = transform.get_parent_op %tile {isolated_from_above} : (!transform.any_op) -> !transform.any_op
    transform.annotate %tile "xla_peeled_tile" : !transform.any_op
    transform.include @xla_peel_row failures(suppress) (%loop) : (!transform.any_op) -> ()
    %tiles = transform.structured.match attributes{xla_peeled_tile} in %scope : (!transform.any_op) -> !transform.any_op
    transform.foreach %tiles : !transform.any_op {
    ^bb0(%t: !transform.any_op):
      transform.structured.vectorize %t vector_sizes [%v] {vectorize_nd_extract} : !transform.any_op, !transform.param<i64>
    }
    transform.yield
  }

  transform.named_sequence @xla_elementwise_peeled_2d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %v: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %tile, %loops:2 = transform.structured.tile_using_for %chunk tile_sizes [1, %v]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    // marked, as the peel clones the tile into the tail; found again after it
    %scope = transform.get_parent_op %tile {isolated_from_above} : (!transform.any_op) -> !transform.any_op
    transform.annotate %tile "xla_peeled_tile" : !transform.any_op
    transform.include @xla_peel_row failures(suppress) (%loops#1) : (!transform.any_op) -> ()
    %tiles = transform.structured.match attributes{xla_peeled_tile} in %scope : (!transform.any_op) -> !transform.any_op
    transform.foreach %tiles : !transform.any_op {
    ^bb0(%t: !transform.any_op):
      transform.structured.vectorize %t vector_sizes [1, %v] {vectorize_nd_extract} : !transform.any_op, !transform.param<i64>
    }
    transform.yield
  }

  transform.named_sequence @xla_elementwise_peeled_3d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly},
      %v: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1, %c2]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %tile, %loops:3 = transform.structured.tile_using_for %chunk tile_sizes [1, 1, %v]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    // marked, as the peel clones the tile into the tail; found again after it
    %scope = transform.get_parent_op %tile {isolated_from_above} : (!transform.any_op) -> !transform.any_op
    transform.annotate %tile "xla_peeled_tile" : !transform.any_op
    transform.include @xla_peel_row failures(suppress) (%loops#2) : (!transform.any_op) -> ()
    %tiles = transform.structured.match attributes{xla_peeled_tile} in %scope : (!transform.any_op) -> !transform.any_op
    transform.foreach %tiles : !transform.any_op {
    ^bb0(%t: !transform.any_op):
      transform.structured.vectorize %t vector_sizes [1, 1, %v] {vectorize_nd_extract} : !transform.any_op, !transform.param<i64>
    }
    transform.yield
  }

  transform.named_sequence @xla_elementwise_peeled_4d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly},
      %c3: !transform.param<i64> {transform.readonly},
      %v: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1, %c2, %c3]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %tile, %loops:4 = transform.structured.tile_using_for %chunk tile_sizes [1, 1, 1, %v]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    // marked, as the peel clones the tile into the tail; found again after it
    %scope = transform.get_parent_op %tile {isolated_from_above} : (!transform.any_op) -> !transform.any_op
    transform.annotate %tile "xla_peeled_tile" : !transform.any_op
    transform.include @xla_peel_row failures(suppress) (%loops#3) : (!transform.any_op) -> ()
    %tiles = transform.structured.match attributes{xla_peeled_tile} in %scope : (!transform.any_op) -> !transform.any_op
    transform.foreach %tiles : !transform.any_op {
    ^bb0(%t: !transform.any_op):
      transform.structured.vectorize %t vector_sizes [1, 1, 1, %v] {vectorize_nd_extract} : !transform.any_op, !transform.param<i64>
    }
    transform.yield
  }

  transform.named_sequence @xla_elementwise_peeled_5d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly},
      %c3: !transform.param<i64> {transform.readonly},
      %c4: !transform.param<i64> {transform.readonly},
      %v: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1, %c2, %c3, %c4]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %tile, %loops:5 = transform.structured.tile_using_for %chunk tile_sizes [1, 1, 1, 1, %v]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    // marked, as the peel clones the tile into the tail; found again after it
    %scope = transform.get_parent_op %tile {isolated_from_above} : (!transform.any_op) -> !transform.any_op
    transform.annotate %tile "xla_peeled_tile" : !transform.any_op
    transform.include @xla_peel_row failures(suppress) (%loops#4) : (!transform.any_op) -> ()
    %tiles = transform.structured.match attributes{xla_peeled_tile} in %scope : (!transform.any_op) -> !transform.any_op
    transform.foreach %tiles : !transform.any_op {
    ^bb0(%t: !transform.any_op):
      transform.structured.vectorize %t vector_sizes [1, 1, 1, 1, %v] {vectorize_nd_extract} : !transform.any_op, !transform.param<i64>
    }
    transform.yield
  }

  transform.named_sequence @xla_elementwise_peeled_6d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly},
      %c3: !transform.param<i64> {transform.readonly},
      %c4: !transform.param<i64> {transform.readonly},
      %c5: !transform.param<i64> {transform.readonly},
      %v: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1, %c2, %c3, %c4, %c5]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %tile, %loops:6 = transform.structured.tile_using_for %chunk tile_sizes [1, 1, 1, 1, 1, %v]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    // marked, as the peel clones the tile into the tail; found again after it
    %scope = transform.get_parent_op %tile {isolated_from_above} : (!transform.any_op) -> !transform.any_op
    transform.annotate %tile "xla_peeled_tile" : !transform.any_op
    transform.include @xla_peel_row failures(suppress) (%loops#5) : (!transform.any_op) -> ()
    %tiles = transform.structured.match attributes{xla_peeled_tile} in %scope : (!transform.any_op) -> !transform.any_op
    transform.foreach %tiles : !transform.any_op {
    ^bb0(%t: !transform.any_op):
      transform.structured.vectorize %t vector_sizes [1, 1, 1, 1, 1, %v] {vectorize_nd_extract} : !transform.any_op, !transform.param<i64>
    }
    transform.yield
  }
}
