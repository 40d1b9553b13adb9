// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-constant-scatters-as-selects)' --split-input-file | FileCheck %s

/// jnp.argmax(v.at[2, 3].set(nan), axis=1): a point set at constant indices,
/// read by a reduction, is a select on two iota compares; no scatter, and the
/// indices' constant goes.
// CHECK-LABEL: func.func @point_into_reduce
// CHECK-NOT: stablehlo.scatter
// CHECK-NOT: dense<[2, 3]>
// CHECK-DAG: %[[NAN:.*]] = stablehlo.broadcast_in_dim %{{.*}}, dims = [] : (tensor<f32>) -> tensor<6x10xf32>
// CHECK-DAG: %[[I0:.*]] = stablehlo.iota dim = 0 : tensor<6x10xi32>
// CHECK-DAG: %[[TWO:.*]] = stablehlo.constant dense<2> : tensor<6x10xi32>
// CHECK-DAG: %[[ROW:.*]] = stablehlo.compare EQ, %[[I0]], %[[TWO]], SIGNED
// CHECK-DAG: %[[I1:.*]] = stablehlo.iota dim = 1 : tensor<6x10xi32>
// CHECK-DAG: %[[THREE:.*]] = stablehlo.constant dense<3> : tensor<6x10xi32>
// CHECK-DAG: %[[COL:.*]] = stablehlo.compare EQ, %[[I1]], %[[THREE]], SIGNED
// CHECK: %[[M:.*]] = stablehlo.and %[[ROW]], %[[COL]] : tensor<6x10xi1>
// CHECK: %[[S:.*]] = stablehlo.select %[[M]], %[[NAN]], %arg0
// CHECK: stablehlo.reduce(%[[S]]
func.func @point_into_reduce(%v: tensor<6x10xf32>) -> tensor<6xf32> {
  %c = stablehlo.constant dense<[2, 3]> : tensor<2xi32>
  %nan = stablehlo.constant dense<0x7FC00000> : tensor<f32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = "stablehlo.scatter"(%v, %c, %nan) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1]>, unique_indices = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %b : tensor<f32>
  }) : (tensor<6x10xf32>, tensor<2xi32>, tensor<f32>) -> tensor<6x10xf32>
  %1 = stablehlo.reduce(%0 init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<6x10xf32>, tensor<f32>) -> tensor<6xf32>
  return %1 : tensor<6xf32>
}

// -----

/// v.at[2].add(1.0) * 2: a row window (dim 1 whole: one compare), the update
/// computation applied to the whole tensor, selected inside the row.
// CHECK-LABEL: func.func @row_add
// CHECK-NOT: stablehlo.scatter
// CHECK: %[[ONE:.*]] = stablehlo.broadcast_in_dim %{{.*}}, dims = [] : (tensor<f32>) -> tensor<6x10xf32>
// CHECK: %[[SUM:.*]] = stablehlo.add %arg0, %[[ONE]] : tensor<6x10xf32>
// CHECK: %[[I0:.*]] = stablehlo.iota dim = 0
// CHECK: %[[ROW:.*]] = stablehlo.compare EQ, %[[I0]]
// CHECK-NOT: stablehlo.and
// CHECK: %[[S:.*]] = stablehlo.select %[[ROW]], %[[SUM]], %arg0
// CHECK: stablehlo.multiply %[[S]]
func.func @row_add(%v: tensor<6x10xf32>) -> tensor<6x10xf32> {
  %c = stablehlo.constant dense<2> : tensor<1xi32>
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %u = stablehlo.broadcast_in_dim %one, dims = [] : (tensor<f32>) -> tensor<10xf32>
  %two = stablehlo.constant dense<2.0> : tensor<6x10xf32>
  %0 = "stablehlo.scatter"(%v, %c, %u) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<6x10xf32>, tensor<1xi32>, tensor<10xf32>) -> tensor<6x10xf32>
  %1 = stablehlo.multiply %0, %two : tensor<6x10xf32>
  return %1 : tensor<6x10xf32>
}

// -----

