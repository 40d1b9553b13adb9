// @xla_matmul_epilogue_tiles_2d without the packed panels of B, for chunks
// whose rows are one register tile (epilogue_plan._tiles_sequence and
// _one_tall_tile): an LSTM step's gate product, 8 x 256 . 256 x 1024, in
// AVX-512's 8 x 32 tiles, or in one 8 x 8 tile with AVX2 (whose usual 4-row
// tiles would read B twice). The packed panel pays off when many row tiles
// read it; here each element of B is read by one tile, so packing copied all
// of B (1 MB) every step to read it back once. The tiles read B in place,
// row after row of k; the k order of each sum, and so every result, is the
// packed plan's. Parameters as @xla_matmul_epilogue_tiles_2d's (bn and bk
// unused).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @xla_matmul_epilogue_tiles_unpacked_2d(
      %epilogue: !transform.any_op {transform.consumed},
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
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
    %tile, %loops:2 = transform.structured.tile_using_for %epilogue_chunk tile_sizes [%tm, %tn]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.apply_patterns to %forall3 {
      transform.apply_patterns.tensor.bubble_up_extract_slice
    } : !transform.any_op
    %mm_tile, %inner = transform.structured.fuse_into_containing_op %chunk into %loops#1
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill_tile, %inner2 = transform.structured.fuse_into_containing_op %fill_chunk into %inner
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.include @xla_peel failures(suppress) (%loops#0) : (!transform.any_op) -> ()
    transform.apply_patterns to %forall3 {
      transform.apply_patterns.linalg.tiling_canonicalization
      transform.apply_patterns.scf.for_loop_canonicalization
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %mms = transform.structured.match ops{["linalg.matmul"]} in %forall3
      : (!transform.any_op) -> !transform.any_op
    %step, %kloop = transform.structured.tile_using_for %mms tile_sizes [0, 0, 1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.structured.vectorize %step vector_sizes [%tm, %tn, 1] {create_named_contraction}
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    %zeros = transform.structured.match ops{["linalg.fill"]} in %forall3
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %zeros vector_sizes [%tm, %tn]
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    %epilogues = transform.structured.match ops{["linalg.generic"]} in %forall3
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %epilogues vector_sizes [%tm, %tn] {vectorize_nd_extract}
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.include @xla_masks_out_of_loops failures(propagate) (%forall3)
      : (!transform.any_op) -> ()
    transform.include @xla_contract_to_fma failures(propagate) (%forall3)
      : (!transform.any_op) -> ()
    transform.yield
  }
}
