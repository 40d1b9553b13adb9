// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-outline-top-k)' --split-input-file | FileCheck %s

/// chlo.top_k becomes a call of a declaration marked with k, which the
/// chlo legalization leaves alone (xla-lower-top-k defines it later).
// CHECK-LABEL: func.func @main
// CHECK: %[[R:.*]]:2 = call @xla_top_k_0(%{{.*}}) : (tensor<4x16xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>)
// CHECK: return %[[R]]#0, %[[R]]#1
// CHECK: func.func private @xla_top_k_0(tensor<4x16xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>) attributes {xla.top_k = 3 : i64}
func.func @main(%x: tensor<4x16xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>) {
  %values, %indices = chlo.top_k(%x, k = 3) : tensor<4x16xf32> -> (tensor<4x3xf32>, tensor<4x3xi32>)
  return %values, %indices : tensor<4x3xf32>, tensor<4x3xi32>
}

// -----

/// A large k is left to the sort.
// CHECK-LABEL: func.func @large_k
// CHECK: chlo.top_k
func.func @large_k(%x: tensor<4x100xf32>) -> (tensor<4x100xf32>, tensor<4x100xi32>) {
  %values, %indices = chlo.top_k(%x, k = 100) : tensor<4x100xf32> -> (tensor<4x100xf32>, tensor<4x100xi32>)
  return %values, %indices : tensor<4x100xf32>, tensor<4x100xi32>
}
