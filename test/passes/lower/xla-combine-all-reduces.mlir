// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-combine-all-reduces{bucket-bytes=4096})' --split-input-file | FileCheck %s

/// Three gradients' all-reduces, none needing another's result: the two that
/// fit in 4 KiB (256 + 512 f32) become one all-reduce of their concatenation,
/// sliced back; the third would overflow the bucket and starts the next one
/// (alone, so it stays as it was). The combined call sits before the first use.
// CHECK-LABEL: func.func @main
// CHECK: %[[GA:.*]] = stablehlo.multiply %arg0, %arg0
// CHECK: %[[GB:.*]] = stablehlo.multiply %arg1, %arg1
// CHECK: %[[GC:.*]] = stablehlo.multiply %arg2, %arg2
// CHECK: "stablehlo.all_reduce"(%[[GC]])
// CHECK: %[[R:.*]]:2 = call @__xlac_all_reduce_bucket{{.*}}(%[[GA]], %[[GB]])
// CHECK: stablehlo.add %[[R]]#0
// CHECK-LABEL: func.func private @__xlac_all_reduce_bucket
// CHECK: stablehlo.concatenate {{.*}} -> tensor<768xf32>
// CHECK: "stablehlo.all_reduce"(%{{.*}}) <{{.*}}replica_groups = dense<{{\[\[}}0, 1]]>
// CHECK: stablehlo.add
// CHECK: stablehlo.slice %{{.*}} [0:256]
// CHECK: stablehlo.slice %{{.*}} [256:768]
module attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @main(%arg0: tensor<16x16xf32>, %arg1: tensor<512xf32>, %arg2: tensor<1024xf32>) -> (tensor<16x16xf32>, tensor<512xf32>, tensor<1024xf32>) {
    %ga = stablehlo.multiply %arg0, %arg0 : tensor<16x16xf32>
    %a = "stablehlo.all_reduce"(%ga) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %s = stablehlo.add %x, %y : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<16x16xf32>) -> tensor<16x16xf32>
    %gb = stablehlo.multiply %arg1, %arg1 : tensor<512xf32>
    %b = "stablehlo.all_reduce"(%gb) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %s = stablehlo.add %x, %y : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<512xf32>) -> tensor<512xf32>
    %gc = stablehlo.multiply %arg2, %arg2 : tensor<1024xf32>
    %c = "stablehlo.all_reduce"(%gc) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %s = stablehlo.add %x, %y : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<1024xf32>) -> tensor<1024xf32>
    %ua = stablehlo.add %a, %arg0 : tensor<16x16xf32>
    return %ua, %b, %c : tensor<16x16xf32>, tensor<512xf32>, tensor<1024xf32>
  }
}

// -----

/// The second all-reduce's operand needs the first one's result: they cannot
/// run at the same point, and neither do different reductions: all stay.
// CHECK-LABEL: func.func @chain
// CHECK-NOT: call @__xlac_all_reduce_bucket
// CHECK-COUNT-3: "stablehlo.all_reduce"
module attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @chain(%arg0: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
    %a = "stablehlo.all_reduce"(%arg0) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %s = stablehlo.add %x, %y : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<8xf32>) -> tensor<8xf32>
    %m = stablehlo.multiply %a, %a : tensor<8xf32>
    %b = "stablehlo.all_reduce"(%m) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %s = stablehlo.add %x, %y : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<8xf32>) -> tensor<8xf32>
    %c = "stablehlo.all_reduce"(%arg0) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %s = stablehlo.maximum %x, %y : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<8xf32>) -> tensor<8xf32>
    %d = stablehlo.add %b, %c : tensor<8xf32>
    return %d, %a : tensor<8xf32>, tensor<8xf32>
  }
}
