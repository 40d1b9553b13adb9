// Reductions of 4-byte elements (f32, i32). "Rows": the reduced dim is the
// input's contiguous one (row sums, softmax's max, layernorm's mean): each thread takes
// a chunk of rows; a row is summed into a 16-lane partial accumulator (one
// register) that stays there, then folded to one value at the end of
// the row. A full 1-D reduction is first split into 32 rows of that kind.
// "Cols": the reduced dim is not the contiguous one (column sums): each thread
// takes columns, and 16 of them are accumulated in a register as rows stream.
// Loops come in stablehlo's order, parallel ones first, the reduced one last.
// Parameters: the forall tile sizes of the parallel loops (0 = not split).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @xla_reduce_rows_2d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %row, %loop = transform.structured.tile_using_for %chunk tile_sizes [1, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill, %partial, %combine, %rloop = transform.structured.tile_reduction_using_for %row
      by tile_sizes = [0, 16]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @xla_vectorize_partial_2d failures(propagate) (%fill, %partial, %combine)
      : (!transform.any_op, !transform.any_op, !transform.any_op) -> ()
    transform.yield
  }

  transform.named_sequence @xla_reduce_rows_3d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1, 0]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %row, %loops:2 = transform.structured.tile_using_for %chunk tile_sizes [1, 1, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %fill, %partial, %combine, %rloop = transform.structured.tile_reduction_using_for %row
      by tile_sizes = [0, 0, 16]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %fill : !transform.any_op
    transform.structured.vectorize %partial vector_sizes [1, 1, 16] : !transform.any_op
    transform.structured.vectorize %combine : !transform.any_op
    transform.yield
  }

  transform.named_sequence @xla_reduce_rows_4d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1, %c2, 0]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %row, %loops:3 = transform.structured.tile_using_for %chunk tile_sizes [1, 1, 1, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %fill, %partial, %combine, %rloop = transform.structured.tile_reduction_using_for %row
      by tile_sizes = [0, 0, 0, 16]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %fill : !transform.any_op
    transform.structured.vectorize %partial vector_sizes [1, 1, 1, 16] : !transform.any_op
    transform.structured.vectorize %combine : !transform.any_op
    transform.yield
  }

  // Rows whose kept minor dim is short (a complex number's 2 parts after
  // xla-complex-as-pairs, x/y/z coordinates): loops (outer, kept, reduced)
  // over an input laid out (outer, reduced, kept). Each step reads 16 of the
  // reduced dim times the whole kept dim, 16 rows of K contiguous elements,
  // as a K x 16 vector (the loop is tagged for xla-flatten-minor-transfers:
  // one contiguous load, transposed in registers) into a K x 16 accumulator,
  // folded over the 16 at the end of the row: the same 16 lanes per kept
  // index, added in the same order, as 16 strided reads per kept index.
  transform.named_sequence @xla_reduce_kept_minor_3d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, 0, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %row, %loop = transform.structured.tile_using_for %chunk tile_sizes [1, 0, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill, %partial, %combine, %rloop = transform.structured.tile_reduction_using_for %row
      by tile_sizes = [0, 0, 16]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %fill : !transform.any_op
    transform.structured.vectorize %partial : !transform.any_op
    transform.structured.vectorize %combine : !transform.any_op
    transform.annotate %rloop "xla.flatten_transposed_transfers" : !transform.any_op
    transform.yield
  }

  // Sum of a whole 1-D tensor whose length 32 divides: 32 rows, as above.
  transform.named_sequence @xla_reduce_1d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly}) {
    %init, %fill, %rows, %combine = transform.structured.split_reduction %op
      {split_factor = 32, insert_split_dimension = 0}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @xla_reduce_rows_2d failures(propagate) (%rows, %c0)
      : (!transform.any_op, !transform.param<i64>) -> ()
    transform.yield
  }

  // Any other 1-D length: one thread, the 64-lane accumulator.
  transform.named_sequence @xla_reduce_1d_serial(%op: !transform.any_op {transform.consumed}) {
    %fill, %partial, %combine, %rloop = transform.structured.tile_reduction_using_for %op
      by tile_sizes = [16]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %fill : !transform.any_op
    transform.structured.vectorize %partial vector_sizes [16] : !transform.any_op
    transform.structured.vectorize %combine : !transform.any_op
    transform.yield
  }

  transform.named_sequence @xla_reduce_cols_2d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %tile, %loops:2 = transform.structured.tile_using_for %chunk tile_sizes [16, 1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %tile vector_sizes [16, 1] : !transform.any_op
    transform.yield
  }

  transform.named_sequence @xla_reduce_cols_3d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1, 0]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %tile, %loops:3 = transform.structured.tile_using_for %chunk tile_sizes [1, 16, 1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %tile vector_sizes [1, 16, 1] : !transform.any_op
    transform.yield
  }

  transform.named_sequence @xla_vectorize_partial_2d(
      %fill: !transform.any_op {transform.consumed},
      %partial: !transform.any_op {transform.consumed},
      %combine: !transform.any_op {transform.consumed}) {
    transform.structured.vectorize %fill : !transform.any_op
    transform.structured.vectorize %partial vector_sizes [1, 16] : !transform.any_op
    transform.structured.vectorize %combine : !transform.any_op
    transform.yield
  }
  // A kept dim walked contiguously, every other dim reduced (a bias gradient
  // after linalg folded its reshape back, a column sum): %lanes outputs a
  // vector (several registers: each step of the reduced dims reads that many
  // contiguous elements, not one cache line of a row 4 kB away from the last),
  // the reduced dims in order, one chunk of outputs per thread. The kept
  // loop's partial last step is peeled: a chunk whose size is not a multiple
  // of %lanes (660 columns in chunks of 256 and 148) was masked in every
  // step, its accumulator stored and loaded again under a mask per row
  // (jnp.max(x, 0) of 396x660 f32 at x86-64-v3: 0.165 ms; 396x768, whole
  // vectors: 0.049).
  transform.named_sequence @xla_reduce_outer_2d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %lanes: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %one = transform.param.constant 1 : i64 -> !transform.param<i64>
    %tile, %loops:2 = transform.structured.tile_using_for %chunk tile_sizes [%lanes, %one]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op)
    // the kept loop's last, partial step peeled (xla_peel_row): whole vectors unmasked
    %scope = transform.get_parent_op %tile {isolated_from_above} : (!transform.any_op) -> !transform.any_op
    transform.annotate %tile "xla_peeled_tile" : !transform.any_op
    transform.include @xla_peel_row failures(suppress) (%loops#0) : (!transform.any_op) -> ()
    %tiles = transform.structured.match attributes{xla_peeled_tile} in %scope : (!transform.any_op) -> !transform.any_op
    transform.foreach %tiles : !transform.any_op {
    ^bb0(%t: !transform.any_op):
      transform.structured.vectorize %t vector_sizes [%lanes, 1]
        : !transform.any_op, !transform.param<i64>
    }
    transform.yield
  }

  transform.named_sequence @xla_reduce_outer_3d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %lanes: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, 0, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %one = transform.param.constant 1 : i64 -> !transform.param<i64>
    %tile, %loops:3 = transform.structured.tile_using_for %chunk tile_sizes [%lanes, %one, %one]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    // the kept loop's last, partial step peeled (xla_peel_row): whole vectors unmasked
    %scope = transform.get_parent_op %tile {isolated_from_above} : (!transform.any_op) -> !transform.any_op
    transform.annotate %tile "xla_peeled_tile" : !transform.any_op
    transform.include @xla_peel_row failures(suppress) (%loops#0) : (!transform.any_op) -> ()
    %tiles = transform.structured.match attributes{xla_peeled_tile} in %scope : (!transform.any_op) -> !transform.any_op
    transform.foreach %tiles : !transform.any_op {
    ^bb0(%t: !transform.any_op):
      transform.structured.vectorize %t vector_sizes [%lanes, 1, 1]
        : !transform.any_op, !transform.param<i64>
    }
    transform.yield
  }

  transform.named_sequence @xla_reduce_outer_4d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %lanes: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, 0, 0, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %one = transform.param.constant 1 : i64 -> !transform.param<i64>
    %tile, %loops:4 = transform.structured.tile_using_for %chunk tile_sizes [%lanes, %one, %one, %one]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    // the kept loop's last, partial step peeled (xla_peel_row): whole vectors unmasked
    %scope = transform.get_parent_op %tile {isolated_from_above} : (!transform.any_op) -> !transform.any_op
    transform.annotate %tile "xla_peeled_tile" : !transform.any_op
    transform.include @xla_peel_row failures(suppress) (%loops#0) : (!transform.any_op) -> ()
    %tiles = transform.structured.match attributes{xla_peeled_tile} in %scope : (!transform.any_op) -> !transform.any_op
    transform.foreach %tiles : !transform.any_op {
    ^bb0(%t: !transform.any_op):
      transform.structured.vectorize %t vector_sizes [%lanes, 1, 1, 1]
        : !transform.any_op, !transform.param<i64>
    }
    transform.yield
  }
}
