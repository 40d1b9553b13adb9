// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-gpu-matmul-kernels,inline)' --split-input-file | FileCheck %s

/// C = A . B: 64x64 tiles per 16x16 block, A and B staged through shared memory,
/// the zero fill of C folded in (C is written, not read).
// CHECK-LABEL: func.func @matmul
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%{{.*}} : memref<16x64xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<16x64xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: math.fma
// CHECK: gpu.barrier
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.matmul
func.func @matmul(%a: memref<128x32xf32>, %b: memref<32x64xf32>, %c: memref<128x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<128x64xf32>)
  linalg.matmul ins(%a, %b : memref<128x32xf32>, memref<32x64xf32>) outs(%c : memref<128x64xf32>)
  return
}

// -----

/// Ragged sizes get bounds checks; integer matmuls stay for the generic route.
// CHECK-LABEL: func.func @ragged
// CHECK: gpu.launch
// CHECK: arith.cmpi ult
// CHECK: scf.if
// CHECK-LABEL: func.func @integer
// CHECK: linalg.matmul
func.func @ragged(%a: memref<70x45xf32>, %b: memref<45x130xf32>, %c: memref<70x130xf32>) {
  linalg.matmul ins(%a, %b : memref<70x45xf32>, memref<45x130xf32>) outs(%c : memref<70x130xf32>)
  return
}
func.func @integer(%a: memref<8x8xi32>, %b: memref<8x8xi32>, %c: memref<8x8xi32>) {
  linalg.matmul ins(%a, %b : memref<8x8xi32>, memref<8x8xi32>) outs(%c : memref<8x8xi32>)
  return
}

// -----

/// A transpose of B between C's fill and the matmul (attention's Q.K^T) does not
/// keep the fill from folding in; a write to C there (through a view) does.
// CHECK-LABEL: func.func @fill_before_transpose
// CHECK-NOT: linalg.fill
// CHECK: linalg.transpose
// CHECK: gpu.launch
// CHECK-LABEL: func.func @fill_then_write
// CHECK: linalg.fill
// CHECK: linalg.copy
// CHECK: gpu.launch
func.func @fill_before_transpose(%a: memref<64x32xf32>, %bt: memref<64x32xf32>, %b: memref<32x64xf32>,
                                 %c: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32>)
  linalg.transpose ins(%bt : memref<64x32xf32>) outs(%b : memref<32x64xf32>) permutation = [1, 0]
  linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x64xf32>) outs(%c : memref<64x64xf32>)
  return
}
func.func @fill_then_write(%a: memref<64x32xf32>, %b: memref<32x64xf32>, %c: memref<64x64xf32>,
                           %row: memref<1x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32>)
  %first = memref.subview %c[0, 0] [1, 64] [1, 1] : memref<64x64xf32> to memref<1x64xf32, strided<[64, 1]>>
  linalg.copy ins(%row : memref<1x64xf32>) outs(%first : memref<1x64xf32, strided<[64, 1]>>)
  linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

