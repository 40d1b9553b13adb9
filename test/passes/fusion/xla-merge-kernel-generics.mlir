// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-merge-kernel-generics)' | FileCheck %s

/// A kernel function's elementwise generics over one space become one generic
/// yielding what the function returns; a value two of them read (%a) is
/// computed once in it, inputs read twice are read once.
// CHECK-LABEL: func.func private @xla_fusion_0
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[Y:.*]]: tensor<4x8xf32>, %[[S:.*]]: tensor<f32>)
// CHECK: %[[M:.*]]:2 = linalg.generic
// CHECK-SAME: ins(%[[X]], %[[S]], %[[Y]] : tensor<4x8xf32>, tensor<f32>, tensor<4x8xf32>)
// CHECK-NEXT: ^bb0(%[[XI:.*]]: f32, %[[SI:.*]]: f32, %[[YI:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[A:.*]] = arith.mulf %[[XI]], %[[SI]]
// CHECK-NEXT: %[[B:.*]] = arith.addf %[[A]], %[[YI]]
// CHECK-NEXT: %[[C:.*]] = arith.subf %[[A]], %[[YI]]
// CHECK-NEXT: linalg.yield %[[B]], %[[C]]
// CHECK-NOT: linalg.generic
// CHECK: return %[[M]]#0, %[[M]]#1
#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
#t = affine_map<(d0, d1) -> (d1, d0)>
func.func @main(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %s: tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %r:2 = call @xla_fusion_0(%x, %y, %s) {no_inline, xla.fusion_call} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %t:2 = call @not_a_kernel(%x, %y) : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %z = tensor.empty() : tensor<8x8xf32>
  %u = call @transposed(%z) {no_inline, xla.fusion_call} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<4x8xf32>
}
func.func private @xla_fusion_0(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %s: tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : tensor<4x8xf32>, tensor<f32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %k: f32, %out: f32):
    %m = arith.mulf %in, %k : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %y : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %v = arith.addf %in, %in2 : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %c = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %y : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %v = arith.subf %in, %in2 : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %b, %c : tensor<4x8xf32>, tensor<4x8xf32>
}

/// Not called as a kernel (no xla.fusion_call): left alone.
// CHECK-LABEL: func.func private @not_a_kernel
// CHECK-COUNT-2: linalg.generic
func.func private @not_a_kernel(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.negf %in : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %y : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %v = arith.addf %in, %in2 : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

/// A generic read by another through a map that is not the identity (a
/// transpose over the same space): the kernel stays as it is.
// CHECK-LABEL: func.func private @transposed
// CHECK-COUNT-2: linalg.generic
func.func private @transposed(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %e = tensor.empty() : tensor<8x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.negf %in : f32
    linalg.yield %m : f32
  } -> tensor<8x8xf32>
  %b = linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8x8xf32>
  return %b : tensor<8x8xf32>
}
