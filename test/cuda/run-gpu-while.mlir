// REQUIRES: cuda-gpu
// RUN: xla-run %s --target cuda --input=4xf32=1,2,3,4 --input=i32=3 | FileCheck %s
// RUN: xla-run %s --target cuda --input=4xf32=1,2,3,4 --input=i32=0 | FileCheck %s --check-prefix=NONE

/// A data-dependent while on the GPU: the host reads the predicate back through
/// pinned memory each iteration (3 trips, then none).
// CHECK: result[0]: 4xf32=[8 16 24 32]
// NONE: result[0]: 4xf32=[1 2 3 4]
func.func @main(%x: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %two = stablehlo.constant dense<2.0> : tensor<4xf32>
  %r:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<4xf32>
    cond {
      %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %i1 = stablehlo.add %i, %c1 : tensor<i32>
      %v1 = stablehlo.multiply %v, %two : tensor<4xf32>
      stablehlo.return %i1, %v1 : tensor<i32>, tensor<4xf32>
    }
  return %r#1 : tensor<4xf32>
}
