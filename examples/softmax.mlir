// Row softmax of a 4x8 matrix, as jax.jit(jax.nn.softmax).lower(x) exports it.
module @jit_softmax {
  func.func public @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %max = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
    %maxb = stablehlo.broadcast_in_dim %max, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
    %shifted = stablehlo.subtract %x, %maxb : tensor<4x8xf32>
    %exp = stablehlo.exponential %shifted : tensor<4x8xf32>
    %zero = stablehlo.constant dense<0.0> : tensor<f32>
    %sum = stablehlo.reduce(%exp init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
    %sumb = stablehlo.broadcast_in_dim %sum, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
    %y = stablehlo.divide %exp, %sumb : tensor<4x8xf32>
    return %y : tensor<4x8xf32>
  }
}
