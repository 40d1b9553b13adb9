// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-lower-sort{parallel-rows=true})' | FileCheck %s

/// parallel-rows (the CPU's pipeline): the rows are an scf.forall, each
/// sorting in a scratch of its own and inserting its row in parallel.
// CHECK-LABEL: func.func private @xla_sort_0_rows(
// CHECK: scf.forall (%{{.*}}) in (8) shared_outs(
// CHECK: tensor.empty() : tensor<2x16xf32>
// CHECK: scf.forall.in_parallel
// CHECK: tensor.parallel_insert_slice
func.func @rows(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = "stablehlo.sort"(%x) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %1 = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  }) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
