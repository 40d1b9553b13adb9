// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-apply-schedules{threads=2 vector-bytes=64})' --split-input-file | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-apply-schedules{threads=2 vector-bytes=32})' --split-input-file | FileCheck %s --check-prefix=AVX2

/// An elementwise kernel's lanes are those of the arrays it streams: an i64
/// read once for every iteration (a rank-0 input, map `() `) sets none, so
/// the f32 values take whole registers (16 lanes at AVX-512, 8 at AVX2),
/// not one register of i64 (8, 4): jax's betainc body and its trip counter.
// CHECK-LABEL: func.func @uniform_i64
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c16
// CHECK: vector.transfer_read {{.*}} : tensor<i64>, vector<16xi64>
// CHECK: arith.sitofp {{.*}} : vector<16xi64> to vector<16xf32>
// CHECK: arith.mulf {{.*}} : vector<16xf32>
// AVX2-LABEL: func.func @uniform_i64
// AVX2: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c8
// AVX2: arith.sitofp {{.*}} : vector<8xi64> to vector<8xf32>
// AVX2: arith.mulf {{.*}} : vector<8xf32>
func.func @uniform_i64(%n: tensor<i64>, %x: tensor<64x160xf32>) -> tensor<64x160xf32> {
  %empty = tensor.empty() : tensor<64x160xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%n, %x : tensor<i64>, tensor<64x160xf32>) outs(%empty : tensor<64x160xf32>) {
  ^bb0(%a: i64, %b: f32, %o: f32):
    %f = arith.sitofp %a : i64 to f32
    %m = arith.mulf %b, %f : f32
    linalg.yield %m : f32
  } -> tensor<64x160xf32>
  return %r : tensor<64x160xf32>
}

// -----

/// An i64 array read element by element still sets the lanes: 8 at AVX-512, 4 at AVX2.
// CHECK-LABEL: func.func @streamed_i64
// CHECK: arith.sitofp {{.*}} : vector<8xi64> to vector<8xf32>
// AVX2-LABEL: func.func @streamed_i64
// AVX2: arith.sitofp {{.*}} : vector<4xi64> to vector<4xf32>
func.func @streamed_i64(%n: tensor<64x160xi64>, %x: tensor<64x160xf32>) -> tensor<64x160xf32> {
  %empty = tensor.empty() : tensor<64x160xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%n, %x : tensor<64x160xi64>, tensor<64x160xf32>) outs(%empty : tensor<64x160xf32>) {
  ^bb0(%a: i64, %b: f32, %o: f32):
    %f = arith.sitofp %a : i64 to f32
    %m = arith.mulf %b, %f : f32
    linalg.yield %m : f32
  } -> tensor<64x160xf32>
  return %r : tensor<64x160xf32>
}
