// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-lower-top-k{counted-insert-k=128})' --split-input-file | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-lower-top-k)' --split-input-file | FileCheck %s --check-prefix=WALK

/// The declaration gets a body: rows in parallel, one pass over each row
/// against a buffer of the k best keys (total order: sign-flipped bits),
/// blocks of 16 compared with the k-th best as one vector first.
// CHECK-LABEL: func.func private @xla_top_k_0(%{{.*}}: tensor<4x40xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>)
// CHECK: call @xla_top_k_0_rows
// CHECK-LABEL: func.func private @xla_top_k_0_rows
// CHECK: scf.forall (%{{.*}}) in (4)
// CHECK-NOT: vector.reduction <minsi>
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

// -----

/// k = 200 (>= counted-insert-k): the buffers have room for one vector past the k slots
/// (208 + 16), and an element finds its slot by counting the keys at least
/// as good, 16 at a time, then the worse ones move down 16 at a time (a
/// select of moved and kept lanes, whole vectors stored): no walk with a
/// compare per key.
// CHECK-LABEL: func.func private @xla_top_k_0_rows
// CHECK: linalg.fill ins(%{{.*}} : i32) outs(%{{.*}} : tensor<224xi32>)
// CHECK-LABEL: func.func private @xla_top_k_0_insert
// CHECK-NOT: scf.while
// CHECK: arith.cmpi sge, %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK: vector.reduction <add>, %{{.*}} : vector<16xi32> into i32
// CHECK: vector.create_mask %{{.*}} : vector<16xi1>
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<16xi1>, vector<16xi32>
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<16xi1>, vector<16xindex>
// CHECK: vector.transfer_write %{{.*}}, %{{.*}}[%{{.*}}] {in_bounds = [true]} : vector<16xi32>, tensor<224xi32>
// CHECK: vector.transfer_write %{{.*}}, %{{.*}}[%{{.*}}] {in_bounds = [true]} : vector<16xindex>, tensor<224xindex>
/// Without counted-insert-k (AVX2): the walk, buffers of k.
// WALK: func.func private @xla_top_k_0_insert(%{{.*}}: tensor<200xi32>,
// WALK: scf.while
func.func @main(%x: tensor<2x1000xf32>) -> (tensor<2x200xf32>, tensor<2x200xi32>) {
  %v, %i = call @xla_top_k_0(%x) : (tensor<2x1000xf32>) -> (tensor<2x200xf32>, tensor<2x200xi32>)
  return %v, %i : tensor<2x200xf32>, tensor<2x200xi32>
}
func.func private @xla_top_k_0(tensor<2x1000xf32>) -> (tensor<2x200xf32>, tensor<2x200xi32>) attributes {xla.top_k = 200 : i64}

// -----

/// k >= 16 and a row of at least 4 chunks of the k (in vectors) groups (k = 16:
/// 16 groups, the last 16 chunks of 16 read):
/// first a floor under the k-th best, the least of the groups' best keys
/// (elementwise maxima of the row's 16-element blocks, chunk after chunk,
/// then their minimum), minus one; an element enters only above the larger
/// of it and the k-th best so far. Ascending rows: ~2k inserts, not n.
// CHECK-LABEL: func.func private @xla_top_k_0_rows
// CHECK: arith.maxsi %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK: vector.reduction <minsi>, %{{.*}} : vector<16xi32> into i32
// CHECK: %[[FLOOR:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : i32
// CHECK: %[[BAR:.*]] = arith.maxsi %{{.*}}, %[[FLOOR]] : i32
// CHECK: vector.broadcast %[[BAR]] : i32 to vector<16xi32>
// CHECK: func.call @xla_top_k_0_consider(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[FLOOR]])
// CHECK-LABEL: func.func private @xla_top_k_0_consider
// CHECK-SAME: %[[F:[a-z0-9_]+]]: i32)
// CHECK: %[[B:.*]] = arith.maxsi %{{.*}}, %[[F]] : i32
// CHECK: arith.cmpi sgt, %{{.*}}, %[[B]] : i32
// WALK: vector.reduction <minsi>
func.func @main(%x: tensor<4x8000xf32>) -> (tensor<4x16xf32>, tensor<4x16xi32>) {
  %r:2 = call @xla_top_k_0(%x) : (tensor<4x8000xf32>) -> (tensor<4x16xf32>, tensor<4x16xi32>)
  return %r#0, %r#1 : tensor<4x16xf32>, tensor<4x16xi32>
}
func.func private @xla_top_k_0(tensor<4x8000xf32>) -> (tensor<4x16xf32>, tensor<4x16xi32>) attributes {xla.top_k = 16 : i64}
