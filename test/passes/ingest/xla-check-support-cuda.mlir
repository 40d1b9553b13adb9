// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-check-support{target=cuda})' --verify-diagnostics

/// LAPACK runs on the CPU only: on cuda the refusal says so.
func.func @main(%arg0: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{@lapack_spotrf_ffi (Cholesky factorization (jnp.linalg.cholesky)) calls LAPACK, which xlac runs on the CPU only: compile for target='cpu'}}
  %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%arg0) {mhlo.backend_config = {uplo = 76 : ui8}} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<i32>)
  return %0#0 : tensor<4x4xf32>
}
