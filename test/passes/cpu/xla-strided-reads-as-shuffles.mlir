// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-strided-reads-as-shuffles)' | FileCheck %s

/// The imaginary part of c64 pairs, 64 lanes (AVX-512's 4 x 16): one load of
/// 128 contiguous lanes from the first element read, masked past the last one
/// read (127 lanes: nothing beyond the part's own elements is touched), and a
/// shuffle of every second lane (strided_minor_reads.contiguous_read); the
/// 32-lane read and the contiguous one stay as they are.
// CHECK-LABEL: func.func @imaginary_parts
// CHECK: %[[BASE:.*]], %[[OFFSET:.*]], %{{.*}}, %[[STRIDE:.*]] = memref.extract_strided_metadata %arg0
// CHECK: %[[STEP:.*]] = arith.muli %{{.*}}, %[[STRIDE]]
// CHECK: %[[START:.*]] = arith.addi %[[OFFSET]], %[[STEP]]
// CHECK: %[[FLAT:.*]] = memref.reinterpret_cast %[[BASE]] to offset: [%[[START]]], sizes: [128], strides: [1]
// CHECK: %[[MASK:.*]] = vector.constant_mask [127] : vector<128xi1>
// CHECK: %[[WIDE:.*]] = vector.maskedload %[[FLAT]][%{{.*}}], %[[MASK]], %{{.*}} : memref<128xf32, strided<[1], offset: ?>>, vector<128xi1>, vector<128xf32> into vector<128xf32>
// CHECK: vector.shuffle %[[WIDE]], %[[WIDE]] [0, 2, 4, {{.*}}, 124, 126] {xla.lane_stride} : vector<128xf32>, vector<128xf32>
// CHECK: vector.transfer_read %arg0{{.*}} : memref<1024xf32, strided<[2], offset: 1>>, vector<32xf32>
// CHECK: vector.transfer_read %arg1{{.*}} : memref<1024xf32>, vector<64xf32>
func.func @imaginary_parts(%im: memref<1024xf32, strided<[2], offset: 1>>, %x: memref<1024xf32>,
                           %out: memref<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %pad = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c1024 step %c64 {
    %a = vector.transfer_read %im[%i], %pad {in_bounds = [true]} : memref<1024xf32, strided<[2], offset: 1>>, vector<64xf32>
    %n = vector.transfer_read %im[%i], %pad {in_bounds = [true]} : memref<1024xf32, strided<[2], offset: 1>>, vector<32xf32>
    %b = vector.transfer_read %x[%i], %pad {in_bounds = [true]} : memref<1024xf32>, vector<64xf32>
    %s = arith.addf %a, %b : vector<64xf32>
    vector.transfer_write %s, %out[%i] {in_bounds = [true]} : vector<64xf32>, memref<1024xf32>
    vector.transfer_write %n, %out[%i] {in_bounds = [true]} : vector<32xf32>, memref<1024xf32>
  }
  return
}
