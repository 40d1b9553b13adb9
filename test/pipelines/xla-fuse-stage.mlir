// RUN: xla-opt %s --xla-stage=fused | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-ingest,xla-fuse-stage)' | FileCheck %s
// RUN: xla-opt %s --xla-stage=linalg | FileCheck %s --check-prefix=LINALG

/// The "fused" stage holds the kernels; "linalg" has plain ops again, the
/// reductions still tagged with their kernel's kind, no more with its number
/// (read no more: like ops of two kernels are one op to cse). Softmax rows: the max is its
/// own kernel, exp + sum one kernel that also writes exp, the divide a loop.
// CHECK-LABEL: func.func public @main
// CHECK: %[[MAX:.*]] = stablehlo.reduce
// CHECK: %[[F:.*]]:2 = "xla.fusion"(%[[MAX]], %{{.*}})
// CHECK: stablehlo.exponential
// CHECK: {kind = "multi_output"}
// CHECK: %[[R:.*]] = "xla.fusion"(%[[F]]#1, %[[F]]#0)
// CHECK: {kind = "loop"}
// CHECK: return %[[R]]
// LINALG-LABEL: func.func public @main
// LINALG-NOT: xla.fusion"
// LINALG-NOT: xla.fusion_group
// LINALG: xla.fusion_kind = "multi_output"
// LINALG-NOT: xla.fusion_group
func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %max = stablehlo.reduce(%x init: %init) applies stablehlo.maximum across dimensions = [1] : (tensor<2x8xf32>, tensor<f32>) -> tensor<2xf32>
  %b = stablehlo.broadcast_in_dim %max, dims = [0] : (tensor<2xf32>) -> tensor<2x8xf32>
  %d = stablehlo.subtract %x, %b : tensor<2x8xf32>
  %e = stablehlo.exponential %d : tensor<2x8xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<2x8xf32>, tensor<f32>) -> tensor<2xf32>
  %s = stablehlo.broadcast_in_dim %sum, dims = [0] : (tensor<2xf32>) -> tensor<2x8xf32>
  %r = stablehlo.divide %e, %s : tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}
