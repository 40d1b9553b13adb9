// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-outer-dots-as-multiplies)' --split-input-file | FileCheck %s

/// BERT's head mask: a dot_general with a batch dimension and no contracting
/// one is the mask broadcast along the batch dimension times the probabilities
/// transposed to the result's order (batch first), plus +0 so that a -0
/// product comes out +0 as from the dot, which sums from +0.
// CHECK-LABEL: func.func @head_mask
// CHECK-NOT: stablehlo.dot_general
// CHECK: %[[M:.*]] = stablehlo.broadcast_in_dim %arg0, dims = [0] : (tensor<4xf32>) -> tensor<4x2x8x16xf32>
// CHECK: %[[T:.*]] = stablehlo.transpose %arg1, dims = [1, 0, 2, 3] : (tensor<2x4x8x16xf32>) -> tensor<4x2x8x16xf32>
// CHECK: %[[P:.*]] = stablehlo.multiply %[[M]], %[[T]] : tensor<4x2x8x16xf32>
// CHECK: %[[Z:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<4x2x8x16xf32>
// CHECK: %[[R:.*]] = stablehlo.add %[[P]], %[[Z]] : tensor<4x2x8x16xf32>
// CHECK: return %[[R]]
func.func @head_mask(%m: tensor<4xf32>, %p: tensor<2x4x8x16xf32>) -> tensor<4x2x8x16xf32> {
  %0 = stablehlo.dot_general %m, %p, batching_dims = [0] x [1], contracting_dims = [] x [] : (tensor<4xf32>, tensor<2x4x8x16xf32>) -> tensor<4x2x8x16xf32>
  return %0 : tensor<4x2x8x16xf32>
}

// -----

/// Left as dots: a contracting dimension; an integer product; a result type
/// other than the operands' (preferred_element_type).
// CHECK-LABEL: func.func @left
// CHECK-COUNT-3: stablehlo.dot_general
func.func @left(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %i: tensor<4xi32>, %h: tensor<4xbf16>) -> (tensor<4xf32>, tensor<4x4xi32>, tensor<4x4xf32>) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4xf32>
  %1 = stablehlo.dot_general %i, %i, contracting_dims = [] x [] : (tensor<4xi32>, tensor<4xi32>) -> tensor<4x4xi32>
  %2 = stablehlo.dot_general %h, %h, contracting_dims = [] x [] : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4x4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4x4xi32>, tensor<4x4xf32>
}

// -----

/// Left as a dot (was an internal error): a dynamic dim, as in a shape-polymorphic
/// program before a call's shapes specialize it.
// CHECK-LABEL: func.func @dynamic
// CHECK: stablehlo.dot_general
func.func @dynamic(%a: tensor<?xf32>, %b: tensor<3xf32>) -> tensor<?x3xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [] x [] : (tensor<?xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
