"""The cuda runtime's errors (the driver's and NCCL's), apart so that every
runtime module can raise them without importing the others."""

from __future__ import annotations

from xlac.errors import XlacError


class CudaUnavailable(XlacError):
    """No usable CUDA driver or GPU on this machine."""


class CudaError(XlacError):
    """A CUDA driver call failed: ``status`` is the driver's CUresult (None where
    xlac itself refused), ``nbytes`` what an allocation asked for."""

    def __init__(self, message: str, status: int | None = None, nbytes: int | None = None):
        super().__init__(message)
        self.status, self.nbytes = status, nbytes


class GpuContextLost(CudaError):
    """The GPU context of this process is unusable: a kernel faulted before
    (CUDA's errors after a fault are sticky); the process must restart to use that GPU."""


class KernelFault(GpuContextLost):
    """A kernel faulted on the GPU (an illegal address, a trap, a timeout): the
    message names the kernel launched last."""