/// The bias + relu after the matmul, written into C (an output fusion): applied to
/// each output in the kernel, which stores the result; no second kernel. An epilogue
/// writing the buffer the matmul reads as A stays apart (other blocks still read it).
// CHECK-LABEL: func.func @bias_relu
// CHECK-COUNT-1: gpu.launch
// CHECK: math.fma
// CHECK: memref.load %{{.*}} : memref<64xf32>
// CHECK: arith.maximumf
// CHECK: memref.store
// CHECK-NOT: linalg.generic
#cmat = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @bias_relu(%a: memref<64x32xf32>, %b: memref<32x64xf32>, %bias: memref<64xf32>,
                     %c: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32>)
  linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x64xf32>) outs(%c : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#cmat, #bias, #cmat], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<64x64xf32>, memref<64xf32>) outs(%c : memref<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// CHECK-LABEL: func.func @writes_a
// CHECK: gpu.launch
// CHECK: linalg.generic
#cmat = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @writes_a(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %bias: memref<64xf32>,
                    %c: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#cmat, #bias, #cmat], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<64x64xf32>, memref<64xf32>) outs(%a : memref<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}

// -----

/// B made by a transpose of the last two dims for the matmul alone (attention's
/// K^T): the kernel reads K where it lies, the transpose and its buffer are gone.
/// Through a collapse of batch dims, the collapse is of K's (strided) view. A write
/// to K between the two keeps the transpose.
// CHECK-LABEL: func.func @scores
// CHECK-NOT: linalg.transpose
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch
// CHECK-LABEL: func.func @heads
// CHECK-NOT: linalg.transpose
// CHECK: memref.collapse_shape %{{.*}} {{\[}}[0, 1], [2], [3]] : memref<2x3x40x16xf32, strided<[3840, 1280, 32, 1], offset: 16>> into memref<6x40x16xf32, strided<[1280, 32, 1], offset: 16>>
// CHECK: gpu.launch
// CHECK-LABEL: func.func @written_between
// CHECK: linalg.transpose
// CHECK: linalg.copy
// CHECK: gpu.launch
func.func @scores(%q: memref<4x70x24xf32>, %k: memref<4x50x24xf32>, %c: memref<4x70x50xf32>) {
  %kt = memref.alloc() : memref<4x24x50xf32>
  linalg.transpose ins(%k : memref<4x50x24xf32>) outs(%kt : memref<4x24x50xf32>) permutation = [0, 2, 1]
  linalg.batch_matmul ins(%q, %kt : memref<4x70x24xf32>, memref<4x24x50xf32>) outs(%c : memref<4x70x50xf32>)
  return
}
func.func @heads(%q: memref<6x40x16xf32>, %x: memref<2x3x40x32xf32>, %c: memref<6x40x40xf32>) {
  %view = memref.subview %x[0, 0, 0, 16] [2, 3, 40, 16] [1, 1, 1, 1] : memref<2x3x40x32xf32> to memref<2x3x40x16xf32, strided<[3840, 1280, 32, 1], offset: 16>>
  %kt = memref.alloc() : memref<2x3x16x40xf32>
  linalg.transpose ins(%view : memref<2x3x40x16xf32, strided<[3840, 1280, 32, 1], offset: 16>>) outs(%kt : memref<2x3x16x40xf32>) permutation = [0, 1, 3, 2]
  %b = memref.collapse_shape %kt [[0, 1], [2], [3]] : memref<2x3x16x40xf32> into memref<6x16x40xf32>
  linalg.batch_matmul ins(%q, %b : memref<6x40x16xf32>, memref<6x16x40xf32>) outs(%c : memref<6x40x40xf32>)
  return
}
func.func @written_between(%a: memref<64x32xf32>, %k: memref<64x32xf32>, %c: memref<64x64xf32>,
                           %other: memref<64x32xf32>) {
  %kt = memref.alloc() : memref<32x64xf32>
  linalg.transpose ins(%k : memref<64x32xf32>) outs(%kt : memref<32x64xf32>) permutation = [1, 0]
  linalg.copy ins(%other : memref<64x32xf32>) outs(%k : memref<64x32xf32>)
  linalg.matmul ins(%a, %kt : memref<64x32xf32>, memref<32x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

/// K contiguous (identity layout): its collapse has the identity layout too, as
/// memref.collapse_shape's verifier requires; a strided<> layout equal to the
/// identity is a different type it rejects (attention, 8x16 heads).
// CHECK-LABEL: func.func @heads_contiguous
// CHECK-NOT: linalg.transpose
// CHECK: memref.collapse_shape %{{.*}} {{\[}}[0, 1], [2], [3]] : memref<1x2x32x8xf32> into memref<2x32x8xf32>{{$}}
// CHECK: gpu.launch
func.func @heads_contiguous(%q: memref<2x32x8xf32>, %k: memref<1x2x32x8xf32>, %c: memref<2x32x32xf32>) {
  %kt = memref.alloc() : memref<1x2x8x32xf32>
  linalg.transpose ins(%k : memref<1x2x32x8xf32>) outs(%kt : memref<1x2x8x32xf32>) permutation = [0, 1, 3, 2]
  %b = memref.collapse_shape %kt [[0, 1], [2], [3]] : memref<1x2x8x32xf32> into memref<2x8x32xf32>
  linalg.batch_matmul ins(%q, %b : memref<2x32x8xf32>, memref<2x8x32xf32>) outs(%c : memref<2x32x32xf32>)
  return
}

// -----

/// A matmul in a while's body (host control flow) is the same tiled kernel, its
/// fill folded in.
// CHECK-LABEL: func.func @in_a_loop
// CHECK: scf.while
// CHECK: do
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%{{.*}} : memref<16x64xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<16x64xf32, #gpu.address_space<workgroup>>)
// CHECK: math.fma
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.matmul
func.func @in_a_loop(%a: memref<64x64xf32>, %c: memref<64x64xf32>, %go: memref<i1>) -> memref<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %r = scf.while (%x = %a) : (memref<64x64xf32>) -> memref<64x64xf32> {
    %p = memref.load %go[] : memref<i1>
    scf.condition(%p) %x : memref<64x64xf32>
  } do {
  ^bb0(%x: memref<64x64xf32>):
    linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32>)
    linalg.matmul ins(%x, %x : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
    scf.yield %c : memref<64x64xf32>
  }
  return %r : memref<64x64xf32>
}
