// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-openmp-dynamic-schedule)' --split-input-file | FileCheck %s

/// The worksharing loop hands its iterations out on demand.
// CHECK-LABEL: func.func @wsloop
// CHECK: omp.parallel
// CHECK: omp.wsloop schedule(dynamic)
// CHECK: omp.loop_nest (%[[I:.*]]) : index
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[I]]]
func.func @wsloop(%n: index, %m: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        memref.store %f, %m[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// -----

/// A schedule already chosen is kept.
// CHECK-LABEL: func.func @static_kept
// CHECK: omp.wsloop schedule(static)
func.func @static_kept(%n: index, %m: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  omp.parallel {
    omp.wsloop schedule(static) {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        memref.store %f, %m[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}
