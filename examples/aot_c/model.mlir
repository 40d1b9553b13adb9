// A one-layer perceptron: y = tanh(x @ w + b), and the row sums of y.
// Compiled ahead of time by examples/aot_c/CMakeLists.txt (xlac_add_aot_library).
func.func public @main(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>, %b: tensor<3xf32>)
    -> (tensor<2x3xf32>, tensor<2xf32>) {
  %xw = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0]
      : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %z = stablehlo.add %xw, %bb : tensor<2x3xf32>
  %y = stablehlo.tanh %z : tensor<2x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%y init: %zero) applies stablehlo.add across dimensions = [1]
      : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  return %y, %s : tensor<2x3xf32>, tensor<2xf32>
}
