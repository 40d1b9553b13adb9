// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-lower-custom-calls)' --split-input-file --verify-diagnostics | FileCheck %s

/// jnp.linalg.eigh on the CPU: the LAPACK call becomes a call of ssyevd_ (the
/// Fortran ABI: every argument by pointer, then the hidden length of each
/// character argument), once per matrix, on a column-major copy.
// CHECK: func.func private @ssyevd_(memref<1xi8>, memref<1xi8>, memref<1xi32>, memref<1xf32>, memref<1xi32>, memref<1xf32>, memref<1xf32>, memref<1xi32>, memref<1xi32>, memref<1xi32>, memref<1xi32>, i64, i64)
// CHECK-LABEL: func.func private @xla_lapack_0(
// CHECK-SAME: %[[A:.*]]: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>, tensor<i32>)
// CHECK: %[[COLS:.*]] = stablehlo.transpose %[[A]], dims = [1, 0]
// CHECK: %[[FLAT:.*]] = stablehlo.reshape %[[COLS]] : (tensor<2x2xf32>) -> tensor<1x2x2xf32>
// CHECK: scf.for %[[B:.*]] = {{.*}} iter_args(
// CHECK: %[[BUF:.*]] = memref.alloc() : memref<2x2xf32>
// CHECK: %[[ONE:.*]] = tensor.extract_slice %[[FLAT]][%[[B]], 0, 0] [1, 2, 2] [1, 1, 1]
// CHECK: bufferization.materialize_in_destination %[[ONE]] in restrict writable %[[BUF]]
// CHECK: memref.alloc() : memref<21xf32>
// CHECK: memref.alloc() : memref<13xi32>
// CHECK: func.call @ssyevd_(
// CHECK: bufferization.to_tensor %[[BUF]] restrict writable
// CHECK: scf.yield
// CHECK: stablehlo.transpose {{.*}} dims = [1, 0]
// CHECK-LABEL: func.func @main
// CHECK: call @xla_lapack_0(%{{.*}}) : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>, tensor<i32>)
// CHECK-NOT: stablehlo.custom_call
func.func @main(%arg0: tensor<2x2xf32>) -> (tensor<2xf32>, tensor<2x2xf32>) {
  %0:3 = stablehlo.custom_call @lapack_ssyevd_ffi(%arg0) {mhlo.backend_config = {mode = 86 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]} : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>, tensor<i32>)
  return %0#1, %0#0 : tensor<2xf32>, tensor<2x2xf32>
}

// -----

/// A batch of matrices (batch dims major): one call per matrix; a vector
/// result (the pivots) needs no transpose.
// CHECK-LABEL: func.func private @xla_lapack_0(
// CHECK-SAME: tensor<2x3x4x4xf64>) -> (tensor<2x3x4x4xf64>, tensor<2x3x4xi32>, tensor<2x3xi32>)
// CHECK: stablehlo.transpose %{{.*}}, dims = [0, 1, 3, 2]
// CHECK: stablehlo.reshape %{{.*}} : (tensor<2x3x4x4xf64>) -> tensor<6x4x4xf64>
// CHECK: arith.constant 6 : index
// CHECK: func.call @dgetrf_(
// CHECK: stablehlo.reshape %{{.*}} : (tensor<6x4xi32>) -> tensor<2x3x4xi32>
// CHECK: stablehlo.reshape %{{.*}} : (tensor<6x1xi32>) -> tensor<2x3xi32>
func.func @main(%arg0: tensor<2x3x4x4xf64>) -> tensor<2x3x4xi32> {
  %0:3 = stablehlo.custom_call @lapack_dgetrf_ffi(%arg0) {mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "2"}, operand_layouts = [dense<[2, 3, 1, 0]> : tensor<4xindex>], result_layouts = [dense<[2, 3, 1, 0]> : tensor<4xindex>, dense<[2, 1, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>]} : (tensor<2x3x4x4xf64>) -> (tensor<2x3x4x4xf64>, tensor<2x3x4xi32>, tensor<2x3xi32>)
  return %0#1 : tensor<2x3x4xi32>
}

// -----

/// A layout other than JAX's is refused, naming it.
func.func @main(%arg0: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{lapack_spotrf_ffi: operand_layouts[0] = [1, 0] is not supported (expected JAX's [0, 1])}}
  %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%arg0) {mhlo.backend_config = {uplo = 76 : ui8}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<i32>)
  return %0#0 : tensor<4x4xf32>
}

// -----

/// Other custom calls are left for xla-check-support to refuse.
// CHECK-LABEL: func.func @main
// CHECK: stablehlo.custom_call @my_kernel
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.custom_call @my_kernel(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
