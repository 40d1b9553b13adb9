// A matmul and the elementwise epilogue reading its C (a bias add, a
// residual add: xla-fuse's output fusion), in the same thread chunks
// (epilogue_plan.py). The epilogue is tiled into the matmul's chunks, the
// matmul and its zero fill are fused into each chunk (C's rows may reach the
// epilogue through a tensor.expand_shape: its slice is moved above it first),
// the matmul's chunk is scheduled as in its own plan, and the epilogue then
// walks the chunk a row vector of tn lanes at a time, C still in cache.
// Before, the epilogue was a pass of its own over all of C after every
// thread had written it. Parameters: the epilogue's chunk sizes (0 = not
// split), then the matmul's plan's parameters after its chunk sizes.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @xla_matmul_block_packed_epilogue_2d(
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
    transform.include @xla_matmul_block_packed_chunk failures(propagate)
        (%chunk, %fill_chunk, %forall3, %bn, %bk, %tm, %tn)
      : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.param<i64>,
         !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
    %row, %rows:2 = transform.structured.tile_using_for %epilogue_chunk tile_sizes [1, %tn]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %row vector_sizes [1, %tn] {vectorize_nd_extract}
      : !transform.any_op, !transform.param<i64>
    transform.yield
  }

  transform.named_sequence @xla_matmul_block_packed_epilogue_3d(
      %epilogue: !transform.any_op {transform.consumed},
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly},
      %bn: !transform.param<i64> {transform.readonly},
      %bk: !transform.param<i64> {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) {
    %fill = transform.get_producer_of_operand %op[2] : (!transform.any_op) -> !transform.any_op
    %epilogue_chunk, %forall = transform.structured.tile_using_forall %epilogue tile_sizes [%c0, %c1, %c2]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    transform.apply_patterns to %forall {
      transform.apply_patterns.tensor.bubble_up_extract_slice
    } : !transform.any_op
    %chunk, %forall2 = transform.structured.fuse_into_containing_op %op into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill_chunk, %forall3 = transform.structured.fuse_into_containing_op %fill into %forall2
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.include @xla_matmul_block_packed_chunk failures(propagate)
        (%chunk, %fill_chunk, %forall3, %bn, %bk, %tm, %tn)
      : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.param<i64>,
         !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
    %row, %rows:3 = transform.structured.tile_using_for %epilogue_chunk tile_sizes [1, 1, %tn]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %row vector_sizes [1, 1, %tn] {vectorize_nd_extract}
      : !transform.any_op, !transform.param<i64>
    transform.yield
  }

  // One k block (k <= bk: ViT's and BERT's projections, the first MLP dot):
  // the epilogue is tiled as C's register tiles are (1 x .. x tm x tn), and
  // the matmul and its fill are fused into each epilogue tile, so a tile's
  // accumulators start as zeros in registers (no zeroing pass over C), run
  // over k, and go through the epilogue at once, C's tile still in L1.
  // The chunk's B is packed once first (k x the chunk's columns); rows that
  // tm does not divide are peeled into a last, masked tile.
  transform.named_sequence @xla_matmul_epilogue_tiles_2d(
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
    %padded, %pad, %copy_back = transform.structured.pad %chunk {
        padding_values = ["0x0", "0x0", "0x0"], padding_dimensions = [1],
        nofold_flags = [0, 1, 0], copy_back_op = "none"}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %buffer, %new = transform.structured.bufferize_to_allocation %pad
      {memcpy_op = "linalg.copy"} : !transform.any_op
    %copies = transform.structured.match ops{["linalg.copy"]} in %forall3
      : (!transform.any_op) -> !transform.any_op
    %row, %rows:2 = transform.structured.tile_using_for %copies tile_sizes [1, %tn]
      : (!transform.any_op, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %row : !transform.any_op
    %tile, %loops:2 = transform.structured.tile_using_for %epilogue_chunk tile_sizes [%tm, %tn]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.apply_patterns to %forall3 {
      transform.apply_patterns.tensor.bubble_up_extract_slice
    } : !transform.any_op
    %mm_tile, %inner = transform.structured.fuse_into_containing_op %padded into %loops#1
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill_tile, %inner2 = transform.structured.fuse_into_containing_op %fill_chunk into %inner
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.include @xla_peel failures(suppress) (%loops#0) : (!transform.any_op) -> ()
    // the whole tiles' sizes fold to constants, the chunk's matmul (now
    // unread) goes, the peeled last row tile (one trip) is inlined
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

  transform.named_sequence @xla_matmul_epilogue_tiles_3d(
      %epilogue: !transform.any_op {transform.consumed},
      %op: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly},
      %bn: !transform.param<i64> {transform.readonly},
      %bk: !transform.param<i64> {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) {
    %fill = transform.get_producer_of_operand %op[2] : (!transform.any_op) -> !transform.any_op
    %epilogue_chunk, %forall = transform.structured.tile_using_forall %epilogue tile_sizes [%c0, %c1, %c2]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    transform.apply_patterns to %forall {
      transform.apply_patterns.tensor.bubble_up_extract_slice
    } : !transform.any_op
    %chunk, %forall2 = transform.structured.fuse_into_containing_op %op into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill_chunk, %forall3 = transform.structured.fuse_into_containing_op %fill into %forall2
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %padded, %pad, %copy_back = transform.structured.pad %chunk {
        padding_values = ["0x0", "0x0", "0x0"], padding_dimensions = [1],
        nofold_flags = [0, 1, 0], copy_back_op = "none"}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %buffer, %new = transform.structured.bufferize_to_allocation %pad
      {memcpy_op = "linalg.copy"} : !transform.any_op
    %copies = transform.structured.match ops{["linalg.copy"]} in %forall3
      : (!transform.any_op) -> !transform.any_op
    %row, %rows:2 = transform.structured.tile_using_for %copies tile_sizes [1, %tn]
      : (!transform.any_op, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %row : !transform.any_op
    %tile, %loops:3 = transform.structured.tile_using_for %epilogue_chunk tile_sizes [1, %tm, %tn]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.apply_patterns to %forall3 {
      transform.apply_patterns.tensor.bubble_up_extract_slice
    } : !transform.any_op
    %mm_tile, %inner = transform.structured.fuse_into_containing_op %padded into %loops#2
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill_tile, %inner2 = transform.structured.fuse_into_containing_op %fill_chunk into %inner
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.include @xla_peel failures(suppress) (%loops#1) : (!transform.any_op) -> ()
    // the whole tiles' sizes fold to constants, the chunk's matmul (now
    // unread) goes, the peeled last row tile (one trip) is inlined
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
    transform.structured.vectorize %epilogues vector_sizes [1, %tm, %tn] {vectorize_nd_extract}
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.include @xla_masks_out_of_loops failures(propagate) (%forall3)
      : (!transform.any_op) -> ()
    transform.include @xla_contract_to_fma failures(propagate) (%forall3)
      : (!transform.any_op) -> ()
    transform.yield
  }

  // The same with B made by a transpose (PyTorch's Linear keeps W as [n, k]:
  // GPT-2) or a widening, fused into the chunk: the chunk's k x columns of B
  // are made in 16 x 16 blocks (transposed in registers) into a buffer of
  // their own, which is the packed B the tiles read (matmul_fused.mlir's
  // @xla_matmul_fused_b does the same per panel). %group: the matmul, then
  // the producer of B.
  transform.named_sequence @xla_matmul_epilogue_tiles_fused_b_2d(
      %epilogue: !transform.any_op {transform.consumed},
      %group: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %bn: !transform.param<i64> {transform.readonly},
      %bk: !transform.param<i64> {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) {
    %op, %producer = transform.split_handle %group
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
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
    %made, %forall4 = transform.structured.fuse_into_containing_op %producer into %forall3
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %block16, %blocks:2 = transform.structured.tile_using_for %made tile_sizes [16, 16]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %block16 vector_sizes [16, 16] : !transform.any_op
    transform.include @xla_transpose_in_registers failures(propagate) (%forall4)
      : (!transform.any_op) -> ()
    transform.include @xla_transpose_by_unpacks failures(propagate) (%forall4)
      : (!transform.any_op) -> ()
    %tile, %loops:2 = transform.structured.tile_using_for %epilogue_chunk tile_sizes [%tm, %tn]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.apply_patterns to %forall4 {
      transform.apply_patterns.tensor.bubble_up_extract_slice
    } : !transform.any_op
    %mm_tile, %inner = transform.structured.fuse_into_containing_op %chunk into %loops#1
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill_tile, %inner2 = transform.structured.fuse_into_containing_op %fill_chunk into %inner
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.include @xla_peel failures(suppress) (%loops#0) : (!transform.any_op) -> ()
    // the whole tiles' sizes fold to constants, the chunk's matmul (now
    // unread) goes, the peeled last row tile (one trip) is inlined
    transform.apply_patterns to %forall4 {
      transform.apply_patterns.linalg.tiling_canonicalization
      transform.apply_patterns.scf.for_loop_canonicalization
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %mms = transform.structured.match ops{["linalg.matmul"]} in %forall4
      : (!transform.any_op) -> !transform.any_op
    %step, %kloop = transform.structured.tile_using_for %mms tile_sizes [0, 0, 1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.structured.vectorize %step vector_sizes [%tm, %tn, 1] {create_named_contraction}
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    %zeros = transform.structured.match ops{["linalg.fill"]} in %forall4
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %zeros vector_sizes [%tm, %tn]
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    %epilogues = transform.structured.match ops{["linalg.generic"]} in %forall4
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %epilogues vector_sizes [%tm, %tn] {vectorize_nd_extract}
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.include @xla_masks_out_of_loops failures(propagate) (%forall4)
      : (!transform.any_op) -> ()
    transform.include @xla_contract_to_fma failures(propagate) (%forall4)
      : (!transform.any_op) -> ()
    transform.yield
  }

  transform.named_sequence @xla_matmul_epilogue_tiles_fused_b_3d(
      %epilogue: !transform.any_op {transform.consumed},
      %group: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly},
      %bn: !transform.param<i64> {transform.readonly},
      %bk: !transform.param<i64> {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) {
    %op, %producer = transform.split_handle %group
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill = transform.get_producer_of_operand %op[2] : (!transform.any_op) -> !transform.any_op
    %epilogue_chunk, %forall = transform.structured.tile_using_forall %epilogue tile_sizes [%c0, %c1, %c2]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    transform.apply_patterns to %forall {
      transform.apply_patterns.tensor.bubble_up_extract_slice
    } : !transform.any_op
    %chunk, %forall2 = transform.structured.fuse_into_containing_op %op into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill_chunk, %forall3 = transform.structured.fuse_into_containing_op %fill into %forall2
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %made, %forall4 = transform.structured.fuse_into_containing_op %producer into %forall3
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %block16, %blocks:2 = transform.structured.tile_using_for %made tile_sizes [16, 16]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %block16 vector_sizes [16, 16] : !transform.any_op
    transform.include @xla_transpose_in_registers failures(propagate) (%forall4)
      : (!transform.any_op) -> ()
    transform.include @xla_transpose_by_unpacks failures(propagate) (%forall4)
      : (!transform.any_op) -> ()
    %tile, %loops:3 = transform.structured.tile_using_for %epilogue_chunk tile_sizes [1, %tm, %tn]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.apply_patterns to %forall4 {
      transform.apply_patterns.tensor.bubble_up_extract_slice
    } : !transform.any_op
    %mm_tile, %inner = transform.structured.fuse_into_containing_op %chunk into %loops#2
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill_tile, %inner2 = transform.structured.fuse_into_containing_op %fill_chunk into %inner
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.include @xla_peel failures(suppress) (%loops#1) : (!transform.any_op) -> ()
    // the whole tiles' sizes fold to constants, the chunk's matmul (now
    // unread) goes, the peeled last row tile (one trip) is inlined
    transform.apply_patterns to %forall4 {
      transform.apply_patterns.linalg.tiling_canonicalization
      transform.apply_patterns.scf.for_loop_canonicalization
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %mms = transform.structured.match ops{["linalg.matmul"]} in %forall4
      : (!transform.any_op) -> !transform.any_op
    %step, %kloop = transform.structured.tile_using_for %mms tile_sizes [0, 0, 1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.structured.vectorize %step vector_sizes [%tm, %tn, 1] {create_named_contraction}
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    %zeros = transform.structured.match ops{["linalg.fill"]} in %forall4
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %zeros vector_sizes [%tm, %tn]
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    %epilogues = transform.structured.match ops{["linalg.generic"]} in %forall4
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %epilogues vector_sizes [1, %tm, %tn] {vectorize_nd_extract}
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.include @xla_masks_out_of_loops failures(propagate) (%forall4)
      : (!transform.any_op) -> ()
    transform.include @xla_contract_to_fma failures(propagate) (%forall4)
      : (!transform.any_op) -> ()
    transform.yield
  }

  // B made by its producer (matmul_fused.mlir's @xla_matmul_fused_b) and k in
  // more than one block (GPT-2's second MLP dot, k = 1024): the chunk as
  // @xla_matmul_fused_b_chunk makes it, then its epilogue, C's chunk still in
  // cache, as @xla_matmul_block_packed_epilogue_*d. %group: the matmul, the
  // producer of B, then that of A where A is widened (xla_widen_a_per_block).
  transform.named_sequence @xla_matmul_fused_b_epilogue_2d(
      %epilogue: !transform.any_op {transform.consumed},
      %group: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %bn: !transform.param<i64> {transform.readonly},
      %bk: !transform.param<i64> {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) {
    %op, %producer, %a_producer = transform.split_handle %group {fail_on_payload_too_small = false}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
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
    transform.include @xla_matmul_fused_b_chunk failures(propagate)
        (%chunk, %fill_chunk, %producer, %a_producer, %forall3, %bn, %bk, %tm, %tn)
      : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op,
         !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
    %row, %rows:2 = transform.structured.tile_using_for %epilogue_chunk tile_sizes [1, %tn]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %row vector_sizes [1, %tn] {vectorize_nd_extract}
      : !transform.any_op, !transform.param<i64>
    transform.yield
  }

  transform.named_sequence @xla_matmul_fused_b_epilogue_3d(
      %epilogue: !transform.any_op {transform.consumed},
      %group: !transform.any_op {transform.consumed},
      %c0: !transform.param<i64> {transform.readonly},
      %c1: !transform.param<i64> {transform.readonly},
      %c2: !transform.param<i64> {transform.readonly},
      %bn: !transform.param<i64> {transform.readonly},
      %bk: !transform.param<i64> {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) {
    %op, %producer, %a_producer = transform.split_handle %group {fail_on_payload_too_small = false}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %fill = transform.get_producer_of_operand %op[2] : (!transform.any_op) -> !transform.any_op
    %epilogue_chunk, %forall = transform.structured.tile_using_forall %epilogue tile_sizes [%c0, %c1, %c2]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    transform.apply_patterns to %forall {
      transform.apply_patterns.tensor.bubble_up_extract_slice
    } : !transform.any_op
    %chunk, %forall2 = transform.structured.fuse_into_containing_op %op into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill_chunk, %forall3 = transform.structured.fuse_into_containing_op %fill into %forall2
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.include @xla_matmul_fused_b_chunk failures(propagate)
        (%chunk, %fill_chunk, %producer, %a_producer, %forall3, %bn, %bk, %tm, %tn)
      : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op,
         !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
    %row, %rows:3 = transform.structured.tile_using_for %epilogue_chunk tile_sizes [1, 1, %tn]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %row vector_sizes [1, 1, %tn] {vectorize_nd_extract}
      : !transform.any_op, !transform.param<i64>
    transform.yield
  }
}
