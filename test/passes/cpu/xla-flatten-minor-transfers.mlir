// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-flatten-minor-transfers)' | FileCheck %s

/// A c128 column broadcast's loop, tagged by xla_elementwise_minor_3d: its
/// 4 x 2 stores of rows of pairs become one store of 8 lanes, and the tag goes.
// CHECK-LABEL: func.func @broadcast_pairs
// CHECK: memref.collapse_shape
// CHECK: vector.shape_cast %{{.*}} : vector<4x2xf64> to vector<8xf64>
// CHECK: vector.transfer_write %{{.*}} : vector<8xf64>, memref<64x2048xf64
// CHECK-NOT: xla.flatten_transfers
func.func @broadcast_pairs(%v: memref<64x2xf64>, %out: memref<64x1024x2xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %pad = arith.constant 0.0 : f64
  scf.for %i = %c0 to %c64 step %c1 {
    scf.for %j = %c0 to %c1024 step %c4 {
      %x = vector.transfer_read %v[%i, %c0], %pad {in_bounds = [true, true],
          permutation_map = affine_map<(d0, d1) -> (0, d1)>} : memref<64x2xf64>, vector<4x2xf64>
      vector.transfer_write %x, %out[%i, %j, %c0] {in_bounds = [true, true]} : vector<4x2xf64>, memref<64x1024x2xf64>
    } {xla.flatten_transfers}
  }
  return
}

/// A complex row sum's reduction loop, tagged by xla_reduce_kept_minor_3d:
/// its 2 x 16 read of 16 pairs (transposed) becomes one contiguous 32-lane
/// load, transposed in registers, and the tag goes.
// CHECK-LABEL: func.func @transposed_pairs
// CHECK: memref.collapse_shape
// CHECK: vector.transfer_read %{{.*}} : memref<64x2048xf64>, vector<32xf64>
// CHECK: vector.shape_cast %{{.*}} : vector<32xf64> to vector<16x2xf64>
// CHECK: vector.transpose %{{.*}}, [1, 0] : vector<16x2xf64> to vector<2x16xf64>
// CHECK-NOT: xla.flatten_transposed_transfers
func.func @transposed_pairs(%in: memref<64x1024x2xf64>, %i: index) -> vector<2x16xf64> {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c1024 = arith.constant 1024 : index
  %pad = arith.constant 0.0 : f64
  %zeros = arith.constant dense<0.0> : vector<2x16xf64>
  %sum = scf.for %k = %c0 to %c1024 step %c16 iter_args(%acc = %zeros) -> (vector<2x16xf64>) {
    %x = vector.transfer_read %in[%i, %k, %c0], %pad {in_bounds = [true, true],
        permutation_map = affine_map<(d0, d1, d2) -> (d2, d1)>} : memref<64x1024x2xf64>, vector<2x16xf64>
    %s = arith.addf %acc, %x : vector<2x16xf64>
    scf.yield %s : vector<2x16xf64>
  } {xla.flatten_transposed_transfers}
  return %sum : vector<2x16xf64>
}

/// An untagged loop (any other kernel's) keeps its 2-D transfers.
// CHECK-LABEL: func.func @untagged
// CHECK-NOT: vector.shape_cast
// CHECK: vector.transfer_write %{{.*}} : vector<4x2xf64>, memref<64x1024x2xf64>
func.func @untagged(%v: memref<64x2xf64>, %out: memref<64x1024x2xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %pad = arith.constant 0.0 : f64
  scf.for %i = %c0 to %c64 step %c1 {
    scf.for %j = %c0 to %c1024 step %c4 {
      %x = vector.transfer_read %v[%i, %c0], %pad {in_bounds = [true, true],
          permutation_map = affine_map<(d0, d1) -> (0, d1)>} : memref<64x2xf64>, vector<4x2xf64>
      vector.transfer_write %x, %out[%i, %j, %c0] {in_bounds = [true, true]} : vector<4x2xf64>, memref<64x1024x2xf64>
    }
  }
  return
}

