// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-strided-copy-to-linalg)' --split-input-file | FileCheck %s
// RUN: xla-opt %s --pass-pipeline="builtin.module(xla-strided-copy-to-linalg{rows=false})" --split-input-file | FileCheck %s --check-prefix=LINALG

/// A copy out of a strided view whose rows are contiguous: loops over the
/// outer dims around vector copies of 64 bytes along each row (no memrefCopy
/// call later, and no scalar loop for LLVM to vectorize).
// CHECK-LABEL: func.func private @xla_copy_rows
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[V:.*]] = vector.transfer_read %{{.*}}[%[[I]], %[[J]]], %{{.*}} {in_bounds = [true]} : memref<4x32xf32, strided<[40, 1]>>, vector<16xf32>
// CHECK: vector.transfer_write %[[V]], %{{.*}}[%[[I]], %[[J]]] {in_bounds = [true]} : vector<16xf32>, memref<4x32xf32>
// CHECK-LABEL: func.func @strided
// CHECK-SAME: (%[[SRC:.*]]: memref<4x32xf32, strided<[40, 1]>>, %[[DST:.*]]: memref<4x32xf32>)
// CHECK-NOT: memref.copy
// CHECK: call @xla_copy_rows_{{[0-9]+}}(%[[SRC]], %[[DST]])
/// For CUDA (rows=false), a linalg.copy: its kernels map linalg ops to threads.
// LINALG-LABEL: func.func @strided
// LINALG-NOT: memref.copy
// LINALG: linalg.copy {{.*}}ins(%{{.*}} : memref<4x32xf32, strided<[40, 1]>>) outs(%{{.*}} : memref<4x32xf32>)
// LINALG-NOT: xla_copy_rows
func.func @strided(%src: memref<4x32xf32, strided<[40, 1]>>, %dst: memref<4x32xf32>) {
  memref.copy %src, %dst : memref<4x32xf32, strided<[40, 1]>> to memref<4x32xf32>
  return
}

// -----

/// A padded input's interior, rows of 20 bf16 (a 32-lane step does not fit:
/// one 20-lane copy per row), its middle dim dynamic.
// CHECK-LABEL: func.func private @xla_copy_rows
// CHECK: memref.dim %{{.*}}, %{{.*}} : memref<2x?x20xbf16
// CHECK: scf.for
// CHECK: scf.for
// CHECK-NOT: scf.for
// CHECK: vector.transfer_read {{.*}} vector<20xbf16>
// CHECK: vector.transfer_write
func.func @interior(%src: memref<2x?x20xbf16, strided<[?, 20, 1], offset: ?>>,
                    %dst: memref<2x?x20xbf16, strided<[500, 22, 1], offset: 23>>) {
  memref.copy %src, %dst : memref<2x?x20xbf16, strided<[?, 20, 1], offset: ?>> to memref<2x?x20xbf16, strided<[500, 22, 1], offset: 23>>
  return
}

// -----

/// Rows of 40 f32: two 16-lane steps, then an 8-lane tail.
// CHECK-LABEL: func.func private @xla_copy_rows
// CHECK: %[[FULL:.*]] = arith.constant 32 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[FULL]] step
// CHECK: vector<16xf32>
// CHECK: vector.transfer_read %{{.*}}[%{{.*}}, %[[FULL]]], {{.*}} vector<8xf32>
func.func @tail(%src: memref<3x40xf32, strided<[48, 1]>>, %dst: memref<3x40xf32>) {
  memref.copy %src, %dst : memref<3x40xf32, strided<[48, 1]>> to memref<3x40xf32>
  return
}

// -----

/// Rows of 20 f32: one 16-lane copy and a 4-lane tail, no loop along the row.
// CHECK-LABEL: func.func private @xla_copy_rows
// CHECK: scf.for
// CHECK-NOT: scf.for
// CHECK: vector.transfer_read {{.*}} vector<16xf32>
// CHECK: vector.transfer_read {{.*}} vector<4xf32>
func.func @one_step_and_tail(%src: memref<3x20xf32, strided<[24, 1]>>, %dst: memref<3x20xf32>) {
  memref.copy %src, %dst : memref<3x20xf32, strided<[24, 1]>> to memref<3x20xf32>
  return
}

// -----

/// Rows not contiguous (a transposing view): linalg.copy.
// CHECK-LABEL: func.func @transposed
// CHECK-NOT: memref.copy
// CHECK: linalg.copy {{.*}}ins(%{{.*}} : memref<4x4xf32, strided<[1, 4]>>) outs(%{{.*}} : memref<4x4xf32>)
func.func @transposed(%src: memref<4x4xf32, strided<[1, 4]>>, %dst: memref<4x4xf32>) {
  memref.copy %src, %dst : memref<4x4xf32, strided<[1, 4]>> to memref<4x4xf32>
  return
}

// -----

/// A contiguous copy stays a memref.copy: it lowers to one memcpy.
// CHECK-LABEL: func.func @contiguous
// CHECK: memref.copy
// CHECK-NOT: linalg.copy
func.func @contiguous(%src: memref<4x4xf32>, %dst: memref<4x4xf32>) {
  memref.copy %src, %dst : memref<4x4xf32> to memref<4x4xf32>
  return
}

// -----

