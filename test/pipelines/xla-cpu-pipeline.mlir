// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-cpu-pipeline{entry=main})' | FileCheck %s
// RUN: xla-opt %s --xla-stage=llvm | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-cpu-pipeline{cpu=x86-64-v3 threads=2 micro-kernels=false})' | FileCheck %s --check-prefix=V3
// RUN: xla-opt %s --cpu=x86-64-v3 --xla-stage=llvm | FileCheck %s --check-prefix=V3
// RUN: xla-opt %s --xla-stage=stablehlo | FileCheck %s --check-prefix=STABLEHLO
// RUN: xla-opt %s --xla-stage=linalg | FileCheck %s --check-prefix=LINALG
// RUN: xla-opt %s --xla-stage=bufferized | FileCheck %s --check-prefix=BUFFERIZED

/// The whole pipeline and each of its named stages, on a softmax row; the
/// pipeline's options are the compiler's (cpu=: the level its code is for).
// CHECK-LABEL: llvm.func @main
// CHECK-NOT: func.func
// V3-LABEL: llvm.func @main
// V3-SAME: target_cpu = "x86-64-v3"
// STABLEHLO-LABEL: func.func public @main
// STABLEHLO: stablehlo.reduce
// LINALG-LABEL: func.func public @main
// LINALG-NOT: stablehlo.
// LINALG: linalg.generic
// BUFFERIZED-LABEL: func.func public @main
// BUFFERIZED-SAME: memref<2x8xf32>, %{{.*}}: memref<2x8xf32>)
// BUFFERIZED-NOT: tensor<
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
