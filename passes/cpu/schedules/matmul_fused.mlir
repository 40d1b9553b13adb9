// Matmuls whose B is made by an op fused into the packing of B: a
// transpose (a weight stored [n, k]) or a widening (bf16, f16, f8 or i8
// weights computed in f32 or i32). Each packed panel or block of B is made
// by that op from the operand as it lies, instead of a transposed or wide
// copy of all of B written to memory and read back (contraction_plan.py's
// _b_producer). Otherwise as matmul.mlir's schedules.
module attributes {transform.with_named_sequence} {
  // B made by a transpose (a weight stored [n, k], as PyTorch's Linear keeps
  // it) or a widening (bf16 weights computed in f32): that producer is fused
  // into the column loop, so each bk x tn panel of B is made, in 16 x 16
  // blocks (transposed in registers), into a buffer of its own that the row
  // tiles then read: the packing above, with the producer in it, instead of
  // a transposed or f32 copy of all of B written to memory and read back.
  // Parameters as @xla_matmul's, without bm; %producer: B's producer, then
  // A's widening where there is one (contraction_plan's _with_a_widening).
  transform.named_sequence @xla_matmul_fused_b(
      %op: !transform.any_op {transform.consumed},
      %producer: !transform.any_op {transform.readonly},
      %cm: !transform.param<i64> {transform.readonly},
      %cn: !transform.param<i64> {transform.readonly},
      %bn: !transform.param<i64> {transform.readonly},
      %bk: !transform.param<i64> {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) {
    %b_producer, %a_producer = transform.split_handle %producer {fail_on_payload_too_small = false}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill = transform.get_producer_of_operand %op[2] : (!transform.any_op) -> !transform.any_op
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%cm, %cn]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %fill_chunk, %forall2 = transform.structured.fuse_into_containing_op %fill into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.include @xla_matmul_fused_b_chunk failures(propagate)
        (%chunk, %fill_chunk, %b_producer, %a_producer, %forall2, %bn, %bk, %tm, %tn)
      : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op,
         !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
    transform.yield
  }

