// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-inline-fusions)' --split-input-file --verify-diagnostics

/// A fusion kind outside loop|input|output|multi_output is refused.
func.func @bad_kind(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'xla.fusion' op expects a 'kind' attribute, one of loop, input, output, multi_output}}
  %0 = "xla.fusion"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    %1 = stablehlo.negate %a : tensor<4xf32>
    "xla.yield"(%1) : (tensor<4xf32>) -> ()
  }) {kind = "fast"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

/// The yield must hand out one value per result, of the result's type.
func.func @yield_types(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'xla.fusion' op expects 'xla.yield' operands of the result types}}
  %0 = "xla.fusion"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    %1 = stablehlo.convert %a : (tensor<4xf32>) -> tensor<4xf64>
    "xla.yield"(%1) : (tensor<4xf64>) -> ()
  }) {kind = "loop"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

/// The body reads only its arguments: a kernel's inputs are its operands.
func.func @reads_from_above(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'xla.fusion' op expects its body to read only its own arguments (the region is isolated)}}
  %0 = "xla.fusion"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    %1 = stablehlo.add %a, %y : tensor<4xf32>
    "xla.yield"(%1) : (tensor<4xf32>) -> ()
  }) {kind = "loop"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
