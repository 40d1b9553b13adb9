// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-select-entry{entry=main})' --split-input-file | FileCheck %s

/// The entry becomes the only public function; helpers turn private.
// CHECK-LABEL: func.func public @main
// CHECK: func.func private @helper
// CHECK: func.func private @also_public
func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = func.call @helper(%arg0) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func private @helper(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  return %arg0 : tensor<2xf32>
}
func.func public @also_public(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  return %arg0 : tensor<2xf32>
}

// -----

/// A private entry is made public.
// CHECK-LABEL: func.func public @main
func.func private @main(%arg0: tensor<i32>) -> tensor<i32> {
  return %arg0 : tensor<i32>
}
