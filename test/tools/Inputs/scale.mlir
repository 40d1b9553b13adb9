func.func @main(%a: tensor<2x3xf32>, %b: tensor<f32>) -> (tensor<2x3xf32>, tensor<i1>) {
  %0 = stablehlo.broadcast_in_dim %b, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
  %1 = stablehlo.multiply %a, %0 : tensor<2x3xf32>
  %2 = stablehlo.compare GT, %b, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %1, %2 : tensor<2x3xf32>, tensor<i1>
}
func.func @double(%a: tensor<4xi32>) -> tensor<4xi32> {
  %0 = stablehlo.add %a, %a : tensor<4xi32>
  return %0 : tensor<4xi32>
}
