// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-constant-arguments-to-globals)' --split-input-file --verify-diagnostics | FileCheck %s

/// Each marked argument is read from an external constant global named after
/// its index, and leaves the signature: the caller passes x and the output.
// CHECK: module attributes {xla.constant_arguments = [dense<1.000000e+00> : tensor<128xf32>, dense<2> : tensor<64xi32>]}
// CHECK-DAG: memref.global constant @__xlac_constant_0 : memref<128xf32> {alignment = 64 : i64}
// CHECK-DAG: memref.global constant @__xlac_constant_1 : memref<64xi32> {alignment = 64 : i64}
// CHECK-LABEL: func.func public @main
// CHECK-SAME: (%[[X:.*]]: memref<128xf32> {llvm.noalias}, %[[OUT:.*]]: memref<128xf32>, %[[COPY:.*]]: memref<64xi32>)
// CHECK-DAG: %[[W:.*]] = memref.get_global @__xlac_constant_0 : memref<128xf32>
// CHECK-DAG: %[[N:.*]] = memref.get_global @__xlac_constant_1 : memref<64xi32>
// CHECK: linalg.add ins(%[[X]], %[[W]] : memref<128xf32>, memref<128xf32>) outs(%[[OUT]] : memref<128xf32>)
// CHECK: memref.copy %[[N]], %[[COPY]]
module attributes {xla.constant_arguments = [dense<1.0> : tensor<128xf32>, dense<2> : tensor<64xi32>]} {
  func.func public @main(%x: memref<128xf32> {llvm.noalias}, %w: memref<128xf32> {xla.constant = 0 : i64},
                         %n: memref<64xi32> {xla.constant = 1 : i64}, %out: memref<128xf32>,
                         %copy: memref<64xi32>) {
    linalg.add ins(%x, %w : memref<128xf32>, memref<128xf32>) outs(%out : memref<128xf32>)
    memref.copy %n, %copy : memref<64xi32> to memref<64xi32>
    return
  }
}

// -----

/// A program without constant arguments is left as it is.
// CHECK-LABEL: func.func public @plain
// CHECK-SAME: (%{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>)
// CHECK-NOT: memref.global
func.func public @plain(%x: memref<4xf32>, %out: memref<4xf32>) {
  memref.copy %x, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

/// Marks lost on the way are a bug, reported rather than leaving the code
/// reading arguments no caller passes.
// expected-error @+1 {{2 constant argument(s) listed in xla.constant_arguments, 1 found on the entry}}
module attributes {xla.constant_arguments = [dense<1.0> : tensor<128xf32>, dense<2> : tensor<64xi32>]} {
  func.func public @lost(%x: memref<128xf32>, %w: memref<128xf32> {xla.constant = 0 : i64}) {
    return
  }
}
