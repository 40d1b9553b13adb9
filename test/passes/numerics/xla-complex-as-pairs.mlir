// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-complex-as-pairs)' --split-input-file | FileCheck %s

/// A column sum of complex numbers: the sum of the parts' pairs, from a scalar 0.
// CHECK-LABEL: func.func @column_sum
// CHECK-SAME: (%[[A:.*]]: tensor<4x8x2xf32>) -> tensor<8x2xf32>
// CHECK: %[[Z:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[S:.*]] = stablehlo.reduce(%[[A]] init: %[[Z]]) applies stablehlo.add across dimensions = [0] : (tensor<4x8x2xf32>, tensor<f32>) -> tensor<8x2xf32>
// CHECK: return %[[S]] : tensor<8x2xf32>
func.func @column_sum(%a: tensor<4x8xcomplex<f32>>) -> tensor<8xcomplex<f32>> {
  %z = stablehlo.constant dense<(0.0, 0.0)> : tensor<complex<f32>>
  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0]
      : (tensor<4x8xcomplex<f32>>, tensor<complex<f32>>) -> tensor<8xcomplex<f32>>
  return %0 : tensor<8xcomplex<f32>>
}

// -----

/// Moves keep the parts' dim last; real/imag are slices of it, complex a concatenate.
// CHECK-LABEL: func.func @moves
// CHECK-SAME: (%[[A:.*]]: tensor<8x4x2xf64>, %[[R:.*]]: tensor<4x2xf64>) -> (tensor<4x8x2xf32>, tensor<4x8xf64>)
// CHECK: %[[T:.*]] = stablehlo.transpose %[[A]], dims = [1, 0, 2] : (tensor<8x4x2xf64>) -> tensor<4x8x2xf64>
// CHECK: %[[B:.*]] = stablehlo.broadcast_in_dim %[[R]], dims = [0, 2] : (tensor<4x2xf64>) -> tensor<4x8x2xf64>
// CHECK: %[[S:.*]] = stablehlo.subtract %[[T]], %[[B]] : tensor<4x8x2xf64>
// CHECK: %[[I:.*]] = stablehlo.slice %[[S]] [0:4, 0:8, 1:2] : (tensor<4x8x2xf64>) -> tensor<4x8x1xf64>
// CHECK: %[[IM:.*]] = stablehlo.reshape %[[I]] : (tensor<4x8x1xf64>) -> tensor<4x8xf64>
// CHECK: %[[W:.*]] = stablehlo.convert %[[S]] : (tensor<4x8x2xf64>) -> tensor<4x8x2xf32>
// CHECK: return %[[W]], %[[IM]]
func.func @moves(%a: tensor<8x4xcomplex<f64>>, %r: tensor<4xcomplex<f64>>) -> (tensor<4x8xcomplex<f32>>, tensor<4x8xf64>) {
  %t = stablehlo.transpose %a, dims = [1, 0] : (tensor<8x4xcomplex<f64>>) -> tensor<4x8xcomplex<f64>>
  %b = stablehlo.broadcast_in_dim %r, dims = [0] : (tensor<4xcomplex<f64>>) -> tensor<4x8xcomplex<f64>>
  %s = stablehlo.subtract %t, %b : tensor<4x8xcomplex<f64>>
  %i = stablehlo.imag %s : (tensor<4x8xcomplex<f64>>) -> tensor<4x8xf64>
  %w = stablehlo.convert %s : (tensor<4x8xcomplex<f64>>) -> tensor<4x8xcomplex<f32>>
  return %w, %i : tensor<4x8xcomplex<f32>>, tensor<4x8xf64>
}

// -----

