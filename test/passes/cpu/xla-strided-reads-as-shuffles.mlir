// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-strided-reads-as-shuffles)' | FileCheck %s

/// The imaginary part of c64 pairs, 64 lanes (AVX-512's 4 x 16): one read of
/// 128 contiguous lanes from the first element, masked past the last, and a
/// shuffle of every second lane; the 32-lane read and the contiguous
/// one stay as they are.
// CHECK-LABEL: func.func @imaginary_parts
// CHECK: %[[BASE:.*]], %[[OFFSET:.*]], %{{.*}}, %{{.*}} = memref.extract_strided_metadata %arg0
// CHECK: %[[FLAT:.*]] = memref.reinterpret_cast %[[BASE]] to offset: [%[[OFFSET]]], sizes: [2047], strides: [1]
// CHECK: %[[START:.*]] = arith.muli %{{.*}}, %c2
// CHECK: %[[WIDE:.*]] = vector.transfer_read %[[FLAT]][%[[START]]], %{{.*}} : memref<2047xf32, strided<[1], offset: ?>>, vector<128xf32>
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
