// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-lower-linalg-ops)' --split-input-file --verify-diagnostics | FileCheck %s

/// A batched lower-triangular left solve: forward substitution per batch
/// matrix, dividing by the diagonal.
// CHECK-LABEL: func.func private @xla_triangular_solve_0(
// CHECK-SAME: %[[A:.*]]: tensor<2x3x3xf32>, %[[B:.*]]: tensor<2x3x4xf32>
// CHECK: scf.for %[[BATCH:.*]] = {{.*}} iter_args(%{{.*}} = %[[B]])
// CHECK: %[[BAT:.*]] = arith.remui %[[BATCH]]
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[I:.*]] = arith.addi %[[ROW]], %{{.*}} : index
// CHECK: scf.for %[[K:.*]] = {{.*}} iter_args(%[[X:.*]] = %{{.*}}) -> (tensor<2x3x4xf32>)
// CHECK: %[[RHS:.*]] = tensor.extract %[[X]][%[[BAT]], %[[I]], %[[K]]]
// CHECK: %[[SUM:.*]] = scf.for %[[J:.*]] = %{{.*}} to %[[I]] step %{{.*}} iter_args(%[[S:.*]] = %[[RHS]]) -> (f32)
// CHECK: %[[AIJ:.*]] = tensor.extract %[[A]][%[[BAT]], %[[I]], %[[J]]]
// CHECK: %[[XJ:.*]] = tensor.extract %[[X]][%[[BAT]], %[[J]], %[[K]]]
// CHECK: %[[P:.*]] = arith.mulf %[[AIJ]], %[[XJ]]
// CHECK: arith.subf %[[S]], %[[P]]
// CHECK: %[[AII:.*]] = tensor.extract %[[A]][%[[BAT]], %[[I]], %[[I]]]
// CHECK: %[[V:.*]] = arith.divf %[[SUM]], %[[AII]]
// CHECK: tensor.insert %[[V]] into %[[X]][%[[BAT]], %[[I]], %[[K]]]
// CHECK-LABEL: func.func @solve
// CHECK: call @xla_triangular_solve_0
// CHECK-NOT: stablehlo.triangular_solve
func.func @solve(%a: tensor<2x3x3xf32>, %b: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %x = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true,
      unit_diagonal = false, transpose_a = #stablehlo<transpose NO_TRANSPOSE>}
      : (tensor<2x3x3xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %x : tensor<2x3x4xf32>
}

// -----

/// Right side with ADJOINT solves conj(a) y = b^T: a is read unswapped and
/// conjugated, b transposed; a unit diagonal means no division.
// CHECK-LABEL: func.func private @xla_triangular_solve_0(
// CHECK-SAME: %[[A:.*]]: tensor<3x3xcomplex<f32>>
// CHECK: %[[I:.*]] = arith.addi
// CHECK: scf.for %[[K:.*]] = {{.*}} iter_args(%[[X:.*]] = %{{.*}}) -> (tensor<2x3xcomplex<f32>>)
// CHECK: %[[RHS:.*]] = tensor.extract %[[X]][%[[K]], %[[I]]] :
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %[[I]]
// CHECK: %[[AIJ:.*]] = tensor.extract %[[A]][%[[I]], %[[J]]]
// CHECK: %[[CONJ:.*]] = complex.conj %[[AIJ]]
// CHECK: complex.mul %[[CONJ]]
// CHECK-NOT: complex.div
// CHECK: tensor.insert %{{.*}} into %[[X]][%[[K]], %[[I]]]
// CHECK-LABEL: func.func @adjoint_right
func.func @adjoint_right(%a: tensor<3x3xcomplex<f32>>, %b: tensor<2x3xcomplex<f32>>) -> tensor<2x3xcomplex<f32>> {
  %x = "stablehlo.triangular_solve"(%a, %b) {left_side = false, lower = true,
      unit_diagonal = true, transpose_a = #stablehlo<transpose ADJOINT>}
      : (tensor<3x3xcomplex<f32>>, tensor<2x3xcomplex<f32>>) -> tensor<2x3xcomplex<f32>>
  return %x : tensor<2x3xcomplex<f32>>
}

// -----

/// Upper with TRANSPOSE on the left is lower after the swap: a is read at
/// [j, i], forward substitution.
// CHECK-LABEL: func.func private @xla_triangular_solve_0(
// CHECK-SAME: %[[A:.*]]: tensor<3x3xf64>
// CHECK: %[[I:.*]] = arith.addi
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %[[I]] step
// CHECK: tensor.extract %[[A]][%[[J]], %[[I]]]
// CHECK-LABEL: func.func @transposed_upper
func.func @transposed_upper(%a: tensor<3x3xf64>, %b: tensor<3x1xf64>) -> tensor<3x1xf64> {
  %x = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = false,
      unit_diagonal = false, transpose_a = #stablehlo<transpose TRANSPOSE>}
      : (tensor<3x3xf64>, tensor<3x1xf64>) -> tensor<3x1xf64>
  return %x : tensor<3x1xf64>
}

// -----

/// Cholesky fills zeros, then writes L column by column: a square root on
/// the diagonal, a division below it. bf16 is computed in f32.
// CHECK-LABEL: func.func private @xla_cholesky_0(
// CHECK-SAME: %[[A:.*]]: tensor<3x3xbf16>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : bf16
// CHECK: %[[FILL:.*]] = tensor.splat %[[ZERO]] : tensor<3x3xbf16>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[FILL]])
// CHECK: %[[AJJ:.*]] = tensor.extract %[[A]]
// CHECK: %[[WIDE:.*]] = arith.extf %[[AJJ]] : bf16 to f32
// CHECK: %[[D:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[WIDE]]) -> (f32)
// CHECK: %[[ROOT:.*]] = math.sqrt %[[D]] : f32
// CHECK: %[[NARROW:.*]] = arith.truncf %[[ROOT]] : f32 to bf16
// CHECK: tensor.insert %[[NARROW]]
// CHECK: arith.divf %{{.*}}, %[[ROOT]] : f32
// CHECK-LABEL: func.func @cholesky_lower
func.func @cholesky_lower(%a: tensor<3x3xbf16>) -> tensor<3x3xbf16> {
  %l = "stablehlo.cholesky"(%a) {lower = true} : (tensor<3x3xbf16>) -> tensor<3x3xbf16>
  return %l : tensor<3x3xbf16>
}

// -----

/// Upper Cholesky of complex values computes U = L^H: reads and writes go
/// through [j, i] with a conjugate; the diagonal's root is real.
// CHECK-LABEL: func.func private @xla_cholesky_0(
// CHECK-SAME: %[[A:.*]]: tensor<2x2xcomplex<f64>>
// CHECK: %[[AJJ:.*]] = tensor.extract %[[A]][%[[J:.*]], %[[J]]]
// CHECK: complex.conj %[[AJJ]]
// CHECK: %[[RE:.*]] = complex.re
// CHECK: %[[ROOT:.*]] = math.sqrt %[[RE]] : f64
// CHECK: complex.create %[[ROOT]]
// CHECK: %[[AIJ:.*]] = tensor.extract %[[A]][%[[J]], %[[I:.*]]] :
// CHECK: complex.div
// CHECK: tensor.insert %{{.*}}[%[[J]], %[[I]]]
// CHECK-LABEL: func.func @cholesky_upper
func.func @cholesky_upper(%a: tensor<2x2xcomplex<f64>>) -> tensor<2x2xcomplex<f64>> {
  %u = "stablehlo.cholesky"(%a) {lower = false} : (tensor<2x2xcomplex<f64>>) -> tensor<2x2xcomplex<f64>>
  return %u : tensor<2x2xcomplex<f64>>
}

// -----

/// 8-bit floats have no lowering: a clear error at the op.
func.func @fp8(%a: tensor<2x2xf8E4M3FN>) -> tensor<2x2xf8E4M3FN> {
  // expected-error @+1 {{'stablehlo.cholesky' supports f16, bf16, f32, f64}}
  %l = "stablehlo.cholesky"(%a) {lower = true} : (tensor<2x2xf8E4M3FN>) -> tensor<2x2xf8E4M3FN>
  return %l : tensor<2x2xf8E4M3FN>
}
