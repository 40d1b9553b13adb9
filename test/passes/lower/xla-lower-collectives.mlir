// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-lower-collectives)' --split-input-file | FileCheck %s

/// An all_reduce becomes a call on a send buffer and a fresh receive buffer;
/// without a channel its groups are replicas, one group per partition:
/// on 2 replicas x 2 partitions, ranks {0, 2} and {1, 3}.
// CHECK-LABEL: func.func private @__xlac_all_reduce_0(
// CHECK: %[[SEND:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<4xf32> to memref<4xf32>
// CHECK: %[[RECV:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK: call @__xlac_all_reduce_0_buffers0(%[[SEND]], %[[RECV]])
// CHECK: bufferization.to_tensor %[[RECV]] restrict writable
// CHECK: func.func private @__xlac_all_reduce_0_buffers0(memref<4xf32>, memref<4xf32>)
// CHECK-SAME: xla.collective = "all_reduce", xla.element_type = "f32", xla.groups = dense<{{\[\[}}0, 2], [1, 3]]> : tensor<2x2xi64>, xla.reduction = "add"
module attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 2 : i32} {
  func.func @cross_replica(%x: tensor<4xf32>) -> tensor<4xf32> {
    %r = "stablehlo.all_reduce"(%x) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<4xf32>) -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
}

// -----

/// With a channel and no global ids, a group of replicas spans every
/// partition, partition-major as the spec orders it: ranks 0, 2, 1, 3.
// CHECK-LABEL: xla.groups = dense<{{\[\[}}0, 2, 1, 3]]> : tensor<1x4xi64>, xla.reduction = "mul"
module attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 2 : i32} {
  func.func @cross_replica_and_partition(%x: tensor<4xf32>) -> tensor<4xf32> {
    %r = "stablehlo.all_reduce"(%x) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.multiply %b, %a : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<4xf32>) -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
}

// -----

/// all_gather receives one block per member, blocks first, then moves the
/// block index next to the gathered dimension and merges them. Unsigned
/// integers travel as signless ones (the element type is kept as an attribute).
// CHECK-LABEL: func.func private @__xlac_all_gather_0(
// CHECK: stablehlo.bitcast_convert %{{.*}} : (tensor<2x3xui32>) -> tensor<2x3xi32>
// CHECK: call @__xlac_all_gather_0_buffers0(%{{.*}}, %{{.*}}) : (memref<2x3xi32>, memref<4x2x3xi32>) -> ()
// CHECK: %[[MOVED:.*]] = stablehlo.transpose %{{.*}}, dims = [1, 0, 2] : (tensor<4x2x3xi32>) -> tensor<2x4x3xi32>
// CHECK: stablehlo.reshape %[[MOVED]] : (tensor<2x4x3xi32>) -> tensor<2x12xi32>
// CHECK: func.func private @__xlac_all_gather_0_buffers0
// CHECK-SAME: xla.element_type = "ui32", xla.groups = dense<{{\[\[}}3, 2, 1, 0]]>
module attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @all_gather(%x: tensor<2x3xui32>) -> tensor<2x12xui32> {
    %r = "stablehlo.all_gather"(%x) <{all_gather_dim = 1 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[3, 2, 1, 0]]> : tensor<1x4xi64>, use_global_device_ids}> : (tensor<2x3xui32>) -> tensor<2x12xui32>
    return %r : tensor<2x12xui32>
  }
}

// -----

/// reduce_scatter splits the scattered dimension into one block per member
/// and sends the blocks first; each member receives its reduced block.
// CHECK-LABEL: func.func private @__xlac_reduce_scatter_0(
// CHECK: stablehlo.reshape %{{.*}} : (tensor<4x6xf32>) -> tensor<4x2x3xf32>
// CHECK: stablehlo.transpose %{{.*}}, dims = [1, 0, 2] : (tensor<4x2x3xf32>) -> tensor<2x4x3xf32>
// CHECK: call @__xlac_reduce_scatter_0_buffers0(%{{.*}}, %{{.*}}) : (memref<2x4x3xf32>, memref<4x3xf32>) -> ()
// CHECK: xla.collective = "reduce_scatter"{{.*}}xla.reduction = "max"
module attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @reduce_scatter(%x: tensor<4x6xf32>) -> tensor<4x3xf32> {
    %r = "stablehlo.reduce_scatter"(%x) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, scatter_dimension = 1 : i64, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.maximum %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<4x6xf32>) -> tensor<4x3xf32>
    return %r : tensor<4x3xf32>
  }
}

// -----

/// With a channel, collective_permute pairs partitions within each replica.
// CHECK-LABEL: xla.pairs = dense<{{\[\[}}0, 1], [2, 3]]> : tensor<2x2xi64>
module attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 2 : i32} {
  func.func @permute(%x: tensor<4xf32>) -> tensor<4xf32> {
    %r = "stablehlo.collective_permute"(%x) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<4xf32>) -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
}

// -----

/// partition_id receives one i32 from its call: the runtime knows the rank.
// CHECK-LABEL: func.func private @__xlac_partition_id_0()
// CHECK: %[[ID:.*]] = memref.alloc() {alignment = 64 : i64} : memref<i32>
// CHECK: call @__xlac_partition_id_0_buffers0(%[[ID]]) : (memref<i32>) -> ()
// CHECK: stablehlo.bitcast_convert %{{.*}} : (tensor<i32>) -> tensor<ui32>
module attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @ids() -> tensor<ui32> {
    %p = stablehlo.partition_id : tensor<ui32>
    return %p : tensor<ui32>
  }
}
