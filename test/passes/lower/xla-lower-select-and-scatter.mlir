// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-lower-select-and-scatter)' --split-input-file --verify-diagnostics | FileCheck %s

/// A max-pool gradient becomes a call to a helper whose loops walk the
/// source, then each window; the regions become private functions.
// CHECK-LABEL: func.func private @xla_select_and_scatter_0_select
// CHECK-SAME: (%[[A:.*]]: tensor<f32>, %[[B:.*]]: tensor<f32>) -> tensor<i1>
// CHECK: %[[GE:.*]] = stablehlo.compare GE, %[[A]], %[[B]]
// CHECK: return %[[GE]]
// CHECK-LABEL: func.func private @xla_select_and_scatter_0_scatter
// CHECK: %[[SUM:.*]] = stablehlo.add
// CHECK: return %[[SUM]]
// CHECK-LABEL: func.func private @xla_select_and_scatter_0(
// CHECK-SAME: %[[OPERAND:.*]]: tensor<4x6xf32>, %[[SOURCE:.*]]: tensor<2x3xf32>, %[[INIT:.*]]: tensor<f32>
// CHECK: %[[FILL:.*]] = tensor.splat
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[FILL]]) -> (tensor<4x6xf32>)
// CHECK: scf.for {{.*}} -> (i1, index)
// CHECK: func.call @xla_select_and_scatter_0_select
// CHECK: func.call @xla_select_and_scatter_0_scatter
// CHECK: tensor.insert {{.*}} into %[[ACC]]
// CHECK-LABEL: func.func @max_pool_grad
// CHECK-SAME: (%[[X:.*]]: tensor<4x6xf32>, %[[G:.*]]: tensor<2x3xf32>)
// CHECK: %[[ZERO:.*]] = stablehlo.constant
// CHECK: %[[R:.*]] = call @xla_select_and_scatter_0(%[[X]], %[[G]], %[[ZERO]])
// CHECK-NOT: stablehlo.select_and_scatter
// CHECK: return %[[R]]
func.func @max_pool_grad(%x: tensor<4x6xf32>, %g: tensor<2x3xf32>) -> tensor<4x6xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %r = "stablehlo.select_and_scatter"(%x, %g, %zero) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %ge = stablehlo.compare GE, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %ge : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %sum = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %sum : tensor<f32>
  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}
    : (tensor<4x6xf32>, tensor<2x3xf32>, tensor<f32>) -> tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}

// -----

/// Padding shifts the window start: the operand position is s*stride + k - low.
// CHECK-LABEL: func.func private @xla_select_and_scatter_0(
// CHECK: %[[STRIDE:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[LOW:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[SCALED:.*]] = arith.muli %{{.*}}, %[[STRIDE]] : index
// CHECK-NEXT: %[[SHIFTED:.*]] = arith.addi %[[SCALED]], %{{.*}} : index
// CHECK-NEXT: %[[POS:.*]] = arith.subi %[[SHIFTED]], %[[LOW]] : index
// CHECK: arith.cmpi sge, %[[POS]]
// CHECK: arith.cmpi slt, %[[POS]]
// CHECK-LABEL: func.func @padded
// CHECK: call @xla_select_and_scatter_0
func.func @padded(%x: tensor<5xi32>, %g: tensor<3xi32>) -> tensor<5xi32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r = "stablehlo.select_and_scatter"(%x, %g, %zero) ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %ge = stablehlo.compare GE, %a, %b : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %ge : tensor<i1>
  }, {
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %sum = stablehlo.add %a, %b : tensor<i32>
    stablehlo.return %sum : tensor<i32>
  }) {window_dimensions = array<i64: 3>, window_strides = array<i64: 2>,
      padding = dense<[[1, 1]]> : tensor<1x2xi64>}
    : (tensor<5xi32>, tensor<3xi32>, tensor<i32>) -> tensor<5xi32>
  return %r : tensor<5xi32>
}

// -----

