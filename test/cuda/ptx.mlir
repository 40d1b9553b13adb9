// RUN: %PYTHON -c "import sys, xlac; print(xlac.compile(open(sys.argv[1]).read(), target='cuda').as_text('ptx'))" %s | FileCheck %s

/// An elementwise add + exp becomes one sm_90 kernel with libdevice's expf inlined.
// CHECK: .version 7.8
// CHECK: .target sm_90
// CHECK: .visible .entry main_kernel(
// CHECK-NOT: call
// CHECK: ex2.approx
func.func @main(%a: tensor<100x77xf32>, %b: tensor<100x77xf32>) -> tensor<100x77xf32> {
  %0 = stablehlo.add %a, %b : tensor<100x77xf32>
  %1 = stablehlo.exponential %0 : tensor<100x77xf32>
  return %1 : tensor<100x77xf32>
}
