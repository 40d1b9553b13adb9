// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-fuse)' --split-input-file | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-fuse)' --split-input-file --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

/// An elementwise chain with a broadcast becomes one loop fusion; the scalar
/// constant is copied in, the kernel's inputs become block arguments.
// CHECK-LABEL: func.func @loop_chain
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK: %[[F:.*]] = "xla.fusion"(%[[B]], %[[X]]) ({
// CHECK: ^bb0(%[[BIN:.*]]: tensor<8xf32>, %[[XIN:.*]]: tensor<4x8xf32>):
// CHECK: %[[BB:.*]] = stablehlo.broadcast_in_dim %[[BIN]]
// CHECK: %[[S:.*]] = stablehlo.add %[[XIN]], %[[BB]]
// CHECK: %[[C:.*]] = stablehlo.constant dense<0.000000e+00>
// CHECK: %[[Z:.*]] = stablehlo.broadcast_in_dim %[[C]]
// CHECK: %[[R:.*]] = stablehlo.maximum %[[S]], %[[Z]]
// CHECK: "xla.yield"(%[[R]])
// CHECK: }) {kind = "loop"}
// CHECK-NEXT: return %[[F]]
// LOC: loc(fused<"loop">[
func.func @loop_chain(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  %s = stablehlo.add %x, %bb : tensor<4x8xf32>
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %z = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
  %r = stablehlo.maximum %s, %z : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

/// A cheap producer of one input read by two kernels is copied into both, so
/// nothing is written to memory between them.
// CHECK-LABEL: func.func @cheap_producer_copied
// CHECK: %[[E:.*]] = "xla.fusion"
// CHECK: stablehlo.negate
// CHECK-NEXT: stablehlo.exponential
// CHECK: {kind = "loop"}
// CHECK: %[[M:.*]] = "xla.fusion"
// CHECK: stablehlo.negate
// CHECK-NEXT: stablehlo.multiply
// CHECK-NEXT: stablehlo.multiply
// CHECK: {kind = "loop"}
// CHECK-NEXT: return %[[E]], %[[M]]
func.func @cheap_producer_copied(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = stablehlo.negate %x : tensor<4xf32>
  %e = stablehlo.exponential %a : tensor<4xf32>
  %n = stablehlo.multiply %a, %y : tensor<4xf32>
  %m = stablehlo.multiply %n, %n : tensor<4xf32>
  return %e, %m : tensor<4xf32>, tensor<4xf32>
}

// -----

/// A producer of two inputs read by two kernels is computed once, by the
/// later one, which also writes it (multi-output); the other reads it. A copy
/// in each would read both inputs again, and a chain of them (a residual
/// stream) would be recomputed whole by every later kernel.
// CHECK-LABEL: func.func @binary_producer_once
// CHECK: %[[F:.*]]:2 = "xla.fusion"
// CHECK: %[[A:.*]] = stablehlo.add
// CHECK-NEXT: stablehlo.negate %[[A]]
// CHECK: {kind = "multi_output"}
// CHECK-NEXT: %[[E:.*]] = stablehlo.exponential %[[F]]#0
// CHECK-NEXT: return %[[E]], %[[F]]#1
func.func @binary_producer_once(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = stablehlo.add %x, %y : tensor<4xf32>
  %e = stablehlo.exponential %a : tensor<4xf32>
  %n = stablehlo.negate %a : tensor<4xf32>
  %m = stablehlo.multiply %n, %n : tensor<4xf32>
  return %e, %m : tensor<4xf32>, tensor<4xf32>
}

// -----

/// Input fusion: the reduction computes its producers in the same pass.
// CHECK-LABEL: func.func @sum_of_squares
// CHECK: "xla.fusion"
// CHECK: %[[SQ:.*]] = stablehlo.multiply
// CHECK: stablehlo.reduce(%[[SQ]] init:
// CHECK: {kind = "input"}
// CHECK-NOT: xla.fusion
func.func @sum_of_squares(%x: tensor<16x32xf32>) -> tensor<16xf32> {
  %sq = stablehlo.multiply %x, %x : tensor<16x32xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<16x32xf32>, tensor<f32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

/// An expensive producer read by a reduction and by another kernel joins
/// the reduction's kernel, which writes it out too (multi-output); the
/// reduction's result is read by a separate loop fusion.
// CHECK-LABEL: func.func @softmax
// CHECK: %[[F:.*]]:2 = "xla.fusion"
// CHECK: %[[E:.*]] = stablehlo.exponential
// CHECK: %[[S:.*]] = stablehlo.reduce(%[[E]] init:
// CHECK: "xla.yield"(%[[E]], %[[S]])
// CHECK: {kind = "multi_output"}
// CHECK: "xla.fusion"(%[[F]]#1, %[[F]]#0)
// CHECK: stablehlo.broadcast_in_dim
// CHECK: stablehlo.divide
// CHECK: {kind = "loop"}
func.func @softmax(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %e = stablehlo.exponential %x : tensor<2x64xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<2x64xf32>, tensor<f32>) -> tensor<2xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<2xf32>) -> tensor<2x64xf32>
  %r = stablehlo.divide %e, %sb : tensor<2x64xf32>
  return %r : tensor<2x64xf32>
}

// -----

/// Output fusion: a dot with its bias add and relu epilogue.
// CHECK-LABEL: func.func @dot_bias_relu
// CHECK: "xla.fusion"
// CHECK: stablehlo.dot_general
// CHECK: stablehlo.add
// CHECK: stablehlo.maximum
// CHECK: {kind = "output"}
// CHECK-NOT: xla.fusion
func.func @dot_bias_relu(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<32xf32>) -> tensor<8x32xf32>
  %s = stablehlo.add %d, %bb : tensor<8x32xf32>
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %z = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<8x32xf32>
  %r = stablehlo.maximum %s, %z : tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}

// -----

/// Output fusion: a convolution with its bias add.
// CHECK-LABEL: func.func @conv_bias
// CHECK: "xla.fusion"
// CHECK: stablehlo.convolution
// CHECK: stablehlo.add
// CHECK: {kind = "output"}
func.func @conv_bias(%x: tensor<1x8x8x4xf32>, %k: tensor<3x3x4x8xf32>, %b: tensor<8xf32>) -> tensor<1x6x6x8xf32> {
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x4xf32>, tensor<3x3x4x8xf32>) -> tensor<1x6x6x8xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [3] : (tensor<8xf32>) -> tensor<1x6x6x8xf32>
  %r = stablehlo.add %c, %bb : tensor<1x6x6x8xf32>
  return %r : tensor<1x6x6x8xf32>
}

