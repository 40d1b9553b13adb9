// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-gpu-epilogue-in-place)' --split-input-file | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-gpu-epilogue-in-place{library=true})' --split-input-file | FileCheck %s --check-prefix=LIB

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
/// epilogue is computed on the matmul's rows, writing its result, and expanded after
/// (the generated matmul kernel runs it); with cuBLASLt (library=true) it writes the
/// expanded result, one buffer. A plain matmul's expand is left.
// CHECK-LABEL: func.func @conv_epilogue
// CHECK: %[[C:.*]] = linalg.matmul {xla.conv = "conv1x1 view"}
// CHECK: %[[R:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[C]] : tensor<24x16xf32>) outs(%[[C]] : tensor<24x16xf32>)
// CHECK: tensor.expand_shape %[[R]] {{\[\[}}0, 1, 2], [3]]
// CHECK: %[[D:.*]] = linalg.matmul ins
// CHECK: %[[W:.*]] = tensor.expand_shape %[[D]]
// CHECK: linalg.generic {{.*}} ins(%[[W]] : tensor<2x3x4x16xf32>) outs(%{{.*}} : tensor<2x3x4x16xf32>)
// CHECK-NOT: outs(%[[W]]
// LIB-LABEL: func.func @conv_epilogue
// LIB: %[[C:.*]] = linalg.matmul {xla.conv = "conv1x1 view"}
// LIB: %[[V:.*]] = tensor.expand_shape %[[C]]
// LIB: linalg.generic {{.*}} ins(%[[V]] : tensor<2x3x4x16xf32>) outs(%[[V]] : tensor<2x3x4x16xf32>)
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

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#chan = affine_map<(d0, d1, d2, d3) -> (d3)>
#bcast = affine_map<(d0, d1, d2, d3) -> (0, 0, 0, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d1)>

/// ResNet's form: batch norm + residual + relu on a convolution's matmul. The residual
/// (NHWC) is collapsed to rows and the 1x1x1xF parameter's expand moved, both before
/// the matmul (the matmul kernel takes them as arguments); a channel map becomes
/// (d1), a broadcast keeps its constants.
// CHECK-LABEL: func.func @batch_norm_residual
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1, 2, 3]] output_shape [1, 1, 1, 16]
// CHECK: %[[RES:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2], [3]] : tensor<2x3x4x16xf32> into tensor<24x16xf32>
// CHECK: %[[C:.*]] = linalg.matmul {xla.conv
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[ID:.*]], #[[CH:.*]], #[[BC:.*]], #[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[C]], %{{.*}}, %{{.*}}, %[[RES]] : tensor<24x16xf32>, tensor<16xf32>, tensor<1x1x1x16xf32>, tensor<24x16xf32>) outs(%[[C]] : tensor<24x16xf32>)
// CHECK: %[[OUT:.*]] = tensor.expand_shape %[[R]]
// CHECK: return %[[OUT]]
/// A map reading one row dim alone (d1 of NHWC) has no 2-D form: left on the view.
// CHECK-LABEL: func.func @row_dim_alone
// CHECK: %[[V:.*]] = tensor.expand_shape
// CHECK: linalg.generic {{.*}} outs(%[[V]] : tensor<2x3x4x16xf32>)
func.func @batch_norm_residual(%a: tensor<24x8xf32>, %b: tensor<8x16xf32>, %init: tensor<24x16xf32>,
    %scale: tensor<16xf32>, %shift: tensor<16xf32>, %res: tensor<2x3x4x16xf32>) -> tensor<2x3x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x3x4x16xf32>
  %c = linalg.matmul {xla.conv = "conv3x3 im2col"} ins(%a, %b : tensor<24x8xf32>, tensor<8x16xf32>) outs(%init : tensor<24x16xf32>) -> tensor<24x16xf32>
  %v = tensor.expand_shape %c [[0, 1, 2], [3]] output_shape [2, 3, 4, 16] : tensor<24x16xf32> into tensor<2x3x4x16xf32>
  %s4 = tensor.expand_shape %shift [[0, 1, 2, 3]] output_shape [1, 1, 1, 16] : tensor<16xf32> into tensor<1x1x1x16xf32>
  %r = linalg.generic {indexing_maps = [#id4, #chan, #bcast, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%v, %scale, %s4, %res : tensor<2x3x4x16xf32>, tensor<16xf32>, tensor<1x1x1x16xf32>, tensor<2x3x4x16xf32>) outs(%empty : tensor<2x3x4x16xf32>) {
  ^bb0(%x: f32, %k: f32, %t: f32, %y: f32, %out: f32):
    %m = arith.mulf %x, %k : f32
    %p = arith.addf %m, %t : f32
    %q = arith.addf %p, %y : f32
    %z = arith.maximumf %q, %zero : f32
    linalg.yield %z : f32
  } -> tensor<2x3x4x16xf32>
  return %r : tensor<2x3x4x16xf32>
}

func.func @row_dim_alone(%a: tensor<24x8xf32>, %b: tensor<8x16xf32>, %init: tensor<24x16xf32>,
    %h: tensor<3xf32>) -> tensor<2x3x4x16xf32> {
  %empty = tensor.empty() : tensor<2x3x4x16xf32>
  %c = linalg.matmul {xla.conv = "conv3x3 im2col"} ins(%a, %b : tensor<24x8xf32>, tensor<8x16xf32>) outs(%init : tensor<24x16xf32>) -> tensor<24x16xf32>
  %v = tensor.expand_shape %c [[0, 1, 2], [3]] output_shape [2, 3, 4, 16] : tensor<24x16xf32> into tensor<2x3x4x16xf32>
  %r = linalg.generic {indexing_maps = [#id4, #row, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%v, %h : tensor<2x3x4x16xf32>, tensor<3xf32>) outs(%empty : tensor<2x3x4x16xf32>) {
  ^bb0(%x: f32, %k: f32, %out: f32):
    %m = arith.mulf %x, %k : f32
    linalg.yield %m : f32
  } -> tensor<2x3x4x16xf32>
  return %r : tensor<2x3x4x16xf32>
}
