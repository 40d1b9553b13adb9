// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-apply-schedules{threads=2 vector-bytes=32})' --split-input-file | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-apply-schedules{threads=2 vector-bytes=64})' --split-input-file | FileCheck %s

/// A complex row sum as pairs (loops rows, parts, reduced over rows x n x 2):
/// both parts and 16 steps of the reduced dim a step, read as a 2 x 16
/// vector (16 rows of a pair, transposed) into a 2 x 16 accumulator, folded
/// over the 16 at the end of each row; the reduction loop is tagged for
/// xla-flatten-minor-transfers, which makes the read one contiguous load.
// CHECK-LABEL: func.func @complex_row_sum
// CHECK: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<2x16xf64>
// CHECK: scf.forall (%{{.*}}) in (8) shared_outs
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZEROS]]) -> (vector<2x16xf64>)
// CHECK: %[[READ:.*]] = vector.transfer_read %{{.*}} : tensor<512x1024x2xf64>, vector<2x16xf64>
// CHECK: arith.addf %[[ACC]], %[[READ]] : vector<2x16xf64>
// CHECK: } {xla.flatten_transposed_transfers}
// CHECK: vector.multi_reduction <add>, %{{.*}}, %{{.*}} [2] : vector<1x2x16xf64> to vector<1x2xf64>
#in = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @complex_row_sum(%a: tensor<512x1024x2xf64>) -> tensor<512x2xf64> {
  %zero = arith.constant 0.0 : f64
  %empty = tensor.empty() : tensor<512x2xf64>
  %init = linalg.fill ins(%zero : f64) outs(%empty : tensor<512x2xf64>) -> tensor<512x2xf64>
  %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a : tensor<512x1024x2xf64>) outs(%init : tensor<512x2xf64>) {
  ^bb0(%in: f64, %out: f64):
    %s = arith.addf %out, %in : f64
    linalg.yield %s : f64
  } -> tensor<512x2xf64>
  return %r : tensor<512x2xf64>
}

// -----

/// The reduced dim no multiple of 16: the strided plan as before.
// CHECK-LABEL: func.func @ragged_row_sum
// CHECK-NOT: vector<2x16xf64>
// CHECK-NOT: xla.flatten_transposed_transfers
// CHECK: return
#in = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @ragged_row_sum(%a: tensor<512x1000x2xf64>) -> tensor<512x2xf64> {
  %zero = arith.constant 0.0 : f64
  %empty = tensor.empty() : tensor<512x2xf64>
  %init = linalg.fill ins(%zero : f64) outs(%empty : tensor<512x2xf64>) -> tensor<512x2xf64>
  %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a : tensor<512x1000x2xf64>) outs(%init : tensor<512x2xf64>) {
  ^bb0(%in: f64, %out: f64):
    %s = arith.addf %out, %in : f64
    linalg.yield %s : f64
  } -> tensor<512x2xf64>
  return %r : tensor<512x2xf64>
}
