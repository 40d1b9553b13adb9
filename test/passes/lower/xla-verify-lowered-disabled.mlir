// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-verify-lowered)' --verify-diagnostics
// RUN: not xla-run %s --input=4xf32=1 --disable-passes=xla-lower-sort 2>&1 | FileCheck %s --check-prefix=USER
// RUN: not xla-run %s --input=4xf32=1 --disable-passes=xla-inline-fusions 2>&1 | FileCheck %s --check-prefix=NEEDED

/// An op left unlowered names the pass that lowers it; when the user
/// disabled passes, the compile says it is their setting, not a compiler
/// bug. The op's region (its stablehlo.return) is not reported again.
// USER-NOT: xlac bug
// USER: error: 'stablehlo.sort' was not lowered (xla-lower-sort lowers it)
// USER-NOT: stablehlo.return
// USER: note: passes are disabled (xla-lower-sort; --disable-passes / XLAC_DISABLE_PASSES): each op above needs the pass named beside it
// USER-NOT: xlac bug
// NEEDED: error: cannot disable xla-inline-fusions while xla-fuse runs
// NEEDED: note: disable both: --disable-passes=xla-fuse,xla-inline-fusions
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'stablehlo.sort' was not lowered (xla-lower-sort lowers it)}}
  %0 = "stablehlo.sort"(%arg0) ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %c = stablehlo.compare GT, %p, %q : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
