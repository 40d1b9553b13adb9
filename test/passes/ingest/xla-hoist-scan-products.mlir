// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-hoist-scan-products)' --split-input-file | FileCheck %s

/// An RNN step: h = tanh(xs[i] . concat(wa, wb) + h . u). The input's product
/// does not depend on h: one product of all of xs before the loop (the weights'
/// concatenation copied out with it), its row i read in the step; h's product
/// stays in the loop.
// CHECK-LABEL: func.func @scan
// CHECK-SAME: (%[[XS:.*]]: tensor<4x2x3xf32>, %[[WA:.*]]: tensor<3x2xf32>, %[[WB:.*]]: tensor<3x2xf32>, %[[U:.*]]: tensor<4x4xf32>
// CHECK: %[[W:.*]] = stablehlo.concatenate %[[WA]], %[[WB]], dim = 1
// CHECK: %[[P:.*]] = stablehlo.dot_general %[[XS]], %[[W]], contracting_dims = [2] x [0]{{.*}} -> tensor<4x2x4xf32>
// CHECK: stablehlo.while(%[[I:.*]] = %{{.*}}, %{{.*}} = %[[XS]]
// CHECK: } do {
// CHECK-NOT: stablehlo.dynamic_slice %{{.*}} sizes = [1, 2, 3]
// CHECK: %[[ROW:.*]] = stablehlo.dynamic_slice %[[P]], %[[I]], %[[Z:.*]], %[[Z]], sizes = [1, 2, 4]
// CHECK: %[[XW:.*]] = stablehlo.reshape %[[ROW]] : (tensor<1x2x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[HU:.*]] = stablehlo.dot_general %{{.*}}, %[[U]]
// CHECK: stablehlo.add %[[XW]], %[[HU]]
func.func @scan(%xs: tensor<4x2x3xf32>, %wa: tensor<3x2xf32>, %wb: tensor<3x2xf32>, %u: tensor<4x4xf32>, %h0: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %four = stablehlo.constant dense<4> : tensor<i32>
  %r:5 = stablehlo.while(%i = %zero, %x = %xs, %a = %wa, %b = %wb, %h = %h0) : tensor<i32>, tensor<4x2x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<2x4xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %four, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %s = stablehlo.dynamic_slice %x, %i, %zero, %zero, sizes = [1, 2, 3] : (tensor<4x2x3xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x2x3xf32>
      %xt = stablehlo.reshape %s : (tensor<1x2x3xf32>) -> tensor<2x3xf32>
      %w = stablehlo.concatenate %a, %b, dim = 1 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x4xf32>
      %xw = stablehlo.dot_general %xt, %w, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
      %hu = stablehlo.dot_general %h, %u, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
      %sum = stablehlo.add %xw, %hu : tensor<2x4xf32>
      %next = stablehlo.tanh %sum : tensor<2x4xf32>
      %n = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %n, %x, %a, %b, %next : tensor<i32>, tensor<4x2x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<2x4xf32>
    }
  return %r#4 : tensor<2x4xf32>
}

// -----

