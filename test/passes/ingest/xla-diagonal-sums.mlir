// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-diagonal-sums)' --split-input-file | FileCheck %s

/// jnp.einsum("ii->"): the masked matrix summed over both dims is the sum of
/// its diagonal, read as a strided slice of the flattened matrix; the mask
/// (iotas, compare, select) goes.
// CHECK-LABEL: func.func @trace
// CHECK-NOT: stablehlo.select
// CHECK-NOT: stablehlo.iota
// CHECK: %[[F:.*]] = stablehlo.reshape %arg0 : (tensor<5x7xf32>) -> tensor<35xf32>
// CHECK: %[[D:.*]] = stablehlo.slice %[[F]] [0:33:8] : (tensor<35xf32>) -> tensor<5xf32>
// CHECK: stablehlo.reduce(%[[D]] init: %{{.*}}) applies stablehlo.add across dimensions = [0] : (tensor<5xf32>, tensor<f32>) -> tensor<f32>
func.func @trace(%a: tensor<5x7xf32>) -> tensor<f32> {
  %0 = stablehlo.iota dim = 0 : tensor<5x7xui32>
  %1 = stablehlo.iota dim = 1 : tensor<5x7xui32>
  %2 = stablehlo.compare EQ, %0, %1, UNSIGNED : (tensor<5x7xui32>, tensor<5x7xui32>) -> tensor<5x7xi1>
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<5x7xf32>
  %4 = stablehlo.select %2, %a, %3 : tensor<5x7xi1>, tensor<5x7xf32>
  %5 = stablehlo.reduce(%4 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<5x7xf32>, tensor<f32>) -> tensor<f32>
  return %5 : tensor<f32>
}

// -----

/// jnp.einsum("ii->i"), the iotas swapped and one offset by a splat 0 (as
/// jnp.trace has it): +0.0 plus the diagonal, no reduce.
// CHECK-LABEL: func.func @diag
// CHECK-NOT: stablehlo.reduce
// CHECK: %[[F:.*]] = stablehlo.reshape %arg0 : (tensor<4x4xf64>) -> tensor<16xf64>
// CHECK: %[[D:.*]] = stablehlo.slice %[[F]] [0:16:5] : (tensor<16xf64>) -> tensor<4xf64>
// CHECK: %[[Z:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<4xf64>
// CHECK: %[[R:.*]] = stablehlo.add %[[Z]], %[[D]] : tensor<4xf64>
// CHECK: return %[[R]]
func.func @diag(%a: tensor<4x4xf64>) -> tensor<4xf64> {
  %0 = stablehlo.iota dim = 1 : tensor<4x4xi32>
  %1 = stablehlo.iota dim = 0 : tensor<4x4xi32>
  %c = stablehlo.constant dense<0> : tensor<4x4xi32>
  %2 = stablehlo.add %1, %c : tensor<4x4xi32>
  %3 = stablehlo.compare EQ, %0, %2, SIGNED : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi1>
  %z = stablehlo.constant dense<0.000000e+00> : tensor<4x4xf64>
  %4 = stablehlo.select %3, %a, %z : tensor<4x4xi1>, tensor<4x4xf64>
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f64>
  %5 = stablehlo.reduce(%4 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4x4xf64>, tensor<f64>) -> tensor<4xf64>
  return %5 : tensor<4xf64>
}

// -----

