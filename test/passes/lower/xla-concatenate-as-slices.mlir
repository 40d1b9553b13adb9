// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-concatenate-as-slices)' --split-input-file | FileCheck %s

/// Along the innermost axis: each operand is copied into its columns.
// CHECK-LABEL: func.func @inner
// CHECK-SAME: (%[[A:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<4x5xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[S:.*]] = tensor.insert_slice %[[A]] into %[[E]][0, 0] [4, 3] [1, 1]
// CHECK: %[[R:.*]] = tensor.insert_slice %[[B]] into %[[S]][0, 3] [4, 5] [1, 1]
// CHECK-NOT: stablehlo.concatenate
// CHECK: return %[[R]]
func.func @inner(%a: tensor<4x3xf32>, %b: tensor<4x5xf32>) -> tensor<4x8xf32> {
  %r = stablehlo.concatenate %a, %b, dim = 1 : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

/// Trailing unit axes do not count: axis 1 is the innermost one longer than 1.
// CHECK-LABEL: func.func @inner_before_units
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0] [2, 3, 1] [1, 1, 1]
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 3, 0] [2, 3, 1] [1, 1, 1]
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 6, 0] [2, 1, 1] [1, 1, 1]
func.func @inner_before_units(%a: tensor<2x3x1xi8>, %b: tensor<2x1x1xi8>) -> tensor<2x7x1xi8> {
  %r = stablehlo.concatenate %a, %a, %b, dim = 1 : (tensor<2x3x1xi8>, tensor<2x3x1xi8>, tensor<2x1x1xi8>) -> tensor<2x7x1xi8>
  return %r : tensor<2x7x1xi8>
}

// -----

/// Along an outer axis, fused with other ops of its xla-fuse group, the
/// element-wise loop picks an operand per row and vectorizes: left as it is.
// CHECK-LABEL: func.func @outer_fused
// CHECK: stablehlo.concatenate
// CHECK-NOT: tensor.insert_slice
func.func @outer_fused(%a: tensor<4x3xf32>, %b: tensor<2x3xf32>) -> tensor<6x3xf32> {
  %r = stablehlo.concatenate %a, %b, dim = 0 {xla.fusion_group = 0 : i64} : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<6x3xf32>
  %n = stablehlo.negate %r {xla.fusion_group = 0 : i64} : tensor<6x3xf32>
  return %n : tensor<6x3xf32>
}

// -----

