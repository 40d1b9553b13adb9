// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-static-dynamic-calls)' --split-input-file | FileCheck %s

/// jnp.cumsum over a symbolic dim (b = 6): jax.export's dynamic_reduce_window,
/// its window now constants, becomes reduce_window; the shapes are refined again.
// CHECK-LABEL: func.func public @main
// CHECK-SAME: -> tensor<6x10xf32>
// CHECK: stablehlo.reduce_window
// CHECK-SAME: padding = dense<{{\[\[}}5, 0], [0, 0]]> : tensor<2x2xi64>
// CHECK-SAME: window_dimensions = array<i64: 6, 1>
// CHECK: stablehlo.add
// CHECK: stablehlo.return
// CHECK: (tensor<6x10xf32>, tensor<f32>) -> tensor<6x10xf32>
// CHECK-NOT: dynamic_reduce_window
// CHECK-NOT: @reducer
func.func public @main(%arg0: tensor<6x10xf32>) -> tensor<?x10xf32> {
  %c = stablehlo.constant dense<1> : tensor<2xi32>
  %c_0 = stablehlo.constant dense<[6, 1]> : tensor<2xi32>
  %c_1 = stablehlo.constant dense<[[5, 0], [0, 0]]> : tensor<2x2xi32>
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.custom_call @stablehlo.dynamic_reduce_window(%arg0, %cst, %c_0, %c, %c, %c, %c_1) {api_version = 2 : i32, called_computations = [@reducer]} : (tensor<6x10xf32>, tensor<f32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2x2xi32>) -> tensor<?x10xf32>
  %1 = stablehlo.negate %0 : tensor<?x10xf32>
  return %1 : tensor<?x10xf32>
}
func.func private @reducer(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
  return %0 : tensor<f32>
}

// -----

/// Two inputs (a variadic reduce_window: lax.cummax's value and index),
/// strided and dilated: the attributes taken as they are.
// CHECK-LABEL: func.func public @main
// CHECK-SAME: -> (tensor<3x4xf32>, tensor<3x4xi32>)
// CHECK: stablehlo.reduce_window
// CHECK-SAME: base_dilations = array<i64: 1, 1>
// CHECK-SAME: window_dilations = array<i64: 2, 1>
// CHECK-SAME: window_dimensions = array<i64: 2, 1>
// CHECK-SAME: window_strides = array<i64: 2, 1>
// CHECK: -> (tensor<3x4xf32>, tensor<3x4xi32>)
func.func public @main(%arg0: tensor<8x4xf32>, %arg1: tensor<8x4xi32>) -> (tensor<?x4xf32>, tensor<?x4xi32>) {
  %one = stablehlo.constant dense<1> : tensor<2xi32>
  %strides = stablehlo.constant dense<[2, 1]> : tensor<2xi32>
  %pads = stablehlo.constant dense<0> : tensor<2x2xi32>
  %z = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %zi = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.custom_call @stablehlo.dynamic_reduce_window(%arg0, %arg1, %z, %zi, %strides, %strides, %one, %strides, %pads) {called_computations = [@pair]} : (tensor<8x4xf32>, tensor<8x4xi32>, tensor<f32>, tensor<i32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2x2xi32>) -> (tensor<?x4xf32>, tensor<?x4xi32>)
  return %0#0, %0#1 : tensor<?x4xf32>, tensor<?x4xi32>
}
func.func private @pair(%a: tensor<f32>, %ai: tensor<i32>, %b: tensor<f32>, %bi: tensor<i32>) -> (tensor<f32>, tensor<i32>) {
  %0 = stablehlo.maximum %a, %b : tensor<f32>
  %1 = stablehlo.maximum %ai, %bi : tensor<i32>
  return %0, %1 : tensor<f32>, tensor<i32>
}

// -----

/// A window not known yet (the entry still takes `?` dims): left for the
/// specialization.
// CHECK-LABEL: func.func public @main
// CHECK: custom_call @stablehlo.dynamic_reduce_window
func.func public @main(%arg0: tensor<?x10xf32>, %w: tensor<2xi32>) -> tensor<?x10xf32> {
  %c = stablehlo.constant dense<1> : tensor<2xi32>
  %c_1 = stablehlo.constant dense<0> : tensor<2x2xi32>
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.custom_call @stablehlo.dynamic_reduce_window(%arg0, %cst, %w, %c, %c, %c, %c_1) {called_computations = [@reducer]} : (tensor<?x10xf32>, tensor<f32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2x2xi32>) -> tensor<?x10xf32>
  return %0 : tensor<?x10xf32>
}
func.func private @reducer(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
  return %0 : tensor<f32>
}

// -----

/// approx_max_k over a symbolic batch: static once refined, the exact sort and slice.
// CHECK-LABEL: func.func public @main
// CHECK: stablehlo.sort
// CHECK: stablehlo.compare GT
// CHECK: stablehlo.slice %{{.*}} [0:6, 0:3]
// CHECK-NOT: ApproxTopK
func.func public @main(%arg0: tensor<6x10xf32>) -> (tensor<6x3xf32>, tensor<6x3xi32>) {
  %c = stablehlo.constant dense<-1> : tensor<i32>
  %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = stablehlo.iota dim = 1 : tensor<6x10xi32>
  %1:2 = stablehlo.custom_call @ApproxTopK(%arg0, %0, %cst, %c) {called_computations = [@top_k_gt_f32_comparator], mhlo.backend_config = {aggregate_to_topk = true, is_fallback = true, recall_target = 0.949999988 : f32, reduction_dim = 1 : i64, reduction_input_size_override = -1 : i64, top_k = 3 : i64}} : (tensor<6x10xf32>, tensor<6x10xi32>, tensor<f32>, tensor<i32>) -> (tensor<6x3xf32>, tensor<6x3xi32>)
  return %1#0, %1#1 : tensor<6x3xf32>, tensor<6x3xi32>
}
func.func private @top_k_gt_f32_comparator(%arg0: tensor<f32>, %arg1: tensor<f32>, %arg2: tensor<i32>, %arg3: tensor<i32>) -> tensor<i1> {
  %0 = stablehlo.compare GT, %arg0, %arg1 : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %0 : tensor<i1>
}

// -----

/// lax.top_k whose k is symbolic (`b // 2`, b = 10): chlo.top_k, refined and
/// legalized: its sort and slice, for xla-sort-slice-to-top-k.
// CHECK-LABEL: func.func public @main
// CHECK-SAME: -> (tensor<1x5xf32>, tensor<1x5xi32>)
// CHECK: stablehlo.sort
// CHECK: stablehlo.slice %{{.*}} [0:1, 0:5]
// CHECK-NOT: top_k
func.func public @main(%arg0: tensor<1x10xf32>) -> (tensor<1x?xf32>, tensor<1x?xi32>) {
  %k = stablehlo.constant dense<5> : tensor<i32>
  %0:2 = stablehlo.custom_call @stablehlo.dynamic_top_k(%arg0, %k) {api_version = 2 : i32} : (tensor<1x10xf32>, tensor<i32>) -> (tensor<1x?xf32>, tensor<1x?xi32>)
  return %0#0, %0#1 : tensor<1x?xf32>, tensor<1x?xi32>
}