/// Two index tuples, each a row of the updates: a slice of its row, broadcast
/// down the columns, one select after the other (the second wins, as the
/// scatter's order has it). A tuple out of bounds (row 9 of 6) is dropped.
// CHECK-LABEL: func.func @rows_in_order
// CHECK-NOT: stablehlo.scatter
// CHECK: stablehlo.slice %arg1 [0:1, 0:10]
// CHECK: %[[A:.*]] = stablehlo.select
// CHECK: stablehlo.slice %arg1 [1:2, 0:10]
// CHECK: %[[B:.*]] = stablehlo.select %{{.*}}, %{{.*}}, %[[A]]
// CHECK-NOT: stablehlo.select
// CHECK: stablehlo.negate %[[B]]
func.func @rows_in_order(%v: tensor<6x10xf32>, %u: tensor<3x10xf32>) -> tensor<6x10xf32> {
  %c = stablehlo.constant dense<[[4], [4], [9]]> : tensor<3x1xi32>
  %0 = "stablehlo.scatter"(%v, %c, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %b : tensor<f32>
  }) : (tensor<6x10xf32>, tensor<3x1xi32>, tensor<3x10xf32>) -> tensor<6x10xf32>
  %1 = stablehlo.negate %0 : tensor<6x10xf32>
  return %1 : tensor<6x10xf32>
}

// -----

/// dynamic_update_slice at constant starts (7, 5) of a 2x2 splat: clamped to
/// (4, 4) as the op clamps them; a range of rows (two compares), the last
/// columns (one).
// CHECK-LABEL: func.func @update_slice_clamped
// CHECK-NOT: stablehlo.dynamic_update_slice
// CHECK: %[[I0:.*]] = stablehlo.iota dim = 0
// CHECK: stablehlo.constant dense<4> : tensor<6x6xi32>
// CHECK: stablehlo.compare GE, %[[I0]]
// CHECK-NOT: stablehlo.compare LT, %[[I0]]
// CHECK: %[[I1:.*]] = stablehlo.iota dim = 1
// CHECK: stablehlo.constant dense<4> : tensor<6x6xi32>
// CHECK: stablehlo.compare GE, %[[I1]]
// CHECK: stablehlo.select
func.func @update_slice_clamped(%v: tensor<6x6xf32>) -> tensor<6x6xf32> {
  %three = stablehlo.constant dense<3.0> : tensor<2x2xf32>
  %i = stablehlo.constant dense<7> : tensor<i32>
  %j = stablehlo.constant dense<5> : tensor<i32>
  %0 = stablehlo.dynamic_update_slice %v, %three, %i, %j : (tensor<6x6xf32>, tensor<2x2xf32>, tensor<i32>, tensor<i32>) -> tensor<6x6xf32>
  %1 = stablehlo.exponential %0 : tensor<6x6xf32>
  return %1 : tensor<6x6xf32>
}

// -----

/// Kept: the result is only returned and the operand is an argument (the
/// scatter copies it once, as a select kernel would read and write it); the
/// scatter's result read by a dot (no fusion); indices not constants; a window
/// of its own elements over part of a dim (2 of 6 rows, 3 of 10 columns); an
/// update computation with an expensive op; a column sum reading it through a
/// negate (its schedule runs fused elementwise ops on N x 1 vectors).
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-6: "stablehlo.scatter"
func.func @kept(%v: tensor<6x10xf32>, %w: tensor<10x4xf32>, %k: tensor<2xi32>, %b: tensor<2x3xf32>) -> (tensor<6x10xf32>, tensor<6x4xf32>, tensor<6x10xf32>, tensor<6x10xf32>, tensor<6x10xf32>, tensor<10xf32>) {
  %c = stablehlo.constant dense<[2, 3]> : tensor<2xi32>
  %x = stablehlo.constant dense<1.0> : tensor<f32>
  %0 = "stablehlo.scatter"(%v, %c, %x) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1]>}> ({
  ^bb0(%a: tensor<f32>, %u: tensor<f32>):
    stablehlo.return %u : tensor<f32>
  }) : (tensor<6x10xf32>, tensor<2xi32>, tensor<f32>) -> tensor<6x10xf32>
  %1 = "stablehlo.scatter"(%v, %c, %x) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1]>}> ({
  ^bb0(%a: tensor<f32>, %u: tensor<f32>):
    stablehlo.return %u : tensor<f32>
  }) : (tensor<6x10xf32>, tensor<2xi32>, tensor<f32>) -> tensor<6x10xf32>
  %2 = stablehlo.dot_general %1, %w, contracting_dims = [1] x [0] : (tensor<6x10xf32>, tensor<10x4xf32>) -> tensor<6x4xf32>
  %3 = "stablehlo.scatter"(%v, %k, %x) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1]>}> ({
  ^bb0(%a: tensor<f32>, %u: tensor<f32>):
    stablehlo.return %u : tensor<f32>
  }) : (tensor<6x10xf32>, tensor<2xi32>, tensor<f32>) -> tensor<6x10xf32>
  %4 = stablehlo.negate %3 : tensor<6x10xf32>
  %5 = "stablehlo.scatter"(%v, %c, %b) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1]>}> ({
  ^bb0(%a: tensor<f32>, %u: tensor<f32>):
    stablehlo.return %u : tensor<f32>
  }) : (tensor<6x10xf32>, tensor<2xi32>, tensor<2x3xf32>) -> tensor<6x10xf32>
  %6 = stablehlo.negate %5 : tensor<6x10xf32>
  %7 = "stablehlo.scatter"(%v, %c, %x) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1]>}> ({
  ^bb0(%a: tensor<f32>, %u: tensor<f32>):
    %p = stablehlo.power %a, %u : tensor<f32>
    stablehlo.return %p : tensor<f32>
  }) : (tensor<6x10xf32>, tensor<2xi32>, tensor<f32>) -> tensor<6x10xf32>
  %8 = stablehlo.negate %7 : tensor<6x10xf32>
  %9 = "stablehlo.scatter"(%v, %c, %x) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1]>}> ({
  ^bb0(%a: tensor<f32>, %u: tensor<f32>):
    stablehlo.return %u : tensor<f32>
  }) : (tensor<6x10xf32>, tensor<2xi32>, tensor<f32>) -> tensor<6x10xf32>
  %10 = stablehlo.negate %9 : tensor<6x10xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %11 = stablehlo.reduce(%10 init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<6x10xf32>, tensor<f32>) -> tensor<10xf32>
  return %0, %2, %4, %6, %8, %11 : tensor<6x10xf32>, tensor<6x4xf32>, tensor<6x10xf32>, tensor<6x10xf32>, tensor<6x10xf32>, tensor<10xf32>
}