  // @xla_matmul_fused_b within one thread's chunk (%forall2: the thread loop,
  // into which the producer of B is fused). %a_producer: A's widening, or an
  // empty handle (xla_widen_a_per_block).
  transform.named_sequence @xla_matmul_fused_b_chunk(
      %chunk: !transform.any_op {transform.consumed},
      %fill_chunk: !transform.any_op {transform.consumed},
      %producer: !transform.any_op {transform.consumed},
      %a_producer: !transform.any_op {transform.consumed},
      %forall2: !transform.any_op {transform.readonly},
      %bn: !transform.param<i64> {transform.readonly},
      %bk: !transform.param<i64> {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) {
    transform.include @xla_fill_tiles failures(propagate) (%fill_chunk, %tm, %tn)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> ()
    %panel, %nblock = transform.structured.tile_using_for %chunk tile_sizes [0, %bn, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %block, %kblock = transform.structured.tile_using_for %panel tile_sizes [0, 0, %bk]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %column, %cloop = transform.structured.tile_using_for %block tile_sizes [0, %tn, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.include @xla_widen_a_per_block failures(propagate) (%a_producer, %forall2, %nblock, %kblock, %tn)
      : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.param<i64>) -> ()
    %t1, %forall3 = transform.structured.fuse_into_containing_op %producer into %forall2
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %t2, %nblock2 = transform.structured.fuse_into_containing_op %t1 into %nblock
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %t3, %kblock2 = transform.structured.fuse_into_containing_op %t2 into %kblock
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %t4, %cloop2 = transform.structured.fuse_into_containing_op %t3 into %cloop
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %block16, %tloops:2 = transform.structured.tile_using_for %t4 tile_sizes [16, 16]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %block16 vector_sizes [16, 16] : !transform.any_op
    transform.include @xla_transpose_in_registers failures(propagate) (%forall3)
      : (!transform.any_op) -> ()
    transform.include @xla_transpose_by_unpacks failures(propagate) (%forall3)
      : (!transform.any_op) -> ()
    %tile, %loops:2 = transform.structured.tile_using_for %column tile_sizes [%tm, 0, 1]
      : (!transform.any_op, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @xla_peel failures(suppress) (%loops#0) : (!transform.any_op) -> ()
    %tiles = transform.structured.match ops{["linalg.matmul"]} in %forall3
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %tiles vector_sizes [%tm, %tn, 1] {create_named_contraction}
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.include @xla_contract_to_fma failures(propagate) (%forall3)
      : (!transform.any_op) -> ()
    transform.yield
  }

  // @xla_matmul_fused_b with k in one block (k <= bk, AVX2's 6 x 16 tiles):
  // per column tile, its k x tn panel of B is made (16 x 16 register
  // transposes, into a buffer of its own) and the rows' register tiles then
  // start from zeros in registers (the fill fused into every tile, as
  // @xla_matmul_short_k does) and store C once. The zero fill pass over the
  // chunk and the tiles' read of it back are gone: an LM head's C (256 x
  // 8000: 8 MB, chunks of 800 columns past L2) was written three times over.
  // Parameters as @xla_matmul_fused_b's (bn and bk unused: bk = k).
  transform.named_sequence @xla_matmul_fused_b_short_k(
      %op: !transform.any_op {transform.consumed},
      %producer: !transform.any_op {transform.consumed},
      %cm: !transform.param<i64> {transform.readonly},
      %cn: !transform.param<i64> {transform.readonly},
      %bn: !transform.param<i64> {transform.readonly},
      %bk: !transform.param<i64> {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) {
    %side = transform.param.constant 16 : i64 -> !transform.param<i64>
    %column, %forall3 = transform.include @xla_fused_b_short_k_panels failures(propagate)
        (%op, %producer, %cm, %cn, %tn, %side)
      : (!transform.any_op, !transform.any_op, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.include @xla_transpose_by_unpacks failures(propagate) (%forall3)
      : (!transform.any_op) -> ()
    transform.include @xla_fused_b_short_k_tiles failures(propagate) (%column, %forall3, %tm, %tn)
      : (!transform.any_op, !transform.any_op, !transform.param<i64>, !transform.param<i64>) -> ()
    transform.yield
  }

  // AVX2's @xla_matmul_fused_b_short_k: the panels made in 8 x 8 blocks,
  // each transposed in its 8 ymm registers by the AVX2 sequence (8 unpacks,
  // 8 shuffles or blends, 8 lane permutes). A 16 x 16 block is 32 ymm
  // values, twice AVX2's registers: its unpacks spilled to the stack (an LM
  // head's B panels, 256 x 256 x 8000 on one Zen 4 core: 13.6% -> 10.9% of
  // the matmul's samples, docs/PERFORMANCE.md). The same data moved: the
  // panels, and so the results, are bit for bit the 16 x 16 blocks'.
  transform.named_sequence @xla_matmul_fused_b_short_k_avx2(
      %op: !transform.any_op {transform.consumed},
      %producer: !transform.any_op {transform.consumed},
      %cm: !transform.param<i64> {transform.readonly},
      %cn: !transform.param<i64> {transform.readonly},
      %bn: !transform.param<i64> {transform.readonly},
      %bk: !transform.param<i64> {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) {
    %side = transform.param.constant 8 : i64 -> !transform.param<i64>
    %column, %forall3 = transform.include @xla_fused_b_short_k_panels failures(propagate)
        (%op, %producer, %cm, %cn, %tn, %side)
      : (!transform.any_op, !transform.any_op, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.apply_patterns to %forall3 {
      transform.apply_patterns.vector.lower_transpose avx2_lowering_strategy = true
    } : !transform.any_op
    transform.include @xla_fused_b_short_k_tiles failures(propagate) (%column, %forall3, %tm, %tn)
      : (!transform.any_op, !transform.any_op, !transform.param<i64>, !transform.param<i64>) -> ()
    transform.yield
  }

  // @xla_matmul_fused_b_short_k's chunks and column tiles, B's producer fused
  // into them and tiled into %side x %side blocks read into registers as
  // transposes (lowered by the caller). Yields the column tile and the
  // thread loop.
  transform.named_sequence @xla_fused_b_short_k_panels(
      %op: !transform.any_op {transform.consumed},
      %producer: !transform.any_op {transform.consumed},
      %cm: !transform.param<i64> {transform.readonly},
      %cn: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly},
      %side: !transform.param<i64> {transform.readonly})
      -> (!transform.any_op, !transform.any_op) {
    %fill = transform.get_producer_of_operand %op[2] : (!transform.any_op) -> !transform.any_op
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%cm, %cn]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %fill_chunk, %forall2 = transform.structured.fuse_into_containing_op %fill into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %made, %forall3 = transform.structured.fuse_into_containing_op %producer into %forall2
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    // columns, then rows, each taking the fill of its part of C along; the
    // column loop takes B's producer too: each k x tn panel made into a
    // buffer of its own, contiguous
    %column, %cloop = transform.structured.fuse %chunk tile_sizes [0, %tn, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %panel = transform.structured.match ops{["linalg.generic", "linalg.transpose"]} in %cloop
      : (!transform.any_op) -> !transform.any_op
    %block, %blocks:2 = transform.structured.tile_using_for %panel tile_sizes [%side, %side]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %block vector_sizes [%side, %side]
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.include @xla_transpose_in_registers failures(propagate) (%forall3)
      : (!transform.any_op) -> ()
    transform.yield %column, %forall3 : !transform.any_op, !transform.any_op
  }

  // @xla_matmul_fused_b_short_k's row tiles within each column tile, after
  // its panels: from zeros in registers, k in steps of one, C stored once.
  transform.named_sequence @xla_fused_b_short_k_tiles(
      %column: !transform.any_op {transform.consumed},
      %forall3: !transform.any_op {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) {
    %tile, %rows = transform.structured.fuse %column tile_sizes [%tm, 0, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.include @xla_peel failures(suppress) (%rows) : (!transform.any_op) -> ()
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
    transform.include @xla_masks_out_of_loops failures(propagate) (%forall3)
      : (!transform.any_op) -> ()
    transform.include @xla_contract_to_fma failures(propagate) (%forall3)
      : (!transform.any_op) -> ()
    transform.yield
  }

  // AVX2's @xla_matmul_block_packed with B widened: the widening, fused into
  // the k-block loop, writes each bk x bn block of B in f32 (or i32) into a
  // buffer of its own, one vector row of tn at a time: that block is the
  // packed block, so no copy of it is made. Parameters as the former's.
  transform.named_sequence @xla_matmul_block_packed_fused_b(
      %op: !transform.any_op {transform.consumed},
      %producer: !transform.any_op {transform.consumed},
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
    %t1, %forall3 = transform.structured.fuse_into_containing_op %producer into %forall2
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %t2, %nblock2 = transform.structured.fuse_into_containing_op %t1 into %nblock
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %t3, %kblock2 = transform.structured.fuse_into_containing_op %t2 into %kblock
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %row, %rows:2 = transform.structured.tile_using_for %t3 tile_sizes [1, %tn]
      : (!transform.any_op, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %row vector_sizes [1, %tn]
      : !transform.any_op, !transform.param<i64>
    %tile, %loops:3 = transform.structured.tile_using_for %block tile_sizes [%tm, %tn, 1]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @xla_peel failures(suppress) (%loops#0) : (!transform.any_op) -> ()
    %tiles = transform.structured.match ops{["linalg.matmul"]} in %forall3
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %tiles vector_sizes [%tm, %tn, 1] {create_named_contraction}
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.include @xla_contract_to_fma failures(propagate) (%forall3)
      : (!transform.any_op) -> ()
    transform.yield
  }

  // A made by a widening (bf16, f16, f8 activations summed in f32): the
  // widening fused into the k-block loop, so each chunk's rows x bk block of
  // A is widened, one vector row of tn at a time, into a buffer of its own
  // (in L1 or L2) that the row tiles' broadcasts read, instead of a kernel of
  // its own writing all of A in f32 to memory for them to read back. The same
  // f32 values, the same FMAs in the same order. %a_producer may be empty
  // (A not widened): then nothing happens.
  transform.named_sequence @xla_widen_a_per_block(
      %a_producer: !transform.any_op {transform.consumed},
      %forall: !transform.any_op {transform.readonly},
      %nblock: !transform.any_op {transform.readonly},
      %kblock: !transform.any_op {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) {
    // the tiling transforms fail on an empty handle: the body runs once per op in it
    transform.foreach %a_producer : !transform.any_op {
    ^bb0(%widening: !transform.any_op):
      %a1, %forall2 = transform.structured.fuse_into_containing_op %widening into %forall
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      %a2, %nblock2 = transform.structured.fuse_into_containing_op %a1 into %nblock
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      %a3, %kblock2 = transform.structured.fuse_into_containing_op %a2 into %kblock
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      %row, %rows:2 = transform.structured.tile_using_for %a3 tile_sizes [1, %tn]
        : (!transform.any_op, !transform.param<i64>)
        -> (!transform.any_op, !transform.any_op, !transform.any_op)
      transform.structured.vectorize %row vector_sizes [1, %tn]
        : !transform.any_op, !transform.param<i64>
    }
    transform.yield
  }
}
