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

// -----

/// lax.linalg.tridiagonal_solve (gtsv): LAPACK gets dl + 1, as jaxlib passes it;
/// dl's first element (and du's last) pass through to the results: their loop
/// results start as the operands, and only the slice LAPACK wrote goes back.
// CHECK: func.func private @sgtsv_(memref<1xi32>, memref<1xi32>, memref<1xf32>, memref<1xf32>, memref<1xf32>, memref<1xf32>, memref<1xi32>, memref<1xi32>)
// CHECK-LABEL: func.func private @xla_lapack_0(
// CHECK: %[[DL:.*]] = stablehlo.reshape %arg0 : (tensor<4xf32>) -> tensor<1x4xf32>
// CHECK: %[[DU:.*]] = stablehlo.reshape %arg2 : (tensor<4xf32>) -> tensor<1x4xf32>
// CHECK: scf.for %[[B:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %[[DL]], %{{.*}} = %{{.*}}, %{{.*}} = %[[DU]],
// CHECK: tensor.extract_slice %[[DL]][%[[B]], 1] [1, 3] [1, 1] : tensor<1x4xf32> to tensor<3xf32>
// CHECK: tensor.extract_slice %[[DU]][%[[B]], 0] [1, 3] [1, 1] : tensor<1x4xf32> to tensor<3xf32>
// CHECK: func.call @sgtsv_(
// CHECK: tensor.insert_slice %{{.*}} into %[[ACC]][%[[B]], 1] [1, 3] [1, 1] : tensor<3xf32> into tensor<1x4xf32>
func.func @main(%dl: tensor<4xf32>, %d: tensor<4xf32>, %du: tensor<4xf32>, %b: tensor<4x2xf32>) -> (tensor<4xf32>, tensor<4x2xf32>) {
  %0:5 = stablehlo.custom_call @lapack_sgtsv_ffi(%dl, %d, %du, %b) {mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x2xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x2xf32>, tensor<i32>)
  return %0#0, %0#3 : tensor<4xf32>, tensor<4x2xf32>
}

// -----

/// jax.scipy.linalg.hessenberg (gehrd): ilo and ihi come as i32 numbers, not
/// characters; at n = 1 the taus are empty and no slice of them is made.
// CHECK: func.func private @dgehrd_(memref<1xi32>, memref<1xi32>, memref<1xi32>, memref<1xf64>, memref<1xi32>, memref<1xf64>, memref<1xf64>, memref<1xi32>, memref<1xi32>)
// CHECK-LABEL: func.func private @xla_lapack_0(
// CHECK: scf.for
// CHECK: memref.alloc() : memref<0xf64>
// CHECK-NOT: tensor.extract_slice {{.*}} to tensor<0xf64>
// CHECK: arith.constant 1 : i32
// CHECK: arith.constant 1 : i32
// CHECK: arith.constant 1 : i32
// CHECK: func.call @dgehrd_(
// CHECK-NOT: tensor.insert_slice {{.*}} : tensor<0xf64>
// CHECK: scf.yield
func.func @main(%arg0: tensor<1x1xf64>) -> (tensor<1x1xf64>, tensor<0xf64>) {
  %0:3 = stablehlo.custom_call @lapack_dgehrd_ffi(%arg0) {mhlo.backend_config = {high = 1 : i32, low = 1 : i32}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]} : (tensor<1x1xf64>) -> (tensor<1x1xf64>, tensor<0xf64>, tensor<i32>)
  return %0#0, %0#1 : tensor<1x1xf64>, tensor<0xf64>
}

// -----

/// gehrd's ilo/ihi out of LAPACK's range are refused, not left to LAPACK's xerbla.
func.func @main(%arg0: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{lapack_sgehrd_ffi: low = 3, high = 2 are not LAPACK's 1 <= ilo <= max(1, ihi), min(ilo, n) <= ihi <= n for n = 4}}
  %0:3 = stablehlo.custom_call @lapack_sgehrd_ffi(%arg0) {mhlo.backend_config = {high = 2 : i32, low = 3 : i32}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<3xf32>, tensor<i32>)
  return %0#0 : tensor<4x4xf32>
}

// -----

/// jax.scipy.linalg.schur (gees): SELECT and BWORK are buffers LAPACK never
/// reads (no sorting); without Schur vectors (mode N) that result is zeros.
// CHECK: func.func private @cgees_(memref<1xi8>, memref<1xi8>, memref<1xi32>, memref<1xi32>, memref<1xcomplex<f32>>, memref<1xi32>, memref<1xi32>, memref<1xcomplex<f32>>, memref<1xcomplex<f32>>, memref<1xi32>, memref<1xcomplex<f32>>, memref<1xi32>, memref<1xf32>, memref<1xi32>, memref<1xi32>, i64, i64)
// CHECK-LABEL: func.func private @xla_lapack_0(
// CHECK: arith.constant 78 : i8
// CHECK: arith.constant 78 : i8
// CHECK: func.call @cgees_(
// CHECK: stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<3x3xcomplex<f32>>
func.func @main(%arg0: tensor<3x3xcomplex<f32>>) -> (tensor<3x3xcomplex<f32>>, tensor<3x3xcomplex<f32>>) {
  %0:5 = stablehlo.custom_call @lapack_cgees_ffi(%arg0) {mhlo.backend_config = {mode = 78 : ui8, sort = 78 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>]} : (tensor<3x3xcomplex<f32>>) -> (tensor<3x3xcomplex<f32>>, tensor<3x3xcomplex<f32>>, tensor<3xcomplex<f32>>, tensor<i32>, tensor<i32>)
  return %0#0, %0#1 : tensor<3x3xcomplex<f32>>, tensor<3x3xcomplex<f32>>
}

// -----

/// Sorting the eigenvalues needs a SELECT function the call does not carry.
func.func @main(%arg0: tensor<4x4xf64>) -> tensor<4x4xf64> {
  // expected-error @+1 {{lapack_dgees_ffi: sorting the eigenvalues (sort = 'S') is not supported}}
  %0:6 = stablehlo.custom_call @lapack_dgees_ffi(%arg0) {mhlo.backend_config = {mode = 86 : ui8, sort = 83 : ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>]} : (tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4x4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<i32>, tensor<i32>)
  return %0#0 : tensor<4x4xf64>
}
