// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-check-support{target=cpu})' --split-input-file --verify-diagnostics

/// Every unsupported op is reported at its own location, not just the first.
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'stablehlo.custom_call' is not supported on cpu: @my_kernel names code outside the program that xlac does not have}}
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

// -----

/// A custom call's refusal names its target and says what to do instead;
/// JAX's LAPACK calls for jnp.linalg pass (xla-lower-custom-calls lowers them),
/// Schur's (gees) among them since it has a lowering.
func.func @main(%arg0: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{@xla_ffi_python_cpu_callback is a jax.pure_callback, io_callback or jax.debug.print: it calls back into the Python process that lowered the program}}
  %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {mhlo.backend_config = {index = 0 : ui64}} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  // expected-error @+1 {{@lapack_sormqr_ffi (applying Q of a QR factorization) has no xlac lowering yet}}
  %1 = stablehlo.custom_call @lapack_sormqr_ffi(%0) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  // expected-error @+1 {{@cusolver_syevd_ffi calls a GPU library or kernel: the program was lowered for a GPU; lower it for the CPU}}
  %2:3 = stablehlo.custom_call @cusolver_syevd_ffi(%0) : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4xf32>, tensor<i32>)
  %3:3 = stablehlo.custom_call @lapack_ssyevd_ffi(%0) {mhlo.backend_config = {mode = 86 : ui8, uplo = 76 : ui8}} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4xf32>, tensor<i32>)
  %4:6 = stablehlo.custom_call @lapack_sgees_ffi(%3#0) {mhlo.backend_config = {mode = 86 : ui8, sort = 78 : ui8}} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i32>, tensor<i32>)
  return %4#0 : tensor<4x4xf32>
}

// -----

/// jax.export's custom calls for symbolic shapes pass while the entry takes `?`
/// dims (a call's shapes decide them) ...
func.func @main(%arg0: tensor<?x4xf32>, %p: tensor<i1>) -> tensor<?x4xf32> {
  stablehlo.custom_call @shape_assertion(%p) {error_message = "b >= 1", has_side_effect = true} : (tensor<i1>) -> ()
  return %arg0 : tensor<?x4xf32>
}

// -----

/// ... and are refused, said why, where the shapes are static and one is left.
func.func @main(%arg0: tensor<5x4xf32>) -> tensor<5x4xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  // expected-error @+1 {{@stablehlo.dynamic_reduce_window is one of the ops jax.export writes for symbolic shapes}}
  %0 = stablehlo.custom_call @stablehlo.dynamic_reduce_window(%arg0, %z) : (tensor<5x4xf32>, tensor<f32>) -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}
