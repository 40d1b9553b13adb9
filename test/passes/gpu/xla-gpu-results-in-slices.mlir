// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-gpu-results-in-slices)' --split-input-file | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-gpu-results-in-slices{library=true})' --split-input-file | FileCheck %s --check-prefix=LIBRARY

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

/// A residual's relu padded for the next convolution: the pad is a fill of the
/// padded tensor, and the relu writes its interior slice (its init) before the
/// insert_slice puts it back, which bufferization makes one buffer, no copy.
// CHECK-LABEL: func.func @relu_padded
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<1x6x6x8xf32>
// CHECK: %[[FILLED:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[EMPTY]] : tensor<1x6x6x8xf32>)
// CHECK: %[[SLICE:.*]] = tensor.extract_slice %[[FILLED]][0, 1, 1, 0] [1, 4, 4, 8] [1, 1, 1, 1]
// CHECK: %[[RELU:.*]] = linalg.generic {{.*}} outs(%[[SLICE]] : tensor<1x4x4x8xf32>)
// CHECK: arith.maximumf
// CHECK: %[[PADDED:.*]] = tensor.insert_slice %[[RELU]] into %[[FILLED]][0, 1, 1, 0] [1, 4, 4, 8] [1, 1, 1, 1]
// CHECK: return %[[PADDED]]
// CHECK-NOT: tensor.pad
func.func @relu_padded(%x: tensor<1x4x4x8xf32>) -> tensor<1x6x6x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x4x4x8xf32>) outs(%e : tensor<1x4x4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x8xf32>
  %p = tensor.pad %r low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x4x8xf32> to tensor<1x6x6x8xf32>
  return %p : tensor<1x6x6x8xf32>
}

// -----

/// A weight gradient's tap (a matmul from a zero fill, expanded to [1, 1, 32])
/// concatenated into the [3, 1, 32] filter: the fill and the matmul move to the
/// insert_slice and write the slice, collapsed back to the matmul's shape.
// CHECK-LABEL: func.func @tap_concatenated
// CHECK: %[[SLICE:.*]] = tensor.extract_slice %{{.*}}[1, 0, 0] [1, 1, 32] [1, 1, 1] : tensor<3x1x32xf32> to tensor<1x1x32xf32>
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[SLICE]] {{\[}}[0, 1], [2]] : tensor<1x1x32xf32> into tensor<1x32xf32>
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[C]] : tensor<1x32xf32>)
// CHECK: %[[M:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<1x16xf32>, tensor<16x32xf32>) outs(%[[Z]] : tensor<1x32xf32>)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[M]]
// CHECK: tensor.insert_slice %[[E]] into %{{.*}}[1, 0, 0] [1, 1, 32] [1, 1, 1]
func.func @tap_concatenated(%a: tensor<1x16xf32>, %b: tensor<16x32xf32>, %dest: tensor<3x1x32xf32>) -> tensor<3x1x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x32xf32>) -> tensor<1x32xf32>
  %m = linalg.matmul ins(%a, %b : tensor<1x16xf32>, tensor<16x32xf32>) outs(%z : tensor<1x32xf32>) -> tensor<1x32xf32>
  %x = tensor.expand_shape %m [[0, 1], [2]] output_shape [1, 1, 32] : tensor<1x32xf32> into tensor<1x1x32xf32>
  %r = tensor.insert_slice %x into %dest[1, 0, 0] [1, 1, 32] [1, 1, 1] : tensor<1x1x32xf32> into tensor<3x1x32xf32>
  return %r : tensor<3x1x32xf32>
}

// -----

/// Left alone: a result read twice (the residual also feeds the next block), a
/// pad of a function argument, and an insert at a dynamic offset.
// CHECK-LABEL: func.func @left_alone
// CHECK: tensor.pad
// CHECK: tensor.pad
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[%{{.*}}, 0]
// CHECK-NOT: tensor.extract_slice
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @left_alone(%x: tensor<4x8xf32>, %dest: tensor<9x8xf32>, %at: index) -> (tensor<6x8xf32>, tensor<4x8xf32>, tensor<6x8xf32>, tensor<9x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %p = tensor.pad %r low[1, 0] high[1, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x8xf32> to tensor<6x8xf32>
  %q = tensor.pad %x low[1, 0] high[1, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x8xf32> to tensor<6x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.negf %a : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %d = tensor.insert_slice %s into %dest[%at, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<9x8xf32>
  return %p, %r, %q, %d : tensor<6x8xf32>, tensor<4x8xf32>, tensor<6x8xf32>, tensor<9x8xf32>
}

// -----

/// Batch norm + relu written in its convolution matmul's result, then padded: left
/// in place for the generated matmul kernel, which runs it; with cuBLASLt, which
/// has no such epilogue (a subtract, an rsqrt), it writes the padded buffer's slice.
// CHECK-LABEL: func.func @normalized_padded
// CHECK: tensor.pad
// CHECK-NOT: tensor.extract_slice
// LIBRARY-LABEL: func.func @normalized_padded
// LIBRARY: %[[FILLED:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x4x4x8xf32>)
// LIBRARY: %[[SLICE:.*]] = tensor.extract_slice %[[FILLED]][0, 1, 1, 0] [1, 2, 2, 8] [1, 1, 1, 1]
// LIBRARY: %[[BN:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x2x2x8xf32>, tensor<8xf32>) outs(%[[SLICE]] : tensor<1x2x2x8xf32>)
// LIBRARY: math.rsqrt
// LIBRARY: tensor.insert_slice %[[BN]] into %[[FILLED]][0, 1, 1, 0] [1, 2, 2, 8] [1, 1, 1, 1]
// LIBRARY-NOT: tensor.pad
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#channel = affine_map<(d0, d1, d2, d3) -> (d3)>
func.func @normalized_padded(%patches: tensor<4x72xf32>, %w: tensor<72x8xf32>, %var: tensor<8xf32>) -> tensor<1x4x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = linalg.matmul {xla.conv = "conv3x3 im2col"} ins(%patches, %w : tensor<4x72xf32>, tensor<72x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = tensor.expand_shape %m [[0, 1, 2], [3]] output_shape [1, 2, 2, 8] : tensor<4x8xf32> into tensor<1x2x2x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #channel, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %var : tensor<1x2x2x8xf32>, tensor<8xf32>) outs(%c : tensor<1x2x2x8xf32>) {
  ^bb0(%x: f32, %v: f32, %o: f32):
    %s = math.rsqrt %v : f32
    %n = arith.mulf %x, %s : f32
    %y = arith.maximumf %n, %zero : f32
    linalg.yield %y : f32
  } -> tensor<1x2x2x8xf32>
  %p = tensor.pad %r low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x2x2x8xf32> to tensor<1x4x4x8xf32>
  return %p : tensor<1x4x4x8xf32>
}
