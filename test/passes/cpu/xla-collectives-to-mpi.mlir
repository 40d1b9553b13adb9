// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-collectives-to-mpi)' --split-input-file | FileCheck %s

/// Each collective declaration gets a body calling the MPI shim on the
/// buffers' pointers, with its communicator slot (from a global that
/// @__xlac_init fills, one MPI communicator per group set), its element count
/// and the codes of its element type (f32: 0) and reduction (add: 0).
// CHECK-LABEL: func.func @__xlac_init()
// CHECK: %[[TABLE:.*]] = memref.get_global @__xlac_table_0 : memref<2x2xi64>
// CHECK: %[[SLOT:.*]] = call @xlac_mpi_comm_create(
// CHECK: %[[COMM:.*]] = memref.get_global @__xlac_comm_0 : memref<i32>
// CHECK: memref.store %[[SLOT]], %[[COMM]][] : memref<i32>
// CHECK-LABEL: func.func private @__xlac_all_reduce_0_buffers0(
// CHECK-SAME: %[[SEND:.*]]: memref<4xf32>, %[[RECV:.*]]: memref<4xf32>)
// CHECK: memref.extract_aligned_pointer_as_index %[[SEND]]
// CHECK: memref.extract_aligned_pointer_as_index %[[RECV]]
// CHECK: %[[COUNT:.*]] = arith.constant 4 : i64
// CHECK: %[[F32:.*]] = arith.constant 0 : i32
// CHECK: %[[C:.*]] = memref.load %{{.*}}[] : memref<i32>
// CHECK: call @xlac_mpi_all_reduce(%[[C]], %{{.*}}, %{{.*}}, %[[COUNT]], %[[F32]], %{{.*}})
/// partition_id is the MPI rank modulo the number of partitions.
// CHECK-LABEL: func.func private @__xlac_partition_id_0_buffers0(
// CHECK: %[[RANK:.*]] = call @xlac_mpi_world_rank() : () -> i32
// CHECK: %[[P:.*]] = arith.constant 2 : i32
// CHECK: arith.remui %[[RANK]], %[[P]] : i32
module attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 2 : i32} {
  func.func private @__xlac_all_reduce_0_buffers0(memref<4xf32>, memref<4xf32>) attributes {xla.collective = "all_reduce", xla.element_type = "f32", xla.groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>, xla.reduction = "add"}
  func.func private @__xlac_partition_id_0_buffers0(memref<i32>) attributes {xla.collective = "partition_id", xla.element_type = "ui32"}
  func.func @main(%x: memref<4xf32>, %y: memref<4xf32>, %p: memref<i32>) {
    call @__xlac_all_reduce_0_buffers0(%x, %y) : (memref<4xf32>, memref<4xf32>) -> ()
    call @__xlac_partition_id_0_buffers0(%p) : (memref<i32>) -> ()
    return
  }
}