/// complex(re, im) of real tensors: the two side by side in a new last dim.
// CHECK-LABEL: func.func @joined
// CHECK: %[[RE:.*]] = stablehlo.reshape %{{.*}} : (tensor<3xf32>) -> tensor<3x1xf32>
// CHECK: %[[IM:.*]] = stablehlo.reshape %{{.*}} : (tensor<3xf32>) -> tensor<3x1xf32>
// CHECK: stablehlo.concatenate %[[RE]], %[[IM]], dim = 1 : (tensor<3x1xf32>, tensor<3x1xf32>) -> tensor<3x2xf32>
func.func @joined(%re: tensor<3xf32>, %im: tensor<3xf32>) -> tensor<3xcomplex<f32>> {
  %c = stablehlo.complex %re, %im : tensor<3xcomplex<f32>>
  return %c : tensor<3xcomplex<f32>>
}

// -----

/// A scan (cumsum's window) on the pairs, the parts' dim a window of 1; the
/// private function it calls is retyped with it.
// CHECK-LABEL: func.func @scan
// CHECK-SAME: (%{{.*}}: tensor<2x6x2xf32>) -> tensor<2x6x2xf32>
// CHECK: call @cumsum(%{{.*}}) : (tensor<2x6x2xf32>) -> tensor<2x6x2xf32>
// CHECK-LABEL: func.func private @cumsum
// CHECK: "stablehlo.reduce_window"
// CHECK-SAME: padding = dense<{{\[}}[0, 0], [5, 0], [0, 0]]> : tensor<3x2xi64>
// CHECK-SAME: window_dimensions = array<i64: 1, 6, 1>
// CHECK: (tensor<2x6x2xf32>, tensor<f32>) -> tensor<2x6x2xf32>
func.func @scan(%a: tensor<2x6xcomplex<f32>>) -> tensor<2x6xcomplex<f32>> {
  %0 = call @cumsum(%a) : (tensor<2x6xcomplex<f32>>) -> tensor<2x6xcomplex<f32>>
  return %0 : tensor<2x6xcomplex<f32>>
}
func.func private @cumsum(%a: tensor<2x6xcomplex<f32>>) -> tensor<2x6xcomplex<f32>> {
  %z = stablehlo.constant dense<(0.0, 0.0)> : tensor<complex<f32>>
  %0 = "stablehlo.reduce_window"(%a, %z) <{padding = dense<[[0, 0], [5, 0]]> : tensor<2x2xi64>,
      window_dimensions = array<i64: 1, 6>}> ({
  ^bb0(%x: tensor<complex<f32>>, %y: tensor<complex<f32>>):
    %s = stablehlo.add %x, %y : tensor<complex<f32>>
    stablehlo.return %s : tensor<complex<f32>>
  }) : (tensor<2x6xcomplex<f32>>, tensor<complex<f32>>) -> tensor<2x6xcomplex<f32>>
  return %0 : tensor<2x6xcomplex<f32>>
}

// -----

