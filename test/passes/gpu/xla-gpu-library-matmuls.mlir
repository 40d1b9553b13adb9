// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-gpu-library-matmuls)' --split-input-file | FileCheck %s

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>

/// B's transpose is read where it lies (the library's op attribute), the zero fill
/// is beta = 0, bias + relu is the library's epilogue: one call, nothing else.
// CHECK-LABEL: func.func private @xla_gemm_0
// CHECK-SAME: (memref<33x47xf32>, memref<21x47xf32>, memref<33x21xf32>, memref<21xf32>)
// CHECK-SAME: xla.beta = 0.000000e+00 : f64, xla.epilogue = "bias_relu", xla.gemm = "f32", xla.transposed = array<i64: 0, 1>
// CHECK-LABEL: func.func @fused
// CHECK-SAME: (%[[A:.*]]: memref<33x47xf32>, %[[BT:.*]]: memref<21x47xf32>, %[[BIAS:.*]]: memref<21xf32>, %[[C:.*]]: memref<33x21xf32>)
// CHECK-NEXT: arith.constant
// CHECK-NEXT: call @xla_gemm_0(%[[A]], %[[BT]], %[[C]], %[[BIAS]])
// CHECK-NEXT: return
func.func @fused(%a: memref<33x47xf32>, %bt: memref<21x47xf32>, %bias: memref<21xf32>, %c: memref<33x21xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %t = memref.alloc() : memref<47x21xf32>
  linalg.transpose ins(%bt : memref<21x47xf32>) outs(%t : memref<47x21xf32>) permutation = [1, 0]
  linalg.fill ins(%zero : f32) outs(%c : memref<33x21xf32>)
  linalg.matmul {xla.precision = "highest"} ins(%a, %t : memref<33x47xf32>, memref<47x21xf32>) outs(%c : memref<33x21xf32>)
  linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%c, %bias : memref<33x21xf32>, memref<21xf32>) outs(%c : memref<33x21xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#map = affine_map<(d0, d1) -> (d0, d1)>

/// f32 at DEFAULT precision: full f32 (tf32=false, the default). A fill of 1 stays (beta = 1:
/// C accumulates), and tanh, which the library lacks, stays a generic after the call.
// CHECK-LABEL: func.func private @xla_gemm_0
// CHECK-SAME: xla.beta = 1.000000e+00 : f64, xla.epilogue = "", xla.gemm = "f32", xla.transposed = array<i64: 0, 0>
// CHECK-LABEL: func.func @unfused
// CHECK: linalg.fill
// CHECK-NEXT: call @xla_gemm_0
// CHECK-NEXT: linalg.generic
// CHECK: math.tanh
func.func @unfused(%a: memref<8x4xf32>, %b: memref<4x8xf32>, %c: memref<8x8xf32>) {
  %one = arith.constant 1.000000e+00 : f32
  linalg.fill ins(%one : f32) outs(%c : memref<8x8xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x8xf32>) outs(%c : memref<8x8xf32>)
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%c : memref<8x8xf32>) outs(%c : memref<8x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = math.tanh %x : f32
    linalg.yield %r : f32
  }
  return
}

// -----

/// bf16 operands into an f32 sum (xla-widen-contractions{keep-narrow}); batched,
/// A a strided view of a bigger buffer (a head of a projection).
// CHECK-LABEL: func.func private @xla_gemm_0
// CHECK-SAME: (memref<2x16x8xbf16, strided<[384, 24, 1], offset: 8>>, memref<2x8x16xbf16>, memref<2x16x16xf32>)
// CHECK-SAME: xla.gemm = "f32"
// CHECK-LABEL: func.func @narrow
// CHECK-NOT: linalg.batch_matmul
func.func @narrow(%x: memref<2x16x24xbf16>, %b: memref<2x8x16xbf16>, %c: memref<2x16x16xf32>) {
  %a = memref.subview %x[0, 0, 8] [2, 16, 8] [1, 1, 1] : memref<2x16x24xbf16> to memref<2x16x8xbf16, strided<[384, 24, 1], offset: 8>>
  linalg.batch_matmul ins(%a, %b : memref<2x16x8xbf16, strided<[384, 24, 1], offset: 8>>, memref<2x8x16xbf16>) outs(%c : memref<2x16x16xf32>)
  return
}

// -----

/// What the library does not take stays: integers, a bf16 sum into bf16.
// CHECK-LABEL: func.func @kept
// CHECK: linalg.matmul
// CHECK: linalg.matmul
// CHECK-NOT: call
func.func @kept(%a: memref<8x4xi32>, %b: memref<4x8xi32>, %c: memref<8x8xi32>,
                %d: memref<8x4xbf16>, %e: memref<4x8xbf16>, %f: memref<8x8xbf16>) {
  linalg.matmul ins(%a, %b : memref<8x4xi32>, memref<4x8xi32>) outs(%c : memref<8x8xi32>)
  linalg.matmul ins(%d, %e : memref<8x4xbf16>, memref<4x8xbf16>) outs(%f : memref<8x8xbf16>)
  return
}
