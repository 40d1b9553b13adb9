// Row reductions fused with their elementwise consumers (softmax: max ->
// exp -> sum -> divide; layernorm: mean -> variance -> normalize). The last
// consumer's rows are split among the threads (scf.forall) and walked in
// blocks of rows (scf.for; one row by default); every producer of the group is fused into
// that block, so one block's max, exponentials, sum and quotients are all
// computed while its rows sit in L1/L2: one pass over memory, not four.
// Inside a block each op is vectorized as reduction.mlir / elementwise.mlir do;
// the elementwise ops' last partial vector of a row is peeled off (xla_peel_row).
// %members: the fused producers, consumers before their producers.
// Parameters: forall tile sizes of the parallel loops, rows per block, vector length.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @xla_fused_rows_2d(
      %op: !transform.any_op {transform.consumed},
      %members: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %rows: !transform.param<i64> {transform.readonly},
      %v: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %in_chunk, %forall2 = transform.structured.fuse_into_containing_op %members into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.apply_cse to %forall2 : !transform.any_op
    %block, %loop = transform.structured.tile_using_for %chunk tile_sizes [%rows, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %in_block, %loop2 = transform.structured.fuse_into_containing_op %in_chunk into %loop
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.apply_cse to %loop2 : !transform.any_op
    %reductions = transform.structured.match ops{["linalg.generic"]}
      attributes{iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]}
      in %loop2 : (!transform.any_op) -> !transform.any_op
    transform.foreach %reductions : !transform.any_op {
    ^bb0(%r: !transform.any_op):
      %row, %rloop = transform.structured.tile_using_for %r tile_sizes [1, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      %fill, %partial, %combine, %kloop = transform.structured.tile_reduction_using_for %row
        by tile_sizes = [0, 16]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.structured.vectorize %fill : !transform.any_op
      transform.structured.vectorize %combine : !transform.any_op
      transform.include @xla_peel_partial failures(suppress) (%partial, %kloop)
        : (!transform.any_op, !transform.any_op) -> ()
    }
    %partials = transform.structured.match ops{["linalg.generic"]} attributes{xla_row_partial} in %loop2
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %partials : !transform.any_op {
    ^bb0(%p: !transform.any_op):
      transform.structured.vectorize %p vector_sizes [1, 16] : !transform.any_op
    }
    %maps = transform.structured.match ops{["linalg.generic"]}
      attributes{iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]}
      in %loop2 : (!transform.any_op) -> !transform.any_op
    transform.foreach %maps : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %tile, %tloops:2 = transform.structured.tile_using_for %m tile_sizes [1, %v]
        : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      transform.include @xla_peel_row failures(suppress) (%tloops#1) : (!transform.any_op) -> ()
    }
    %tiles = transform.structured.match ops{["linalg.generic"]}
      attributes{iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]}
      in %loop2 : (!transform.any_op) -> !transform.any_op
    transform.foreach %tiles : !transform.any_op {
    ^bb0(%t: !transform.any_op):
      transform.structured.vectorize %t vector_sizes [1, %v] : !transform.any_op, !transform.param<i64>
    }
    transform.include @xla_vectorize_fills failures(propagate) (%loop2) : (!transform.any_op) -> ()
    transform.yield
  }

  transform.named_sequence @xla_fused_rows_3d(
      %op: !transform.any_op {transform.consumed},
      %members: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %rows: !transform.param<i64> {transform.readonly},
      %v: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1, 0]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %in_chunk, %forall2 = transform.structured.fuse_into_containing_op %members into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.apply_cse to %forall2 : !transform.any_op
    %block, %loops:2 = transform.structured.tile_using_for %chunk tile_sizes [1, %rows, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %in_block, %loop2 = transform.structured.fuse_into_containing_op %in_chunk into %loops#1
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.apply_cse to %loop2 : !transform.any_op
    %reductions = transform.structured.match ops{["linalg.generic"]}
      attributes{iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>,
                                   #linalg.iterator_type<reduction>]}
      in %loop2 : (!transform.any_op) -> !transform.any_op
    transform.foreach %reductions : !transform.any_op {
    ^bb0(%r: !transform.any_op):
      %row, %rloops:2 = transform.structured.tile_using_for %r tile_sizes [1, 1, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      %fill, %partial, %combine, %kloop = transform.structured.tile_reduction_using_for %row
        by tile_sizes = [0, 0, 16]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.structured.vectorize %fill : !transform.any_op
      transform.structured.vectorize %combine : !transform.any_op
      transform.include @xla_peel_partial failures(suppress) (%partial, %kloop)
        : (!transform.any_op, !transform.any_op) -> ()
    }
    %partials = transform.structured.match ops{["linalg.generic"]} attributes{xla_row_partial} in %loop2
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %partials : !transform.any_op {
    ^bb0(%p: !transform.any_op):
      transform.structured.vectorize %p vector_sizes [1, 1, 16] : !transform.any_op
    }
    %maps = transform.structured.match ops{["linalg.generic"]}
      attributes{iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>,
                                   #linalg.iterator_type<parallel>]}
      in %loop2 : (!transform.any_op) -> !transform.any_op
    transform.foreach %maps : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %tile, %tloops:3 = transform.structured.tile_using_for %m tile_sizes [1, 1, %v]
        : (!transform.any_op, !transform.param<i64>)
        -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.include @xla_peel_row failures(suppress) (%tloops#2) : (!transform.any_op) -> ()
    }
    %tiles = transform.structured.match ops{["linalg.generic"]}
      attributes{iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>,
                                   #linalg.iterator_type<parallel>]}
      in %loop2 : (!transform.any_op) -> !transform.any_op
    transform.foreach %tiles : !transform.any_op {
    ^bb0(%t: !transform.any_op):
      transform.structured.vectorize %t vector_sizes [1, 1, %v] : !transform.any_op, !transform.param<i64>
    }
    transform.include @xla_vectorize_fills failures(propagate) (%loop2) : (!transform.any_op) -> ()
    transform.yield
  }

  transform.named_sequence @xla_fused_rows_4d(
      %op: !transform.any_op {transform.consumed},
      %members: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly},
      %rows: !transform.param<i64> {transform.readonly},
      %v: !transform.param<i64> {transform.readonly}) {
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%c0, %c1, %c2, 0]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %in_chunk, %forall2 = transform.structured.fuse_into_containing_op %members into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.apply_cse to %forall2 : !transform.any_op
    %block, %loops:3 = transform.structured.tile_using_for %chunk tile_sizes [1, 1, %rows, 0]
      : (!transform.any_op, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %in_block, %loop2 = transform.structured.fuse_into_containing_op %in_chunk into %loops#2
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.apply_cse to %loop2 : !transform.any_op
    %reductions = transform.structured.match ops{["linalg.generic"]}
      attributes{iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>,
                                   #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]}
      in %loop2 : (!transform.any_op) -> !transform.any_op
    transform.foreach %reductions : !transform.any_op {
    ^bb0(%r: !transform.any_op):
      %row, %rloops:3 = transform.structured.tile_using_for %r tile_sizes [1, 1, 1, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      %fill, %partial, %combine, %kloop = transform.structured.tile_reduction_using_for %row
        by tile_sizes = [0, 0, 0, 16]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.structured.vectorize %fill : !transform.any_op
      transform.structured.vectorize %combine : !transform.any_op
      transform.include @xla_peel_partial failures(suppress) (%partial, %kloop)
        : (!transform.any_op, !transform.any_op) -> ()
    }
    %partials = transform.structured.match ops{["linalg.generic"]} attributes{xla_row_partial} in %loop2
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %partials : !transform.any_op {
    ^bb0(%p: !transform.any_op):
      transform.structured.vectorize %p vector_sizes [1, 1, 1, 16] : !transform.any_op
    }
    %maps = transform.structured.match ops{["linalg.generic"]}
      attributes{iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>,
                                   #linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]}
      in %loop2 : (!transform.any_op) -> !transform.any_op
    transform.foreach %maps : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      %tile, %tloops:4 = transform.structured.tile_using_for %m tile_sizes [1, 1, 1, %v]
        : (!transform.any_op, !transform.param<i64>)
        -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.include @xla_peel_row failures(suppress) (%tloops#3) : (!transform.any_op) -> ()
    }
    %tiles = transform.structured.match ops{["linalg.generic"]}
      attributes{iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>,
                                   #linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]}
      in %loop2 : (!transform.any_op) -> !transform.any_op
    transform.foreach %tiles : !transform.any_op {
    ^bb0(%t: !transform.any_op):
      transform.structured.vectorize %t vector_sizes [1, 1, 1, %v] : !transform.any_op, !transform.param<i64>
    }
    transform.include @xla_vectorize_fills failures(propagate) (%loop2) : (!transform.any_op) -> ()
    transform.yield
  }

  // A row's last, partial vector split off its loop (nothing to peel when the
  // vector divides the row: a no-op failure). The elementwise ops are then
  // vectorized whole in the loop, masked only in the tail: masked in every
  // step, ViT's 197-wide softmax rows (32-lane steps) took 1.0-5.2 ms for a
  // 4x3x197x197 softmax where 192-wide rows took 0.3-0.45.
  transform.named_sequence @xla_peel_row(%loop: !transform.any_op {transform.readonly}) {
    %for = transform.cast %loop : !transform.any_op to !transform.op<"scf.for">
    %main, %rest = transform.loop.peel %for : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }

  // A row reduction's partial step (16 lanes accumulated per step) marked for
  // vectorizing after its loop is peeled (the peel clones it into the tail),
  // then the loop's last, partial step split off as in xla_peel_row: masked in
  // every step, the 16-lane accumulator was read and written under a mask each
  // step (ViT's 197-wide softmax rows: 13 masked steps per reduction per row).
  // No-op failure when 16 divides the row (the mark is then all that is done).
  transform.named_sequence @xla_peel_partial(
      %partial: !transform.any_op {transform.readonly},
      %kloop: !transform.any_op {transform.readonly}) {
    transform.annotate %partial "xla_row_partial" : !transform.any_op
    transform.include @xla_peel_row failures(propagate) (%kloop) : (!transform.any_op) -> ()
    transform.yield
  }

  // The reductions' init fills, now per block of rows.
  transform.named_sequence @xla_vectorize_fills(%loop: !transform.any_op {transform.readonly}) {
    %fills = transform.structured.match ops{["linalg.fill"]} in %loop
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %fills : !transform.any_op {
    ^bb0(%f: !transform.any_op):
      transform.structured.vectorize %f : !transform.any_op
    }
    transform.yield
  }
}
