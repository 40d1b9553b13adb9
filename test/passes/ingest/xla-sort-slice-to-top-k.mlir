// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-sort-slice-to-top-k)' --split-input-file | FileCheck %s

/// chlo.top_k's decomposition (jax.export's composite, inlined): a stable
/// sort of the values and an iota, both sliced to their head.
// CHECK-LABEL: func.func @top_k_decomposition
// CHECK-NOT: stablehlo.sort
// CHECK: %[[T:.*]]:2 = call @xla_top_k_0(%arg0) : (tensor<4x16xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>)
// CHECK: %[[V:.*]] = stablehlo.slice %[[T]]#0 [0:4, 0:3]
// CHECK: %[[I:.*]] = stablehlo.slice %[[T]]#1 [0:4, 0:3]
// CHECK: return %[[V]], %[[I]]
// CHECK: func.func private @xla_top_k_0({{.*}}) attributes {xla.top_k = 3 : i64}
func.func @top_k_decomposition(%x: tensor<4x16xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>) {
  %0 = stablehlo.iota dim = 1 : tensor<4x16xi32>
  %1:2 = "stablehlo.sort"(%x, %0) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %4 = stablehlo.compare GT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %4 : tensor<i1>
  }) : (tensor<4x16xf32>, tensor<4x16xi32>) -> (tensor<4x16xf32>, tensor<4x16xi32>)
  %2 = stablehlo.slice %1#0 [0:4, 0:3] : (tensor<4x16xf32>) -> tensor<4x3xf32>
  %3 = stablehlo.slice %1#1 [0:4, 0:3] : (tensor<4x16xi32>) -> tensor<4x3xi32>
  return %2, %3 : tensor<4x3xf32>, tensor<4x3xi32>
}

// -----

/// jnp.argsort(x, descending=True)[:, :3]: reversed operands, the result read
/// reversed, and jnp's comparator (-0 as +0, one NaN, then TOTALORDER LT,
/// constants from outside the region): the stable descending order.
// CHECK-LABEL: func.func @jnp_argsort_descending
// CHECK: %[[T:.*]]:2 = call @xla_top_k_0(%arg0) : (tensor<4x16xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>)
// CHECK: stablehlo.slice %[[T]]#1 [0:4, 0:3]
// CHECK: func.func private @xla_top_k_0({{.*}}) attributes {xla.top_k = 3 : i64, xla.top_k_canonical}
func.func @jnp_argsort_descending(%arg0: tensor<4x16xf32>) -> tensor<4x3xi32> {
  %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
  %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.iota dim = 1 : tensor<4x16xi32>
  %1 = stablehlo.reverse %arg0, dims = [1] : tensor<4x16xf32>
  %2 = stablehlo.reverse %0, dims = [1] : tensor<4x16xi32>
  %3:2 = "stablehlo.sort"(%1, %2) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>, %arg3: tensor<i32>, %arg4: tensor<i32>):
    %5 = stablehlo.compare EQ, %arg1, %cst_0, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %6 = stablehlo.select %5, %cst_0, %arg1 : tensor<i1>, tensor<f32>
    %7 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %8 = stablehlo.select %7, %cst, %6 : tensor<i1>, tensor<f32>
    %9 = stablehlo.compare EQ, %arg2, %cst_0, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %10 = stablehlo.select %9, %cst_0, %arg2 : tensor<i1>, tensor<f32>
    %11 = stablehlo.compare NE, %arg2, %arg2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %12 = stablehlo.select %11, %cst, %10 : tensor<i1>, tensor<f32>
    %13 = stablehlo.compare LT, %8, %12, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %13 : tensor<i1>
  }) : (tensor<4x16xf32>, tensor<4x16xi32>) -> (tensor<4x16xf32>, tensor<4x16xi32>)
  %4 = stablehlo.reverse %3#1, dims = [1] : tensor<4x16xi32>
  %s = stablehlo.slice %4 [0:4, 0:3] : (tensor<4x16xi32>) -> tensor<4x3xi32>
  return %s : tensor<4x3xi32>
}

// -----

/// jnp.sort(x, descending=True)[:2]: only the result reversed. That is the
/// ascending sort of the reversed row, read backwards: the top-k of the
/// reversed row (ties: the later element first).
// CHECK-LABEL: func.func @jnp_sort_descending
// CHECK: %[[R:.*]] = stablehlo.reverse %arg0, dims = [0] : tensor<16xi32>
// CHECK: %[[T:.*]]:2 = call @xla_top_k_0(%[[R]]) : (tensor<16xi32>) -> (tensor<2xi32>, tensor<2xi32>)
// CHECK: stablehlo.slice %[[T]]#0 [0:2]
// CHECK: func.func private @xla_top_k_0({{.*}}) attributes {xla.top_k = 2 : i64}
func.func @jnp_sort_descending(%x: tensor<16xi32>) -> tensor<2xi32> {
  %0 = "stablehlo.sort"(%x) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %p = stablehlo.compare LT, %a, %b, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) : (tensor<16xi32>) -> tensor<16xi32>
  %1 = stablehlo.reverse %0, dims = [0] : tensor<16xi32>
  %2 = stablehlo.slice %1 [0:2] : (tensor<16xi32>) -> tensor<2xi32>
  return %2 : tensor<2xi32>
}