/// Left alone: a -0.0 init; a multiply body; a NE mask; a select of 1.0
/// off the diagonal; a kept dim longer than the reduced one (results with no
/// diagonal element); an i8 iota that wraps on 300 rows.
// CHECK-LABEL: func.func @left
// CHECK-COUNT-5: stablehlo.select
// CHECK-NOT: stablehlo.slice
func.func @left(%a: tensor<4x4xf32>, %b: tensor<3x5xf32>, %c: tensor<300x300xf32>) -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<5xf32>, tensor<f32>) {
  %0 = stablehlo.iota dim = 0 : tensor<4x4xi32>
  %1 = stablehlo.iota dim = 1 : tensor<4x4xi32>
  %eq = stablehlo.compare EQ, %0, %1, SIGNED : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi1>
  %ne = stablehlo.compare NE, %0, %1, SIGNED : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi1>
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %mzero = stablehlo.constant dense<-0.000000e+00> : tensor<f32>
  %z = stablehlo.constant dense<0.000000e+00> : tensor<4x4xf32>
  %one = stablehlo.constant dense<1.000000e+00> : tensor<4x4xf32>
  %s = stablehlo.select %eq, %a, %z : tensor<4x4xi1>, tensor<4x4xf32>
  %r0 = stablehlo.reduce(%s init: %mzero) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x4xf32>, tensor<f32>) -> tensor<f32>
  %r1 = stablehlo.reduce(%s init: %zero) applies stablehlo.multiply across dimensions = [0, 1] : (tensor<4x4xf32>, tensor<f32>) -> tensor<f32>
  %sn = stablehlo.select %ne, %a, %z : tensor<4x4xi1>, tensor<4x4xf32>
  %r2 = stablehlo.reduce(%sn init: %zero) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x4xf32>, tensor<f32>) -> tensor<f32>
  %so = stablehlo.select %eq, %a, %one : tensor<4x4xi1>, tensor<4x4xf32>
  %r3 = stablehlo.reduce(%so init: %zero) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x4xf32>, tensor<f32>) -> tensor<f32>
  %2 = stablehlo.iota dim = 0 : tensor<3x5xi32>
  %3 = stablehlo.iota dim = 1 : tensor<3x5xi32>
  %eqb = stablehlo.compare EQ, %2, %3, SIGNED : (tensor<3x5xi32>, tensor<3x5xi32>) -> tensor<3x5xi1>
  %zb = stablehlo.constant dense<0.000000e+00> : tensor<3x5xf32>
  %sb = stablehlo.select %eqb, %b, %zb : tensor<3x5xi1>, tensor<3x5xf32>
  %r4 = stablehlo.reduce(%sb init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<3x5xf32>, tensor<f32>) -> tensor<5xf32>
  %4 = stablehlo.iota dim = 0 : tensor<300x300xi8>
  %5 = stablehlo.iota dim = 1 : tensor<300x300xi8>
  %eqc = stablehlo.compare EQ, %4, %5, SIGNED : (tensor<300x300xi8>, tensor<300x300xi8>) -> tensor<300x300xi1>
  %zc = stablehlo.constant dense<0.000000e+00> : tensor<300x300xf32>
  %sc = stablehlo.select %eqc, %c, %zc : tensor<300x300xi1>, tensor<300x300xf32>
  %r5 = stablehlo.reduce(%sc init: %zero) applies stablehlo.add across dimensions = [0, 1] : (tensor<300x300xf32>, tensor<f32>) -> tensor<f32>
  return %r0, %r1, %r2, %r3, %r4, %r5 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<5xf32>, tensor<f32>
}

// -----

/// jnp.trace(a, axis1=1, axis2=2): the 2-D mask broadcast over the batch dim;
/// each matrix flattened, its diagonal a slice strided in the last dim, the
/// reduce kept over the diagonal's dim.
// CHECK-LABEL: func.func @batched_trace
// CHECK-NOT: stablehlo.select
// CHECK: %[[F:.*]] = stablehlo.reshape %arg0 : (tensor<4x5x5xf32>) -> tensor<4x25xf32>
// CHECK: %[[D:.*]] = stablehlo.slice %[[F]] [0:4, 0:25:6] : (tensor<4x25xf32>) -> tensor<4x5xf32>
// CHECK: stablehlo.reduce(%[[D]] init: %{{.*}}) applies stablehlo.add across dimensions = [1] : (tensor<4x5xf32>, tensor<f32>) -> tensor<4xf32>
func.func @batched_trace(%a: tensor<4x5x5xf32>) -> tensor<4xf32> {
  %0 = stablehlo.iota dim = 0 : tensor<5x5xui32>
  %1 = stablehlo.iota dim = 1 : tensor<5x5xui32>
  %2 = stablehlo.compare EQ, %0, %1, UNSIGNED : (tensor<5x5xui32>, tensor<5x5xui32>) -> tensor<5x5xi1>
  %3 = stablehlo.broadcast_in_dim %2, dims = [1, 2] : (tensor<5x5xi1>) -> tensor<4x5x5xi1>
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x5x5xf32>
  %5 = stablehlo.select %3, %a, %4 : tensor<4x5x5xi1>, tensor<4x5x5xf32>
  %6 = stablehlo.reduce(%5 init: %cst) applies stablehlo.add across dimensions = [1, 2] : (tensor<4x5x5xf32>, tensor<f32>) -> tensor<4xf32>
  return %6 : tensor<4xf32>
}

