// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-check-memory{memory-bytes=1000000})' --split-input-file --verify-diagnostics | FileCheck %s

/// Within the limit: nothing changes.
// CHECK-LABEL: func.func @fits
func.func @fits(%a: memref<100xf32>, %out: memref<100xf32>) {
  %t = memref.alloc() : memref<1000xf32>
  memref.dealloc %t : memref<1000xf32>
  return
}

// -----

/// A temporary past the limit is refused where it is allocated, with the sizes.
func.func @temporary(%a: memref<f32>, %out: memref<f32>) {
  // expected-error @+1 {{this program needs at least 3.8 MiB of memory (arguments and results: 8 B; its largest temporary buffer, here: 3.8 MiB), but this machine has 976.6 KiB}}
  %t = memref.alloc() : memref<1000x1000xf32>
  memref.dealloc %t : memref<1000x1000xf32>
  return
}

// -----

/// Arguments and results (out-params) count too: the caller holds them all.
// expected-error @+1 {{this program needs at least 1.4 MiB of memory (arguments and results: 1.4 MiB; its largest temporary buffer, here: 0 B)}}
module {
  func.func @results(%a: memref<300x300xf64>, %out: memref<300x300xcomplex<f32>>) {
    return
  }
}
