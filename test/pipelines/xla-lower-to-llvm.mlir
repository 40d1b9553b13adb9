// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-lower-to-linalg,xla-bufferize,xla-lower-to-llvm)' | FileCheck %s

/// Only the LLVM dialect is left; the entry takes bare pointers; exp is
/// xla-approximate-math's polynomial (FMAs), not a libm call.
// CHECK-LABEL: llvm.func @main
// CHECK-SAME: (%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK-NOT: memref.
// CHECK-NOT: linalg.
// CHECK-NOT: llvm.intr.exp
// CHECK: llvm.intr.fma
// CHECK: llvm.return
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.add %x, %x : tensor<8xf32>
  %1 = stablehlo.exponential %0 : tensor<8xf32>
  return %1 : tensor<8xf32>
}
