// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-overlap-collectives)' --split-input-file | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-overlap-collectives{always=true})' --split-input-file | FileCheck %s --check-prefix=ALWAYS

/// A training step's shape: a gradient all-reduce whose result is needed only
/// by the final update. The start goes right after the gradient is made, before
/// the independent computation (%other); the done waits right before the first
/// use of the result, after it; the bias reduction that used the result
/// directly (%row) moves down with the done, to right before the update.
// CHECK-LABEL: func.func private @__xlac_all_reduce_0_buffers0_start(memref<1x4xf32>, memref<1x4xf32>) -> i32
// CHECK-SAME: xla.collective = "all_reduce", xla.collective_phase = "start"
// CHECK-LABEL: func.func private @__xlac_all_reduce_0_buffers0_done(i32, tensor<1x4xf32> {bufferization.access = "read"}, memref<1x4xf32>)
// CHECK-SAME: xla.collective_phase = "done"
// CHECK-NOT: @__xlac_all_reduce_0_buffers0(
// CHECK-LABEL: func.func @main
// CHECK: %[[GRAD:.*]] = linalg.generic {{.*}} ins(%arg0
// CHECK: %[[SEND:.*]] = bufferization.to_buffer %[[GRAD]] read_only
// CHECK: %[[Q:.*]] = call @__xlac_all_reduce_0_buffers0_start(%[[SEND]], %[[RECV:.*]]) : (memref<1x4xf32>, memref<1x4xf32>) -> i32
// CHECK: %[[OTHER:.*]] = linalg.matmul
// CHECK: call @__xlac_all_reduce_0_buffers0_done(%[[Q]], %[[GRAD]], %[[RECV]])
// CHECK-NEXT: %[[SUM:.*]] = bufferization.to_tensor %[[RECV]]
// CHECK: %[[ROW:.*]] = linalg.generic {{.*}} ins(%[[SUM]]
// CHECK: linalg.generic {{.*}} ins(%arg1, %[[ROW]]
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
#map1 = affine_map<(d0) -> (d0)>
module attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  func.func private @__xlac_all_reduce_0_buffers0(memref<1x4xf32>, memref<1x4xf32>) attributes {xla.collective = "all_reduce", xla.element_type = "f32", xla.groups = dense<[[0, 1]]> : tensor<1x2xi64>, xla.reduction = "add"}
  func.func @main(%arg0: tensor<1x4xf32>, %arg1: tensor<4xf32>, %a: tensor<8x8xf32>) -> (tensor<4xf32>, tensor<8x8xf32>) {
    %e = tensor.empty() : tensor<1x4xf32>
    %grad = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<1x4xf32>) outs(%e : tensor<1x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.mulf %in, %in : f32
      linalg.yield %m : f32
    } -> tensor<1x4xf32>
    %send = bufferization.to_buffer %grad read_only : tensor<1x4xf32> to memref<1x4xf32>
    %recv = memref.alloc() {alignment = 64 : i64} : memref<1x4xf32>
    call @__xlac_all_reduce_0_buffers0(%send, %recv) : (memref<1x4xf32>, memref<1x4xf32>) -> ()
    %sum = bufferization.to_tensor %recv restrict writable : memref<1x4xf32> to tensor<1x4xf32>
    %e4 = tensor.empty() : tensor<4xf32>
    %row = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["reduction", "parallel"]} ins(%sum : tensor<1x4xf32>) outs(%e4 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<4xf32>
    %e8 = tensor.empty() : tensor<8x8xf32>
    %other = linalg.matmul ins(%a, %a : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e8 : tensor<8x8xf32>) -> tensor<8x8xf32>
    %new = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel"]} ins(%arg1, %row : tensor<4xf32>, tensor<4xf32>) outs(%e4 : tensor<4xf32>) {
    ^bb0(%p: f32, %g: f32, %out: f32):
      %d = arith.subf %p, %g : f32
      linalg.yield %d : f32
    } -> tensor<4xf32>
    return %new, %other : tensor<4xf32>, tensor<8x8xf32>
  }
}

// -----

