// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-small-table-gathers-as-selects)' --split-input-file | FileCheck %s

/// jax's searchsorted step: one element per index from a 6-entry table, the
/// ids an [M] broadcast to [M, 1]. The chain of selects reads the [M] ids,
/// compares them (unsigned) with 4, 3, ..., 0, and picks the entries, each a
/// slice of the table broadcast; the result is reshaped to the gather's.
// CHECK-LABEL: func.func @edges
// CHECK-NOT: stablehlo.gather
// CHECK: %[[T5:.*]] = stablehlo.slice %arg0 [5:6]
// CHECK: stablehlo.compare LE, %arg1, %{{.*}}, UNSIGNED : (tensor<64xui32>, tensor<64xui32>) -> tensor<64xi1>
// CHECK: stablehlo.slice %arg0 [4:5]
// CHECK: stablehlo.select
// CHECK-COUNT-4: stablehlo.compare LE, %arg1
// CHECK: %[[R:.*]] = stablehlo.reshape %{{.*}} : (tensor<64xf32>) -> tensor<64x1xf32>
// CHECK: return %[[R]]
func.func @edges(%t: tensor<6xf32>, %i: tensor<64xui32>) -> tensor<64x1xf32> {
  %0 = stablehlo.broadcast_in_dim %i, dims = [0] : (tensor<64xui32>) -> tensor<64x1xui32>
  %1 = "stablehlo.gather"(%t, %0) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<6xf32>, tensor<64x1xui32>) -> tensor<64x1xf32>
  return %1 : tensor<64x1xf32>
}

// -----

/// Signed ids of another shape (collapsed slice dim, implicit index vector
/// dim): reshaped to [M], compared SIGNED (a negative id picks entry 0, as the
/// gather clamps it).
// CHECK-LABEL: func.func @signed
// CHECK-NOT: stablehlo.gather
// CHECK: stablehlo.reshape %arg1 : (tensor<4x8xi32>) -> tensor<32xi32>
// CHECK-COUNT-2: stablehlo.compare LE, %{{.*}}, SIGNED
// CHECK: stablehlo.reshape %{{.*}} : (tensor<32xi64>) -> tensor<4x8xi64>
func.func @signed(%t: tensor<3xi64>, %i: tensor<4x8xi32>) -> tensor<4x8xi64> {
  %0 = "stablehlo.gather"(%t, %i) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<3xi64>, tensor<4x8xi32>) -> tensor<4x8xi64>
  return %0 : tensor<4x8xi64>
}

// -----

/// Left as gathers: a table of 17 entries; rows of a 2-d table; slices of 2.
// CHECK-LABEL: func.func @left
// CHECK-COUNT-3: stablehlo.gather
func.func @left(%t: tensor<17xf32>, %m: tensor<4x3xf32>, %i: tensor<8x1xi32>) -> (tensor<8x1xf32>, tensor<8x3xf32>, tensor<8x2xf32>) {
  %0 = "stablehlo.gather"(%t, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<17xf32>, tensor<8x1xi32>) -> tensor<8x1xf32>
  %1 = "stablehlo.gather"(%m, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 3>}> : (tensor<4x3xf32>, tensor<8x1xi32>) -> tensor<8x3xf32>
  %2 = "stablehlo.gather"(%t, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 2>}> : (tensor<17xf32>, tensor<8x1xi32>) -> tensor<8x2xf32>
  return %0, %1, %2 : tensor<8x1xf32>, tensor<8x3xf32>, tensor<8x2xf32>
}
