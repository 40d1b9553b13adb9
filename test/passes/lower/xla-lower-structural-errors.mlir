// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-lower-structural)' --split-input-file --verify-diagnostics

/// A tuple returned from the function cannot be folded away.
// expected-error @+1 {{1 tuple op(s) could not be folded away}}
module {
  func.func @returns_tuple(%a: tensor<f32>) -> tuple<tensor<f32>> {
    // expected-error @+1 {{'stablehlo.tuple' cannot be lowered: the tuple reaches a function argument or result}}
    %t = stablehlo.tuple %a : tuple<tensor<f32>>
    return %t : tuple<tensor<f32>>
  }
}

// -----

/// A tuple argument cannot be folded away either.
// expected-error @+1 {{1 tuple op(s) could not be folded away}}
module {
  func.func @takes_tuple(%t: tuple<tensor<f32>>) -> tensor<f32> {
    // expected-error @+1 {{'stablehlo.get_tuple_element' cannot be lowered}}
    %a = stablehlo.get_tuple_element %t[0] : (tuple<tensor<f32>>) -> tensor<f32>
    return %a : tensor<f32>
  }
}
