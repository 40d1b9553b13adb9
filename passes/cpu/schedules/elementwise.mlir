// Elementwise linalg ops (every loop parallel; broadcasts and transposes in
// the indexing maps are fine): split the outer loops among the threads with
// scf.forall, then walk each chunk with one vector of the innermost loop at a
// time (16 f32: one AVX-512 register; four for exp/tanh polynomials).
// A partial last vector is masked. Parameters: the forall tile size of each
// loop (0 = not split), then the vector length.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @xla_elementwise_1d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %v: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %tile, %loop = transform.structured.tile_using_for %chunk tile_sizes [%v]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.structured.vectorize %tile vector_sizes [%v] {vectorize_nd_extract} : !transform.any_op, !transform.param<i64>
    transform.yield
  }

  transform.named_sequence @xla_elementwise_2d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %v: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %tile, %loops:2 = transform.structured.tile_using_for %chunk tile_sizes [1, %v]
      : (!transform.any_op, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %tile vector_sizes [1, %v] {vectorize_nd_extract} : !transform.any_op, !transform.param<i64>
    transform.yield
  }

  transform.named_sequence @xla_elementwise_3d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly},
      %v: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1, %c2]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %tile, %loops:3 = transform.structured.tile_using_for %chunk tile_sizes [1, 1, %v]
      : (!transform.any_op, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %tile vector_sizes [1, 1, %v] {vectorize_nd_extract} : !transform.any_op, !transform.param<i64>
    transform.yield
  }

  transform.named_sequence @xla_elementwise_4d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly},
      %c3: !transform.param<i64> {transform.readonly},
      %v: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1, %c2, %c3]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %tile, %loops:4 = transform.structured.tile_using_for %chunk tile_sizes [1, 1, 1, %v]
      : (!transform.any_op, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %tile vector_sizes [1, 1, 1, %v] {vectorize_nd_extract} : !transform.any_op, !transform.param<i64>
    transform.yield
  }

  transform.named_sequence @xla_elementwise_5d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly},
      %c3: !transform.param<i64> {transform.readonly},
      %c4: !transform.param<i64> {transform.readonly},
      %v: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1, %c2, %c3, %c4]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %tile, %loops:5 = transform.structured.tile_using_for %chunk tile_sizes [1, 1, 1, 1, %v]
      : (!transform.any_op, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op,
          !transform.any_op)
    transform.structured.vectorize %tile vector_sizes [1, 1, 1, 1, %v] {vectorize_nd_extract} : !transform.any_op, !transform.param<i64>
    transform.yield
  }

  transform.named_sequence @xla_elementwise_6d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly},
      %c3: !transform.param<i64> {transform.readonly},
      %c4: !transform.param<i64> {transform.readonly},
      %c5: !transform.param<i64> {transform.readonly},
      %v: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1, %c2, %c3, %c4, %c5]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %tile, %loops:6 = transform.structured.tile_using_for %chunk tile_sizes [1, 1, 1, 1, 1, %v]
      : (!transform.any_op, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op,
          !transform.any_op, !transform.any_op)
    transform.structured.vectorize %tile vector_sizes [1, 1, 1, 1, 1, %v] {vectorize_nd_extract} : !transform.any_op, !transform.param<i64>
    transform.yield
  }

  // A minor dim shorter than a vector (a complex number's 2 parts, pairs of
  // coordinates): vectors of %w x %m, the two innermost loops together, one
  // register of lanes; xla-flatten-minor-transfers makes their reads and
  // writes of whole rows one 1-D transfer each. Parameters: the forall tile
  // sizes, then %w (rows of the minor dim a vector holds) and %m (its extent).

  transform.named_sequence @xla_elementwise_minor_2d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %w: !transform.param<i64> {transform.readonly},
      %m: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %tile, %loops:1 = transform.structured.tile_using_for %chunk tile_sizes [%w, 0]
      : (!transform.any_op, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    transform.structured.vectorize %tile vector_sizes [%w, %m] {vectorize_nd_extract}
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.annotate %loops#0 "xla.flatten_transfers" : !transform.any_op
    transform.yield
  }

  transform.named_sequence @xla_elementwise_minor_3d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly},
      %w: !transform.param<i64> {transform.readonly},
      %m: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1, %c2]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %tile, %loops:2 = transform.structured.tile_using_for %chunk tile_sizes [1, %w, 0]
      : (!transform.any_op, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %tile vector_sizes [1, %w, %m] {vectorize_nd_extract}
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.annotate %loops#1 "xla.flatten_transfers" : !transform.any_op
    transform.yield
  }

  transform.named_sequence @xla_elementwise_minor_4d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly},
      %c3: !transform.param<i64> {transform.readonly},
      %w: !transform.param<i64> {transform.readonly},
      %m: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1, %c2, %c3]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %tile, %loops:3 = transform.structured.tile_using_for %chunk tile_sizes [1, 1, %w, 0]
      : (!transform.any_op, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %tile vector_sizes [1, 1, %w, %m] {vectorize_nd_extract}
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.annotate %loops#2 "xla.flatten_transfers" : !transform.any_op
    transform.yield
  }

  transform.named_sequence @xla_elementwise_minor_5d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly},
      %c3: !transform.param<i64> {transform.readonly},
      %c4: !transform.param<i64> {transform.readonly},
      %w: !transform.param<i64> {transform.readonly},
      %m: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1, %c2, %c3, %c4]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %tile, %loops:4 = transform.structured.tile_using_for %chunk tile_sizes [1, 1, 1, %w, 0]
      : (!transform.any_op, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %tile vector_sizes [1, 1, 1, %w, %m] {vectorize_nd_extract}
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.annotate %loops#3 "xla.flatten_transfers" : !transform.any_op
    transform.yield
  }

  transform.named_sequence @xla_elementwise_minor_6d(
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly},
      %c3: !transform.param<i64> {transform.readonly},
      %c4: !transform.param<i64> {transform.readonly},
      %c5: !transform.param<i64> {transform.readonly},
      %w: !transform.param<i64> {transform.readonly},
      %m: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1, %c2, %c3, %c4, %c5]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %tile, %loops:5 = transform.structured.tile_using_for %chunk tile_sizes [1, 1, 1, 1, %w, 0]
      : (!transform.any_op, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %tile vector_sizes [1, 1, 1, 1, %w, %m] {vectorize_nd_extract}
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.annotate %loops#4 "xla.flatten_transfers" : !transform.any_op
    transform.yield
  }
}