// -----

/// A scatter whose operand an elementwise op makes: rewritten although only
/// returned (the select joins the negate's kernel). Every tuple out of bounds:
/// the operand itself.
// CHECK-LABEL: func.func @producer_and_dropped
// CHECK-NOT: stablehlo.scatter
// CHECK: %[[N:.*]] = stablehlo.negate %arg0
// CHECK: %[[S:.*]] = stablehlo.select %{{.*}}, %{{.*}}, %[[N]]
// CHECK: %[[E:.*]] = stablehlo.exponential %arg0
// CHECK: return %[[S]], %[[E]]
func.func @producer_and_dropped(%v: tensor<6x10xf32>) -> (tensor<6x10xf32>, tensor<6x10xf32>) {
  %c = stablehlo.constant dense<[5, 9]> : tensor<2xi32>
  %far = stablehlo.constant dense<[6, 0]> : tensor<2xi32>
  %x = stablehlo.constant dense<1.0> : tensor<f32>
  %n = stablehlo.negate %v : tensor<6x10xf32>
  %0 = "stablehlo.scatter"(%n, %c, %x) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1]>}> ({
  ^bb0(%a: tensor<f32>, %u: tensor<f32>):
    stablehlo.return %u : tensor<f32>
  }) : (tensor<6x10xf32>, tensor<2xi32>, tensor<f32>) -> tensor<6x10xf32>
  %1 = "stablehlo.scatter"(%v, %far, %x) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1]>}> ({
  ^bb0(%a: tensor<f32>, %u: tensor<f32>):
    stablehlo.return %u : tensor<f32>
  }) : (tensor<6x10xf32>, tensor<2xi32>, tensor<f32>) -> tensor<6x10xf32>
  %2 = stablehlo.exponential %1 : tensor<6x10xf32>
  return %0, %2 : tensor<6x10xf32>, tensor<6x10xf32>
}

// -----

/// Kept: a 0-d operand, no index to compare.
// CHECK-LABEL: func.func @scalar_operand
// CHECK: "stablehlo.scatter"
// CHECK: stablehlo.dynamic_update_slice
func.func @scalar_operand(%v: tensor<f32>, %u: tensor<f32>) -> tensor<f32> {
  %c = stablehlo.constant dense<> : tensor<0xi32>
  %0 = "stablehlo.scatter"(%v, %c, %u) <{scatter_dimension_numbers = #stablehlo.scatter<index_vector_dim = 0>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<f32>, tensor<0xi32>, tensor<f32>) -> tensor<f32>
  %1 = stablehlo.negate %0 : tensor<f32>
  %2 = stablehlo.dynamic_update_slice %1, %u : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %3 = stablehlo.negate %2 : tensor<f32>
  return %3 : tensor<f32>
}
