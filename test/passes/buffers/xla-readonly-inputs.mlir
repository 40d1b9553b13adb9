// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-readonly-inputs)' --split-input-file | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-readonly-inputs,xla-lower-to-linalg,xla-bufferize)' --split-input-file | FileCheck %s --check-prefix=BUF

/// Public arguments become read-only; existing argument attributes are kept.
// CHECK-LABEL: func.func @main
// CHECK-SAME: %{{.*}}: tensor<4xf32> {bufferization.writable = false, jax.arg_info = "x"}
// CHECK-SAME: %{{.*}}: tensor<1xf32> {bufferization.writable = false}
// CHECK-LABEL: func.func private @helper
// CHECK-NOT: writable
/// An in-place update of an input writes into a fresh buffer, not the argument.
// BUF-LABEL: func.func @main
// BUF-SAME: (%[[X:[a-z0-9]+]]: memref<4xf32>
// BUF-SAME: %[[OUT:[a-z0-9]+]]: memref<4xf32>)
// BUF-NOT: memref.store {{.*}}, %[[X]]
// BUF-NOT: outs(%[[X]]
func.func @main(%x: tensor<4xf32> {jax.arg_info = "x"}, %u: tensor<1xf32>) -> tensor<4xf32> {
  %i = stablehlo.constant dense<1> : tensor<i32>
  %0 = stablehlo.dynamic_update_slice %x, %u, %i : (tensor<4xf32>, tensor<1xf32>, tensor<i32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
