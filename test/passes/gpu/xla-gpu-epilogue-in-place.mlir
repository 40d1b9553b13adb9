// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-gpu-epilogue-in-place)' --split-input-file | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
#transposed = affine_map<(d0, d1) -> (d1, d0)>

/// A bias + relu reading a matmul's result (its only reader) writes that result:
/// bufferized, it is the in-place epilogue the matmul kernel applies.
// CHECK-LABEL: func.func @bias_relu
// CHECK: %[[C:.*]] = linalg.matmul
// CHECK: linalg.generic {{.*}} ins(%[[C]], %{{.*}} : tensor<8x16xf32>, tensor<16xf32>) outs(%[[C]] : tensor<8x16xf32>)
func.func @bias_relu(%a: tensor<8x4xf32>, %b: tensor<4x16xf32>, %bias: tensor<16xf32>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8x16xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x16xf32>) -> tensor<8x16xf32>
  %c = linalg.matmul ins(%a, %b : tensor<8x4xf32>, tensor<4x16xf32>) outs(%fill : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : tensor<8x16xf32>, tensor<16xf32>) outs(%empty : tensor<8x16xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

/// Left as they are: C read elsewhere too (it must survive the epilogue), C read
/// transposed, and a body that reads its init (an accumulation, not elementwise).
// CHECK-LABEL: func.func @kept
// CHECK: %[[C:.*]] = linalg.matmul
// CHECK: outs(%[[E:.*]] : tensor<8x8xf32>)
// CHECK-NOT: outs(%[[C]]
// CHECK: return
func.func @kept(%a: tensor<8x4xf32>, %b: tensor<4x8xf32>, %acc: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8x8xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x8xf32>) -> tensor<8x8xf32>
  %c = linalg.matmul ins(%a, %b : tensor<8x4xf32>, tensor<4x8xf32>) outs(%fill : tensor<8x8xf32>) -> tensor<8x8xf32>
  %twice = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<8x8xf32>) outs(%empty : tensor<8x8xf32>) {
  ^bb0(%x: f32, %out: f32):
    %s = arith.addf %x, %x : f32
    linalg.yield %s : f32
  } -> tensor<8x8xf32>
  %c2 = linalg.matmul ins(%a, %b : tensor<8x4xf32>, tensor<4x8xf32>) outs(%fill : tensor<8x8xf32>) -> tensor<8x8xf32>
  %flip = linalg.generic {indexing_maps = [#transposed, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c2 : tensor<8x8xf32>) outs(%empty : tensor<8x8xf32>) {
  ^bb0(%x: f32, %out: f32):
    linalg.yield %x : f32
  } -> tensor<8x8xf32>
  %c3 = linalg.matmul ins(%a, %b : tensor<8x4xf32>, tensor<4x8xf32>) outs(%fill : tensor<8x8xf32>) -> tensor<8x8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c3 : tensor<8x8xf32>) outs(%acc : tensor<8x8xf32>) {
  ^bb0(%x: f32, %out: f32):
    %s = arith.addf %x, %out : f32
    linalg.yield %s : f32
  } -> tensor<8x8xf32>
  return %c, %twice, %flip, %sum : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

/// A convolution's matmul (xla.conv) read through its expand back to NHWC: the
/// epilogue writes the expanded result, one buffer; a plain matmul's expand is left.
// CHECK-LABEL: func.func @conv_epilogue
// CHECK: %[[C:.*]] = linalg.matmul {xla.conv = "conv1x1 view"}
// CHECK: %[[V:.*]] = tensor.expand_shape %[[C]]
// CHECK: linalg.generic {{.*}} ins(%[[V]] : tensor<2x3x4x16xf32>) outs(%[[V]] : tensor<2x3x4x16xf32>)
// CHECK: %[[D:.*]] = linalg.matmul ins
// CHECK: %[[W:.*]] = tensor.expand_shape %[[D]]
// CHECK: linalg.generic {{.*}} ins(%[[W]] : tensor<2x3x4x16xf32>) outs(%{{.*}} : tensor<2x3x4x16xf32>)
// CHECK-NOT: outs(%[[W]]
func.func @conv_epilogue(%a: tensor<24x8xf32>, %b: tensor<8x16xf32>, %init: tensor<24x16xf32>) -> (tensor<2x3x4x16xf32>, tensor<2x3x4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x3x4x16xf32>
  %c = linalg.matmul {xla.conv = "conv1x1 view"} ins(%a, %b : tensor<24x8xf32>, tensor<8x16xf32>) outs(%init : tensor<24x16xf32>) -> tensor<24x16xf32>
  %v = tensor.expand_shape %c [[0, 1, 2], [3]] output_shape [2, 3, 4, 16] : tensor<24x16xf32> into tensor<2x3x4x16xf32>
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%v : tensor<2x3x4x16xf32>) outs(%empty : tensor<2x3x4x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %m = arith.maximumf %x, %zero : f32
    linalg.yield %m : f32
  } -> tensor<2x3x4x16xf32>
  %d = linalg.matmul ins(%a, %b : tensor<24x8xf32>, tensor<8x16xf32>) outs(%init : tensor<24x16xf32>) -> tensor<24x16xf32>
  %w = tensor.expand_shape %d [[0, 1, 2], [3]] output_shape [2, 3, 4, 16] : tensor<24x16xf32> into tensor<2x3x4x16xf32>
  %s = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%w : tensor<2x3x4x16xf32>) outs(%empty : tensor<2x3x4x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %m = arith.maximumf %x, %zero : f32
    linalg.yield %m : f32
  } -> tensor<2x3x4x16xf32>
  return %r, %s : tensor<2x3x4x16xf32>, tensor<2x3x4x16xf32>
}
