// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-lower-to-linalg,xla-bufferize)' | FileCheck %s

/// Results become out-parameters the caller owns; nothing is returned.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: memref<8xf32>, %[[OUT:.*]]: memref<8xf32>)
// CHECK-NOT: tensor<
// CHECK: linalg.generic {{.*}} ins(%[[X]] : memref<8xf32>) outs(%[[OUT]] : memref<8xf32>)
// CHECK: return
// CHECK-NOT: memref.alloc
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.add %x, %x : tensor<8xf32>
  %1 = stablehlo.exponential %0 : tensor<8xf32>
  return %1 : tensor<8xf32>
}