/// Dynamic shapes are reported, not lowered.
func.func @dynamic(%x: tensor<?xf32>, %g: tensor<?xf32>) -> tensor<?xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  // expected-error @+1 {{select_and_scatter: dynamic shapes are not supported}}
  %r = "stablehlo.select_and_scatter"(%x, %g, %zero) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %ge = stablehlo.compare GE, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %ge : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %sum = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %sum : tensor<f32>
  }) {window_dimensions = array<i64: 2>, window_strides = array<i64: 2>}
    : (tensor<?xf32>, tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

/// A constant that CSE shared between a region and the function is copied
/// into the region's function, which must be isolated.
// CHECK-LABEL: func.func private @xla_select_and_scatter_0_scatter
// CHECK: %[[TWO:.*]] = stablehlo.constant dense<2.000000e+00>
// CHECK: %[[SCALED:.*]] = stablehlo.multiply %{{.*}}, %[[TWO]]
// CHECK: return
// CHECK-LABEL: func.func @captured_constant
func.func @captured_constant(%x: tensor<4xf32>, %g: tensor<2xf32>) -> tensor<4xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %two = stablehlo.constant dense<2.0> : tensor<f32>
  %r = "stablehlo.select_and_scatter"(%x, %g, %zero) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %ge = stablehlo.compare GE, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %ge : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %scaled = stablehlo.multiply %b, %two : tensor<f32>
    %sum = stablehlo.add %a, %scaled : tensor<f32>
    stablehlo.return %sum : tensor<f32>
  }) {window_dimensions = array<i64: 2>, window_strides = array<i64: 2>}
    : (tensor<4xf32>, tensor<2xf32>, tensor<f32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

/// {windows=true}: no loops. Each window position a strided slice of the
/// operand; the picks (i32 positions) from the select region applied to
/// whole tensors; the output as [q, r] per strided dim, each window offset j
/// a compare of the shifted picks against the iota's positions, the scatter
/// region (add) on whole tensors; reshaped to the operand's shape.
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-lower-select-and-scatter{windows=true})' --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=WIN
// WIN-LABEL: func.func @windows
// WIN-NOT: scf.for
// WIN-NOT: call
// WIN: stablehlo.slice %arg0 [0:3:2, 0:5:2, 0:4]
// WIN: stablehlo.slice %arg0 [0:3:2, 1:6:2, 0:4]
// WIN: stablehlo.compare GE, {{.*}} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xi1>
// WIN: stablehlo.select {{.*}} : tensor<2x3x4xi1>, tensor<2x3x4xi32>
// WIN: stablehlo.iota dim = 1 : tensor<2x2x3x2x4xi32>
// WIN: stablehlo.compare EQ, {{.*}} : (tensor<2x2x3x2x4xi32>, tensor<2x2x3x2x4xi32>) -> tensor<2x2x3x2x4xi1>
// WIN: stablehlo.add {{.*}} : tensor<2x2x3x2x4xf32>
// WIN: stablehlo.reshape {{.*}} : (tensor<2x2x3x2x4xf32>) -> tensor<4x6x4xf32>
// WIN-NOT: stablehlo.select_and_scatter
func.func @windows(%x: tensor<4x6x4xf32>, %g: tensor<2x3x4xf32>) -> tensor<4x6x4xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %r = "stablehlo.select_and_scatter"(%x, %g, %zero) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %ge = stablehlo.compare GE, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %ge : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %sum = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %sum : tensor<f32>
  }) {window_dimensions = array<i64: 2, 2, 1>, window_strides = array<i64: 2, 2, 1>}
    : (tensor<4x6x4xf32>, tensor<2x3x4xf32>, tensor<f32>) -> tensor<4x6x4xf32>
  return %r : tensor<4x6x4xf32>
}

// -----

/// {windows=true}, NCHW (the minor dim strided): the same slices and picks;
/// the output's [q, r] split keeps the minor dim's r last, its q extent (3)
/// rounded up to whole vectors (16) by padding the picks with -1 (never a
/// position) and the source with 0, the excess sliced off at the end; each
/// position's number a constant table over the r dims, no iotas.
// WIN-LABEL: func.func @nchw
// WIN-NOT: scf.for
// WIN: stablehlo.slice %arg0 [0:1, 0:2, 0:3:2, 0:5:2]
// WIN: stablehlo.slice %arg0 [0:1, 0:2, 0:3:2, 1:6:2]
// WIN: %[[PICKS:.*]] = stablehlo.pad %{{.*}}, low = [0, 0, 0, 0], high = [0, 0, 0, 13], {{.*}} -> tensor<1x2x2x16xi32>
// WIN: stablehlo.pad %arg1, %{{.*}}, low = [0, 0, 0, 0], high = [0, 0, 0, 13], {{.*}} -> tensor<1x2x2x16xf32>
// WIN: stablehlo.reshape %[[PICKS]] : (tensor<1x2x2x16xi32>) -> tensor<4x16xi32>
// WIN: %[[TABLE:.*]] = stablehlo.constant dense<{{\[}}[0, 1], [2, 3]]> : tensor<2x2xi32>
// WIN: stablehlo.broadcast_in_dim %[[TABLE]], dims = [1, 3] : (tensor<2x2xi32>) -> tensor<4x2x16x2xi32>
// WIN: stablehlo.compare EQ, {{.*}} : (tensor<4x2x16x2xi32>, tensor<4x2x16x2xi32>) -> tensor<4x2x16x2xi1>
// WIN: %[[OUT:.*]] = stablehlo.reshape {{.*}} : (tensor<4x2x16x2xf32>) -> tensor<1x2x4x32xf32>
// WIN: stablehlo.slice %[[OUT]] [0:1, 0:2, 0:4, 0:6]
// WIN-NOT: stablehlo.select_and_scatter
func.func @nchw(%x: tensor<1x2x4x6xf32>, %g: tensor<1x2x2x3xf32>) -> tensor<1x2x4x6xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %r = "stablehlo.select_and_scatter"(%x, %g, %zero) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %ge = stablehlo.compare GE, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %ge : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %sum = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %sum : tensor<f32>
  }) {window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>}
    : (tensor<1x2x4x6xf32>, tensor<1x2x2x3xf32>, tensor<f32>) -> tensor<1x2x4x6xf32>
  return %r : tensor<1x2x4x6xf32>
}
