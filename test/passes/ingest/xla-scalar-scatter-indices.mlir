// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-scalar-scatter-indices)' --split-input-file | FileCheck %s

/// jax's `zeros(6).at[ids].add(1)`: the ids broadcast to [M, 1]; the scatter
/// reads the [M] ids (index_vector_dim 1, now the rank) and the broadcast goes.
// CHECK-LABEL: func.func @bins
// CHECK-NOT: stablehlo.broadcast_in_dim %arg1
// CHECK: "stablehlo.scatter"(%arg0, %arg1, %arg2)
// CHECK-SAME: index_vector_dim = 1
// CHECK: }) : (tensor<6xf32>, tensor<64xi32>, tensor<64xf32>) -> tensor<6xf32>
func.func @bins(%b: tensor<6xf32>, %i: tensor<64xi32>, %u: tensor<64xf32>) -> tensor<6xf32> {
  %0 = stablehlo.broadcast_in_dim %i, dims = [0] : (tensor<64xi32>) -> tensor<64x1xi32>
  %1 = "stablehlo.scatter"(%b, %0, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %2 = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %2 : tensor<f32>
  }) : (tensor<6xf32>, tensor<64x1xi32>, tensor<64xf32>) -> tensor<6xf32>
  return %1 : tensor<6xf32>
}

// -----

/// Left alone: indices of two components; a broadcast that is not the identity
/// on the leading dims (a transpose of the ids).
// CHECK-LABEL: func.func @left
// CHECK: %[[P:.*]] = stablehlo.broadcast_in_dim %arg1
// CHECK: "stablehlo.scatter"(%arg0, %[[P]], %arg3)
// CHECK: %[[T:.*]] = stablehlo.broadcast_in_dim %arg2
// CHECK: "stablehlo.scatter"(%arg0, %[[T]], %arg4)
func.func @left(%b: tensor<6x6xf32>, %p: tensor<8x2xi32>, %t: tensor<4x8xi32>, %u: tensor<8xf32>, %w: tensor<8x4xf32>) -> (tensor<6x6xf32>, tensor<6x6xf32>) {
  %0 = stablehlo.broadcast_in_dim %p, dims = [0, 1] : (tensor<8x2xi32>) -> tensor<8x2xi32>
  %1 = "stablehlo.scatter"(%b, %0, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %4 = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %4 : tensor<f32>
  }) : (tensor<6x6xf32>, tensor<8x2xi32>, tensor<8xf32>) -> tensor<6x6xf32>
  %2 = stablehlo.broadcast_in_dim %t, dims = [1, 0] : (tensor<4x8xi32>) -> tensor<8x4x1xi32>
  %3 = "stablehlo.scatter"(%b, %2, %w) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0], index_vector_dim = 2>, unique_indices = false}> ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %4 = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %4 : tensor<f32>
  }) : (tensor<6x6xf32>, tensor<8x4x1xi32>, tensor<8x4xf32>) -> tensor<6x6xf32>
  return %1, %3 : tensor<6x6xf32>, tensor<6x6xf32>
}
