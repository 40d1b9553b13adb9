"""The cuda runtime's errors (the driver's and NCCL's), apart so that every
runtime module can raise them without importing the others."""

from __future__ import annotations

from xlac.errors import XlacError


class CudaUnavailable(XlacError):
    """No usable CUDA driver or GPU on this machine."""


class CudaError(XlacError):
    """A CUDA driver call failed."""