// -----

/// Sibling fusion: two reductions of the same input, neither reading the
/// other, become one kernel that reads the input once.
// CHECK-LABEL: func.func @sibling_reductions
// CHECK-SAME: (%[[X:.*]]: tensor<8x32xf32>)
// CHECK: %[[F:.*]]:2 = "xla.fusion"(%[[X]])
// CHECK: %[[SUM:.*]] = stablehlo.reduce
// CHECK-SAME: applies stablehlo.add
// CHECK: %[[MAX:.*]] = stablehlo.reduce
// CHECK-SAME: applies stablehlo.maximum
// CHECK: "xla.yield"(%[[SUM]], %[[MAX]])
// CHECK: {kind = "multi_output"}
// CHECK: return %[[F]]#0, %[[F]]#1
func.func @sibling_reductions(%x: tensor<8x32xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %sum = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<8x32xf32>, tensor<f32>) -> tensor<8xf32>
  %max = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<8x32xf32>, tensor<f32>) -> tensor<8xf32>
  return %sum, %max : tensor<8xf32>, tensor<8xf32>
}

// -----

/// Kernels inside a while body are formed like those of a function body.
// CHECK-LABEL: func.func @in_while_body
// CHECK: stablehlo.while
// CHECK: do {
// CHECK: %[[J:.*]] = stablehlo.add
// CHECK: %[[T:.*]] = "xla.fusion"
// CHECK: stablehlo.multiply
// CHECK: stablehlo.tanh
// CHECK: {kind = "loop"}
// CHECK: stablehlo.return %[[J]], %[[T]]
func.func @in_while_body(%x: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %zero, %v = %x) : tensor<i32>, tensor<4xf32>
  cond {
    %c = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %one : tensor<i32>
    %s = stablehlo.multiply %v, %v : tensor<4xf32>
    %t = stablehlo.tanh %s : tensor<4xf32>
    stablehlo.return %j, %t : tensor<i32>, tensor<4xf32>
  }
  return %r#1 : tensor<4xf32>
}

// -----

/// A lone op is not a fusion.
// CHECK-LABEL: func.func @single_op
// CHECK-NOT: xla.fusion
// CHECK: stablehlo.exponential
func.func @single_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = stablehlo.exponential %x : tensor<4xf32>
  return %e : tensor<4xf32>
}

// -----

