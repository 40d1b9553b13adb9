// REQUIRES: cuda-gpu
// RUN: xla-run %s --target cuda --input=4xf32=1,2,3,4 --input=4xf32=10,20,30,40 | FileCheck %s

/// Runs on the GPU: same numbers as the CPU target.
// CHECK: EXEC @main
// CHECK: result[0]: 4xf32=[11 22 33 44]
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
