// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-fuse)' | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-fuse{producer-kernels=false})' | FileCheck %s --check-prefix=APART

/// A continued fraction's step (jax's igamma, betainc): `s` and the ratio are
/// read by several updates, each kept by the mask `go`. Producer-consumer
/// fusion leaves four kernels (a producer read by two kernels stays in the
/// first that took it); with producer-kernels each kernel joins the one
/// reading it, the mask (i1) kernel too: one kernel writing the four results.
// CHECK-LABEL: func.func @body
// CHECK-COUNT-1: "xla.fusion"
// CHECK-NOT: "xla.fusion"
// CHECK: {kind = "multi_output"} : (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xi1>) -> (tensor<16xi1>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
// CHECK-NEXT: return %[[R:.*]]#0, %[[R]]#1, %[[R]]#2, %[[R]]#3
// APART-LABEL: func.func @body
// APART-COUNT-4: "xla.fusion"
func.func @body(%go: tensor<16xi1>, %p: tensor<16xf32>, %q: tensor<16xf32>, %a: tensor<16xf32>, %x: tensor<16xf32>) -> (tensor<16xi1>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %s = stablehlo.add %a, %x : tensor<16xf32>
  %pn = stablehlo.multiply %p, %s : tensor<16xf32>
  %qs = stablehlo.multiply %q, %s : tensor<16xf32>
  %qn = stablehlo.add %qs, %x : tensor<16xf32>
  %ratio = stablehlo.divide %pn, %qn : tensor<16xf32>
  %d = stablehlo.subtract %ratio, %p : tensor<16xf32>
  %e = stablehlo.abs %d : tensor<16xf32>
  %eps = stablehlo.constant dense<1.0e-4> : tensor<16xf32>
  %more = stablehlo.compare GT, %e, %eps, FLOAT : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xi1>
  %go2 = stablehlo.and %go, %more : tensor<16xi1>
  %qd = stablehlo.divide %qn, %s : tensor<16xf32>
  %p2 = stablehlo.select %go, %ratio, %p : tensor<16xi1>, tensor<16xf32>
  %q2 = stablehlo.select %go, %qd, %q : tensor<16xi1>, tensor<16xf32>
  %a2 = stablehlo.select %go, %s, %a : tensor<16xi1>, tensor<16xf32>
  return %go2, %p2, %q2, %a2 : tensor<16xi1>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}
