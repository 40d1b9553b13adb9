// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-fuse{max-ops=3})' | FileCheck %s

/// A kernel already at max-ops still takes a broadcast scalar (and its splat
/// constant): they weigh nothing, being no instruction per element (the
/// multiplies weigh a quarter, the sines 1). Left out, the broadcast was written out whole and read back by each kernel using it
/// (GELU's erfc expansion fills 64 ops; its shared 0.5 and 1/sqrt(2) were two
/// full-size tensors read by every layer's kernel).
// CHECK-LABEL: func.func @full_kernel_takes_broadcast_scalar
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>)
// CHECK-NOT: stablehlo.broadcast_in_dim
// CHECK: %[[FIRST:.*]] = "xla.fusion"(%[[X]])
// CHECK: stablehlo.broadcast_in_dim
// CHECK: stablehlo.multiply
// CHECK: stablehlo.sine
// CHECK: {kind = "loop"} : (tensor<8xf32>) -> tensor<8xf32>
// CHECK: "xla.fusion"(%[[FIRST]])
// CHECK: stablehlo.broadcast_in_dim
// CHECK-COUNT-3: stablehlo.sine
// CHECK: stablehlo.multiply
// CHECK: {kind = "loop"} : (tensor<8xf32>) -> tensor<8xf32>
func.func @full_kernel_takes_broadcast_scalar(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c = stablehlo.constant dense<5.000000e-01> : tensor<f32>
  %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<8xf32>
  %v1 = stablehlo.multiply %x, %b : tensor<8xf32>
  %v2 = stablehlo.sine %v1 : tensor<8xf32>
  %v3 = stablehlo.sine %v2 : tensor<8xf32>
  %v4 = stablehlo.sine %v3 : tensor<8xf32>
  %v5 = stablehlo.sine %v4 : tensor<8xf32>
  %v6 = stablehlo.multiply %v5, %b : tensor<8xf32>
  return %v6 : tensor<8xf32>
}

// -----

/// A static slice weighs nothing either: in the kernel it is an offset in its
/// reader's index. Three ops (sine, concatenate, sine) fill max-ops=3,
/// and the four slices of the two rolls still join.
// CHECK-LABEL: func.func @slices_join_a_full_kernel
// CHECK: "xla.fusion"
// CHECK-COUNT-2: stablehlo.slice
// CHECK: stablehlo.concatenate
// CHECK: {kind = "loop"} : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NOT: "xla.fusion"
func.func @slices_join_a_full_kernel(%x: tensor<8xf32>) -> tensor<8xf32> {
  %n = stablehlo.sine %x : tensor<8xf32>
  %a = stablehlo.slice %n [1:8] : (tensor<8xf32>) -> tensor<7xf32>
  %b = stablehlo.slice %n [0:1] : (tensor<8xf32>) -> tensor<1xf32>
  %r = stablehlo.concatenate %a, %b, dim = 0 : (tensor<7xf32>, tensor<1xf32>) -> tensor<8xf32>
  %m = stablehlo.sine %r : tensor<8xf32>
  return %m : tensor<8xf32>
}

// -----

/// Adds, multiplies, subtracts, compares and selects on f32 weigh a quarter:
/// a series of them (a Chebyshev sum's steps, i0e's ~160) is one kernel where
/// max-ops alone would cut it. Eight such ops weigh 2 < max-ops=3.
// CHECK-LABEL: func.func @cheap_float_series_is_one_kernel
// CHECK-COUNT-1: "xla.fusion"
// CHECK-NOT: "xla.fusion"
func.func @cheap_float_series_is_one_kernel(%x: tensor<8xf32>, %c: tensor<8xf32>) -> tensor<8xf32> {
  %b1 = stablehlo.multiply %x, %c : tensor<8xf32>
  %b2 = stablehlo.subtract %b1, %c : tensor<8xf32>
  %b3 = stablehlo.add %b2, %x : tensor<8xf32>
  %b4 = stablehlo.multiply %b3, %x : tensor<8xf32>
  %b5 = stablehlo.subtract %b4, %b3 : tensor<8xf32>
  %b6 = stablehlo.add %b5, %c : tensor<8xf32>
  %p = stablehlo.compare GT, %b6, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
  %s = stablehlo.select %p, %b6, %b5 : tensor<8xi1>, tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

/// In f16 the same ops weigh 1 each (each may be widened and narrowed):
/// max-ops=3 cuts the series.
// CHECK-LABEL: func.func @f16_series_is_cut
// CHECK-COUNT-2: "xla.fusion"
func.func @f16_series_is_cut(%x: tensor<8xf16>, %c: tensor<8xf16>) -> tensor<8xf16> {
  %b1 = stablehlo.multiply %x, %c : tensor<8xf16>
  %b2 = stablehlo.subtract %b1, %c : tensor<8xf16>
  %b3 = stablehlo.add %b2, %x : tensor<8xf16>
  %b4 = stablehlo.multiply %b3, %x : tensor<8xf16>
  %b5 = stablehlo.subtract %b4, %x : tensor<8xf16>
  %b6 = stablehlo.add %b5, %c : tensor<8xf16>
  return %b6 : tensor<8xf16>
}
