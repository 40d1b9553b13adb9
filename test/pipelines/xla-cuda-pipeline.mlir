// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-cuda-pipeline{entry=main})' | FileCheck %s
// RUN: xla-opt %s --target=cuda --xla-stage=gpu | FileCheck %s
// RUN: xla-opt %s --target=cuda --xla-stage=stablehlo | FileCheck %s --check-prefix=STABLEHLO
// RUN: xla-opt %s --target=cuda --xla-stage=gpu-loops | FileCheck %s --check-prefix=LOOPS
// RUN: xla-opt %s --target=cuda --xla-stage=kernels | FileCheck %s --check-prefix=KERNELS
// RUN: xla-opt %s --target=cuda --xla-stage=ptx | FileCheck %s --check-prefix=PTX

/// The whole CUDA pipeline and each of its named stages, on an add + exp:
/// up to the gpu.modules in NVVM, and the PTX made from them.
// CHECK-LABEL: func.func public @main
// CHECK: gpu.launch_func @main_kernel::@main_kernel
// CHECK: gpu.module @main_kernel
// CHECK: llvm.func @main_kernel
// CHECK-SAME: gpu.kernel
// STABLEHLO-LABEL: func.func public @main
// STABLEHLO: stablehlo.exponential
// LOOPS-LABEL: func.func public @main
// LOOPS: gpu.launch blocks
// KERNELS: gpu.module @main_kernel
// KERNELS: gpu.func @main_kernel
// KERNELS-SAME: kernel attributes
// PTX: .target sm_90
// PTX: .visible .entry main_kernel(
func.func @main(%a: tensor<100x77xf32>, %b: tensor<100x77xf32>) -> tensor<100x77xf32> {
  %0 = stablehlo.add %a, %b : tensor<100x77xf32>
  %1 = stablehlo.exponential %0 : tensor<100x77xf32>
  return %1 : tensor<100x77xf32>
}
