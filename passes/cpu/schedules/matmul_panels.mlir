// f32 matmul on B packed in column panels (xla-pack-matmul-panels): the
// op is linalg.generic (m, p, j, k) with A(m, k), Bp(p, k, j), C(m, p, j),
// where Bp is B cut into tn-wide panels, each k x tn and contiguous (made
// once, by all threads, before this op), and C(m, p, j) is C[m, p * tn + j]. Each thread takes a chunk of rows (scf.forall; the fill
// that zeroes C is fused into it); within it, k is cut into bk blocks, the
// rows into blocks of bm (their bm x bk slice of A stays in L1), and for
// each row block every panel goes by, each register tile (tm rows of one
// panel) a tm x tn accumulator over the block's k. The panel loop sits
// inside the row-block loop, so every panel is read from L2 once per row
// block, and the packing is shared instead of redone by each thread per
// block (1024^3 on 2 threads, replica in C: 63-68% of the FMA peak with
// each thread packing its panels, 75-83% so).
// Parameters: cm (rows per thread chunk), bm, bk, tm, tn (= the panel width).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @xla_matmul_panels(
      %op: !transform.any_op {transform.consumed},
      %cm: !transform.param<i64> {transform.readonly},
      %bm: !transform.param<i64> {transform.readonly},
      %bk: !transform.param<i64> {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}) {
    %fill = transform.get_producer_of_operand %op[2] : (!transform.any_op) -> !transform.any_op
    %chunk, %forall = transform.structured.tile_using_forall %op tile_sizes [%cm, 0, 0, 0, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %fill_chunk, %forall2 = transform.structured.fuse_into_containing_op %fill into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.include @xla_fill_tiles failures(propagate) (%fill_chunk, %tm, %tn)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> ()
    %block, %kblock = transform.structured.tile_using_for %chunk tile_sizes [0, 0, 0, 1, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %rows, %rloop = transform.structured.tile_using_for %block tile_sizes [%bm, 0, 0, 0, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %panel, %ploop = transform.structured.tile_using_for %rows tile_sizes [0, 1, 0, 0, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %tile, %tloop = transform.structured.tile_using_for %panel tile_sizes [%tm, 0, 0, 0, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    // one panel: its unit dim folded away, the tile is a plain matmul again
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
}