/// A collective inside a loop body is scheduled within that body; one whose
/// operand is a block argument starts at the start of its block. The
/// operand's to_buffer is not duplicated: the done reads the tensor itself.
// CHECK-LABEL: func.func @loop
// CHECK: scf.for
// CHECK-NEXT: %[[SEND:.*]] = bufferization.to_buffer %[[ACC:.*]] read_only
// CHECK-NEXT: %[[RECV:.*]] = memref.alloc()
// CHECK-NEXT: %[[Q:.*]] = func.call @__xlac_all_gather_0_buffers0_start(%[[SEND]], %[[RECV]])
// CHECK: arith.mulf
// CHECK: func.call @__xlac_all_gather_0_buffers0_done(%[[Q]], %[[ACC]], %[[RECV]])
// CHECK-NEXT: bufferization.to_tensor %[[RECV]]
module attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  func.func private @__xlac_all_gather_0_buffers0(memref<4xf32>, memref<2x4xf32>) attributes {xla.collective = "all_gather", xla.element_type = "f32", xla.groups = dense<[[0, 1]]> : tensor<1x2xi64>}
  func.func @loop(%x: tensor<4xf32>, %s: f32) -> tensor<2x4xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %e = tensor.empty() : tensor<2x4xf32>
    %r:2 = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %x, %out = %e) -> (tensor<4xf32>, tensor<2x4xf32>) {
      %t = arith.mulf %s, %s : f32
      %send = bufferization.to_buffer %acc read_only : tensor<4xf32> to memref<4xf32>
      %recv = memref.alloc() : memref<2x4xf32>
      func.call @__xlac_all_gather_0_buffers0(%send, %recv) : (memref<4xf32>, memref<2x4xf32>) -> ()
      %g = bufferization.to_tensor %recv restrict writable : memref<2x4xf32> to tensor<2x4xf32>
      %sl = tensor.extract_slice %g[0, 0] [1, 4] [1, 1] : tensor<2x4xf32> to tensor<4xf32>
      %b = tensor.splat %t : tensor<4xf32>
      %n = arith.addf %sl, %b : tensor<4xf32>
      scf.yield %n, %g : tensor<4xf32>, tensor<2x4xf32>
    }
    return %r#1 : tensor<2x4xf32>
  }
}

// -----

/// Nothing to overlap: the result is needed right after the operand is made,
/// so the collective stays one blocking call (MPI's blocking collectives are
/// faster than a start and an immediate wait), and no start/done is declared.
// CHECK-LABEL: module
// CHECK-NOT: _start
// CHECK: func.func private @__xlac_all_reduce_0_buffers0(memref<4xf32>, memref<4xf32>)
// CHECK-NOT: _done
// CHECK-LABEL: func.func @alone
// CHECK: %[[SEND:.*]] = bufferization.to_buffer %arg0 read_only
// CHECK-NEXT: %[[RECV:.*]] = memref.alloc()
// CHECK-NEXT: call @__xlac_all_reduce_0_buffers0(%[[SEND]], %[[RECV]])
// CHECK-NEXT: bufferization.to_tensor %[[RECV]]
/// Unless asked to split always (the tests that run every collective through
/// MPI's non-blocking calls).
// ALWAYS-LABEL: func.func @alone
// ALWAYS: %[[Q:.*]] = call @__xlac_all_reduce_0_buffers0_start(
// ALWAYS-NEXT: call @__xlac_all_reduce_0_buffers0_done(%[[Q]], %arg0,
module attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  func.func private @__xlac_all_reduce_0_buffers0(memref<4xf32>, memref<4xf32>) attributes {xla.collective = "all_reduce", xla.element_type = "f32", xla.groups = dense<[[0, 1]]> : tensor<1x2xi64>, xla.reduction = "add"}
  func.func @alone(%x: tensor<4xf32>) -> tensor<4xf32> {
    %send = bufferization.to_buffer %x read_only : tensor<4xf32> to memref<4xf32>
    %recv = memref.alloc() : memref<4xf32>
    call @__xlac_all_reduce_0_buffers0(%send, %recv) : (memref<4xf32>, memref<4xf32>) -> ()
    %r = bufferization.to_tensor %recv restrict writable : memref<4xf32> to tensor<4xf32>
    return %r : tensor<4xf32>
  }
}