/// Along an outer axis, its operands computed in its kernel but nothing of
/// the kernel reading it (`jnp.stack([a*b, a+b])`): slices, each operand's
/// op writing its block (xla-write-blocks-in-place).
// CHECK-LABEL: func.func @outer_stacked
// CHECK: %[[M:.*]] = stablehlo.multiply
// CHECK: %[[A:.*]] = stablehlo.add
// CHECK: tensor.empty() : tensor<2x4x3xf32>
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0] [1, 4, 3] [1, 1, 1]
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[1, 0, 0] [1, 4, 3] [1, 1, 1]
// CHECK-NOT: stablehlo.concatenate
func.func @outer_stacked(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<2x4x3xf32> {
  %m = stablehlo.multiply %a, %b {xla.fusion_group = 0 : i64} : tensor<4x3xf32>
  %s = stablehlo.add %a, %b {xla.fusion_group = 0 : i64} : tensor<4x3xf32>
  %m3 = stablehlo.reshape %m {xla.fusion_group = 0 : i64} : (tensor<4x3xf32>) -> tensor<1x4x3xf32>
  %s3 = stablehlo.reshape %s {xla.fusion_group = 0 : i64} : (tensor<4x3xf32>) -> tensor<1x4x3xf32>
  %r = stablehlo.concatenate %m3, %s3, dim = 0 {xla.fusion_group = 0 : i64} : (tensor<1x4x3xf32>, tensor<1x4x3xf32>) -> tensor<2x4x3xf32>
  return %r : tensor<2x4x3xf32>
}

// -----

/// Along an outer axis but alone in its kernel (no group, or a group of one):
/// each operand is a contiguous block of the result, copied.
// CHECK-LABEL: func.func @outer_alone
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [4, 3] [1, 1]
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[4, 0] [2, 3] [1, 1]
// CHECK-LABEL: func.func @outer_group_of_one
// CHECK: tensor.insert_slice
// CHECK-NOT: stablehlo.concatenate
func.func @outer_alone(%a: tensor<4x3xi8>, %b: tensor<2x3xi8>) -> tensor<6x3xi8> {
  %r = stablehlo.concatenate %a, %b, dim = 0 : (tensor<4x3xi8>, tensor<2x3xi8>) -> tensor<6x3xi8>
  return %r : tensor<6x3xi8>
}
func.func @outer_group_of_one(%a: tensor<4x3xi8>, %b: tensor<2x3xi8>) -> tensor<6x3xi8> {
  %r = stablehlo.concatenate %a, %b, dim = 0 {xla.fusion_group = 7 : i64} : (tensor<4x3xi8>, tensor<2x3xi8>) -> tensor<6x3xi8>
  %n = stablehlo.negate %r {xla.fusion_group = 8 : i64} : tensor<6x3xi8>
  return %n : tensor<6x3xi8>
}

// -----

/// A dynamic shape has no static slices: left as it is.
// CHECK-LABEL: func.func @dynamic
// CHECK: stablehlo.concatenate
func.func @dynamic(%a: tensor<4x?xf32>, %b: tensor<4x5xf32>) -> tensor<4x?xf32> {
  %r = stablehlo.concatenate %a, %b, dim = 1 : (tensor<4x?xf32>, tensor<4x5xf32>) -> tensor<4x?xf32>
  return %r : tensor<4x?xf32>
}

// -----

/// A roll along the innermost axis (slices of one tensor side by side) that
/// an op of its kernel reads stays: as slices it would end the kernel's loop.
// CHECK-LABEL: func.func @roll_read_in_its_kernel
// CHECK: stablehlo.concatenate
// CHECK-NOT: tensor.insert_slice
func.func @roll_read_in_its_kernel(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = stablehlo.slice %x [0:4, 1:8] {xla.fusion_group = 2 : i64} : (tensor<4x8xf32>) -> tensor<4x7xf32>
  %b = stablehlo.slice %x [0:4, 0:1] {xla.fusion_group = 2 : i64} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %r = stablehlo.concatenate %a, %b, dim = 1 {xla.fusion_group = 2 : i64} : (tensor<4x7xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %n = stablehlo.add %r, %x {xla.fusion_group = 2 : i64} : tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}

// -----

/// The same roll as its kernel's result (no op of its group reads it), and a
/// concatenate of two tensors that its kernel reads: row copies.
// CHECK-LABEL: func.func @roll_as_result
// CHECK: tensor.insert_slice
// CHECK-NOT: stablehlo.concatenate
// CHECK-LABEL: func.func @two_tensors_read_in_their_kernel
// CHECK: tensor.insert_slice
// CHECK-NOT: stablehlo.concatenate
func.func @roll_as_result(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = stablehlo.slice %x [0:4, 1:8] {xla.fusion_group = 3 : i64} : (tensor<4x8xf32>) -> tensor<4x7xf32>
  %b = stablehlo.slice %x [0:4, 0:1] {xla.fusion_group = 3 : i64} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %r = stablehlo.concatenate %a, %b, dim = 1 {xla.fusion_group = 3 : i64} : (tensor<4x7xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
func.func @two_tensors_read_in_their_kernel(%x: tensor<4x3xf32>, %y: tensor<4x5xf32>) -> tensor<4x8xf32> {
  %r = stablehlo.concatenate %x, %y, dim = 1 {xla.fusion_group = 4 : i64} : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<4x8xf32>
  %n = stablehlo.negate %r {xla.fusion_group = 4 : i64} : tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}

// -----

/// A pad alone in its kernel (its value's scalar convert aside): a block of
/// the value above and below the operand, one on each side of its rows, and
/// the operand in the middle, each element of the result written once.
// CHECK-LABEL: func.func @pad
// CHECK-SAME: (%[[A:.*]]: tensor<4x6xf64>, %[[I:.*]]: tensor<i64>)
// CHECK: %[[V:.*]] = stablehlo.convert %[[I]]
// CHECK: %[[E:.*]] = tensor.empty() : tensor<6x10xf64>
// CHECK: %[[T:.*]] = stablehlo.broadcast_in_dim %[[V]], dims = [] : (tensor<f64>) -> tensor<1x10xf64>
// CHECK: %[[E1:.*]] = tensor.insert_slice %[[T]] into %[[E]][0, 0] [1, 10] [1, 1]
// CHECK: %[[B:.*]] = stablehlo.broadcast_in_dim %[[V]], dims = [] : (tensor<f64>) -> tensor<1x10xf64>
// CHECK: %[[E2:.*]] = tensor.insert_slice %[[B]] into %[[E1]][5, 0] [1, 10] [1, 1]
// CHECK: %[[L:.*]] = stablehlo.broadcast_in_dim %[[V]], dims = [] : (tensor<f64>) -> tensor<4x3xf64>
// CHECK: %[[E3:.*]] = tensor.insert_slice %[[L]] into %[[E2]][1, 0] [4, 3] [1, 1]
// CHECK: %[[R:.*]] = stablehlo.broadcast_in_dim %[[V]], dims = [] : (tensor<f64>) -> tensor<4x1xf64>
// CHECK: %[[E4:.*]] = tensor.insert_slice %[[R]] into %[[E3]][1, 9] [4, 1] [1, 1]
// CHECK: %[[P:.*]] = tensor.insert_slice %[[A]] into %[[E4]][1, 3] [4, 6] [1, 1]
// CHECK-NOT: stablehlo.pad
// CHECK: return %[[P]]
func.func @pad(%a: tensor<4x6xf64>, %i: tensor<i64>) -> tensor<6x10xf64> {
  %v = stablehlo.convert %i {xla.fusion_group = 0 : i64} : (tensor<i64>) -> tensor<f64>
  %p = stablehlo.pad %a, %v, low = [1, 3], high = [1, 1], interior = [0, 0] {xla.fusion_group = 0 : i64} : (tensor<4x6xf64>, tensor<f64>) -> tensor<6x10xf64>
  return %p : tensor<6x10xf64>
}

// -----

/// A pad fused with other ops of its kernel stays a pad (the kernel's loop
/// reads it per element); so does one with interior padding.
// CHECK-LABEL: func.func @pad_in_a_kernel
// CHECK: stablehlo.pad
// CHECK-NOT: tensor.insert_slice
// CHECK-LABEL: func.func @interior_pad
// CHECK: stablehlo.pad
// CHECK-NOT: tensor.insert_slice
func.func @pad_in_a_kernel(%a: tensor<4x6xf64>, %v: tensor<f64>) -> tensor<6x10xf64> {
  %p = stablehlo.pad %a, %v, low = [1, 3], high = [1, 1], interior = [0, 0] {xla.fusion_group = 0 : i64} : (tensor<4x6xf64>, tensor<f64>) -> tensor<6x10xf64>
  %n = stablehlo.negate %p {xla.fusion_group = 0 : i64} : tensor<6x10xf64>
  return %n : tensor<6x10xf64>
}

func.func @interior_pad(%a: tensor<4x6xf64>, %v: tensor<f64>) -> tensor<7x10xf64> {
  %p = stablehlo.pad %a, %v, low = [0, 3], high = [0, 1], interior = [1, 0] : (tensor<4x6xf64>, tensor<f64>) -> tensor<7x10xf64>
  return %p : tensor<7x10xf64>
}

// -----

/// A pad a window reads stays: the pooling pads each thread's chunk itself.
// CHECK-LABEL: func.func @pooled_pad
// CHECK: stablehlo.pad
// CHECK-NOT: tensor.insert_slice
func.func @pooled_pad(%a: tensor<4x6xf32>, %v: tensor<f32>) -> tensor<3x4xf32> {
  %p = stablehlo.pad %a, %v, low = [1, 1], high = [0, 0], interior = [0, 0] : (tensor<4x6xf32>, tensor<f32>) -> tensor<5x7xf32>
  %r = "stablehlo.reduce_window"(%p, %v) <{window_dimensions = array<i64: 3, 4>}> ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<5x7xf32>, tensor<f32>) -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// -----

/// Slices of one tensor joined again in order (a complex value's parts split
/// and joined, through reshapes back to the slices' shape) are that tensor:
/// no copy.
// CHECK-LABEL: func.func @reassembled
// CHECK-SAME: (%[[X:.*]]: tensor<4x8x2xf32>)
// CHECK-NOT: tensor.insert_slice
// CHECK-NOT: stablehlo.concatenate
// CHECK: return %[[X]]
func.func @reassembled(%x: tensor<4x8x2xf32>) -> tensor<4x8x2xf32> {
  %re = "stablehlo.slice"(%x) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 4, 8, 1>, strides = array<i64: 1, 1, 1>} : (tensor<4x8x2xf32>) -> tensor<4x8x1xf32>
  %im = "stablehlo.slice"(%x) {start_indices = array<i64: 0, 0, 1>, limit_indices = array<i64: 4, 8, 2>, strides = array<i64: 1, 1, 1>} : (tensor<4x8x2xf32>) -> tensor<4x8x1xf32>
  %r2 = stablehlo.reshape %re : (tensor<4x8x1xf32>) -> tensor<4x8xf32>
  %r3 = stablehlo.reshape %r2 : (tensor<4x8xf32>) -> tensor<4x8x1xf32>
  %r = stablehlo.concatenate %r3, %im, dim = 2 : (tensor<4x8x1xf32>, tensor<4x8x1xf32>) -> tensor<4x8x2xf32>
  return %r : tensor<4x8x2xf32>
}

// -----

/// Swapped parts are no reassembly: they stay copies.
// CHECK-LABEL: func.func @swapped
// CHECK: tensor.insert_slice
// CHECK: tensor.insert_slice
func.func @swapped(%x: tensor<4x8x2xf32>) -> tensor<4x8x2xf32> {
  %re = "stablehlo.slice"(%x) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 4, 8, 1>, strides = array<i64: 1, 1, 1>} : (tensor<4x8x2xf32>) -> tensor<4x8x1xf32>
  %im = "stablehlo.slice"(%x) {start_indices = array<i64: 0, 0, 1>, limit_indices = array<i64: 4, 8, 2>, strides = array<i64: 1, 1, 1>} : (tensor<4x8x2xf32>) -> tensor<4x8x1xf32>
  %r = stablehlo.concatenate %im, %re, dim = 2 : (tensor<4x8x1xf32>, tensor<4x8x1xf32>) -> tensor<4x8x2xf32>
  return %r : tensor<4x8x2xf32>
}

// -----

/// kernel-results=false (the CUDA pipeline): the stacked concatenate keeps the pick.
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-concatenate-as-slices{kernel-results=false})' --split-input-file | FileCheck %s --check-prefix=PICK
// PICK-LABEL: func.func @outer_stacked_pick
// PICK: stablehlo.concatenate
func.func @outer_stacked_pick(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<2x4x3xf32> {
  %m = stablehlo.multiply %a, %b {xla.fusion_group = 0 : i64} : tensor<4x3xf32>
  %s = stablehlo.add %a, %b {xla.fusion_group = 0 : i64} : tensor<4x3xf32>
  %m3 = stablehlo.reshape %m {xla.fusion_group = 0 : i64} : (tensor<4x3xf32>) -> tensor<1x4x3xf32>
  %s3 = stablehlo.reshape %s {xla.fusion_group = 0 : i64} : (tensor<4x3xf32>) -> tensor<1x4x3xf32>
  %r = stablehlo.concatenate %m3, %s3, dim = 0 {xla.fusion_group = 0 : i64} : (tensor<1x4x3xf32>, tensor<1x4x3xf32>) -> tensor<2x4x3xf32>
  return %r : tensor<2x4x3xf32>
}
