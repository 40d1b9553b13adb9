// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-gpu-library-matmuls{tf32=true})' --split-input-file | FileCheck %s

/// tf32=true (matmul_precision="tensorfloat32"): an f32 matmul at DEFAULT
/// precision computes in TF32, as XLA's do on a GPU.
// CHECK-LABEL: func.func private @xla_gemm_0
// CHECK-SAME: xla.gemm = "tf32"
func.func @default(%a: memref<8x4xf32>, %b: memref<4x8xf32>, %c: memref<8x8xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<8x8xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x8xf32>) outs(%c : memref<8x8xf32>)
  return
}

// -----

/// One marked HIGHEST (xla-mark-contraction-precision) stays full f32.
// CHECK-LABEL: func.func private @xla_gemm_0
// CHECK-SAME: xla.gemm = "f32"
func.func @highest(%a: memref<8x4xf32>, %b: memref<4x8xf32>, %c: memref<8x8xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<8x8xf32>)
  linalg.matmul {xla.precision = "highest"} ins(%a, %b : memref<8x4xf32>, memref<4x8xf32>) outs(%c : memref<8x8xf32>)
  return
}
