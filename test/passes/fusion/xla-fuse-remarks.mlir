// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-fuse)' --xla-fusion-remarks --split-input-file --verify-diagnostics
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-fuse{remarks=true})' --split-input-file --verify-diagnostics

/// An expensive op read by two kernels is computed once, not copied into
/// each: both kernels say why they left it out.
func.func @expensive_two_consumers(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-remark @+2 {{not fused into the fusion rooted at 'stablehlo.negate' (line 10): producer has 2 consumers and is expensive}}
  // expected-remark @+1 {{not fused into the fusion rooted at 'stablehlo.multiply' (line 11): producer has 2 consumers and is expensive}}
  %e = stablehlo.exponential %x : tensor<4xf32>
  %n = stablehlo.negate %e : tensor<4xf32>
  %m = stablehlo.multiply %e, %e : tensor<4xf32>
  return %n, %m : tensor<4xf32>, tensor<4xf32>
}

// -----

/// A reduction's consumer cannot start before the reduction has seen its
/// whole input.
func.func @reduction_then_divide(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  // expected-remark @+1 {{reduction result needs a full pass over its input first}}
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<2x8xf32>, tensor<f32>) -> tensor<2xf32>
  %b = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<2xf32>) -> tensor<2x8xf32>
  %r = stablehlo.divide %x, %b : tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}

// -----

/// Log-softmax shape: the exponential feeds the max reduction and, through
/// it, the sum's kernel; pulling it into the sum's kernel would make that
/// kernel depend on itself. It joins the max reduction's kernel instead.
func.func @cycle(%x: tensor<2x8xf32>) -> tensor<2xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  // expected-remark @+1 {{not fused into the fusion rooted at 'stablehlo.reduce' (line 42): would make a cycle}}
  %e = stablehlo.exponential %x : tensor<2x8xf32>
  // expected-remark @+1 {{reduction result needs a full pass over its input first}}
  %m = stablehlo.reduce(%e init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<2x8xf32>, tensor<f32>) -> tensor<2xf32>
  %b = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<2xf32>) -> tensor<2x8xf32>
  %d = stablehlo.subtract %e, %b : tensor<2x8xf32>
  %s = stablehlo.reduce(%d init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<2x8xf32>, tensor<f32>) -> tensor<2xf32>
  return %s : tensor<2xf32>
}

// -----

/// An expensive op on a small tensor is not recomputed for each element of
/// the broadcast that follows it.
func.func @expensive_before_broadcast(%v: tensor<2x1xf32>, %x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-remark @+1 {{expensive op would be recomputed 8x (once per broadcast element)}}
  %r = stablehlo.rsqrt %v : tensor<2x1xf32>
  %b = stablehlo.broadcast_in_dim %r, dims = [0, 1] : (tensor<2x1xf32>) -> tensor<2x8xf32>
  %y = stablehlo.multiply %x, %b : tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

/// A dot read by two kernels stays on its own: fused, it would run twice.
func.func @dot_two_consumers(%x: tensor<4x8xf32>, %w: tensor<8x4xf32>, %b: tensor<4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  // expected-remark @+2 {{not fused into the fusion rooted at 'stablehlo.negate' (line 67): its result is also read by 1 op(s) outside the fusion; the dot would run twice}}
  // expected-remark @+1 {{not fused into the fusion rooted at 'stablehlo.add' (line 66): its result is also read by 1 op(s) outside the fusion; the dot would run twice}}
  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<4xf32>) -> tensor<4x4xf32>
  %a = stablehlo.add %d, %bb : tensor<4x4xf32>
  %n = stablehlo.negate %d : tensor<4x4xf32>
  return %a, %n : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

/// A reduction is no dot epilogue: the dot's result must be complete first.
func.func @dot_then_reduce(%x: tensor<4x8xf32>, %w: tensor<8x4xf32>) -> tensor<4xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  // expected-remark @+1 {{a reduction cannot be a dot's epilogue}}
  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %t = stablehlo.negate %d : tensor<4x4xf32>
  %s = stablehlo.reduce(%t init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

/// Reductions of one input along different dimensions do not share a kernel.
func.func @siblings_different_dims(%x: tensor<8x32xf32>) -> (tensor<8xf32>, tensor<32xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %rows = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<8x32xf32>, tensor<f32>) -> tensor<8xf32>
  // expected-remark @+1 {{not merged with the sibling kernel rooted at 'stablehlo.reduce' (line 88), which also reads the 8x32xf32 input: the siblings reduce over different dimensions}}
  %cols = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<8x32xf32>, tensor<f32>) -> tensor<32xf32>
  return %rows, %cols : tensor<8xf32>, tensor<32xf32>
}

// -----

/// Siblings that walk the input in different shapes do not share a kernel.
func.func @siblings_different_shapes(%x: tensor<8x32xf32>) -> (tensor<8xf32>, tensor<32x8xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %rows = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<8x32xf32>, tensor<f32>) -> tensor<8xf32>
  // expected-remark @+2 {{not merged with the sibling kernel rooted at 'stablehlo.reduce' (line 99), which also reads the 8x32xf32 input: the siblings iterate over different shapes (8x32xf32 vs 32x8xf32)}}
  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<8x32xf32>) -> tensor<32x8xf32>
  %n = stablehlo.negate %t : tensor<32x8xf32>
  return %rows, %n : tensor<8xf32>, tensor<32x8xf32>
}
