// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-ingest{entry=main})' --split-input-file | FileCheck %s

/// CHLO is legalized, private callees inlined and dropped, shapes refined.
// CHECK-LABEL: func.func public @main
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK-NOT: chlo.
// CHECK-NOT: func.call
// CHECK: stablehlo.
// CHECK-NOT: func.func private
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @erf_twice(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @erf_twice(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = chlo.erf %x : tensor<4xf32> -> tensor<4xf32>
  %1 = chlo.erf %0 : tensor<4xf32> -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

/// Dynamic dimensions are refined from the entry's static argument types.
// CHECK-LABEL: func.func public @main
// CHECK: stablehlo.add {{.*}} : tensor<3xf32>
// CHECK-NOT: tensor<?xf32>
func.func @main(%x: tensor<3xf32>) -> tensor<?xf32> {
  %0 = stablehlo.convert %x : (tensor<3xf32>) -> tensor<?xf32>
  %1 = stablehlo.add %0, %0 : tensor<?xf32>
  return %1 : tensor<?xf32>
}
