// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-no-unroll-fill-loops)' | FileCheck %s

// CHECK: #[[$UNROLL:.*]] = #llvm.loop_unroll<disable = true>
// CHECK: #[[$ROLLED:.*]] = #llvm.loop_annotation<unroll = #[[$UNROLL]]>

/// A nest that zeroes a buffer with vector stores: each of its loops rolled.
// CHECK-LABEL: func.func @zero_fill
// CHECK: vector.transfer_write
// CHECK-NEXT: } {llvm.loop_annotation = #[[$ROLLED]]}
// CHECK-NEXT: } {llvm.loop_annotation = #[[$ROLLED]]}
func.func @zero_fill(%m: memref<14x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c14 = arith.constant 14 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant dense<0.0> : vector<32xf32>
  scf.for %i = %c0 to %c14 step %c1 {
    scf.for %j = %c0 to %c64 step %c32 {
      vector.transfer_write %zero, %m[%i, %j] {in_bounds = [true]} : vector<32xf32>, memref<14x64xf32>
    }
  }
  return
}

/// A copy (it reads) and an elementwise row (it computes) are left to LLVM.
// CHECK-LABEL: func.func @copy_and_compute
// CHECK-NOT: llvm.loop_annotation
// CHECK: return
func.func @copy_and_compute(%a: memref<14x64xf32>, %b: memref<14x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c14 = arith.constant 14 : index
  %pad = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c14 step %c1 {
    %v = vector.transfer_read %a[%i, %c0], %pad {in_bounds = [true]} : memref<14x64xf32>, vector<64xf32>
    vector.transfer_write %v, %b[%i, %c0] {in_bounds = [true]} : vector<64xf32>, memref<14x64xf32>
  }
  %one = arith.constant dense<1.0> : vector<64xf32>
  scf.for %i = %c0 to %c14 step %c1 {
    %sum = arith.addf %one, %one : vector<64xf32>
    vector.transfer_write %sum, %b[%i, %c0] {in_bounds = [true]} : vector<64xf32>, memref<14x64xf32>
  }
  return
}

/// A scalar loop (no vector store) is left to LLVM too.
// CHECK-LABEL: func.func @scalar_fill
// CHECK-NOT: llvm.loop_annotation
// CHECK: return
func.func @scalar_fill(%m: memref<14xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c14 = arith.constant 14 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c14 step %c1 {
    memref.store %zero, %m[%i] : memref<14xf32>
  }
  return
}
