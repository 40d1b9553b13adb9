// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-lower-to-linalg,xla-bufferize{threads=2 vector-bytes=64},xla-lower-to-llvm)' | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-lower-to-linalg,xla-bufferize{threads=1 vector-bytes=64},xla-lower-to-llvm)' | FileCheck %s --check-prefix=ONE

/// A 256x256x256 matmul runs as an OpenMP parallel loop whose body is FMAs
/// on two zmm registers at a time; threads=1 (XLAC_NUM_THREADS=1) compiles it without the parallel region.
/// The loop's one OpenMP region is the module's shared dispatcher
/// (xla-shared-parallel-dispatch): the kernel hands it its body, a chunk function.
// CHECK: llvm.func internal @[[$FOR:xla_parallel_for_[0-9]+]](
// CHECK: omp.parallel
// CHECK: omp.wsloop
// CHECK-LABEL: llvm.func @main
// CHECK: llvm.func @xla_kernel_0(
// CHECK: llvm.call @[[$FOR]](
// CHECK: llvm.func internal @xla_kernel_0_chunk_0(
// CHECK: llvm.intr.fmuladd{{.*}}vector<32xf32>
// ONE-LABEL: llvm.func @main
// ONE-NOT: omp.parallel
// ONE: llvm.intr.fmuladd{{.*}}vector<32xf32>
func.func @main(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}
