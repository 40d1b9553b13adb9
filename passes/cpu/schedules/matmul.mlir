// f32 matmul and batch matmul. Each thread takes a chunk of C (scf.forall;
// the fill that zeroes C is fused into it). Within a chunk, n and k are cut
// into blocks (bn x bk, at most 256 x 256) so the block of B being reused
// stays in L2 while every row of the chunk goes by; each tm x tn register
// tile of C lives in registers across a block while k advances by one: a
// broadcast of A(i,k) times the tn-wide row B(k, j..), i.e. vector.contract
// -> tm x (tn / lanes) FMAs per step. The planner (schedule_plan.py) picks
// the tile for the CPU: 8 x 32 f32 with AVX-512's 32 zmm registers (16
// accumulators), 6 x 16 with AVX2's 16 ymm (12), and sizes that divide the
// extents where it can, so that tiles are static (no masks).
// Parameters: the chunk tile sizes (0 = not split), then bn, bk, tm, tn.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @xla_matmul(
      %op: !transform.any_op {transform.consumed},
      %cm: !transform.param<i64> {transform.readonly},
      %cn: !transform.param<i64> {transform.readonly},
      %bn: !transform.param<i64> {transform.readonly},
      %bk: !transform.param<i64> {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) {
    %fill = transform.get_producer_of_operand %op[2] : (!transform.any_op) -> !transform.any_op
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%cm, %cn]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %fill_chunk, %forall2 = transform.structured.fuse_into_containing_op %fill into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.include @xla_fill_tiles failures(propagate) (%fill_chunk, %tm, %tn)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> ()
    %panel, %nblock = transform.structured.tile_using_for %chunk tile_sizes [0, %bn, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %block, %kblock = transform.structured.tile_using_for %panel tile_sizes [0, 0, %bk]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %tile, %loops:3 = transform.structured.tile_using_for %block tile_sizes [%tm, %tn, 1]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %tile vector_sizes [%tm, %tn, 1] {create_named_contraction}
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.include @xla_contract_to_fma failures(propagate) (%forall2)
      : (!transform.any_op) -> ()
    transform.yield
  }

  // The same, for m or n not a multiple of the register tile (m = 197): the
  // loops over row and column tiles run the whole tiles (static, unmasked),
  // then, once, what is left over (masked), instead of every tile masked.
  transform.named_sequence @xla_matmul_peeled(
      %op: !transform.any_op {transform.consumed},
      %cm: !transform.param<i64> {transform.readonly},
      %cn: !transform.param<i64> {transform.readonly},
      %bn: !transform.param<i64> {transform.readonly},
      %bk: !transform.param<i64> {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) {
    %fill = transform.get_producer_of_operand %op[2] : (!transform.any_op) -> !transform.any_op
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%cm, %cn]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %fill_chunk, %forall2 = transform.structured.fuse_into_containing_op %fill into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.include @xla_fill_tiles failures(propagate) (%fill_chunk, %tm, %tn)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> ()
    %panel, %nblock = transform.structured.tile_using_for %chunk tile_sizes [0, %bn, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %block, %kblock = transform.structured.tile_using_for %panel tile_sizes [0, 0, %bk]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %tile, %loops:3 = transform.structured.tile_using_for %block tile_sizes [%tm, %tn, 1]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @xla_peel failures(suppress) (%loops#0) : (!transform.any_op) -> ()
    transform.include @xla_peel failures(suppress) (%loops#1) : (!transform.any_op) -> ()
    %tiles = transform.structured.match ops{["linalg.matmul"]} in %forall2
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %tiles vector_sizes [%tm, %tn, 1] {create_named_contraction}
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.include @xla_contract_to_fma failures(propagate) (%forall2)
      : (!transform.any_op) -> ()
    transform.yield
  }

  // k short enough (<= 256) to need no blocking: the fill is fused into each
  // register tile, whose accumulators then start at zero without reading C.
  transform.named_sequence @xla_matmul_short_k(
      %op: !transform.any_op {transform.consumed},
      %cm: !transform.param<i64> {transform.readonly},
      %cn: !transform.param<i64> {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) {
    %fill = transform.get_producer_of_operand %op[2] : (!transform.any_op) -> !transform.any_op
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%cm, %cn]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %fill_chunk, %forall2 = transform.structured.fuse_into_containing_op %fill into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %tile, %loops:2 = transform.structured.fuse %chunk tile_sizes [%tm, %tn, 0]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %step, %kloop = transform.structured.tile_using_for %tile tile_sizes [0, 0, 1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.structured.vectorize %step vector_sizes [%tm, %tn, 1] {create_named_contraction}
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    %fill_tile = transform.structured.match ops{["linalg.fill"]} in %forall2
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %fill_tile vector_sizes [%tm, %tn]
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.include @xla_contract_to_fma failures(propagate) (%forall2)
      : (!transform.any_op) -> ()
    transform.yield
  }

  // The same, column tiles outside row tiles: each tn-wide panel of B
  // (k x tn, in L1) serves every row tile of the chunk while the chunk of A
  // (m x k, in L2) goes by; for a B far larger than A (an LM head, 256 x 8000),
  // which row tiles outside would stream from memory once per row tile.
  transform.named_sequence @xla_matmul_short_k_columns(
      %op: !transform.any_op {transform.consumed},
      %cm: !transform.param<i64> {transform.readonly},
      %cn: !transform.param<i64> {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) {
    %fill = transform.get_producer_of_operand %op[2] : (!transform.any_op) -> !transform.any_op
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%cm, %cn]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %fill_chunk, %forall2 = transform.structured.fuse_into_containing_op %fill into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %tile, %loops:2 = transform.structured.fuse %chunk tile_sizes [%tm, %tn, 0] interchange [1, 0, 2]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %step, %kloop = transform.structured.tile_using_for %tile tile_sizes [0, 0, 1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.structured.vectorize %step vector_sizes [%tm, %tn, 1] {create_named_contraction}
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    %fill_tile = transform.structured.match ops{["linalg.fill"]} in %forall2
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %fill_tile vector_sizes [%tm, %tn]
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.include @xla_contract_to_fma failures(propagate) (%forall2)
      : (!transform.any_op) -> ()
    transform.yield
  }

  // The same per batch: chunks of [batch, m, n], 1 x tm x tn register tiles.
  transform.named_sequence @xla_batch_matmul(
      %op: !transform.any_op {transform.consumed},
      %cb: !transform.param<i64> {transform.readonly},
      %cm: !transform.param<i64> {transform.readonly},
      %cn: !transform.param<i64> {transform.readonly},
      %bk: !transform.param<i64> {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) {
    %fill = transform.get_producer_of_operand %op[2] : (!transform.any_op) -> !transform.any_op
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%cb, %cm, %cn]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %fill_chunk, %forall2 = transform.structured.fuse_into_containing_op %fill into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill_tile, %fill_loops:3 = transform.structured.tile_using_for %fill_chunk tile_sizes [1, %tm, %tn]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %fill_tile vector_sizes [1, %tm, %tn]
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    %one, %bloop = transform.structured.tile_using_for %chunk tile_sizes [1, 0, 0, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %block, %kblock = transform.structured.tile_using_for %one tile_sizes [0, 0, 0, %bk]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %tile, %loops:2 = transform.structured.tile_using_for %block tile_sizes [0, %tm, %tn, 0]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op)
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
    transform.structured.vectorize %step vector_sizes [%tm, %tn, 1] {create_named_contraction}
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.include @xla_contract_to_fma failures(propagate) (%forall2)
      : (!transform.any_op) -> ()
    transform.yield
  }

  // The same, peeling the rows and columns a register tile does not fill.
  transform.named_sequence @xla_batch_matmul_peeled(
      %op: !transform.any_op {transform.consumed},
      %cb: !transform.param<i64> {transform.readonly},
      %cm: !transform.param<i64> {transform.readonly},
      %cn: !transform.param<i64> {transform.readonly},
      %bk: !transform.param<i64> {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) {
    %fill = transform.get_producer_of_operand %op[2] : (!transform.any_op) -> !transform.any_op
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%cb, %cm, %cn]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %fill_chunk, %forall2 = transform.structured.fuse_into_containing_op %fill into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill_tile, %fill_loops:3 = transform.structured.tile_using_for %fill_chunk tile_sizes [1, %tm, %tn]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %fill_tile vector_sizes [1, %tm, %tn]
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    %one, %bloop = transform.structured.tile_using_for %chunk tile_sizes [1, 0, 0, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %block, %kblock = transform.structured.tile_using_for %one tile_sizes [0, 0, 0, %bk]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %tile, %loops:2 = transform.structured.tile_using_for %block tile_sizes [0, %tm, %tn, 0]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @xla_peel failures(suppress) (%loops#0) : (!transform.any_op) -> ()
    transform.include @xla_peel failures(suppress) (%loops#1) : (!transform.any_op) -> ()
    %tiles = transform.structured.match ops{["linalg.batch_matmul"]} in %forall2
      : (!transform.any_op) -> !transform.any_op
    %generic = transform.structured.generalize %tiles : (!transform.any_op) -> !transform.any_op
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
    transform.structured.vectorize %step vector_sizes [%tm, %tn, 1] {create_named_contraction}
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.include @xla_contract_to_fma failures(propagate) (%forall2)
      : (!transform.any_op) -> ()
    transform.yield
  }

  // A loop's last, partial iteration split off (nothing to peel: a no-op failure).
  transform.named_sequence @xla_peel(%loop: !transform.any_op {transform.readonly}) {
    %for = transform.cast %loop : !transform.any_op to !transform.op<"scf.for">
    %main, %rest = transform.loop.peel %for : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
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
  transform.named_sequence @xla_fill_tiles(%fill: !transform.any_op {transform.consumed},
      %tm: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) {
    %tile, %loops:2 = transform.structured.tile_using_for %fill tile_sizes [%tm, %tn]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %tile vector_sizes [%tm, %tn]
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.yield
  }
}