/// A complex multiply summed down its columns: the interpreter's (ac - bd, ad + bc)
/// on the parts' slices, joined in the minor dim, and the column sum of the pairs.
// CHECK-LABEL: func.func @column_sum_of_products
// CHECK-SAME: (%[[A:.*]]: tensor<4x8x2xf32>, %[[B:.*]]: tensor<4x8x2xf32>) -> tensor<8x2xf32>
// CHECK: %[[SA:.*]] = stablehlo.slice %[[A]] [0:4, 0:8, 0:1]
// CHECK: %[[RA:.*]] = stablehlo.reshape %[[SA]] : (tensor<4x8x1xf32>) -> tensor<4x8xf32>
// CHECK: %[[SB:.*]] = stablehlo.slice %[[A]] [0:4, 0:8, 1:2]
// CHECK: %[[RB:.*]] = stablehlo.reshape %[[SB]]
// CHECK: %[[SC:.*]] = stablehlo.slice %[[B]] [0:4, 0:8, 0:1]
// CHECK: %[[RC:.*]] = stablehlo.reshape %[[SC]]
// CHECK: %[[SD:.*]] = stablehlo.slice %[[B]] [0:4, 0:8, 1:2]
// CHECK: %[[RD:.*]] = stablehlo.reshape %[[SD]]
// CHECK: %[[AC:.*]] = stablehlo.multiply %[[RA]], %[[RC]] : tensor<4x8xf32>
// CHECK: %[[BD:.*]] = stablehlo.multiply %[[RB]], %[[RD]] : tensor<4x8xf32>
// CHECK: %[[RE:.*]] = stablehlo.subtract %[[AC]], %[[BD]] : tensor<4x8xf32>
// CHECK: %[[AD:.*]] = stablehlo.multiply %[[RA]], %[[RD]] : tensor<4x8xf32>
// CHECK: %[[BC:.*]] = stablehlo.multiply %[[RB]], %[[RC]] : tensor<4x8xf32>
// CHECK: %[[IM:.*]] = stablehlo.add %[[AD]], %[[BC]] : tensor<4x8xf32>
// CHECK: %[[RE2:.*]] = stablehlo.reshape %[[RE]]
// CHECK: %[[IM2:.*]] = stablehlo.reshape %[[IM]]
// CHECK: %[[P:.*]] = stablehlo.concatenate %[[RE2]], %[[IM2]], dim = 2 : (tensor<4x8x1xf32>, tensor<4x8x1xf32>) -> tensor<4x8x2xf32>
// CHECK: stablehlo.reduce(%[[P]] init: %{{.*}}) applies stablehlo.add across dimensions = [0] : (tensor<4x8x2xf32>, tensor<f32>) -> tensor<8x2xf32>
// CHECK-NOT: complex
func.func @column_sum_of_products(%a: tensor<4x8xcomplex<f32>>, %b: tensor<4x8xcomplex<f32>>) -> tensor<8xcomplex<f32>> {
  %p = stablehlo.multiply %a, %b : tensor<4x8xcomplex<f32>>
  %z = stablehlo.constant dense<(0.0, 0.0)> : tensor<complex<f32>>
  %0 = stablehlo.reduce(%p init: %z) applies stablehlo.add across dimensions = [0]
      : (tensor<4x8xcomplex<f32>>, tensor<complex<f32>>) -> tensor<8xcomplex<f32>>
  return %0 : tensor<8xcomplex<f32>>
}

// -----

/// A complex multiply used otherwise (an add; a row sum) has no pair form:
/// the function keeps its complex tensors.
// CHECK-LABEL: func.func @product
// CHECK-SAME: tensor<4xcomplex<f32>>
// CHECK: stablehlo.multiply {{.*}} : tensor<4xcomplex<f32>>
// CHECK: stablehlo.add {{.*}} : tensor<4xcomplex<f32>>
func.func @product(%a: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %p = stablehlo.multiply %a, %a : tensor<4xcomplex<f32>>
  %s = stablehlo.add %p, %a : tensor<4xcomplex<f32>>
  return %s : tensor<4xcomplex<f32>>
}

// -----

/// A sum from (1, 2): no one scalar both parts start from, so no pairs.
// CHECK-LABEL: func.func @offset_sum
// CHECK: stablehlo.reduce({{.*}}) applies stablehlo.add across dimensions = [0] : (tensor<4xcomplex<f32>>
func.func @offset_sum(%a: tensor<4xcomplex<f32>>) -> tensor<complex<f32>> {
  %z = stablehlo.constant dense<(1.0, 2.0)> : tensor<complex<f32>>
  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0]
      : (tensor<4xcomplex<f32>>, tensor<complex<f32>>) -> tensor<complex<f32>>
  return %0 : tensor<complex<f32>>
}

// -----

/// A c64 transpose moving the minor dim, its swapped dims multiples of 4: pairs,
/// which the CPU moves in 4x4 blocks of pairs (pair_transpose_plan.py).
// CHECK-LABEL: func.func @c64_transpose
// CHECK: stablehlo.transpose %{{.*}}, dims = [1, 0, 2] : (tensor<4x8x2xf32>) -> tensor<8x4x2xf32>
func.func @c64_transpose(%a: tensor<4x8xcomplex<f32>>) -> tensor<8x4xcomplex<f32>> {
  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<4x8xcomplex<f32>>) -> tensor<8x4xcomplex<f32>>
  return %0 : tensor<8x4xcomplex<f32>>
}

