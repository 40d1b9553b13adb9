// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-lower-to-linalg)' | FileCheck %s

/// StableHLO becomes linalg on tensors; the elementwise chain is one generic.
// CHECK-LABEL: func.func @main
// CHECK-NOT: stablehlo.
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: math.exp
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.add %x, %x : tensor<8xf32>
  %1 = stablehlo.exponential %0 : tensor<8xf32>
  return %1 : tensor<8xf32>
}