// -----

/// torch-mlir's aten.topk(largest=False, dim=0): an unstable FLOAT sort with
/// an i64 iota, along the first dim: transposed around a top-k of the
/// smallest, zeros equal.
// CHECK-LABEL: func.func @torch_smallest_along_dim0
// CHECK: %[[X:.*]] = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<16x4xf32>) -> tensor<4x16xf32>
// CHECK: %[[T:.*]]:2 = call @xla_top_k_0(%[[X]]) : (tensor<4x16xf32>) -> (tensor<4x5xf32>, tensor<4x5xi64>)
// CHECK: %[[V:.*]] = stablehlo.transpose %[[T]]#0, dims = [1, 0] : (tensor<4x5xf32>) -> tensor<5x4xf32>
// CHECK: %[[I:.*]] = stablehlo.transpose %[[T]]#1, dims = [1, 0] : (tensor<4x5xi64>) -> tensor<5x4xi64>
// CHECK: stablehlo.slice %[[V]] [0:5, 0:4]
// CHECK: stablehlo.slice %[[I]] [0:2, 0:4]
// CHECK: func.func private @xla_top_k_0({{.*}}) attributes {xla.top_k = 5 : i64, xla.top_k_canonical, xla.top_k_smallest}
func.func @torch_smallest_along_dim0(%x: tensor<16x4xf32>) -> (tensor<5x4xf32>, tensor<2x4xi64>) {
  %0 = stablehlo.iota dim = 0 : tensor<16x4xi64>
  %1:2 = "stablehlo.sort"(%x, %0) <{dimension = 0 : i64, is_stable = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i64>, %d: tensor<i64>):
    %4 = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %4 : tensor<i1>
  }) : (tensor<16x4xf32>, tensor<16x4xi64>) -> (tensor<16x4xf32>, tensor<16x4xi64>)
  %2 = stablehlo.slice %1#0 [0:5, 0:4] : (tensor<16x4xf32>) -> tensor<5x4xf32>
  %3 = stablehlo.slice %1#1 [0:2, 0:4] : (tensor<16x4xi64>) -> tensor<2x4xi64>
  return %2, %3 : tensor<5x4xf32>, tensor<2x4xi64>
}

// -----

/// Not a head: the whole sort is read, a slice starts past 0, the second
/// operand is no iota along the sort dim, the comparator reads the second
/// operand, or k is past 320: each stays a sort.
// CHECK-LABEL: func.func @not_top_k
// CHECK-COUNT-5: stablehlo.sort
// CHECK-NOT: call
func.func @not_top_k(%x: tensor<4x400xf32>, %y: tensor<4x400xi32>) -> (tensor<4x400xf32>, tensor<4x3xf32>, tensor<4x3xi32>, tensor<4x3xf32>, tensor<4x330xf32>) {
  %iota = stablehlo.iota dim = 0 : tensor<4x400xi32>
  %whole = "stablehlo.sort"(%x) <{dimension = 1 : i64}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %p = stablehlo.compare GT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) : (tensor<4x400xf32>) -> tensor<4x400xf32>
  %tail = "stablehlo.sort"(%x) <{dimension = 1 : i64}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %p = stablehlo.compare GT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) : (tensor<4x400xf32>) -> tensor<4x400xf32>
  %tail_slice = stablehlo.slice %tail [0:4, 1:4] : (tensor<4x400xf32>) -> tensor<4x3xf32>
  %other:2 = "stablehlo.sort"(%x, %iota) <{dimension = 1 : i64}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %p = stablehlo.compare GT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) : (tensor<4x400xf32>, tensor<4x400xi32>) -> (tensor<4x400xf32>, tensor<4x400xi32>)
  %other_slice = stablehlo.slice %other#1 [0:4, 0:3] : (tensor<4x400xi32>) -> tensor<4x3xi32>
  %by_second:2 = "stablehlo.sort"(%x, %y) <{dimension = 1 : i64}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %p = stablehlo.compare GT, %c, %d, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) : (tensor<4x400xf32>, tensor<4x400xi32>) -> (tensor<4x400xf32>, tensor<4x400xi32>)
  %by_second_slice = stablehlo.slice %by_second#0 [0:4, 0:3] : (tensor<4x400xf32>) -> tensor<4x3xf32>
  %long = "stablehlo.sort"(%x) <{dimension = 1 : i64}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %p = stablehlo.compare GT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) : (tensor<4x400xf32>) -> tensor<4x400xf32>
  %long_slice = stablehlo.slice %long [0:4, 0:330] : (tensor<4x400xf32>) -> tensor<4x330xf32>
  return %whole, %tail_slice, %other_slice, %by_second_slice, %long_slice : tensor<4x400xf32>, tensor<4x3xf32>, tensor<4x3xi32>, tensor<4x3xf32>, tensor<4x330xf32>
}
