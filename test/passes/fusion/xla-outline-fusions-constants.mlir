// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-outline-fusions{min-ops=2})' | FileCheck %s

/// A kernel's constants hoisted to the top of the block (canonicalize does)
/// with another kernel's ops after them are no kernel of their own: they are
/// copied into the kernel that reads them, where they fold into its loop. As
/// a function of their own (i0e's 59 coefficients), full-size splats were
/// returned, filled in memory and read back.
// CHECK-LABEL: func.func @hoisted_constants
// CHECK: %[[E:.*]] = call @xla_fusion_{{[0-9]+}}(%arg0)
// CHECK: %[[A:.*]] = call @[[K:xla_fusion_[0-9]+]](%[[E]]) {no_inline, xla.fusion_call} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: return %[[A]]
// CHECK: func.func private @[[K]](%{{.*}}: tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: stablehlo.constant {{.*}} dense<2.000000e+00>
// CHECK-NEXT: stablehlo.constant {{.*}} dense<3.000000e+00>
// CHECK-NEXT: stablehlo.multiply
// CHECK-NEXT: stablehlo.add
func.func @hoisted_constants(%x: tensor<4xf32>) -> tensor<4xf32> {
  %two = stablehlo.constant {xla.fusion_group = 1 : i64, xla.fusion_kind = "loop"} dense<2.0> : tensor<4xf32>
  %three = stablehlo.constant {xla.fusion_group = 1 : i64, xla.fusion_kind = "loop"} dense<3.0> : tensor<4xf32>
  %e = stablehlo.exponential %x {xla.fusion_group = 0 : i64, xla.fusion_kind = "loop"} : tensor<4xf32>
  %n = stablehlo.negate %e {xla.fusion_group = 0 : i64, xla.fusion_kind = "loop"} : tensor<4xf32>
  %m = stablehlo.multiply %n, %two {xla.fusion_group = 1 : i64, xla.fusion_kind = "loop"} : tensor<4xf32>
  %a = stablehlo.add %m, %three {xla.fusion_group = 1 : i64, xla.fusion_kind = "loop"} : tensor<4xf32>
  return %a : tensor<4xf32>
}
