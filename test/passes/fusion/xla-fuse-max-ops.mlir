// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-fuse{max-ops=3})' | FileCheck %s

/// A kernel already at max-ops still takes a broadcast scalar (and its splat
/// constant): they weigh nothing, being no instruction per element. Left out,
/// the broadcast was written out whole and read back by each kernel using it
/// (GELU's erfc expansion fills 64 ops; its shared 0.5 and 1/sqrt(2) were two
/// full-size tensors read by every layer's kernel).
// CHECK-LABEL: func.func @full_kernel_takes_broadcast_scalar
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>)
// CHECK-NOT: stablehlo.broadcast_in_dim
// CHECK: %[[FIRST:.*]] = "xla.fusion"(%[[X]])
// CHECK: stablehlo.broadcast_in_dim
// CHECK: stablehlo.multiply
// CHECK: stablehlo.negate
// CHECK: {kind = "loop"} : (tensor<8xf32>) -> tensor<8xf32>
// CHECK: "xla.fusion"(%[[FIRST]])
// CHECK: stablehlo.broadcast_in_dim
// CHECK-COUNT-2: stablehlo.negate
// CHECK: stablehlo.multiply
// CHECK: {kind = "loop"} : (tensor<8xf32>) -> tensor<8xf32>
func.func @full_kernel_takes_broadcast_scalar(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c = stablehlo.constant dense<5.000000e-01> : tensor<f32>
  %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<8xf32>
  %v1 = stablehlo.multiply %x, %b : tensor<8xf32>
  %v2 = stablehlo.negate %v1 : tensor<8xf32>
  %v3 = stablehlo.negate %v2 : tensor<8xf32>
  %v4 = stablehlo.negate %v3 : tensor<8xf32>
  %v5 = stablehlo.multiply %v4, %b : tensor<8xf32>
  return %v5 : tensor<8xf32>
}

// -----

/// A static slice weighs nothing either: in the kernel it is an offset in its
/// reader's index. Three ops (negate, concatenate, multiply) fill max-ops=3,
/// and the four slices of the two rolls still join.
// CHECK-LABEL: func.func @slices_join_a_full_kernel
// CHECK: "xla.fusion"
// CHECK-COUNT-2: stablehlo.slice
// CHECK: stablehlo.concatenate
// CHECK: {kind = "loop"} : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NOT: "xla.fusion"
func.func @slices_join_a_full_kernel(%x: tensor<8xf32>) -> tensor<8xf32> {
  %n = stablehlo.negate %x : tensor<8xf32>
  %a = stablehlo.slice %n [1:8] : (tensor<8xf32>) -> tensor<7xf32>
  %b = stablehlo.slice %n [0:1] : (tensor<8xf32>) -> tensor<1xf32>
  %r = stablehlo.concatenate %a, %b, dim = 0 : (tensor<7xf32>, tensor<1xf32>) -> tensor<8xf32>
  %m = stablehlo.multiply %r, %x : tensor<8xf32>
  return %m : tensor<8xf32>
}
