// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-loop-annotations-to-llvm)' | FileCheck %s

/// convert-cf-to-llvm leaves a rolled loop's annotation under a name the
/// translation to LLVM IR ignores: it becomes the branch's own attribute.
// CHECK: #[[$UNROLL:.*]] = #llvm.loop_unroll<disable = true>
// CHECK: #[[$ROLLED:.*]] = #llvm.loop_annotation<unroll = #[[$UNROLL]]>
// CHECK-LABEL: llvm.func @rolled
// CHECK: llvm.br ^bb1(%{{.*}} : i64) {loop_annotation = #[[$ROLLED]]}
// CHECK-NOT: llvm.loop_annotation
llvm.func @rolled(%p: !llvm.ptr) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %c3 = llvm.mlir.constant(3 : i64) : i64
  %f = llvm.mlir.constant(1.0 : f32) : f32
  llvm.br ^bb1(%c0 : i64)
^bb1(%i: i64):
  %c = llvm.icmp "slt" %i, %c3 : i64
  llvm.cond_br %c, ^bb2, ^bb3
^bb2:
  %g = llvm.getelementptr %p[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  llvm.store %f, %g : f32, !llvm.ptr
  %n = llvm.add %i, %c1 : i64
  llvm.br ^bb1(%n : i64) {llvm.loop_annotation = #llvm.loop_annotation<unroll = <disable = true>>}
^bb3:
  llvm.return
}
