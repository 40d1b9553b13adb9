// Run once after every op's schedule, on the scheduled module: fold the slices
// the tiling made into the vector transfers, and hoist loop-invariant
// reads/writes (a reduction's or a matmul's accumulator) out of the loops, so
// they live in registers.
//
// Not part of the schedules' library: it runs in an interpreter run of its
// own, once the schedules' transform IR is gone from the module, so that its
// patterns can be applied to the module whole (%root). `apply_patterns` builds
// its pattern sets (the whole canonicalization set among them) once per payload
// op it is given: given each function, that was ~0.4 ms per set per kernel
// function, most of this sequence's time. Each function is isolated from above,
// so the greedy rewrite of the module does to each what its own did (the
// scheduled code is byte-identical).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @xla_cleanup(%root: !transform.any_op {transform.readonly}) {
    %funcs = transform.structured.match ops{["func.func"]} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %root {
      transform.apply_patterns.linalg.tiling_canonicalization
      transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers
      transform.apply_patterns.vector.sink_ops
      transform.apply_patterns.vector.lower_masked_transfers
      // vector<1x16xf32> -> vector<16xf32>: LLVM and libm calls take 1-D vectors
      transform.apply_patterns.vector.cast_away_vector_leading_one_dim
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %funcs : !transform.any_op
    %loops = transform.structured.match ops{["scf.for"]} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %loops : !transform.any_op {
    ^bb0(%loop: !transform.any_op):
      transform.loop.hoist_loop_invariant_subsets %loop : !transform.any_op
    }
    // hoisted, an accumulator's write-then-read of its scratch tensor folds away
    transform.apply_patterns to %root {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