/// Left in the loop: weights the loop changes (%w + 1 carried on), a sequence
/// the loop changes, a counter from 1, a sequence of more rows than trips, and
/// weights stored [n, k] (a step may be lowered otherwise than a matmul).
// CHECK-LABEL: func.func @not_invariant
// CHECK: stablehlo.while
// CHECK: stablehlo.dot_general
// CHECK-LABEL: func.func @sequence_changes
// CHECK: stablehlo.while
// CHECK: stablehlo.dot_general
// CHECK-LABEL: func.func @from_one
// CHECK: stablehlo.while
// CHECK: stablehlo.dot_general
// CHECK-LABEL: func.func @longer_sequence
// CHECK: stablehlo.while
// CHECK: stablehlo.dot_general
// CHECK-LABEL: func.func @weights_n_by_k
// CHECK: stablehlo.while
// CHECK: stablehlo.dot_general
func.func @not_invariant(%xs: tensor<4x2x3xf32>, %w0: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %four = stablehlo.constant dense<4> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<2x4xf32>
  %r:4 = stablehlo.while(%i = %zero, %x = %xs, %w = %w0, %acc = %z) : tensor<i32>, tensor<4x2x3xf32>, tensor<3x4xf32>, tensor<2x4xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %four, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %s = stablehlo.dynamic_slice %x, %i, %zero, %zero, sizes = [1, 2, 3] : (tensor<4x2x3xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x2x3xf32>
      %xt = stablehlo.reshape %s : (tensor<1x2x3xf32>) -> tensor<2x3xf32>
      %xw = stablehlo.dot_general %xt, %w, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
      %sum = stablehlo.add %acc, %xw : tensor<2x4xf32>
      %c1 = stablehlo.constant dense<1.0> : tensor<3x4xf32>
      %w1 = stablehlo.add %w, %c1 : tensor<3x4xf32>
      %n = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %n, %x, %w1, %sum : tensor<i32>, tensor<4x2x3xf32>, tensor<3x4xf32>, tensor<2x4xf32>
    }
  return %r#3 : tensor<2x4xf32>
}
func.func @sequence_changes(%xs: tensor<4x2x3xf32>, %w: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %four = stablehlo.constant dense<4> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<2x4xf32>
  %r:3 = stablehlo.while(%i = %zero, %x = %xs, %acc = %z) : tensor<i32>, tensor<4x2x3xf32>, tensor<2x4xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %four, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %s = stablehlo.dynamic_slice %x, %i, %zero, %zero, sizes = [1, 2, 3] : (tensor<4x2x3xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x2x3xf32>
      %xt = stablehlo.reshape %s : (tensor<1x2x3xf32>) -> tensor<2x3xf32>
      %xw = stablehlo.dot_general %xt, %w, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
      %sum = stablehlo.add %acc, %xw : tensor<2x4xf32>
      %x1 = stablehlo.negate %x : tensor<4x2x3xf32>
      %n = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %n, %x1, %sum : tensor<i32>, tensor<4x2x3xf32>, tensor<2x4xf32>
    }
  return %r#2 : tensor<2x4xf32>
}
func.func @from_one(%xs: tensor<4x2x3xf32>, %w: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %one = stablehlo.constant dense<1> : tensor<i32>
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %four = stablehlo.constant dense<4> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<2x4xf32>
  %r:3 = stablehlo.while(%i = %one, %x = %xs, %acc = %z) : tensor<i32>, tensor<4x2x3xf32>, tensor<2x4xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %four, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %s = stablehlo.dynamic_slice %x, %i, %zero, %zero, sizes = [1, 2, 3] : (tensor<4x2x3xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x2x3xf32>
      %xt = stablehlo.reshape %s : (tensor<1x2x3xf32>) -> tensor<2x3xf32>
      %xw = stablehlo.dot_general %xt, %w, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
      %sum = stablehlo.add %acc, %xw : tensor<2x4xf32>
      %n = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %n, %x, %sum : tensor<i32>, tensor<4x2x3xf32>, tensor<2x4xf32>
    }
  return %r#2 : tensor<2x4xf32>
}
func.func @longer_sequence(%xs: tensor<5x2x3xf32>, %w: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %four = stablehlo.constant dense<4> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<2x4xf32>
  %r:3 = stablehlo.while(%i = %zero, %x = %xs, %acc = %z) : tensor<i32>, tensor<5x2x3xf32>, tensor<2x4xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %four, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %s = stablehlo.dynamic_slice %x, %i, %zero, %zero, sizes = [1, 2, 3] : (tensor<5x2x3xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x2x3xf32>
      %xt = stablehlo.reshape %s : (tensor<1x2x3xf32>) -> tensor<2x3xf32>
      %xw = stablehlo.dot_general %xt, %w, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
      %sum = stablehlo.add %acc, %xw : tensor<2x4xf32>
      %n = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %n, %x, %sum : tensor<i32>, tensor<5x2x3xf32>, tensor<2x4xf32>
    }
  return %r#2 : tensor<2x4xf32>
}
func.func @weights_n_by_k(%xs: tensor<4x2x3xf32>, %w: tensor<4x3xf32>) -> tensor<2x4xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %four = stablehlo.constant dense<4> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<2x4xf32>
  %r:3 = stablehlo.while(%i = %zero, %x = %xs, %acc = %z) : tensor<i32>, tensor<4x2x3xf32>, tensor<2x4xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %four, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %s = stablehlo.dynamic_slice %x, %i, %zero, %zero, sizes = [1, 2, 3] : (tensor<4x2x3xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x2x3xf32>
      %xt = stablehlo.reshape %s : (tensor<1x2x3xf32>) -> tensor<2x3xf32>
      %xw = stablehlo.dot_general %xt, %w, contracting_dims = [1] x [1] : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
      %sum = stablehlo.add %acc, %xw : tensor<2x4xf32>
      %n = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %n, %x, %sum : tensor<i32>, tensor<4x2x3xf32>, tensor<2x4xf32>
    }
  return %r#2 : tensor<2x4xf32>
}
