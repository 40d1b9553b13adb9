// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-gpu-duplicate-cheap-producers)' --split-input-file | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

/// x - mean read by the variance sum and by the normalization: a copy for each,
/// right before it, and the original gone.
// CHECK-LABEL: func.func @layernorm_centre
// CHECK: %[[D1:.*]] = linalg.generic {{.*}}ins(%arg0, %arg1
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.subf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}}ins(%[[D1]] :
// CHECK: %[[D2:.*]] = linalg.generic {{.*}}ins(%arg0, %arg1
// CHECK: linalg.generic {{.*}}ins(%[[D2]], %{{.*}} :
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @layernorm_centre(%x: tensor<4x8xf32>, %mean: tensor<4xf32>, %r: tensor<4xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %d = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %s = arith.subf %a, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %v = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%d : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %n = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%d, %r : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<4x8xf32>
  return %v, %n : tensor<4xf32>, tensor<4x8xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

/// A producer the return reads too stays one kernel: copies would save no launch.
// CHECK-LABEL: func.func @also_returned
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: linalg.generic
func.func @also_returned(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%d : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%d : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.negf %a : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %d, %n, %m : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

/// f64 division is a slow libdevice call: not recomputed per reader.
// CHECK-LABEL: func.func @f64_divide
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: linalg.generic
func.func @f64_divide(%x: tensor<8xf64>) -> (tensor<8xf64>, tensor<8xf64>) {
  %e = tensor.empty() : tensor<8xf64>
  %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf64>) outs(%e : tensor<8xf64>) {
  ^bb0(%a: f64, %o: f64):
    %s = arith.divf %a, %a : f64
    linalg.yield %s : f64
  } -> tensor<8xf64>
  %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%d : tensor<8xf64>) outs(%e : tensor<8xf64>) {
  ^bb0(%a: f64, %o: f64):
    %s = arith.mulf %a, %a : f64
    linalg.yield %s : f64
  } -> tensor<8xf64>
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%d : tensor<8xf64>) outs(%e : tensor<8xf64>) {
  ^bb0(%a: f64, %o: f64):
    %s = arith.negf %a : f64
    linalg.yield %s : f64
  } -> tensor<8xf64>
  return %n, %m : tensor<8xf64>, tensor<8xf64>
}
