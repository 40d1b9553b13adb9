// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-diagonal-gathers)' --split-input-file | FileCheck %s

/// jnp.diagonal(a, 3) of a 40 x 40 matrix (as canonicalize leaves jax's
/// lowering): the gather of (i, i + 3), each index through the wrap of
/// negative indices, is a strided slice of the flattened matrix from 3; the
/// index columns (iotas, wraps, broadcasts, concatenate) go.
// CHECK-LABEL: func.func @offset
// CHECK-NOT: stablehlo.gather
// CHECK-NOT: stablehlo.iota
// CHECK-NOT: stablehlo.concatenate
// CHECK: %[[F:.*]] = stablehlo.reshape %arg0 : (tensor<40x40xf32>) -> tensor<1600xf32>
// CHECK: %[[D:.*]] = stablehlo.slice %[[F]] [3:1480:41] : (tensor<1600xf32>) -> tensor<37xf32>
// CHECK: return %[[D]]
func.func @offset(%arg0: tensor<40x40xf32>) -> tensor<37xf32> {
  %c = stablehlo.constant dense<40> : tensor<37xi32>
  %c_0 = stablehlo.constant dense<0> : tensor<37xi32>
  %c_1 = stablehlo.constant dense<3> : tensor<37xi32>
  %0 = stablehlo.iota dim = 0 : tensor<37xi32>
  %1 = stablehlo.add %c_1, %0 : tensor<37xi32>
  %2 = stablehlo.compare LT, %0, %c_0, SIGNED : (tensor<37xi32>, tensor<37xi32>) -> tensor<37xi1>
  %3 = stablehlo.add %0, %c : tensor<37xi32>
  %4 = stablehlo.select %2, %3, %0 : tensor<37xi1>, tensor<37xi32>
  %5 = stablehlo.compare LT, %1, %c_0, SIGNED : (tensor<37xi32>, tensor<37xi32>) -> tensor<37xi1>
  %6 = stablehlo.add %1, %c : tensor<37xi32>
  %7 = stablehlo.select %5, %6, %1 : tensor<37xi1>, tensor<37xi32>
  %8 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<37xi32>) -> tensor<37x1xi32>
  %9 = stablehlo.broadcast_in_dim %7, dims = [0] : (tensor<37xi32>) -> tensor<37x1xi32>
  %10 = stablehlo.concatenate %8, %9, dim = 1 : (tensor<37x1xi32>, tensor<37x1xi32>) -> tensor<37x2xi32>
  %11 = "stablehlo.gather"(%arg0, %10) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<40x40xf32>, tensor<37x2xi32>) -> tensor<37xf32>
  return %11 : tensor<37xf32>
}

// -----

/// Batched (jnp.diagonal(a, -1, 1, 2) of 4 x 9 x 11): the batch dim kept in
/// front, the rows start at 1: a slice of the 4 x 99 reshape from 1 * 11.
// CHECK-LABEL: func.func @batched
// CHECK-NOT: stablehlo.gather
// CHECK: %[[F:.*]] = stablehlo.reshape %arg0 : (tensor<4x9x11xf32>) -> tensor<4x99xf32>
// CHECK: stablehlo.slice %[[F]] [0:4, 11:96:12] : (tensor<4x99xf32>) -> tensor<4x8xf32>
func.func @batched(%arg0: tensor<4x9x11xf32>) -> tensor<4x8xf32> {
  %c = stablehlo.constant dense<1> : tensor<8xi32>
  %0 = stablehlo.iota dim = 0 : tensor<8xi32>
  %1 = stablehlo.add %c, %0 : tensor<8xi32>
  %2 = stablehlo.broadcast_in_dim %1, dims = [0] : (tensor<8xi32>) -> tensor<8x1xi32>
  %3 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<8xi32>) -> tensor<8x1xi32>
  %4 = stablehlo.concatenate %2, %3, dim = 1 : (tensor<8x1xi32>, tensor<8x1xi32>) -> tensor<8x2xi32>
  %5 = "stablehlo.gather"(%arg0, %4) <{dimension_numbers = #stablehlo.gather<offset_dims = [0], collapsed_slice_dims = [1, 2], start_index_map = [1, 2], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 4, 1, 1>}> : (tensor<4x9x11xf32>, tensor<8x2xi32>) -> tensor<4x8xf32>
  return %5 : tensor<4x8xf32>
}

// -----

/// An index past the matrix (i + 3 for 38 rows of a 40-column matrix reaches
/// 40: the gather clamps it) is no diagonal: the gather stays.
// CHECK-LABEL: func.func @out_of_bounds
// CHECK: stablehlo.gather
func.func @out_of_bounds(%arg0: tensor<40x40xf32>) -> tensor<38xf32> {
  %c = stablehlo.constant dense<3> : tensor<38xi32>
  %0 = stablehlo.iota dim = 0 : tensor<38xi32>
  %1 = stablehlo.add %c, %0 : tensor<38xi32>
  %2 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<38xi32>) -> tensor<38x1xi32>
  %3 = stablehlo.broadcast_in_dim %1, dims = [0] : (tensor<38xi32>) -> tensor<38x1xi32>
  %4 = stablehlo.concatenate %2, %3, dim = 1 : (tensor<38x1xi32>, tensor<38x1xi32>) -> tensor<38x2xi32>
  %5 = "stablehlo.gather"(%arg0, %4) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<40x40xf32>, tensor<38x2xi32>) -> tensor<38xf32>
  return %5 : tensor<38xf32>
}

// -----

/// Two different iotas' offsets in a non-diagonal pattern (i, 2i) is not one:
/// the gather stays.
// CHECK-LABEL: func.func @not_a_diagonal
// CHECK: stablehlo.gather
func.func @not_a_diagonal(%arg0: tensor<40x40xf32>) -> tensor<20xf32> {
  %0 = stablehlo.iota dim = 0 : tensor<20xi32>
  %1 = stablehlo.add %0, %0 : tensor<20xi32>
  %2 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<20xi32>) -> tensor<20x1xi32>
  %3 = stablehlo.broadcast_in_dim %1, dims = [0] : (tensor<20xi32>) -> tensor<20x1xi32>
  %4 = stablehlo.concatenate %2, %3, dim = 1 : (tensor<20x1xi32>, tensor<20x1xi32>) -> tensor<20x2xi32>
  %5 = "stablehlo.gather"(%arg0, %4) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<40x40xf32>, tensor<20x2xi32>) -> tensor<20xf32>
  return %5 : tensor<20xf32>
}
