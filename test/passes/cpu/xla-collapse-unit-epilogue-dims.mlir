// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-collapse-unit-epilogue-dims)' --split-input-file | FileCheck %s

#mm = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#scalar = affine_map<(d0, d1, d2, d3) -> ()>
#bias = affine_map<(d0, d1, d2, d3) -> (d3)>
#step = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>

/// torch_lstm's step: a 1 x 1 x 8 x 1024 epilogue of an 8 x 1024 matmul
/// (alpha from a 0-D tensor, a bias, the step's input projection). Without
/// its unit dims it reads the matmul's result itself, the 3-D operand
/// collapsed, and its result is expanded back for its readers.
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$SCALAR:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-DAG: #[[$BIAS:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @step
// CHECK: %[[MM:.*]] = linalg.matmul
// CHECK-NOT: tensor.expand_shape %[[MM]]
// CHECK: %[[X:.*]] = tensor.collapse_shape %arg4 {{\[\[}}0, 1], [2]] : tensor<1x8x1024xf32> into tensor<8x1024xf32>
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$SCALAR]], #[[$BIAS]], #[[$ID]], #[[$ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[MM]], %arg2, %arg3, %[[X]] : tensor<8x1024xf32>, tensor<f32>, tensor<1024xf32>, tensor<8x1024xf32>)
// CHECK: } -> tensor<8x1024xf32>
// CHECK: %[[E:.*]] = tensor.expand_shape %[[R]] {{\[\[}}0, 1, 2], [3]] output_shape [1, 1, 8, 1024] : tensor<8x1024xf32> into tensor<1x1x8x1024xf32>
// CHECK: return %[[E]]
func.func @step(%a: tensor<8x256xf32>, %b: tensor<256x1024xf32>, %alpha: tensor<f32>, %bias: tensor<1024xf32>,
                %x: tensor<1x8x1024xf32>) -> tensor<1x1x8x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x1024xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<8x1024xf32>) -> tensor<8x1024xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<8x256xf32>, tensor<256x1024xf32>) outs(%c : tensor<8x1024xf32>) -> tensor<8x1024xf32>
  %m4 = tensor.expand_shape %mm [[0, 1, 2], [3]] output_shape [1, 1, 8, 1024] : tensor<8x1024xf32> into tensor<1x1x8x1024xf32>
  %out = tensor.empty() : tensor<1x1x8x1024xf32>
  %r = linalg.generic {indexing_maps = [#mm, #scalar, #bias, #step, #mm], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%m4, %alpha, %bias, %x : tensor<1x1x8x1024xf32>, tensor<f32>, tensor<1024xf32>, tensor<1x8x1024xf32>) outs(%out : tensor<1x1x8x1024xf32>) {
  ^bb0(%p: f32, %s: f32, %q: f32, %y: f32, %o: f32):
    %0 = arith.mulf %q, %s : f32
    %1 = arith.mulf %p, %s : f32
    %2 = arith.addf %1, %0 : f32
    %3 = arith.addf %2, %y : f32
    linalg.yield %3 : f32
  } -> tensor<1x1x8x1024xf32>
  return %r : tensor<1x1x8x1024xf32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

/// Of the epilogue plans' rank (3) already: left as it is.
// CHECK-LABEL: func.func @three_d
// CHECK: tensor.expand_shape
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x8x1024xf32>)
func.func @three_d(%a: tensor<8x256xf32>, %b: tensor<256x1024xf32>) -> tensor<1x8x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x1024xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<8x1024xf32>) -> tensor<8x1024xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<8x256xf32>, tensor<256x1024xf32>) outs(%c : tensor<8x1024xf32>) -> tensor<8x1024xf32>
  %m3 = tensor.expand_shape %mm [[0, 1], [2]] output_shape [1, 8, 1024] : tensor<8x1024xf32> into tensor<1x8x1024xf32>
  %out = tensor.empty() : tensor<1x8x1024xf32>
  %r = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%m3 : tensor<1x8x1024xf32>) outs(%out : tensor<1x8x1024xf32>) {
  ^bb0(%p: f32, %o: f32):
    %0 = arith.addf %p, %p : f32
    linalg.yield %0 : f32
  } -> tensor<1x8x1024xf32>
  return %r : tensor<1x8x1024xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

/// A 4-D generic that reads no matmul: left as it is.
// CHECK-LABEL: func.func @no_matmul
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<1x1x8x1024xf32>)
func.func @no_matmul(%x: tensor<1x1x8x1024xf32>) -> tensor<1x1x8x1024xf32> {
  %out = tensor.empty() : tensor<1x1x8x1024xf32>
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x1x8x1024xf32>) outs(%out : tensor<1x1x8x1024xf32>) {
  ^bb0(%p: f32, %o: f32):
    %0 = arith.addf %p, %p : f32
    linalg.yield %0 : f32
  } -> tensor<1x1x8x1024xf32>
  return %r : tensor<1x1x8x1024xf32>
}
