// f32 matmul and batch matmul. Each thread takes a chunk of C (scf.forall;
// the fill that zeroes C is fused into it). Within a chunk, n and k are cut
// into blocks (bn x bk, at most 256 x 256; the whole packed blocks take
// all of a k up to 1024, fewer columns: whole_k_blocks.whole_k_block);
// each block is walked a column
// panel (bk x tn) at a time, and the panel is first copied ("packed") into a
// contiguous buffer of its own (32 KiB with AVX-512's tn = 32), which every
// row tile of the chunk then reads: read in place, B's rows lie a power of
// two apart in the usual shapes and the panel's lines fall into a few cache
// sets, evicting each other (512x1024x2048: 151 -> 232 GFLOP/s packed).
// Where the rows are no multiple of the register tile (m = 197) the loop
// over row tiles runs the whole tiles (static, unmasked), then, once, the
// rows left over (masked).
// Each tm x tn register tile of C lives in registers while k advances by
// one: a broadcast of A(i,k) times the tn-wide row of the panel, i.e.
// vector.contract -> tm x (tn / lanes) FMAs per step. With AVX2's 16
// registers the whole block is packed first and row tiles go outside
// column tiles instead (@xla_matmul_block_packed: measured faster there,
// slower with AVX-512's larger tiles in 256-deep blocks, faster again with all
// of a k up to 1024 in one block, which AVX-512 takes too). The planner
// (contraction_plan.py) picks the tile for the CPU: 8 x 32 f32 with
// AVX-512's 32 zmm registers (16 accumulators), 6 x 16 with AVX2's 16 ymm
// (12), sizes that divide the extents where it can, so that tiles are
// static (no masks), and chunks of columns rather than rows where B is the
// larger operand, or where each chunk of rows would pack all of B again for
// its whole-k blocks (whole_k_blocks.whole_block_chunks), so that each
// panel or block is packed once.
// A chunk with more rows than L2 keeps of a bk-deep block of A is cut into
// bm-row blocks too: the row tiles of one block go by for each packed panel.
// Parameters: the chunk tile sizes (0 = not split), then bm (@xla_matmul
// only; 0 = not split), bn, bk, tm, tn.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @xla_matmul(
      %op: !transform.any_op {transform.consumed},
      %cm: !transform.param<i64> {transform.readonly},
      %cn: !transform.param<i64> {transform.readonly},
      %bm: !transform.param<i64> {transform.readonly},
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
    transform.include @xla_matmul_chunk failures(propagate)
        (%chunk, %fill_chunk, %forall2, %bm, %bn, %bk, %tm, %tn)
      : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.param<i64>,
         !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>) -> ()
    transform.yield
  }

  // @xla_matmul within one thread's chunk (%forall2: the forall; also the
  // chunk of @xla_matmul_epilogue_*d, which runs its epilogue after it).
  transform.named_sequence @xla_matmul_chunk(
      %chunk: !transform.any_op {transform.consumed},
      %fill_chunk: !transform.any_op {transform.consumed},
      %forall2: !transform.any_op {transform.readonly},
      %bm: !transform.param<i64> {transform.readonly},
      %bn: !transform.param<i64> {transform.readonly},
      %bk: !transform.param<i64> {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) {
    transform.include @xla_fill_tiles failures(propagate) (%fill_chunk, %tm, %tn)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> ()
    %panel, %mnblock:2 = transform.structured.tile_using_for %chunk tile_sizes [%bm, %bn, 0]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %block, %kblock = transform.structured.tile_using_for %panel tile_sizes [0, 0, %bk]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %packed = transform.include @xla_pack_b_panels failures(propagate) (%block, %forall2, %tn)
      : (!transform.any_op, !transform.any_op, !transform.param<i64>) -> !transform.any_op
    %tile, %loops:2 = transform.structured.tile_using_for %packed tile_sizes [%tm, 0, 1]
      : (!transform.any_op, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @xla_peel failures(suppress) (%loops#0) : (!transform.any_op) -> ()
    %tiles = transform.structured.match ops{["linalg.matmul"]} in %forall2
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %tiles vector_sizes [%tm, %tn, 1] {create_named_contraction}
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.include @xla_masks_out_of_loops failures(propagate) (%forall2)
      : (!transform.any_op) -> ()
    transform.include @xla_contract_to_fma failures(propagate) (%forall2)
      : (!transform.any_op) -> ()
    transform.yield
  }

  // With AVX2's 16 registers (6 x 16 tiles), and with AVX-512's 8 x 32 where
  // all of k fits one block read by 32 row tiles or more (16 where L1 cannot
  // hold a 256-deep panel beside A's rows, Zen 4's 32 KiB; contraction_plan;
  // 1024^3 on one core of an AVX-512 Xeon: 110 ->
  // 126 GFLOP/s median under load, 127 -> 155 best, against the panels): the
  // whole bk x bn block of B
  // packed at once (rows of bn, contiguous), then row tiles outside column
  // tiles, rows peeled where 6 does not divide m. Each row tile's 6 rows of A
  // stay in L1 across the block's columns; with column tiles outside, every
  // panel streamed the rows of A from L2, six broadcasts per step
  // (1024^3 with AVX2 code: 140 GFLOP/s; so, 178).
  transform.named_sequence @xla_matmul_block_packed(
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
    transform.include @xla_matmul_block_packed_chunk failures(propagate)
        (%chunk, %fill_chunk, %forall2, %bn, %bk, %tm, %tn)
      : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.param<i64>,
         !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
    transform.yield
  }

  // @xla_matmul_block_packed within one thread's chunk (%scope: the forall).
  transform.named_sequence @xla_matmul_block_packed_chunk(
      %chunk: !transform.any_op {transform.consumed},
      %fill_chunk: !transform.any_op {transform.consumed},
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
    %padded = transform.include @xla_pack_b_block failures(propagate) (%block, %forall2, %tn)
      : (!transform.any_op, !transform.any_op, !transform.param<i64>) -> !transform.any_op
    %tile, %loops:3 = transform.structured.tile_using_for %padded tile_sizes [%tm, %tn, 1]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @xla_peel failures(suppress) (%loops#0) : (!transform.any_op) -> ()
    %tiles = transform.structured.match ops{["linalg.matmul"]} in %forall2
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %tiles vector_sizes [%tm, %tn, 1] {create_named_contraction}
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.include @xla_masks_out_of_loops failures(propagate) (%forall2)
      : (!transform.any_op) -> ()
    transform.include @xla_contract_to_fma failures(propagate) (%forall2)
      : (!transform.any_op) -> ()
    transform.yield
  }

  // @xla_matmul_block_packed with all of k in one block (bk = k): the zero
  // fill fused into each register tile, so its accumulators start as zeros in
  // registers and C is written once, never zeroed nor read back (the
  // micro-kernel's accumulate = 0). The plain sequence zeroes the chunk's C
  // first and each tile reads its rows of C from L3 (1024^3 at x86-64-v3 on a
  // Zen 4: ~4% of the micro-kernel's samples on C's loads at entry, plus the
  // fill pass; docs/PERFORMANCE.md). Same k order from 0: the same bits.
  // Parameters as @xla_matmul_block_packed's.
  transform.named_sequence @xla_matmul_block_packed_zero_start(
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
    // blocks of bn columns, each its own fill of zeros (fused, not a pass)
    %block, %nblock = transform.structured.fuse %chunk tile_sizes [0, %bn, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %padded = transform.include @xla_pack_b_block failures(propagate) (%block, %forall2, %tn)
      : (!transform.any_op, !transform.any_op, !transform.param<i64>) -> !transform.any_op
    // row tiles outside column tiles, the block's fill fused into each tile
    %tile, %loops:2 = transform.structured.fuse %padded tile_sizes [%tm, %tn, 0]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @xla_peel failures(suppress) (%loops#0) : (!transform.any_op) -> ()
    %mms = transform.structured.match ops{["linalg.matmul"]} in %forall2
      : (!transform.any_op) -> !transform.any_op
    %step, %kloop = transform.structured.tile_using_for %mms tile_sizes [0, 0, 1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.structured.vectorize %step vector_sizes [%tm, %tn, 1] {create_named_contraction}
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    %zeros = transform.structured.match ops{["linalg.fill"]} in %forall2
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %zeros vector_sizes [%tm, %tn]
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.include @xla_masks_out_of_loops failures(propagate) (%forall2)
      : (!transform.any_op) -> ()
    transform.include @xla_contract_to_fma failures(propagate) (%forall2)
      : (!transform.any_op) -> ()
    transform.yield
  }

  // A whole bk x bn block of B packed at once (@xla_matmul_block_packed*):
  // a nofold pad of B's slice, bufferized to one buffer per chunk (no
  // padding, so no fill), copied one tn-wide vector of a row at a time.
  // Returns the block's matmul, now reading the packed copy.
  transform.named_sequence @xla_pack_b_block(
      %block: !transform.any_op {transform.consumed},
      %forall2: !transform.any_op {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) -> !transform.any_op {
    %padded, %pad, %copy_back = transform.structured.pad %block {
        padding_values = ["0x0", "0x0", "0x0"], padding_dimensions = [1],
        nofold_flags = [0, 1, 0], copy_back_op = "none"}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %buffer, %new = transform.structured.bufferize_to_allocation %pad
      {memcpy_op = "linalg.copy"} : !transform.any_op
    %copies = transform.structured.match ops{["linalg.copy"]} in %forall2
      : (!transform.any_op) -> !transform.any_op
    %row, %rows:2 = transform.structured.tile_using_for %copies tile_sizes [1, %tn]
      : (!transform.any_op, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %row : !transform.any_op
    transform.yield %padded : !transform.any_op
  }

  // A block's column panels, each packed: the block tiled by tn columns, and
  // in each column tile B's k x tn slice copied (a nofold pad, bufferized to
  // one buffer per chunk, hoisted out of the loops; no padding, so no fill)
  // with one vector copy per row. Returns the column tiles, now reading the
  // packed copy.
  transform.named_sequence @xla_pack_b_panels(
      %block: !transform.any_op {transform.consumed},
      %scope: !transform.any_op {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) -> !transform.any_op {
    %column, %cloop = transform.structured.tile_using_for %block tile_sizes [0, %tn, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %padded, %pad, %copy_back = transform.structured.pad %column {
        padding_values = ["0x0", "0x0", "0x0"], padding_dimensions = [1],
        nofold_flags = [0, 1, 0], copy_back_op = "none"}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %buffer, %new = transform.structured.bufferize_to_allocation %pad
      {memcpy_op = "linalg.copy"} : !transform.any_op
    %copies = transform.structured.match ops{["linalg.copy"]} in %scope
      : (!transform.any_op) -> !transform.any_op
    %row, %rows = transform.structured.tile_using_for %copies tile_sizes [1, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.structured.vectorize %row : !transform.any_op
    transform.yield %padded : !transform.any_op
  }

  // For n not a multiple of the register tile (and m perhaps not either,
  // m = 197): the loops over row and column tiles run the whole tiles
  // (static, unmasked), then, once, what is left over (masked), instead of
  // every tile masked. B is read in place (a packed panel would be partial).
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
    transform.include @xla_masks_out_of_loops failures(propagate) (%forall2)
      : (!transform.any_op) -> ()
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

  // Short k (one block): as @xla_batch_matmul, but each register tile starts
  // from its zero fill (fused into the tile, in registers) instead of a fill
  // pass over the whole chunk first: C is written once, not zeroed, read and
  // written again (attention's Q.K^T, k = head size, C the largest tensor).
  // Also a longer k whose batch of B is in L2 (attention's P.V, k = 512:
  // contraction_plan's _k_unblocked).
  transform.named_sequence @xla_batch_matmul_short_k(
      %op: !transform.any_op {transform.consumed},
      %cb: !transform.param<i64> {transform.readonly},
      %cm: !transform.param<i64> {transform.readonly},
      %cn: !transform.param<i64> {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) {
    %fill = transform.get_producer_of_operand %op[2] : (!transform.any_op) -> !transform.any_op
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%cb, %cm, %cn]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %fill_chunk, %forall2 = transform.structured.fuse_into_containing_op %fill into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %tile, %loops:3 = transform.structured.fuse %chunk tile_sizes [1, %tm, %tn, 0]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    // batch 1: a plain fill and matmul on rank-reduced slices, then as
    // @xla_matmul_short_k (the tile's zeros then fold into its registers)
    %fill_tile = transform.structured.match ops{["linalg.fill"]} in %forall2
      : (!transform.any_op) -> !transform.any_op
    %fill_generic = transform.structured.generalize %fill_tile : (!transform.any_op) -> !transform.any_op
    %generic = transform.structured.generalize %tile : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %forall2 {
      transform.apply_patterns.linalg.fold_unit_extent_dims_via_slices
      transform.apply_patterns.linalg.tiling_canonicalization
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %folded = transform.structured.match ops{["linalg.generic"]} in %forall2
      : (!transform.any_op) -> !transform.any_op
    %named = transform.structured.specialize %folded : (!transform.any_op) -> !transform.any_op
    %mm = transform.structured.match ops{["linalg.matmul"]} in %forall2
      : (!transform.any_op) -> !transform.any_op
    %zeros = transform.structured.match ops{["linalg.fill"]} in %forall2
      : (!transform.any_op) -> !transform.any_op
    %step, %kloop = transform.structured.tile_using_for %mm tile_sizes [0, 0, 1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.structured.vectorize %step vector_sizes [%tm, %tn, 1] {create_named_contraction}
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.structured.vectorize %zeros vector_sizes [%tm, %tn]
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.include @xla_contract_to_fma failures(propagate) (%forall2)
      : (!transform.any_op) -> ()
    transform.yield
  }

  // Short k with rows a register tile does not fill (m = 512 in 6-row
  // tiles): as @xla_batch_matmul_short_k, each tile starting from zeros in
  // registers, and the row tiles left over peeled into one masked tile. The
  // zero fill over C before the tiles (@xla_batch_matmul_peeled) wrote C
  // once more and read it back: attention's 8 x 512 x 64 x 512 Q.K^T, C 8 MB.
  // The columns must be whole (the planner's condition): n = 197's edge
  // columns keep @xla_batch_matmul_peeled.
  transform.named_sequence @xla_batch_matmul_short_k_peeled(
      %op: !transform.any_op {transform.consumed},
      %cb: !transform.param<i64> {transform.readonly},
      %cm: !transform.param<i64> {transform.readonly},
      %cn: !transform.param<i64> {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) {
    %fill = transform.get_producer_of_operand %op[2] : (!transform.any_op) -> !transform.any_op
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%cb, %cm, %cn]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %fill_chunk, %forall2 = transform.structured.fuse_into_containing_op %fill into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %tile, %loops:3 = transform.structured.fuse %chunk tile_sizes [1, %tm, %tn, 0]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @xla_peel failures(suppress) (%loops#1) : (!transform.any_op) -> ()
    transform.include @xla_batch_tiles_to_fma failures(propagate) (%forall2, %tm, %tn)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> ()
    transform.yield
  }

  // As @xla_batch_matmul_short_k_peeled, with each batch's B packed: per
  // batch, column tiles outside, each tn-wide k-deep panel of B copied into a
  // contiguous buffer (@xla_pack_b_panels' nofold pad) that all row tiles of
  // the batch then read. In place a panel of a B whose rows lie a power of two
  // apart falls into a few L1 sets (attention's P.V, 512 x 64 f32: rows 256 B
  // apart, a 32 KiB panel in 16 of 64 sets): contraction_plan._b_panel_conflicts.
  // Each tile still sums k in order from 0, from zeros in registers.
  transform.named_sequence @xla_batch_matmul_short_k_packed(
      %op: !transform.any_op {transform.consumed},
      %cb: !transform.param<i64> {transform.readonly},
      %cm: !transform.param<i64> {transform.readonly},
      %cn: !transform.param<i64> {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) {
    %fill = transform.get_producer_of_operand %op[2] : (!transform.any_op) -> !transform.any_op
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%cb, %cm, %cn]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op)
    %fill_chunk, %forall2 = transform.structured.fuse_into_containing_op %fill into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %panel, %ploops:2 = transform.structured.fuse %chunk tile_sizes [1, 0, %tn, 0]
      : (!transform.any_op, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %padded, %pad, %copy_back = transform.structured.pad %panel {
        padding_values = ["0x0", "0x0", "0x0"], padding_dimensions = [2],
        nofold_flags = [0, 1, 0], copy_back_op = "none"}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %buffer, %new = transform.structured.bufferize_to_allocation %pad
      {memcpy_op = "linalg.copy"} : !transform.any_op
    %copies = transform.structured.match ops{["linalg.copy"]} in %forall2
      : (!transform.any_op) -> !transform.any_op
    %row, %rows:2 = transform.structured.tile_using_for %copies tile_sizes [1, 1, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %row : !transform.any_op
    %tile, %loops:1 = transform.structured.fuse %padded tile_sizes [0, %tm, 0, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.include @xla_peel failures(suppress) (%loops#0) : (!transform.any_op) -> ()
    transform.include @xla_batch_tiles_to_fma failures(propagate) (%forall2, %tm, %tn)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> ()
    transform.yield
  }

  // The fills and batch matmuls of a batch's register tiles (batch 1) folded
  // to plain ones, vectorized (the zeros in registers) and turned into FMAs.
  transform.named_sequence @xla_batch_tiles_to_fma(
      %forall2: !transform.any_op {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) {
    %fill_tiles = transform.structured.match ops{["linalg.fill"]} in %forall2
      : (!transform.any_op) -> !transform.any_op
    %fill_generic = transform.structured.generalize %fill_tiles : (!transform.any_op) -> !transform.any_op
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
    %named = transform.structured.specialize %folded : (!transform.any_op) -> !transform.any_op
    %mm = transform.structured.match ops{["linalg.matmul"]} in %forall2
      : (!transform.any_op) -> !transform.any_op
    %zeros = transform.structured.match ops{["linalg.fill"]} in %forall2
      : (!transform.any_op) -> !transform.any_op
    %step, %kloop = transform.structured.tile_using_for %mm tile_sizes [0, 0, 1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.structured.vectorize %step vector_sizes [%tm, %tn, 1] {create_named_contraction}
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.structured.vectorize %zeros vector_sizes [%tm, %tn]
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.include @xla_masks_out_of_loops failures(propagate) (%forall2)
      : (!transform.any_op) -> ()
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
    %fill_tiles = transform.include @xla_peel_fill_tiles failures(propagate)
        (%fill_tile, %fill_loops#1, %fill_loops#2, %forall2)
      : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op) -> !transform.any_op
    transform.structured.vectorize %fill_tiles vector_sizes [1, %tm, %tn]
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
    transform.include @xla_masks_out_of_loops failures(propagate) (%forall2)
      : (!transform.any_op) -> ()
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

  // The masks of the edge tiles moved out of the loops they were made in
  // (loop-invariant): xla_cleanup's hoisting then keeps an edge tile's C in
  // registers over k, as for a whole tile, instead of a masked read and
  // write of C every k step (ViT's Q.K^T, 12 x 197 x 64 x 197 on AVX2: its
  // 197th-column tiles; 2.3-2.4 -> 1.3-1.4 ms for the op, one-process A/B).
  transform.named_sequence @xla_masks_out_of_loops(%scope: !transform.any_op {transform.readonly}) {
    %loops = transform.structured.match ops{["scf.for"]} in %scope
      : (!transform.any_op) -> !transform.any_op
    transform.apply_licm to %loops : !transform.any_op
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

  // The zeroing of a C chunk, in tm x tn vector stores: whole tiles unmasked,
  // the rows and columns left over (peeled) masked.
  transform.named_sequence @xla_fill_tiles(%fill: !transform.any_op {transform.consumed},
      %tm: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) {
    %tile, %loops:2 = transform.structured.tile_using_for %fill tile_sizes [%tm, %tn]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %scope = transform.get_parent_op %loops#0 : (!transform.any_op) -> !transform.any_op
    %tiles = transform.include @xla_peel_fill_tiles failures(propagate) (%tile, %loops#0, %loops#1, %scope)
      : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op) -> !transform.any_op
    transform.structured.vectorize %tiles vector_sizes [%tm, %tn]
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.yield
  }

  // A zero fill's loops over row and column tiles, each peeled where the tile
  // does not divide its extent (ViT's C, 197 x 197 in 6 x 16 tiles; its
  // 788-row projections): the whole tiles then store unmasked, only the edge
  // tiles under a mask. Tiled but not peeled, each tile's extent was an
  // affine.min and every store of the fill was masked: with AVX2 a
  // vmaskmovps, many times a plain store's cost on AMD (ViT's 12 x 197 x 64
  // x 197 Q.K^T on one Zen 4 core: 0.80 of the time; docs/PERFORMANCE.md).
  // AVX-512's masked stores are cheap; there the whole tiles only lose the mask.
  // %scope: an op the loops are in. Returns the fill's tiles, the whole one
  // and its peeled copies (marked before peeling, found in %scope after).
  transform.named_sequence @xla_peel_fill_tiles(%tile: !transform.any_op {transform.readonly},
      %rows: !transform.any_op {transform.readonly},
      %columns: !transform.any_op {transform.readonly},
      %scope: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.annotate %tile "xla.fill_tile" : !transform.any_op
    transform.include @xla_peel failures(suppress) (%columns) : (!transform.any_op) -> ()
    transform.include @xla_peel failures(suppress) (%rows) : (!transform.any_op) -> ()
    %tiles = transform.structured.match ops{["linalg.fill"]} attributes{"xla.fill_tile"} in %scope
      : (!transform.any_op) -> !transform.any_op
    transform.yield %tiles : !transform.any_op
  }
}