/// Rows of 2 (complex pairs) contiguous with the dim before them on both
/// sides: merged into rows of 2048 first (a concatenate of c64 along its
/// rows), so each row is 64-byte vector copies, not one 2-lane copy per pair.
// CHECK-LABEL: func.func private @xla_copy_rows
// CHECK: %[[V:.*]] = vector.transfer_read {{.*}} : memref<512x2048xf32>, vector<16xf32>
// CHECK: vector.transfer_write %[[V]], {{.*}} : vector<16xf32>, memref<512x2048xf32, strided<[4096, 1], offset: 2048>>
// CHECK-LABEL: func.func @pairs
// CHECK: %[[S:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : memref<512x1024x2xf32> into memref<512x2048xf32>
// CHECK: %[[D:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : memref<512x1024x2xf32, strided<[4096, 2, 1], offset: 2048>> into memref<512x2048xf32, strided<[4096, 1], offset: 2048>>
// CHECK: call @xla_copy_rows_{{[0-9]+}}(%[[S]], %[[D]])
func.func @pairs(%src: memref<512x1024x2xf32>, %dst: memref<512x1024x2xf32, strided<[4096, 2, 1], offset: 2048>>) {
  memref.copy %src, %dst : memref<512x1024x2xf32> to memref<512x1024x2xf32, strided<[4096, 2, 1], offset: 2048>>
  return
}

// -----

/// Row-major strides but a dynamic number of rows and an offset (a row block
/// of a matmul chunk's own C buffer, 788 = 512 + 276 rows): not one memcpy
/// for finalize-memref-to-llvm, which would call memrefCopy; row copies here.
// CHECK-LABEL: func.func private @xla_copy_rows
// CHECK: vector.transfer_read {{.*}} vector<16xf32>
// CHECK-LABEL: func.func @dynamic_rows
// CHECK-NOT: memref.copy
// CHECK: call @xla_copy_rows_{{[0-9]+}}
func.func @dynamic_rows(%src: memref<?x32xf32, strided<[32, 1], offset: ?>>,
                        %dst: memref<?x32xf32, strided<[32, 1], offset: ?>>) {
  memref.copy %src, %dst : memref<?x32xf32, strided<[32, 1], offset: ?>> to memref<?x32xf32, strided<[32, 1], offset: ?>>
  return
}

// -----

/// A dynamic shape with the identity layout stays a copy (one memcpy).
// CHECK-LABEL: func.func @dynamic_identity
// CHECK: memref.copy
func.func @dynamic_identity(%src: memref<?x32xf32>, %dst: memref<?x32xf32>) {
  memref.copy %src, %dst : memref<?x32xf32> to memref<?x32xf32>
  return
}

// -----

/// Rows that step over elements (`x[:, 1::2]` of bools): each block loads the
/// contiguous span of 128 source bytes and shuffles every second one into 64;
/// the row's last block ends its load at the row's last element (loading
/// from one element early, keeping the odd lanes). No scalar copy loop.
// CHECK-LABEL: func.func private @xla_copy_rows
// CHECK: %[[ROWS:.*]] = memref.reinterpret_cast {{.*}} sizes: [%{{.*}}, 1023], strides: [%{{.*}}, 1] : memref<i1> to memref<?x1023xi1, strided<[?, 1], offset: ?>>
// CHECK: scf.for %[[I:.*]] = %{{.*}} to
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[AT:.*]] = arith.muli %[[J]]
// CHECK: %[[W:.*]] = vector.transfer_read %[[ROWS]][%[[I]], %[[AT]]], {{.*}} vector<128xi1>
// CHECK: %[[V:.*]] = vector.shuffle %[[W]], %[[W]] [0, 2, 4, {{.*}}, 126] : vector<128xi1>, vector<128xi1>
// CHECK: vector.transfer_write %[[V]], %{{.*}}[%[[I]], %[[J]]] {in_bounds = [true]} : vector<64xi1>, memref<512x512xi1>
// CHECK: }
// CHECK: %[[BACK:.*]] = arith.constant 895 : index
// CHECK: %[[T:.*]] = vector.transfer_read %[[ROWS]][%[[I]], %[[BACK]]], {{.*}} vector<128xi1>
// CHECK: vector.shuffle %[[T]], %[[T]] [1, 3, 5, {{.*}}, 127] : vector<128xi1>, vector<128xi1>
// CHECK-LABEL: func.func @every_second
// CHECK-NOT: linalg.copy
// CHECK: call @xla_copy_rows
func.func @every_second(%src: memref<512x512xi1, strided<[1024, 2], offset: 1>>, %dst: memref<512x512xi1>) {
  memref.copy %src, %dst : memref<512x512xi1, strided<[1024, 2], offset: 1>> to memref<512x512xi1>
  return
}

// -----

/// Rows of 6 f32 stepping by 3: 4-lane blocks (16 lanes would not fit twice),
/// one from the row's start and the last ending at its last element (the
/// two overlap). Steps past 4 (or rows of 4 or fewer): linalg.copy as before.
// CHECK-LABEL: func.func @step_five
// CHECK: linalg.copy
// CHECK-LABEL: func.func private @xla_copy_rows
// CHECK: vector.transfer_read {{.*}} vector<12xf32>
// CHECK: vector.shuffle {{.*}} [0, 3, 6, 9] : vector<12xf32>, vector<12xf32>
// CHECK: vector.transfer_read {{.*}} vector<12xf32>
// CHECK: vector.shuffle {{.*}} [2, 5, 8, 11] : vector<12xf32>, vector<12xf32>
// CHECK-LABEL: func.func @step_three
// CHECK: call @xla_copy_rows
func.func @step_five(%src: memref<2x6xf32, strided<[40, 5]>>, %dst: memref<2x6xf32>) {
  memref.copy %src, %dst : memref<2x6xf32, strided<[40, 5]>> to memref<2x6xf32>
  return
}
func.func @step_three(%src: memref<2x6xf32, strided<[20, 3]>>, %dst: memref<2x6xf32>) {
  memref.copy %src, %dst : memref<2x6xf32, strided<[20, 3]>> to memref<2x6xf32>
  return
}