// -----

/// One whose swapped dims are not: the pairs would walk the output pair by
/// pair (1.64x XLA), 8-byte scalars move faster: kept complex. So is a 4-D
/// one (5-D as pairs: no block schedule of that rank).
// CHECK-LABEL: func.func @c64_transpose_odd
// CHECK: stablehlo.transpose {{.*}} : (tensor<6x8xcomplex<f32>>) -> tensor<8x6xcomplex<f32>>
func.func @c64_transpose_odd(%a: tensor<6x8xcomplex<f32>>) -> tensor<8x6xcomplex<f32>> {
  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<6x8xcomplex<f32>>) -> tensor<8x6xcomplex<f32>>
  return %0 : tensor<8x6xcomplex<f32>>
}

// -----

// CHECK-LABEL: func.func @c64_transpose_4d
// CHECK: stablehlo.transpose {{.*}} : (tensor<2x2x4x8xcomplex<f32>>) -> tensor<2x2x8x4xcomplex<f32>>
func.func @c64_transpose_4d(%a: tensor<2x2x4x8xcomplex<f32>>) -> tensor<2x2x8x4xcomplex<f32>> {
  %0 = stablehlo.transpose %a, dims = [0, 1, 3, 2] : (tensor<2x2x4x8xcomplex<f32>>) -> tensor<2x2x8x4xcomplex<f32>>
  return %0 : tensor<2x2x8x4xcomplex<f32>>
}

// -----

/// A c64 broadcast along a new minor dim (a column) goes as pairs too: the
/// minor-dim plan (minor_dim_plan.py) puts several rows of pairs in a register.
// CHECK-LABEL: func.func @c64_column
// CHECK: stablehlo.broadcast_in_dim {{.*}} dims = [0, 2] : (tensor<4x2xf32>) -> tensor<4x8x2xf32>
func.func @c64_column(%a: tensor<4xcomplex<f32>>) -> tensor<4x8xcomplex<f32>> {
  %0 = stablehlo.broadcast_in_dim %a, dims = [0] : (tensor<4xcomplex<f32>>) -> tensor<4x8xcomplex<f32>>
  return %0 : tensor<4x8xcomplex<f32>>
}

// -----

// CHECK-LABEL: func.func @c64_row
// CHECK: stablehlo.broadcast_in_dim %{{.*}}, dims = [1, 2] : (tensor<8x2xf32>) -> tensor<4x8x2xf32>
func.func @c64_row(%a: tensor<8xcomplex<f32>>) -> tensor<4x8xcomplex<f32>> {
  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<8xcomplex<f32>>) -> tensor<4x8xcomplex<f32>>
  return %0 : tensor<4x8xcomplex<f32>>
}

// -----

