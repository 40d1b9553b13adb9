// f32 matmul and batch matmul for AVX-512. Each thread takes a chunk of C
// (scf.forall; the fill that zeroes C is fused into it). Within a chunk, n
// and k are cut into 256-wide blocks so the 256x256 block of B being reused
// (256 KiB) stays in L2 while every row of the chunk goes by; each 8x32 tile of C lives in 16 zmm registers across a block
// while k advances by one: a broadcast of A(i,k) times the 32-wide row
// B(k, j..j+31), i.e. vector.contract -> 16 FMAs per step.
// Parameters: the chunk tile sizes (0 = not split).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @xla_matmul(
      %op: !transform.any_op {transform.consumed},
      %cm: !transform.param<i64> {transform.readonly},
      %cn: !transform.param<i64> {transform.readonly}) {
    %fill = transform.get_producer_of_operand %op[2] : (!transform.any_op) -> !transform.any_op
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%cm, %cn]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %fill_chunk, %forall2 = transform.structured.fuse_into_containing_op %fill into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.include @xla_fill_tiles failures(propagate) (%fill_chunk)
      : (!transform.any_op) -> ()
    %panel, %nblock = transform.structured.tile_using_for %chunk tile_sizes [0, 256, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %block, %kblock = transform.structured.tile_using_for %panel tile_sizes [0, 0, 256]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %tile, %loops:3 = transform.structured.tile_using_for %block tile_sizes [8, 32, 1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %tile vector_sizes [8, 32, 1] {create_named_contraction}
      : !transform.any_op
    transform.include @xla_contract_to_fma failures(propagate) (%forall2)
      : (!transform.any_op) -> ()
    transform.yield
  }

  // k short enough (<= 256) to need no blocking: the fill is fused into each
  // register tile, whose accumulators then start at zero without reading C.
  transform.named_sequence @xla_matmul_short_k(
      %op: !transform.any_op {transform.consumed},
      %cm: !transform.param<i64> {transform.readonly},
      %cn: !transform.param<i64> {transform.readonly}) {
    %fill = transform.get_producer_of_operand %op[2] : (!transform.any_op) -> !transform.any_op
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%cm, %cn]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %fill_chunk, %forall2 = transform.structured.fuse_into_containing_op %fill into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %tile, %loops:2 = transform.structured.fuse %chunk tile_sizes [8, 32, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %step, %kloop = transform.structured.tile_using_for %tile tile_sizes [0, 0, 1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.structured.vectorize %step vector_sizes [8, 32, 1] {create_named_contraction}
      : !transform.any_op
    %fill_tile = transform.structured.match ops{["linalg.fill"]} in %forall2
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %fill_tile vector_sizes [8, 32] : !transform.any_op
    transform.include @xla_contract_to_fma failures(propagate) (%forall2)
      : (!transform.any_op) -> ()
    transform.yield
  }

  // The same per batch: chunks of [batch, m, n], 1 x 8 x 32 register tiles.
  transform.named_sequence @xla_batch_matmul(
      %op: !transform.any_op {transform.consumed},
      %cb: !transform.param<i64> {transform.readonly},
      %cm: !transform.param<i64> {transform.readonly},
      %cn: !transform.param<i64> {transform.readonly}) {
    %fill = transform.get_producer_of_operand %op[2] : (!transform.any_op) -> !transform.any_op
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%cb, %cm, %cn]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %fill_chunk, %forall2 = transform.structured.fuse_into_containing_op %fill into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill_tile, %fill_loops:3 = transform.structured.tile_using_for %fill_chunk tile_sizes [1, 8, 32]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %fill_tile vector_sizes [1, 8, 32] : !transform.any_op
    %one, %bloop = transform.structured.tile_using_for %chunk tile_sizes [1, 0, 0, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %block, %kblock = transform.structured.tile_using_for %one tile_sizes [0, 0, 0, 256]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %tile, %loops:2 = transform.structured.tile_using_for %block tile_sizes [0, 8, 32, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    // batch 1: a plain matmul on rank-reduced slices, then as @xla_matmul
    %generic = transform.structured.generalize %tile : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %forall2 {
      transform.apply_patterns.linalg.fold_unit_extent_dims_via_slices
      transform.apply_patterns.linalg.tiling_canonicalization
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %folded = transform.structured.match ops{["linalg.generic"]} in %forall2
      : (!transform.any_op) -> !transform.any_op
    %mm = transform.structured.specialize %folded : (!transform.any_op) -> !transform.any_op
    %step, %kloop = transform.structured.tile_using_for %mm tile_sizes [0, 0, 1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.structured.vectorize %step vector_sizes [8, 32, 1] {create_named_contraction}
      : !transform.any_op
    transform.include @xla_contract_to_fma failures(propagate) (%forall2)
      : (!transform.any_op) -> ()
    transform.yield
  }

  // Each vector.contract (masked at the edges of odd shapes) -> one
  // broadcast-times-row FMA per row of the tile.
  transform.named_sequence @xla_contract_to_fma(%scope: !transform.any_op {transform.readonly}) {
    transform.apply_patterns to %scope {
      transform.apply_patterns.vector.lower_masked_transfers
    } : !transform.any_op
    transform.yield
  }

  // The zeroing of a C chunk, in 8x32 vector stores.
  transform.named_sequence @xla_fill_tiles(%fill: !transform.any_op {transform.consumed}) {
    %tile, %loops:2 = transform.structured.tile_using_for %fill tile_sizes [8, 32]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %tile vector_sizes [8, 32] : !transform.any_op
    transform.yield
  }
}
