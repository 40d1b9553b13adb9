// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-select-entry{entry=forward})' --split-input-file --verify-diagnostics

/// A missing entry names the functions the module does have.
// expected-error @+1 {{no function @forward in the module (functions: @main, @loss)}}
module {
  func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    return %arg0 : tensor<2xf32>
  }
  func.func @loss(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    return %arg0 : tensor<2xf32>
  }
}

// -----

/// An entry without a body cannot be compiled.
module {
  // expected-error @+1 {{@forward is a declaration without a body}}
  func.func private @forward(%arg0: tensor<2xf32>) -> tensor<2xf32>
}
