// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-check-support{target=cpu})' --split-input-file --verify-diagnostics

/// Every unsupported op is reported at its own location, not just the first.
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'stablehlo.custom_call' is not supported on cpu: custom calls name external code}}
  %0 = stablehlo.custom_call @my_kernel(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{'stablehlo.create_token' is not supported on cpu: tokens are not supported}}
  %t = "stablehlo.create_token"() : () -> !stablehlo.token
  // expected-error @+1 {{'stablehlo.infeed' is not supported on cpu: host communication}}
  %1:2 = "stablehlo.infeed"(%t) : (!stablehlo.token) -> (tensor<4xf32>, !stablehlo.token)
  return %0 : tensor<4xf32>
}

// -----

/// Supported ops pass silently.
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<4xf32>
  %1 = stablehlo.exponential %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
