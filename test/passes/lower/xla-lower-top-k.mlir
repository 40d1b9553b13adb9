// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-lower-top-k)' | FileCheck %s

/// The declaration gets a body: rows in parallel, one pass over each row
/// against a buffer of the k largest keys (total order: sign-flipped bits).
// CHECK-LABEL: func.func private @xla_top_k_0(%{{.*}}: tensor<4x16xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>)
// CHECK: call @xla_top_k_0_rows
// CHECK-LABEL: func.func private @xla_top_k_0_rows
// CHECK: scf.forall (%{{.*}}) in (4)
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.cmpi sgt
// CHECK: tensor.parallel_insert_slice
func.func @main(%x: tensor<4x16xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>) {
  %r:2 = call @xla_top_k_0(%x) : (tensor<4x16xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>)
  return %r#0, %r#1 : tensor<4x3xf32>, tensor<4x3xi32>
}
func.func private @xla_top_k_0(tensor<4x16xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>) attributes {xla.top_k = 3 : i64}