/// A small constant is copied into each kernel that reads it, never moved in.
/// Here the zero both reductions start from: the reduction of the dot stays
/// alone (no kernel of its own, so no copy), and reads the original outside.
/// Moved into the multi-output kernel, the zero would leave that kernel, go
/// through the lone reduction and come back into it through the broadcast:
/// a cycle.
// CHECK-LABEL: func.func @shared_init_stays_outside
// CHECK: %[[Z:.*]] = stablehlo.constant dense<0.000000e+00>
// CHECK: %[[G:.*]] = stablehlo.dot_general
// CHECK: %[[B:.*]] = stablehlo.reduce(%[[G]] init: %[[Z]])
// CHECK: %[[F:.*]]:2 = "xla.fusion"(%{{.*}}, %[[B]]) ({
// CHECK: stablehlo.constant dense<0.000000e+00>
// CHECK: stablehlo.reduce
// CHECK: stablehlo.broadcast_in_dim
// CHECK: stablehlo.add
// CHECK: "xla.yield"
// CHECK: }) {kind = "multi_output"} : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<4x8xf32>)
// CHECK-NEXT: return %[[F]]#0, %[[F]]#1
func.func @shared_init_stays_outside(%a: tensor<4x8xf32>, %x: tensor<16x4xf32>, %dy: tensor<16x8xf32>) -> (tensor<8xf32>, tensor<4x8xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %rows = stablehlo.reduce(%a init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
  %g = stablehlo.dot_general %x, %dy, contracting_dims = [0] x [0] : (tensor<16x4xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %b = stablehlo.reduce(%g init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  %s = stablehlo.add %a, %bb : tensor<4x8xf32>
  return %rows, %s : tensor<8xf32>, tensor<4x8xf32>
}

// -----

/// A roll (`jnp.roll`: two slices of one tensor side by side) read by two
/// kernels is copied into each, as a slice would be: a copy reads that one
/// tensor, which its reader reads anyway. Moved into one kernel instead, the
/// roll was written out whole (a multi-output) and read back by the other
/// (the shallow-water step's rolls: a buffer and a pass over memory each).
// CHECK-LABEL: func.func @roll_read_by_two_kernels
// CHECK: "xla.fusion"(%[[X:.*]]) ({
// CHECK: stablehlo.concatenate
// CHECK: stablehlo.add
// CHECK: {kind = "input"} : (tensor<8x8xf32>) -> tensor<8xf32>
// CHECK: "xla.fusion"(%[[X]]) ({
// CHECK: stablehlo.concatenate
// CHECK: stablehlo.multiply
// CHECK: {kind = "input"} : (tensor<8x8xf32>) -> tensor<8xf32>
func.func @roll_read_by_two_kernels(%x: tensor<8x8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %z = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %a = stablehlo.slice %x [1:8, 0:8] : (tensor<8x8xf32>) -> tensor<7x8xf32>
  %b = stablehlo.slice %x [0:1, 0:8] : (tensor<8x8xf32>) -> tensor<1x8xf32>
  %r = stablehlo.concatenate %a, %b, dim = 0 : (tensor<7x8xf32>, tensor<1x8xf32>) -> tensor<8x8xf32>
  %s = stablehlo.add %r, %x : tensor<8x8xf32>
  %p = stablehlo.multiply %r, %x : tensor<8x8xf32>
  %0 = stablehlo.reduce(%s init: %z) applies stablehlo.add across dimensions = [0] : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = stablehlo.reduce(%p init: %z) applies stablehlo.add across dimensions = [1] : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}

// -----

/// Two different tensors side by side are no roll: a copy in each reader would
/// read both again, so the concatenate joins one kernel, which writes it out.
// CHECK-LABEL: func.func @concatenate_of_two_tensors_read_by_two_kernels
// CHECK: %[[F:.*]]:2 = "xla.fusion"
// CHECK: stablehlo.concatenate
// CHECK: {kind = "multi_output"}
// CHECK: "xla.fusion"(%[[F]]#0
func.func @concatenate_of_two_tensors_read_by_two_kernels(%x: tensor<7x8xf32>, %y: tensor<1x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %z = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %r = stablehlo.concatenate %x, %y, dim = 0 : (tensor<7x8xf32>, tensor<1x8xf32>) -> tensor<8x8xf32>
  %s = stablehlo.add %r, %w : tensor<8x8xf32>
  %p = stablehlo.multiply %r, %w : tensor<8x8xf32>
  %0 = stablehlo.reduce(%s init: %z) applies stablehlo.add across dimensions = [0] : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = stablehlo.reduce(%p init: %z) applies stablehlo.add across dimensions = [1] : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}
