// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-lower-control-flow)' --split-input-file --verify-diagnostics

/// A loop that carries a token is reported at the loop, not lowered halfway.
func.func @token_loop(%t: !stablehlo.token, %p: tensor<i1>) -> !stablehlo.token {
  // expected-error @+1 {{'stablehlo.while' with a value of type !stablehlo.token cannot be lowered: only ranked tensors are supported}}
  %r = stablehlo.while(%v = %t) : !stablehlo.token
  cond {
    stablehlo.return %p : tensor<i1>
  } do {
    stablehlo.return %v : !stablehlo.token
  }
  return %r : !stablehlo.token
}
