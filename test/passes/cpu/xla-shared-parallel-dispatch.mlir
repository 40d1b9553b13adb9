// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-shared-parallel-dispatch)' --split-input-file | FileCheck %s

/// Two kernels' parallel loops call one dispatcher, which holds the module's only
/// OpenMP region; each loop's body is a function of its own that reads the kernel's
/// values from a struct on the kernel's stack (constants copied in), the iteration
/// number its second argument, its blocks kept, `omp.yield` a return.
// CHECK: llvm.func internal @xla_parallel_for{{.*}}(%[[LB:.*]]: i64, %[[UB:.*]]: i64, %[[ST:.*]]: i64, %[[BODY:.*]]: !llvm.ptr, %[[CTX:.*]]: !llvm.ptr)
// CHECK: omp.parallel
// CHECK-NEXT: omp.wsloop schedule(dynamic)
// CHECK-NEXT: omp.loop_nest (%[[I:.*]]) : i64 = (%[[LB]]) to (%[[UB]]) step (%[[ST]])
// CHECK-NEXT: llvm.call %[[BODY]](%[[CTX]], %[[I]])
// CHECK-NOT: omp.parallel
// CHECK: llvm.func @k0(%[[A:.*]]: !llvm.ptr, %[[B:.*]]: !llvm.ptr)
// CHECK: %[[C:.*]] = llvm.alloca {{.*}} x !llvm.struct<(ptr, ptr)>
// CHECK: %[[S0:.*]] = llvm.insertvalue %[[A]], {{.*}}[0]
// CHECK: %[[S1:.*]] = llvm.insertvalue %[[B]], %[[S0]][1]
// CHECK: llvm.store %[[S1]], %[[C]]
// CHECK: %[[F:.*]] = llvm.mlir.addressof @k0_chunk{{.*}}
// CHECK: llvm.call @xla_parallel_for{{.*}}(%{{.*}}, %{{.*}}, %{{.*}}, %[[F]], %[[C]])
// CHECK-NEXT: llvm.return
// CHECK-LABEL: llvm.func @k1(
// CHECK: llvm.call @xla_parallel_for
// CHECK: llvm.func internal @k0_chunk{{.*}}(%[[X:.*]]: !llvm.ptr, %[[J:.*]]: i64) attributes {no_inline, sym_visibility = "private"}
// CHECK: %[[L:.*]] = llvm.load %[[X]] : !llvm.ptr -> !llvm.struct<(ptr, ptr)>
// CHECK: %[[PA:.*]] = llvm.extractvalue %[[L]][0]
// CHECK: %[[PB:.*]] = llvm.extractvalue %[[L]][1]
// CHECK: %[[TWO:.*]] = llvm.mlir.constant(2.000000e+00 : f32)
// CHECK: llvm.br ^bb1(%[[J]] : i64)
// CHECK: ^bb1(%[[K:.*]]: i64):
// CHECK: llvm.getelementptr %[[PA]][%[[K]]]
// CHECK: %[[V:.*]] = llvm.load {{.*}} -> f32
// CHECK: llvm.fmul %[[V]], %[[TWO]]
// CHECK: llvm.br ^bb2
// CHECK: ^bb2:
// CHECK: llvm.getelementptr %[[PB]][%[[K]]]
// CHECK: llvm.return
// CHECK-LABEL: llvm.func internal @k1_chunk
llvm.func @k0(%a: !llvm.ptr, %b: !llvm.ptr) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %c4 = llvm.mlir.constant(4 : i64) : i64
  %two = llvm.mlir.constant(2.0 : f32) : f32
  omp.parallel {
    omp.wsloop schedule(dynamic) {
      omp.loop_nest (%i) : i64 = (%c0) to (%c4) step (%c1) {
        %p = llvm.getelementptr %a[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
        %v = llvm.load %p : !llvm.ptr -> f32
        %w = llvm.fmul %v, %two : f32
        llvm.br ^bb1
      ^bb1:
        %q = llvm.getelementptr %b[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
        llvm.store %w, %q : f32, !llvm.ptr
        omp.yield
      }
    }
    omp.terminator
  }
  llvm.return
}
llvm.func @k1(%a: !llvm.ptr) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %c8 = llvm.mlir.constant(8 : i64) : i64
  %one = llvm.mlir.constant(1.0 : f32) : f32
  omp.parallel {
    omp.wsloop schedule(dynamic) {
      omp.loop_nest (%i) : i64 = (%c0) to (%c8) step (%c1) {
        %p = llvm.getelementptr %a[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
        llvm.store %one, %p : f32, !llvm.ptr
        omp.yield
      }
    }
    omp.terminator
  }
  llvm.return
}

// -----

/// A loop with clauses the dispatcher does not carry (here a reduction) stays as it is.
// CHECK-LABEL: llvm.func @reduced
// CHECK: omp.parallel
// CHECK-NOT: xla_parallel_for
omp.declare_reduction @add_i64 : i64 init {
^bb0(%x: i64):
  %z = llvm.mlir.constant(0 : i64) : i64
  omp.yield(%z : i64)
} combiner {
^bb0(%x: i64, %y: i64):
  %s = llvm.add %x, %y : i64
  omp.yield(%s : i64)
}
llvm.func @reduced(%r: !llvm.ptr) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %c8 = llvm.mlir.constant(8 : i64) : i64
  omp.parallel {
    omp.wsloop reduction(@add_i64 %r -> %acc : !llvm.ptr) {
      omp.loop_nest (%i) : i64 = (%c0) to (%c8) step (%c1) {
        %v = llvm.load %acc : !llvm.ptr -> i64
        %s = llvm.add %v, %i : i64
        llvm.store %s, %acc : i64, !llvm.ptr
        omp.yield
      }
    }
    omp.terminator
  }
  llvm.return
}
