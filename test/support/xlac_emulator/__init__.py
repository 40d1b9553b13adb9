"""A SIMT emulator and a fake CUDA driver: test support that runs cuda kernels on the CPU."""
