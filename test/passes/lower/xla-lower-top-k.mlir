// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-lower-top-k)' --split-input-file | FileCheck %s

/// The declaration gets a body: rows in parallel, one pass over each row
/// against a buffer of the k best keys (total order: sign-flipped bits),
/// blocks of 16 compared with the k-th best as one vector first.
// CHECK-LABEL: func.func private @xla_top_k_0(%{{.*}}: tensor<4x40xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>)
// CHECK: call @xla_top_k_0_rows
// CHECK-LABEL: func.func private @xla_top_k_0_rows
// CHECK: scf.forall (%{{.*}}) in (4)
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: vector.transfer_read %{{.*}} : tensor<4x40xf32>, vector<16xf32>
// CHECK: arith.bitcast %{{.*}} : vector<16xf32> to vector<16xi32>
// CHECK: %[[BETTER:.*]] = arith.cmpi sgt, %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK: vector.reduction <or>, %[[BETTER]] : vector<16xi1> into i1
// CHECK: tensor.parallel_insert_slice
// CHECK-LABEL: func.func private @xla_top_k_0_consider
// CHECK: arith.cmpi sgt
// CHECK: func.call @xla_top_k_0_insert
// CHECK-LABEL: func.func private @xla_top_k_0_insert
// CHECK: scf.while
func.func @main(%x: tensor<4x40xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>) {
  %r:2 = call @xla_top_k_0(%x) : (tensor<4x40xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>)
  return %r#0, %r#1 : tensor<4x3xf32>, tensor<4x3xi32>
}
func.func private @xla_top_k_0(tensor<4x40xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>) attributes {xla.top_k = 3 : i64}

// -----

/// The k smallest in jnp.sort's order: -0 and NaNs made one key each, then
/// the key complemented, so the kernel's "largest" is the smallest.
// CHECK-LABEL: func.func private @xla_top_k_0_consider
// CHECK: %[[BITS:.*]] = arith.bitcast %{{.*}} : bf16 to i16
// CHECK: arith.cmpf oeq
// CHECK: arith.cmpf uno
// CHECK: %[[NAN:.*]] = arith.constant 32704 : i16
// CHECK: %[[CANON:.*]] = arith.select %{{.*}}, %[[NAN]], %{{.*}} : i16
// CHECK: %[[ONES:.*]] = arith.constant -1 : i16
// CHECK: arith.xori %[[CANON]], %[[ONES]] : i16
func.func @main(%x: tensor<40xbf16>) -> (tensor<3xbf16>, tensor<3xi32>) {
  %r:2 = call @xla_top_k_0(%x) : (tensor<40xbf16>) -> (tensor<3xbf16>, tensor<3xi32>)
  return %r#0, %r#1 : tensor<3xbf16>, tensor<3xi32>
}
func.func private @xla_top_k_0(tensor<40xbf16>) -> (tensor<3xbf16>, tensor<3xi32>) attributes {xla.top_k = 3 : i64, xla.top_k_smallest, xla.top_k_canonical}
