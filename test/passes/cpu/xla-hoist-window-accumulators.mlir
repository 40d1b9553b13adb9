// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-hoist-window-accumulators)' --split-input-file | FileCheck %s

/// A depthwise convolution's 4 x 16 tile (the bufferized xla_pooling_nhwc
/// schedule): each tap read the tile from the output and wrote it back through
/// a rank-reduced subview. Both address the same elements, so the tile is read
/// once before the tagged tap loops, carried as their iter_args and written
/// once after them; the FMAs stay as they were.
// CHECK-LABEL: func.func @depthwise_tile
// CHECK: scf.for %[[C:.*]] = %c0 to %c144 step %c16
// CHECK-NEXT: %[[T0:.*]] = vector.transfer_read %[[OUT:.*]][%c0, %{{.*}}, %{{.*}}, %[[C]]]
// CHECK-NEXT: %[[T:.*]] = scf.for %{{.*}} = %c0 to %c3 step %c1 iter_args(%[[A:.*]] = %[[T0]]) -> (vector<4x16xf32>)
// CHECK-NEXT: %[[U:.*]] = scf.for %{{.*}} = %c0 to %c3 step %c1 iter_args(%[[B:.*]] = %[[A]]) -> (vector<4x16xf32>)
// CHECK-NOT: memref.subview
// CHECK: %[[F:.*]] = vector.fma %{{.*}}, %{{.*}}, %[[B]] : vector<4x16xf32>
// CHECK-NEXT: scf.yield %[[F]]
// CHECK: scf.yield %[[U]]
// CHECK-NEXT: } {xla.window_taps}
// CHECK-NEXT: vector.transfer_write %[[T]], %[[OUT]][%c0, %{{.*}}, %{{.*}}, %[[C]]] {in_bounds = [true, true]}
#map = affine_map<(d0, d1) -> (d0 + d1)>
func.func @depthwise_tile(%in: memref<1x10x10x144xf32>, %w: memref<3x3x144xf32>, %out: memref<1x8x8x144xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c144 = arith.constant 144 : index
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c8 step %c4 {
      scf.for %c = %c0 to %c144 step %c16 {
        scf.for %kh = %c0 to %c3 step %c1 {
          scf.for %kw = %c0 to %c3 step %c1 {
            %sv = memref.subview %out[0, %i, %j, %c] [1, 1, 4, 16] [1, 1, 1, 1] : memref<1x8x8x144xf32> to memref<1x1x4x16xf32, strided<[9216, 1152, 144, 1], offset: ?>>
            %sv2 = memref.subview %sv[0, 0, 0, 0] [1, 1, 4, 16] [1, 1, 1, 1] : memref<1x1x4x16xf32, strided<[9216, 1152, 144, 1], offset: ?>> to memref<1x4x16xf32, strided<[9216, 144, 1], offset: ?>>
            %h = affine.apply #map(%i, %kh)
            %x = affine.apply #map(%j, %kw)
            %v = vector.transfer_read %in[%c0, %h, %x, %c], %cst {in_bounds = [true, true]} : memref<1x10x10x144xf32>, vector<4x16xf32>
            %wv = vector.transfer_read %w[%kh, %kw, %c], %cst {in_bounds = [true]} : memref<3x3x144xf32>, vector<16xf32>
            %acc = vector.transfer_read %out[%c0, %i, %j, %c], %cst {in_bounds = [true, true]} : memref<1x8x8x144xf32>, vector<4x16xf32>
            %wb = vector.broadcast %wv : vector<16xf32> to vector<4x16xf32>
            %f = vector.fma %v, %wb, %acc : vector<4x16xf32>
            vector.transfer_write %f, %sv2[%c0, %c0, %c0] {in_bounds = [true, true]} : vector<4x16xf32>, memref<1x4x16xf32, strided<[9216, 144, 1], offset: ?>>
          }
        } {xla.window_taps}
      }
    }
  }
  return
}

// -----

/// A window of one row (a filter bank's lanes): only the kw loop is tagged.
// CHECK-LABEL: func.func @one_tap_loop
// CHECK: %[[T0:.*]] = vector.transfer_read %arg1[%{{.*}}, %c0]
// CHECK-NEXT: %[[T:.*]] = scf.for %{{.*}} = %c0 to %c8 step %c1 iter_args(%[[A:.*]] = %[[T0]]) -> (vector<16xf32>)
// CHECK: arith.maximumf %{{.*}}, %[[A]]
// CHECK: } {xla.window_taps}
// CHECK-NEXT: vector.transfer_write %[[T]], %arg1[%{{.*}}, %c0]
func.func @one_tap_loop(%in: memref<40x16xf32>, %out: memref<32x16xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  scf.for %i = %c0 to %c32 step %c1 {
    scf.for %k = %c0 to %c8 step %c1 {
      %r = arith.addi %i, %k : index
      %v = vector.transfer_read %in[%r, %c0], %cst {in_bounds = [true]} : memref<40x16xf32>, vector<16xf32>
      %acc = vector.transfer_read %out[%i, %c0], %cst {in_bounds = [true]} : memref<32x16xf32>, vector<16xf32>
      %m = arith.maximumf %v, %acc : vector<16xf32>
      vector.transfer_write %m, %out[%i, %c0] {in_bounds = [true]} : vector<16xf32>, memref<32x16xf32>
    } {xla.window_taps}
  }
  return
}

// -----

/// Left alone: the tile's write is of other elements than its read (one row
/// further), another op reads the output buffer in the loops, or the loops are
/// not tagged.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: iter_args
// CHECK: return
func.func @left_alone(%in: memref<40x16xf32>, %out: memref<33x16xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  scf.for %i = %c0 to %c32 step %c1 {
    scf.for %k = %c0 to %c8 step %c1 {
      %i1 = arith.addi %i, %c1 : index
      %acc = vector.transfer_read %out[%i, %c0], %cst {in_bounds = [true]} : memref<33x16xf32>, vector<16xf32>
      vector.transfer_write %acc, %out[%i1, %c0] {in_bounds = [true]} : vector<16xf32>, memref<33x16xf32>
    } {xla.window_taps}
    scf.for %k = %c0 to %c8 step %c1 {
      %acc = vector.transfer_read %out[%i, %c0], %cst {in_bounds = [true]} : memref<33x16xf32>, vector<16xf32>
      %other = vector.transfer_read %out[%k, %c0], %cst {in_bounds = [true]} : memref<33x16xf32>, vector<16xf32>
      %m = arith.maximumf %other, %acc : vector<16xf32>
      vector.transfer_write %m, %out[%i, %c0] {in_bounds = [true]} : vector<16xf32>, memref<33x16xf32>
    } {xla.window_taps}
    scf.for %k = %c0 to %c8 step %c1 {
      %r = arith.addi %i, %k : index
      %v = vector.transfer_read %in[%r, %c0], %cst {in_bounds = [true]} : memref<40x16xf32>, vector<16xf32>
      %acc = vector.transfer_read %out[%i, %c0], %cst {in_bounds = [true]} : memref<33x16xf32>, vector<16xf32>
      %m = arith.maximumf %v, %acc : vector<16xf32>
      vector.transfer_write %m, %out[%i, %c0] {in_bounds = [true]} : vector<16xf32>, memref<33x16xf32>
    }
  }
  return
}