/// A select on compares of the parts (complex max as xla-expand-complex-ops
/// writes it) stays complex: as pairs its fused kernel failed LLVM translation.
// CHECK-LABEL: func.func @max_by_parts
// CHECK: stablehlo.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<4xi1>, tensor<4xcomplex<f32>>
func.func @max_by_parts(%a: tensor<4xcomplex<f32>>, %b: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %ra = stablehlo.real %a : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
  %rb = stablehlo.real %b : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
  %gt = stablehlo.compare GT, %ra, %rb, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %0 = stablehlo.select %gt, %a, %b : tensor<4xi1>, tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

/// A module that only moves whole c64 numbers (a select in a called function,
/// a transpose, a gather) has no pair form worth it: its c64 values become
/// i64, the same 8 bytes, retyped in place, the callee with them.
// CHECK-LABEL: func.func @moved_bits
// CHECK-SAME: (%{{.*}}: tensor<3x4xi1>, %[[A:.*]]: tensor<4x3xi64>, %[[B:.*]]: tensor<3x4xi64>, %[[I:.*]]: tensor<2x1xi32>) -> (tensor<3x4xi64>, tensor<2x4xi64>)
// CHECK: %[[T:.*]] = stablehlo.transpose %[[A]], dims = [1, 0] : (tensor<4x3xi64>) -> tensor<3x4xi64>
// CHECK: %[[S:.*]] = call @where(%{{.*}}, %[[T]], %[[B]]) : (tensor<3x4xi1>, tensor<3x4xi64>, tensor<3x4xi64>) -> tensor<3x4xi64>
// CHECK: "stablehlo.gather"(%[[S]], %[[I]])
// CHECK-SAME: (tensor<3x4xi64>, tensor<2x1xi32>) -> tensor<2x4xi64>
// CHECK-LABEL: func.func private @where
// CHECK: stablehlo.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<3x4xi1>, tensor<3x4xi64>
func.func @moved_bits(%p: tensor<3x4xi1>, %a: tensor<4x3xcomplex<f32>>, %b: tensor<3x4xcomplex<f32>>, %i: tensor<2x1xi32>) -> (tensor<3x4xcomplex<f32>>, tensor<2x4xcomplex<f32>>) {
  %t = stablehlo.transpose %a, dims = [1, 0] : (tensor<4x3xcomplex<f32>>) -> tensor<3x4xcomplex<f32>>
  %0 = call @where(%p, %t, %b) : (tensor<3x4xi1>, tensor<3x4xcomplex<f32>>, tensor<3x4xcomplex<f32>>) -> tensor<3x4xcomplex<f32>>
  %g = "stablehlo.gather"(%0, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>}> : (tensor<3x4xcomplex<f32>>, tensor<2x1xi32>) -> tensor<2x4xcomplex<f32>>
  return %0, %g : tensor<3x4xcomplex<f32>>, tensor<2x4xcomplex<f32>>
}
func.func private @where(%p: tensor<3x4xi1>, %a: tensor<3x4xcomplex<f32>>, %b: tensor<3x4xcomplex<f32>>) -> tensor<3x4xcomplex<f32>> {
  %0 = stablehlo.select %p, %a, %b : tensor<3x4xi1>, tensor<3x4xcomplex<f32>>
  return %0 : tensor<3x4xcomplex<f32>>
}

// -----

/// c128 has no 16-byte integer lanes: a c128 select keeps its complex tensors.
// CHECK-LABEL: func.func @c128_select
// CHECK: stablehlo.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<4xi1>, tensor<4xcomplex<f64>>
func.func @c128_select(%p: tensor<4xi1>, %a: tensor<4xcomplex<f64>>, %b: tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>> {
  %0 = stablehlo.select %p, %a, %b : tensor<4xi1>, tensor<4xcomplex<f64>>
  return %0 : tensor<4xcomplex<f64>>
}

// -----

/// A gather of whole c128 rows: the pairs' table read as rows of parts (its
/// parts' dim merged with the row's), slices twice as long, the result's pairs
/// a reshape of the gathered rows.
// CHECK-LABEL: func.func @gather_rows
// CHECK-SAME: (%[[T:.*]]: tensor<6x4x2xf64>, %[[I:.*]]: tensor<3x1xi32>) -> tensor<3x4x2xf64>
// CHECK: %[[F:.*]] = stablehlo.reshape %[[T]] : (tensor<6x4x2xf64>) -> tensor<6x8xf64>
// CHECK: %[[G:.*]] = "stablehlo.gather"(%[[F]], %[[I]]) {{.*}}slice_sizes = array<i64: 1, 8>{{.*}} -> tensor<3x8xf64>
// CHECK: %[[P:.*]] = stablehlo.reshape %[[G]] : (tensor<3x8xf64>) -> tensor<3x4x2xf64>
// CHECK: return %[[P]]
func.func @gather_rows(%t: tensor<6x4xcomplex<f64>>, %i: tensor<3x1xi32>) -> tensor<3x4xcomplex<f64>> {
  %g = "stablehlo.gather"(%t, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1],
      collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>,
      indices_are_sorted = false, slice_sizes = array<i64: 1, 4>}> : (tensor<6x4xcomplex<f64>>, tensor<3x1xi32>) -> tensor<3x4xcomplex<f64>>
  return %g : tensor<3x4xcomplex<f64>>
}

// -----

/// A gather of c128 columns has no pair form: the module stays complex.
// CHECK-LABEL: func.func @gather_columns
// CHECK-SAME: tensor<6x4xcomplex<f64>>
func.func @gather_columns(%t: tensor<6x4xcomplex<f64>>, %i: tensor<3x1xi32>) -> tensor<6x3xcomplex<f64>> {
  %g = "stablehlo.gather"(%t, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [0],
      collapsed_slice_dims = [1], start_index_map = [1], index_vector_dim = 1>,
      indices_are_sorted = false, slice_sizes = array<i64: 6, 1>}> : (tensor<6x4xcomplex<f64>>, tensor<3x1xi32>) -> tensor<6x3xcomplex<f64>>
  return %g : tensor<6x3xcomplex<f64>>
}

// -----

/// A c64 exp goes as its parts (convert-complex-to-standard's form: exp(a/2)
/// twice where exp(a) overflows, a zero imaginary part kept +0), and with it
/// the module's multiplies as (ac - bd, ad + bc).
// CHECK-LABEL: func.func @c64_exp
// CHECK-SAME: (%[[A:.*]]: tensor<8x2xf32>) -> tensor<8x2xf32>
// CHECK: %[[RE:.*]] = stablehlo.reshape {{.*}} -> tensor<8xf32>
// CHECK: %[[IM:.*]] = stablehlo.reshape {{.*}} -> tensor<8xf32>
// CHECK: %[[E:.*]] = stablehlo.exponential %[[RE]] : tensor<8xf32>
// CHECK: %[[OVER:.*]] = stablehlo.compare EQ, %[[E]], %{{.*}}
// CHECK: %[[C:.*]] = stablehlo.cosine %[[IM]] : tensor<8xf32>
// CHECK: stablehlo.select %[[OVER]]
// CHECK: %[[S:.*]] = stablehlo.sine %[[IM]] : tensor<8xf32>
// CHECK: %[[ZERO:.*]] = stablehlo.compare EQ, %[[IM]], %{{.*}}
// CHECK: stablehlo.concatenate {{.*}}, dim = 1 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x2xf32>
// CHECK: stablehlo.subtract
// CHECK: %[[P:.*]] = stablehlo.concatenate
// CHECK: return %[[P]] : tensor<8x2xf32>
// CHECK-NOT: complex
func.func @c64_exp(%a: tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>> {
  %0 = stablehlo.exponential %a : tensor<8xcomplex<f32>>
  %1 = stablehlo.multiply %0, %a : tensor<8xcomplex<f32>>
  return %1 : tensor<8xcomplex<f32>>
}

// -----

/// A c128 exp stays complex: f64 has no vector polynomials, its pairs would
/// call libm per lane behind strided reads.
// CHECK-LABEL: func.func @c128_exp
// CHECK-SAME: tensor<8xcomplex<f64>>
// CHECK: stablehlo.exponential %{{.*}} : tensor<8xcomplex<f64>>
func.func @c128_exp(%a: tensor<8xcomplex<f64>>) -> tensor<8xcomplex<f64>> {
  %0 = stablehlo.exponential %a : tensor<8xcomplex<f64>>
  return %0 : tensor<8xcomplex<f64>>
}

// -----

/// A c64 sqrt as pairs: t = sqrt((|a| + |z|) / 2) in f64, no atan2, pow, cos or sin.
// CHECK-LABEL: func.func @c64_sqrt
// CHECK-SAME: (%[[A:.*]]: tensor<8x2xf32>) -> tensor<8x2xf32>
// CHECK: stablehlo.convert {{.*}} : (tensor<8xf32>) -> tensor<8xf64>
// CHECK: stablehlo.sqrt {{.*}} : tensor<8xf64>
// CHECK: stablehlo.sqrt {{.*}} : tensor<8xf64>
// CHECK: stablehlo.divide {{.*}} : tensor<8xf64>
// CHECK-NOT: stablehlo.atan2
// CHECK-NOT: stablehlo.power
// CHECK: stablehlo.concatenate {{.*}} -> tensor<8x2xf32>
// CHECK-NOT: complex
func.func @c64_sqrt(%a: tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>> {
  %0 = stablehlo.sqrt %a : tensor<8xcomplex<f32>>
  return %0 : tensor<8xcomplex<f32>>
}

// -----

/// A c64 log as pairs: log|z| (log1p of |z|^2 - 1 in f64 near 1) and atan2 as a
/// polynomial on the parts (no stablehlo.atan2, a libm call per lane).
// CHECK-LABEL: func.func @c64_log
// CHECK-SAME: tensor<4x3x2xf32>
// CHECK-NOT: stablehlo.atan2
// CHECK: stablehlo.log_plus_one {{.*}} : tensor<4x3xf32>
// CHECK: stablehlo.log {{.*}} : tensor<4x3xf32>
// CHECK-NOT: stablehlo.atan2
// CHECK: stablehlo.concatenate {{.*}} -> tensor<4x3x2xf32>
// CHECK-NOT: complex
func.func @c64_log(%a: tensor<4x3xcomplex<f32>>) -> tensor<4x3xcomplex<f32>> {
  %0 = stablehlo.log %a : tensor<4x3xcomplex<f32>>
  return %0 : tensor<4x3xcomplex<f32>>
}

// -----

/// c64 tanh, tan, expm1 and log1p as pairs in one module: expm1, cosine and sine
/// of f32 parts, which xla-approximate-math makes polynomials.
// CHECK-LABEL: func.func @c64_tanh_tan_expm1_log1p
// CHECK-SAME: (%[[A:.*]]: tensor<8x2xf32>) -> (tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>)
// CHECK: stablehlo.exponential_minus_one {{.*}} : tensor<8xf32>
// CHECK: stablehlo.cosine {{.*}} : tensor<8xf32>
// CHECK: stablehlo.sine {{.*}} : tensor<8xf32>
// CHECK-NOT: complex
func.func @c64_tanh_tan_expm1_log1p(%a: tensor<8xcomplex<f32>>) -> (tensor<8xcomplex<f32>>, tensor<8xcomplex<f32>>, tensor<8xcomplex<f32>>, tensor<8xcomplex<f32>>) {
  %0 = stablehlo.tanh %a : tensor<8xcomplex<f32>>
  %1 = stablehlo.tan %a : tensor<8xcomplex<f32>>
  %2 = stablehlo.exponential_minus_one %a : tensor<8xcomplex<f32>>
  %3 = stablehlo.log_plus_one %a : tensor<8xcomplex<f32>>
  return %0, %1, %2, %3 : tensor<8xcomplex<f32>>, tensor<8xcomplex<f32>>, tensor<8xcomplex<f32>>, tensor<8xcomplex<f32>>
}

// -----

/// A c128 sqrt stays complex (its f64 parts have no wider type for |z|^2).
// CHECK-LABEL: func.func @c128_sqrt
// CHECK: stablehlo.sqrt %{{.*}} : tensor<8xcomplex<f64>>
func.func @c128_sqrt(%a: tensor<8xcomplex<f64>>) -> tensor<8xcomplex<f64>> {
  %0 = stablehlo.sqrt %a : tensor<8xcomplex<f64>>
  return %0 : tensor<8xcomplex<f64>>
}
