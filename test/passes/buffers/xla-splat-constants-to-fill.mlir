// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-splat-constants-to-fill)' --split-input-file | FileCheck %s

/// A large splat is a fill of its one value: no element is written out.
// CHECK-LABEL: func.func @large
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<10000x10000xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[ONE]] : f32) outs(%[[E]] : tensor<10000x10000xf32>) -> tensor<10000x10000xf32>
// CHECK: return %[[F]]
// CHECK-NOT: dense<
func.func @large() -> tensor<10000x10000xf32> {
  %c = arith.constant dense<1.0> : tensor<10000x10000xf32>
  return %c : tensor<10000x10000xf32>
}

// -----

/// Integer splats too; small splats, non-splat and complex constants stay constants.
// CHECK-LABEL: func.func @others
// CHECK: linalg.fill ins(%{{.*}} : i8) outs(%{{.*}} : tensor<64x64xi8>)
// CHECK: arith.constant dense<2.000000e+00> : tensor<4x4xf32>
// CHECK: arith.constant dense<[1, 2]> : tensor<2xi32>
// CHECK: arith.constant dense<(1.500000e+00,2.500000e+00)> : tensor<64x64xcomplex<f32>>
func.func @others() -> (tensor<64x64xi8>, tensor<4x4xf32>, tensor<2xi32>, tensor<64x64xcomplex<f32>>) {
  %a = arith.constant dense<-3> : tensor<64x64xi8>
  %b = arith.constant dense<2.0> : tensor<4x4xf32>
  %c = arith.constant dense<[1, 2]> : tensor<2xi32>
  %d = arith.constant dense<(1.5, 2.5)> : tensor<64x64xcomplex<f32>>
  return %a, %b, %c, %d : tensor<64x64xi8>, tensor<4x4xf32>, tensor<2xi32>, tensor<64x64xcomplex<f32>>
}
