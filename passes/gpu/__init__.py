"""GPU code generation: XLA-shaped kernels (loops, reductions, tiled matmul) and host wrapping."""
