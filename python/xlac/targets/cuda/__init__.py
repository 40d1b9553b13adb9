"""The CUDA target: GPU kernels to PTX, a host schedule, and the driver runtime."""