/// A column sum's tile of a transposed operand (`jnp.einsum("ii->i")`'s
/// masked diagonal): its masked 64 x 1 read, transposed from a row, becomes a
/// 1-D read of the row and the ops on it 1-D ones, in the whole kernel, and
/// the kernel's tag goes.
// CHECK-LABEL: func.func @masked_diagonal
// CHECK-NOT: vector<64x1x
// CHECK-NOT: vector.transpose
// CHECK: vector.transfer_read %{{.*}}, %{{.*}}, %{{.*}} {in_bounds = [true]} : memref<1x?xf32, strided<[2000, 1], offset: ?>>, vector<64xf32>
// CHECK: arith.select %{{.*}} : vector<64xi1>, vector<64xf32>
// CHECK-NOT: vector<64x1x
// CHECK-NOT: xla.drop_unit_transfer_dims
// CHECK: return
func.func @masked_diagonal(%a: memref<2000x256xf32, strided<[2000, 1], offset: ?>>,
                           %acc: memref<256xf32, strided<[1], offset: ?>>, %j: index, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c2000 = arith.constant 2000 : index
  %pad = ub.poison : f32
  %zeros = arith.constant dense<0.0> : vector<64x1xf32>
  %m = vector.create_mask %c1, %n : vector<1x64xi1>
  %step = vector.step : vector<64xindex>
  %lanes = vector.shape_cast %step : vector<64xindex> to vector<64x1xindex>
  %lanes32 = arith.index_cast %lanes : vector<64x1xindex> to vector<64x1xi32>
  scf.for %i = %c0 to %c2000 step %c1 {
    %row = memref.subview %a[%i, %j] [1, %n] [1, 1]
        : memref<2000x256xf32, strided<[2000, 1], offset: ?>> to memref<1x?xf32, strided<[2000, 1], offset: ?>>
    %x = vector.transfer_read %row[%c0, %c0], %pad, %m {in_bounds = [true, true],
        permutation_map = affine_map<(d0, d1) -> (d1, d0)>} : memref<1x?xf32, strided<[2000, 1], offset: ?>>, vector<64x1xf32>
    %i32 = arith.index_cast %i : index to i32
    %iv = vector.broadcast %i32 : i32 to vector<64x1xi32>
    %on = arith.cmpi eq, %iv, %lanes32 : vector<64x1xi32>
    %d = arith.select %on, %x, %zeros : vector<64x1xi1>, vector<64x1xf32>
    %flat = vector.shape_cast %d : vector<64x1xf32> to vector<64xf32>
    vector.transfer_write %flat, %acc[%j] {in_bounds = [true]} : vector<64xf32>, memref<256xf32, strided<[1], offset: ?>>
  }
  return
}

/// Reads of every 2nd element (an NCHW max-pool gradient's window position,
/// broadcast along the output's [w, 2] rows; x[..., 1::2]): one contiguous
/// load of the 16 elements the 8 span, masked past the last one read (lane 14
/// of the 2-D read, 15 of the 1-D one at offset 1: 1 + 7 * 2 = 15 elements),
/// and a shuffle of every 2nd lane; a stride of 8 keeps its transfer.
// CHECK-LABEL: func.func @strided_minor
// CHECK: %[[BASE:.*]], %{{.*}}, %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %arg0
// CHECK: %[[FLAT:.*]] = memref.reinterpret_cast %[[BASE]] to offset: [%{{.*}}], sizes: [16], strides: [1]
// CHECK: %[[MASK:.*]] = vector.constant_mask [15] : vector<16xi1>
// CHECK: %[[V:.*]] = vector.maskedload %[[FLAT]][%{{.*}}], %[[MASK]]
// CHECK: %[[S:.*]] = vector.shuffle %[[V]], %[[V]] [0, 0, 2, 2, 4, 4, 6, 6, 8, 8, 10, 10, 12, 12, 14, 14]
// CHECK: vector.transfer_write %[[S]], %{{.*}} : vector<16xf32>, memref<16x64xf32>
// CHECK: memref.extract_strided_metadata %arg1
// CHECK: vector.constant_mask [15] : vector<16xi1>
// CHECK: vector.maskedload
// CHECK: vector.shuffle %{{.*}} [0, 2, 4, 6, 8, 10, 12, 14] : vector<16xf32>, vector<16xf32>
// CHECK: vector.transfer_read %arg2
func.func @strided_minor(%x: memref<16x32xf32, strided<[128, 2], offset: 1>>, %y: memref<16x8xf32, strided<[128, 2], offset: 1>>,
                         %z: memref<16x8xf32, strided<[128, 8]>>, %out: memref<16x32x2xf32>, %o1: memref<16x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %pad = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c16 step %c1 {
    scf.for %j = %c0 to %c32 step %c8 {
      %v = vector.transfer_read %x[%i, %j], %pad {in_bounds = [true, true],
          permutation_map = affine_map<(d0, d1) -> (d1, 0)>} : memref<16x32xf32, strided<[128, 2], offset: 1>>, vector<8x2xf32>
      vector.transfer_write %v, %out[%i, %j, %c0] {in_bounds = [true, true]} : vector<8x2xf32>, memref<16x32x2xf32>
    } {xla.flatten_transfers}
    %a = vector.transfer_read %y[%i, %c0], %pad {in_bounds = [true]} : memref<16x8xf32, strided<[128, 2], offset: 1>>, vector<8xf32>
    %b = vector.transfer_read %z[%i, %c0], %pad {in_bounds = [true]} : memref<16x8xf32, strided<[128, 8]>>, vector<8xf32>
    %s = arith.addf %a, %b : vector<8xf32>
    vector.transfer_write %s, %o1[%i, %c0] {in_bounds = [true]} : vector<8xf32>, memref<16x8xf32>
  }
  return
}