// -----

/// jnp.einsum("bii->bi"): +0.0 plus the batched diagonals.
// CHECK-LABEL: func.func @batched_diag
// CHECK-NOT: stablehlo.reduce
// CHECK: %[[F:.*]] = stablehlo.reshape %arg0 : (tensor<3x4x4xf32>) -> tensor<3x16xf32>
// CHECK: %[[D:.*]] = stablehlo.slice %[[F]] [0:3, 0:16:5] : (tensor<3x16xf32>) -> tensor<3x4xf32>
// CHECK: %[[Z:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<3x4xf32>
// CHECK: stablehlo.add %[[Z]], %[[D]] : tensor<3x4xf32>
func.func @batched_diag(%a: tensor<3x4x4xf32>) -> tensor<3x4xf32> {
  %0 = stablehlo.iota dim = 0 : tensor<4x4xui32>
  %1 = stablehlo.iota dim = 1 : tensor<4x4xui32>
  %2 = stablehlo.compare EQ, %0, %1, UNSIGNED : (tensor<4x4xui32>, tensor<4x4xui32>) -> tensor<4x4xi1>
  %3 = stablehlo.broadcast_in_dim %2, dims = [1, 2] : (tensor<4x4xi1>) -> tensor<3x4x4xi1>
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x4x4xf32>
  %5 = stablehlo.select %3, %a, %4 : tensor<3x4x4xi1>, tensor<3x4x4xf32>
  %6 = stablehlo.reduce(%5 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<3x4x4xf32>, tensor<f32>) -> tensor<3x4xf32>
  return %6 : tensor<3x4xf32>
}

// -----

/// jnp.trace(a, offset=1): iota0 + convert(1) == iota1; the diagonal starts
/// at column 1 of the flattened matrix.
// CHECK-LABEL: func.func @offset_trace
// CHECK-NOT: stablehlo.select
// CHECK: %[[F:.*]] = stablehlo.reshape %arg0 : (tensor<5x6xf32>) -> tensor<30xf32>
// CHECK: %[[D:.*]] = stablehlo.slice %[[F]] [1:30:7] : (tensor<30xf32>) -> tensor<5xf32>
// CHECK: stablehlo.reduce(%[[D]] init: %{{.*}}) applies stablehlo.add across dimensions = [0]
func.func @offset_trace(%a: tensor<5x6xf32>) -> tensor<f32> {
  %c = stablehlo.constant dense<1> : tensor<i32>
  %0 = stablehlo.iota dim = 0 : tensor<5x6xi32>
  %1 = stablehlo.iota dim = 1 : tensor<5x6xi32>
  %k = stablehlo.convert %c : tensor<i32>
  %kb = stablehlo.broadcast_in_dim %k, dims = [] : (tensor<i32>) -> tensor<5x6xi32>
  %2 = stablehlo.add %0, %kb : tensor<5x6xi32>
  %3 = stablehlo.compare EQ, %2, %1, SIGNED : (tensor<5x6xi32>, tensor<5x6xi32>) -> tensor<5x6xi1>
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<5x6xf32>
  %5 = stablehlo.select %3, %a, %4 : tensor<5x6xi1>, tensor<5x6xf32>
  %6 = stablehlo.reduce(%5 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<5x6xf32>, tensor<f32>) -> tensor<f32>
  return %6 : tensor<f32>
}

// -----

/// An offset diagonal kept per row ("ii->i" with offset 1) is left alone:
/// its result rows are not the diagonal's elements one for one.
// CHECK-LABEL: func.func @offset_diag_left_alone
// CHECK: stablehlo.select
// CHECK: stablehlo.reduce
func.func @offset_diag_left_alone(%a: tensor<4x4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.iota dim = 0 : tensor<4x4xi32>
  %1 = stablehlo.iota dim = 1 : tensor<4x4xi32>
  %c = stablehlo.constant dense<1> : tensor<4x4xi32>
  %2 = stablehlo.add %0, %c : tensor<4x4xi32>
  %3 = stablehlo.compare EQ, %2, %1, SIGNED : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi1>
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x4xf32>
  %5 = stablehlo.select %3, %a, %4 : tensor<4x4xi1>, tensor<4x4xf32>
  %6 = stablehlo.reduce(%5 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  return %6 : tensor<4xf32>
}
