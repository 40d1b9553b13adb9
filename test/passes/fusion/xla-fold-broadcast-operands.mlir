// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-fold-broadcast-operands)' --split-input-file | FileCheck %s

/// torch-mlir's nn.Linear on a [seq, batch, d] activation: a batched dot
/// against the weight broadcast to every batch element (past identity
/// reshapes and broadcasts). The weight itself is read by one unbatched dot;
/// the broadcast chain is gone.
// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[A:.*]]: tensor<128x4x256xf32>, %[[W:.*]]: tensor<256x768xf32>)
// CHECK-NEXT: %[[D:.*]] = stablehlo.dot_general %[[A]], %[[W]], contracting_dims = [2] x [0]
// CHECK-SAME: (tensor<128x4x256xf32>, tensor<256x768xf32>) -> tensor<128x4x768xf32>
// CHECK-NEXT: return %[[D]]
// CHECK-NOT: broadcast_in_dim
func.func @linear(%a: tensor<128x4x256xf32>, %w: tensor<256x768xf32>) -> tensor<128x4x768xf32> {
  %b = stablehlo.broadcast_in_dim %w, dims = [1, 2] : (tensor<256x768xf32>) -> tensor<128x256x768xf32>
  %r = stablehlo.reshape %b : (tensor<128x256x768xf32>) -> tensor<128x256x768xf32>
  %i = stablehlo.broadcast_in_dim %r, dims = [0, 1, 2] : (tensor<128x256x768xf32>) -> tensor<128x256x768xf32>
  %d = stablehlo.dot_general %a, %i, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<128x4x256xf32>, tensor<128x256x768xf32>) -> tensor<128x4x768xf32>
  return %d : tensor<128x4x768xf32>
}

// -----

/// An operand that varies along the batch dim (attention's keys) stays batched.
// CHECK-LABEL: func.func @per_batch
// CHECK: stablehlo.broadcast_in_dim
// CHECK: batching_dims = [0] x [0]
func.func @per_batch(%a: tensor<8x4x16xf32>, %k: tensor<8x16xf32>) -> tensor<8x4x32xf32> {
  %b = stablehlo.broadcast_in_dim %k, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x32xf32>
  %d = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<8x4x16xf32>, tensor<8x16x32xf32>) -> tensor<8x4x32xf32>
  return %d : tensor<8x4x32xf32>
}
