// xla_transpose_blocks_<rank>d where a blocked dim is no multiple of the
// block (180 = 11 * 16 + 4): the block loops' partial last steps are peeled
// off (xla_peel_row; a no-op failure where a loop divides), so every block of
// the main loops is whole, transposed in registers without masks, and only
// the edge blocks are masked. Parameters as xla_transpose_blocks_<rank>d's.
//
// An edge block's read comes out of the vectorizer wrapped in vector.mask,
// which transfer_permutation_patterns leave alone: in the 3-D and 4-D
// sequences its mask is made the read's operand first (xla_masks_as_operands),
// so it too becomes a masked minor-identity read (rows) and a transpose in
// registers. Left wrapped,
// canonicalization dropped the tile's unit dims into a transposing read
// whose map skips a memref dim ((b, i, h, d) -> (d, i) of a (b, i, h, d) ->
// (h, b, d, i) transpose): no permutation of the minor dims, so it reached
// convert-vector-to-scf, which unpacks such a read's mask along the vector's
// first dim where the mask is in the memref's order (d, not i): half an edge
// block was left unread (0.3 relative error, NaN at x86-64-v3: an attention
// product's K transposed to (b, h, d, i) before a batched matmul). A 2-D
// tile has no dim to skip: its masked read, (d0, d1) -> (d1, d0), is a
// permutation of the minor dims, which convert-vector-to-scf lowers right
// (rows and a transpose): left wrapped there, as before (unwrapped, its
// transpose as unpacks, 2048 x 180 -> .T measured no faster at the host).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @xla_transpose_peeled_2d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %t0: !transform.param<i64> {transform.readonly},
      %t1: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %tile, %loops:2 = transform.structured.tile_using_for %chunk tile_sizes [%t0, %t1]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    // marked, as each peel clones the tile into its tail; found again after them
    transform.annotate %tile "xla_transpose_tile" : !transform.any_op
    transform.include @xla_peel_row failures(suppress) (%loops#1) : (!transform.any_op) -> ()
    transform.include @xla_peel_row failures(suppress) (%loops#0) : (!transform.any_op) -> ()
    // the main loops' tiles made static (the peels' sizes folded): no masks
    transform.apply_patterns to %forall {
      transform.apply_patterns.linalg.tiling_canonicalization
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %tiles = transform.structured.match attributes{xla_transpose_tile} in %forall
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %tiles : !transform.any_op {
    ^bb0(%t: !transform.any_op):
      transform.structured.vectorize %t vector_sizes [%t0, %t1] : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    }
    transform.include @xla_transpose_in_registers failures(propagate) (%forall)
      : (!transform.any_op) -> ()
    transform.include @xla_transpose_by_unpacks failures(propagate) (%forall)
      : (!transform.any_op) -> ()
    transform.yield
  }

  transform.named_sequence @xla_transpose_peeled_3d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly},
      %t0: !transform.param<i64> {transform.readonly},
      %t1: !transform.param<i64> {transform.readonly},
      %t2: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1, %c2]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %tile, %loops:3 = transform.structured.tile_using_for %chunk tile_sizes [%t0, %t1, %t2]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    // marked, as each peel clones the tile into its tail; found again after them
    transform.annotate %tile "xla_transpose_tile" : !transform.any_op
    transform.include @xla_peel_row failures(suppress) (%loops#2) : (!transform.any_op) -> ()
    transform.include @xla_peel_row failures(suppress) (%loops#1) : (!transform.any_op) -> ()
    transform.include @xla_peel_row failures(suppress) (%loops#0) : (!transform.any_op) -> ()
    // the main loops' tiles made static (the peels' sizes folded): no masks
    transform.apply_patterns to %forall {
      transform.apply_patterns.linalg.tiling_canonicalization
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %tiles = transform.structured.match attributes{xla_transpose_tile} in %forall
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %tiles : !transform.any_op {
    ^bb0(%t: !transform.any_op):
      transform.structured.vectorize %t vector_sizes [%t0, %t1, %t2] : !transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>
    }
    transform.include @xla_masks_as_operands failures(propagate) (%forall)
      : (!transform.any_op) -> ()
    transform.include @xla_transpose_in_registers failures(propagate) (%forall)
      : (!transform.any_op) -> ()
    transform.include @xla_transpose_by_unpacks failures(propagate) (%forall)
      : (!transform.any_op) -> ()
    transform.yield
  }

  transform.named_sequence @xla_transpose_peeled_4d(
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
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %tile, %loops:4 = transform.structured.tile_using_for %chunk tile_sizes [%t0, %t1, %t2, %t3]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    // marked, as each peel clones the tile into its tail; found again after them
    transform.annotate %tile "xla_transpose_tile" : !transform.any_op
    transform.include @xla_peel_row failures(suppress) (%loops#3) : (!transform.any_op) -> ()
    transform.include @xla_peel_row failures(suppress) (%loops#2) : (!transform.any_op) -> ()
    transform.include @xla_peel_row failures(suppress) (%loops#1) : (!transform.any_op) -> ()
    transform.include @xla_peel_row failures(suppress) (%loops#0) : (!transform.any_op) -> ()
    // the main loops' tiles made static (the peels' sizes folded): no masks
    transform.apply_patterns to %forall {
      transform.apply_patterns.linalg.tiling_canonicalization
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %tiles = transform.structured.match attributes{xla_transpose_tile} in %forall
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %tiles : !transform.any_op {
    ^bb0(%t: !transform.any_op):
      transform.structured.vectorize %t vector_sizes [%t0, %t1, %t2, %t3] : !transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>
    }
    transform.include @xla_masks_as_operands failures(propagate) (%forall)
      : (!transform.any_op) -> ()
    transform.include @xla_transpose_in_registers failures(propagate) (%forall)
      : (!transform.any_op) -> ()
    transform.include @xla_transpose_by_unpacks failures(propagate) (%forall)
      : (!transform.any_op) -> ()
    transform.yield
  }

  // A vector.mask around a transfer -> the transfer with the mask as its operand
  transform.named_sequence @xla_masks_as_operands(%scope: !transform.any_op {transform.readonly}) {
    transform.apply_patterns to %scope {
      transform.apply_patterns.vector.lower_masked_transfers
    } : !transform.any_op
    transform.yield
  }
}
