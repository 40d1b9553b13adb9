// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-outline-top-k)' --split-input-file | FileCheck %s

/// chlo.top_k becomes a call of a declaration marked with k, which the
/// chlo legalization leaves alone (xla-lower-top-k defines it later).
// CHECK-LABEL: func.func @main
// CHECK: %[[R:.*]]:2 = call @xla_top_k_0(%{{.*}}) : (tensor<4x16xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>)
// CHECK: return %[[R]]#0, %[[R]]#1
// CHECK: func.func private @xla_top_k_0(tensor<4x16xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>) attributes {xla.top_k = 3 : i64}
func.func @main(%x: tensor<4x16xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>) {
  %values, %indices = chlo.top_k(%x, k = 3) : tensor<4x16xf32> -> (tensor<4x3xf32>, tensor<4x3xi32>)
  return %values, %indices : tensor<4x3xf32>, tensor<4x3xi32>
}

// -----

/// A large k is left to the sort.
// CHECK-LABEL: func.func @large_k
// CHECK: chlo.top_k
func.func @large_k(%x: tensor<4x400xf32>) -> (tensor<4x400xf32>, tensor<4x400xi32>) {
  %values, %indices = chlo.top_k(%x, k = 400) : tensor<4x400xf32> -> (tensor<4x400xf32>, tensor<4x400xi32>)
  return %values, %indices : tensor<4x400xf32>, tensor<4x400xi32>
}

// -----

/// jax.export's spelling: a composite named chlo.top_k (version 1) around
/// the full sort; its decomposition is left for symbol-dce.
// CHECK-LABEL: func.func @exported
// CHECK: %[[R:.*]]:2 = call @xla_top_k_0(%{{.*}}) : (tensor<4x16xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>)
// CHECK-NOT: stablehlo.composite
// CHECK: return %[[R]]#0, %[[R]]#1
// CHECK: func.func private @xla_top_k_0(tensor<4x16xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>) attributes {xla.top_k = 3 : i64}
func.func @exported(%x: tensor<4x16xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>) {
  %0:2 = stablehlo.composite "chlo.top_k" %x {composite_attributes = {k = 3 : i64}, decomposition = @chlo.top_k.impl, version = 1 : i32} : (tensor<4x16xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>)
  return %0#0, %0#1 : tensor<4x3xf32>, tensor<4x3xi32>
}
func.func private @chlo.top_k.impl(%x: tensor<4x16xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>) {
  %values, %indices = chlo.top_k(%x, k = 3) : tensor<4x16xf32> -> (tensor<4x3xf32>, tensor<4x3xi32>)
  return %values, %indices : tensor<4x3xf32>, tensor<4x3xi32>
}

// -----

/// A composite of another version, or with attributes this pass does not
/// know, may mean something else: its decomposition runs.
// CHECK-LABEL: func.func @other_version
// CHECK: stablehlo.composite "chlo.top_k"
// CHECK: stablehlo.composite "chlo.top_k"
func.func @other_version(%x: tensor<4x16xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %0:2 = stablehlo.composite "chlo.top_k" %x {composite_attributes = {k = 3 : i64}, decomposition = @chlo.top_k.impl, version = 2 : i32} : (tensor<4x16xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>)
  %1:2 = stablehlo.composite "chlo.top_k" %x {composite_attributes = {k = 3 : i64, recall_target = 0.9 : f32}, decomposition = @chlo.top_k.impl, version = 1 : i32} : (tensor<4x16xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>)
  return %0#0, %1#0 : tensor<4x3xf32>, tensor<4x3xf32>
}
func.func private @chlo.top_k.impl(%x: tensor<4x16xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>) {
  %values, %indices = chlo.top_k(%x, k = 3) : tensor<4x16xf32> -> (tensor<4x3xf32>, tensor<4x3xi32>)
  return %values, %indices : tensor<4x3xf32>, tensor<4x3xi32>
}

// -----

/// XLA's HLO translated to StableHLO: a custom call; largest = false asks
/// for the k smallest.
// CHECK-LABEL: func.func @custom_call_smallest
// CHECK: call @xla_top_k_0(%{{.*}}) : (tensor<4x16xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>)
// CHECK: func.func private @xla_top_k_0({{.*}}) attributes {xla.top_k = 3 : i64, xla.top_k_smallest}
func.func @custom_call_smallest(%x: tensor<4x16xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>) {
  %r:2 = stablehlo.custom_call @mhlo.topk(%x) {mhlo.attributes = {k = 3 : i64, largest = false}, mhlo.version = 1 : i64} : (tensor<4x16xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>)
  return %r#0, %r#1 : tensor<4x3xf32>, tensor<4x3xi32>
}

// -----

/// A custom call too large for the kernel becomes chlo.top_k (then a sort).
// CHECK-LABEL: func.func @custom_call_large_k
// CHECK: chlo.top_k(%{{.*}}, k = 400) : tensor<4x400xf32> -> (tensor<4x400xf32>, tensor<4x400xi32>)
// CHECK-NOT: custom_call
func.func @custom_call_large_k(%x: tensor<4x400xf32>) -> (tensor<4x400xf32>, tensor<4x400xi32>) {
  %r:2 = stablehlo.custom_call @mhlo.topk(%x) {mhlo.attributes = {k = 400 : i64}, mhlo.version = 1 : i64} : (tensor<4x400xf32>) -> (tensor<4x400xf32>, tensor<4x400xi32>)
  return %r#0, %r#1 : tensor<4x400xf32>, tensor<4x400xi32>
}
