// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-lower-collectives)' --split-input-file --verify-diagnostics

/// A reduction MPI and NCCL have no operation for is refused, saying which they have.
module attributes {mhlo.num_partitions = 2 : i32} {
  func.func @subtract(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{reduces with a body xlac cannot pass to MPI or NCCL: it must be one stablehlo.add, multiply, minimum, maximum, and, or or xor of its two arguments}}
    %r = "stablehlo.all_reduce"(%x) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.subtract %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<4xf32>) -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
}

// -----

/// Complex numbers reduce by add and multiply only.
module attributes {mhlo.num_partitions = 2 : i32} {
  func.func @complex_min(%x: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
    // expected-error @+1 {{MPI and NCCL have no min of complex numbers (only add and multiply)}}
    %r = "stablehlo.all_reduce"(%x) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<complex<f32>>, %b: tensor<complex<f32>>):
      %s = stablehlo.minimum %a, %b : tensor<complex<f32>>
      stablehlo.return %s : tensor<complex<f32>>
    }) : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
    return %r : tensor<4xcomplex<f32>>
  }
}
