// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-inline-fusions)' --split-input-file | FileCheck %s

/// A fusion's ops go back in line, reading the fusion's operands and read
/// by the fusion's users; each carries its kernel number and kind.
// CHECK-LABEL: func.func @one_fusion
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK-NOT: xla.fusion
// CHECK: %[[BB:.*]] = stablehlo.broadcast_in_dim %[[B]], dims = [1] {xla.fusion_group = 0 : i64, xla.fusion_kind = "loop"}
// CHECK: %[[S:.*]] = stablehlo.add %[[X]], %[[BB]] {xla.fusion_group = 0 : i64, xla.fusion_kind = "loop"}
// CHECK: %[[E:.*]] = stablehlo.exponential %[[S]] {xla.fusion_group = 0 : i64, xla.fusion_kind = "loop"}
// CHECK-NOT: xla.yield
// CHECK: return %[[E]]
func.func @one_fusion(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "xla.fusion"(%b, %x) ({
  ^bb0(%bin: tensor<8xf32>, %xin: tensor<4x8xf32>):
    %1 = stablehlo.broadcast_in_dim %bin, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
    %2 = stablehlo.add %xin, %1 : tensor<4x8xf32>
    %3 = stablehlo.exponential %2 : tensor<4x8xf32>
    "xla.yield"(%3) : (tensor<4x8xf32>) -> ()
  }) {kind = "loop"} : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

/// Kernels are numbered in module order; each result of a multi-output
/// fusion is replaced by the value its yield names.
// CHECK-LABEL: func.func @two_fusions
// CHECK: %[[E:.*]] = stablehlo.exponential %{{.*}} {xla.fusion_group = 0 : i64, xla.fusion_kind = "multi_output"}
// CHECK: %[[S:.*]] = stablehlo.reduce(%[[E]] init: %{{[^)]*}}) applies stablehlo.add across dimensions = [1] {xla.fusion_group = 0 : i64
// CHECK: %[[B:.*]] = stablehlo.broadcast_in_dim %[[S]], dims = [0] {xla.fusion_group = 1 : i64, xla.fusion_kind = "loop"}
// CHECK: %[[D:.*]] = stablehlo.divide %[[E]], %[[B]] {xla.fusion_group = 1 : i64, xla.fusion_kind = "loop"}
// CHECK: return %[[D]]
func.func @two_fusions(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %0:2 = "xla.fusion"(%x) ({
  ^bb0(%arg1: tensor<2x64xf32>):
    %2 = stablehlo.exponential %arg1 : tensor<2x64xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.reduce(%2 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<2x64xf32>, tensor<f32>) -> tensor<2xf32>
    "xla.yield"(%2, %3) : (tensor<2x64xf32>, tensor<2xf32>) -> ()
  }) {kind = "multi_output"} : (tensor<2x64xf32>) -> (tensor<2x64xf32>, tensor<2xf32>)
  %1 = "xla.fusion"(%0#1, %0#0) ({
  ^bb0(%arg1: tensor<2xf32>, %arg2: tensor<2x64xf32>):
    %2 = stablehlo.broadcast_in_dim %arg1, dims = [0] : (tensor<2xf32>) -> tensor<2x64xf32>
    %3 = stablehlo.divide %arg2, %2 : tensor<2x64xf32>
    "xla.yield"(%3) : (tensor<2x64xf32>) -> ()
  }) {kind = "loop"} : (tensor<2xf32>, tensor<2x64xf32>) -> tensor<2x64xf32>
  return %1 : tensor<2x64xf32>
}

// -----

/// A fusion inside a while body is inlined there.
// CHECK-LABEL: func.func @in_while_body
// CHECK: do {
// CHECK: %[[M:.*]] = stablehlo.multiply %[[V:.*]], %[[V]] {xla.fusion_group = 0 : i64, xla.fusion_kind = "loop"}
// CHECK: %[[T:.*]] = stablehlo.tanh %[[M]] {xla.fusion_group = 0 : i64, xla.fusion_kind = "loop"}
// CHECK: stablehlo.return %{{.*}}, %[[T]]
func.func @in_while_body(%x: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c, %v = %x) : tensor<i32>, tensor<4xf32>
  cond {
    %1 = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %c_1 = stablehlo.constant dense<1> : tensor<i32>
    %1 = stablehlo.add %i, %c_1 : tensor<i32>
    %2 = "xla.fusion"(%v) ({
    ^bb0(%a: tensor<4xf32>):
      %3 = stablehlo.multiply %a, %a : tensor<4xf32>
      %4 = stablehlo.tanh %3 : tensor<4xf32>
      "xla.yield"(%4) : (tensor<4xf32>) -> ()
    }) {kind = "loop"} : (tensor<4xf32>) -> tensor<4xf32>
    stablehlo.return %1, %2 : tensor<i32>, tensor<4xf32>
  }
  return %0#1 : tensor<4xf32>
}
