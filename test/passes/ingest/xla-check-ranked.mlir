// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-check-ranked)' --split-input-file --verify-diagnostics

/// Every op with an unranked operand or result is reported (chlo's legalization
/// would abort the process on some of them).
func.func @main(%arg0: tensor<*xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'chlo.sinh' has an unranked tensor (tensor<*x...>): xlac compiles tensors of known rank only}}
  %0 = chlo.sinh %arg0 : tensor<*xf32> -> tensor<*xf32>
  // expected-error @+1 {{'chlo.lgamma' has an unranked tensor}}
  %1 = chlo.lgamma %0 : tensor<*xf32> -> tensor<*xf32>
  return %1 : tensor<*xf32>
}

// -----

/// Ranked tensors, static or dynamic, pass silently.
func.func @main(%arg0: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = chlo.sinh %arg0 : tensor<?x4xf32> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
