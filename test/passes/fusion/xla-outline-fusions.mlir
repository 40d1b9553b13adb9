// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-outline-fusions{min-ops=2})' | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-outline-fusions{min-ops=2},xla-outline-fusions{release=true})' | FileCheck %s --check-prefix=RELEASED
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-outline-fusions)' | FileCheck %s --check-prefix=SMALL

/// Each run of one kernel's ops becomes a function called no_inline (its
/// constants copied in, what later ops read returned); release lets the
/// calls be inlined again. Kernels under min-ops (32) stay in place.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK: %[[K0:.*]] = call @xla_fusion_0(%[[X]], %[[Y]]) {no_inline, xla.fusion_call} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[K1:.*]] = call @xla_fusion_1(%[[K0]]) {no_inline, xla.fusion_call}
// CHECK: return %[[K1]]
// CHECK: func.func private @xla_fusion_0(%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[C:.*]] = stablehlo.constant dense<2.000000e+00>
// CHECK: stablehlo.multiply %[[A]], %[[C]]
// CHECK: stablehlo.add
// CHECK: func.func private @xla_fusion_1
// CHECK: stablehlo.exponential
// CHECK: stablehlo.negate
// RELEASED: call @xla_fusion_0(%{{.*}}, %{{.*}}) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// RELEASED-NOT: no_inline
// SMALL-NOT: call
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %two = stablehlo.constant dense<2.0> : tensor<4xf32>
  %m = stablehlo.multiply %x, %two {xla.fusion_group = 0 : i64, xla.fusion_kind = "loop"} : tensor<4xf32>
  %a = stablehlo.add %m, %y {xla.fusion_group = 0 : i64, xla.fusion_kind = "loop"} : tensor<4xf32>
  %e = stablehlo.exponential %a {xla.fusion_group = 1 : i64, xla.fusion_kind = "loop"} : tensor<4xf32>
  %n = stablehlo.negate %e {xla.fusion_group = 1 : i64, xla.fusion_kind = "loop"} : tensor<4xf32>
  return %n : tensor<4xf32>
}
