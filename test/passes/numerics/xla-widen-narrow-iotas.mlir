// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-widen-narrow-iotas)' --split-input-file | FileCheck %s

/// A narrow float iota longer than its width's signed integers count is the
/// f32 iota converted once; shorter ones and f32 stay.
// CHECK-LABEL: func.func @iotas
// CHECK: %[[W:.*]] = stablehlo.iota dim = 1 : tensor<2x70000xf32>
// CHECK: %[[A:.*]] = stablehlo.convert %[[W]] : (tensor<2x70000xf32>) -> tensor<2x70000xf16>
// CHECK: %[[W8:.*]] = stablehlo.iota dim = 0 : tensor<129x2xf32>
// CHECK: %[[B:.*]] = stablehlo.convert %[[W8]] : (tensor<129x2xf32>) -> tensor<129x2xf8E4M3FN>
// CHECK: %[[C:.*]] = stablehlo.iota dim = 0 : tensor<32768x2xbf16>
// CHECK: %[[D:.*]] = stablehlo.iota dim = 0 : tensor<128x2xf8E4M3FN>
// CHECK: %[[E:.*]] = stablehlo.iota dim = 1 : tensor<2x70000xf32>
// CHECK: return %[[A]], %[[B]], %[[C]], %[[D]], %[[E]]
func.func @iotas() -> (tensor<2x70000xf16>, tensor<129x2xf8E4M3FN>, tensor<32768x2xbf16>,
                       tensor<128x2xf8E4M3FN>, tensor<2x70000xf32>) {
  %a = stablehlo.iota dim = 1 : tensor<2x70000xf16>
  %b = stablehlo.iota dim = 0 : tensor<129x2xf8E4M3FN>
  %c = stablehlo.iota dim = 0 : tensor<32768x2xbf16>
  %d = stablehlo.iota dim = 0 : tensor<128x2xf8E4M3FN>
  %e = stablehlo.iota dim = 1 : tensor<2x70000xf32>
  return %a, %b, %c, %d, %e : tensor<2x70000xf16>, tensor<129x2xf8E4M3FN>, tensor<32768x2xbf16>,
                              tensor<128x2xf8E4M3FN>, tensor<2x70000xf32>
}
