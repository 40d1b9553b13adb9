"""The backends of ``run.py --target cuda``: xlac on the GPU and XLA on jax's GPU client.

Same interface as bench/backends.py (load / outputs / time / unload / close, BackendError on any
failure). "XLA host" reuses the "XLA" executable and only changes what one call includes.
"""

from __future__ import annotations

import time

import numpy as np
from backends import BackendError, XlaBackend, XlacBackend, _timed, device_put, reported
from workers import xlac_worker

from gpu import worker as gpu_worker


class XlaGpuBackend(XlaBackend):
    """XLA on the GPU, inputs already on the device; every call waits for its outputs."""

    name = "XLA"
    method = "jax GPU client: compile_and_load(StableHLO text) with jax.jit's compile options"

    def __init__(self, platform: str = "gpu"):    # pylint: disable=super-init-not-called
        with reported("XLA on the GPU does not start"):
            import jax
            from jax._src import compiler
            from jax._src.lib import xla_client
            from jax.extend.backend import get_backend
            self._client = get_backend(platform)
            self._device = self._client.local_devices()[0]
            self._devices = xla_client.DeviceList((self._device,))
            self._options = compiler.get_compile_options(
                num_replicas=1, num_partitions=1, backend=self._client)
            self._compile(xlac_worker.TINY_PROGRAM)   # start-up stays out of compile times
        self.version = jax.__version__
        self.device_name = getattr(self._device, "device_kind", str(self._device))
        self.flops = None
        self.unload()

    def load(self, program, inputs) -> float:
        self._host_inputs = inputs                 # "XLA host" puts them on the device per call
        return super().load(program, inputs)

    def execute(self, args) -> list:
        """One run of the loaded executable on device arrays; its device outputs."""
        if hasattr(self._exe, "execute"):
            return list(self._exe.execute(args))
        # jaxlib without LoadedExecutable.execute: the sharded call jax itself makes
        results = self._exe.execute_sharded(list(args))
        return [outs[0] for outs in results.disassemble_into_single_device_arrays()]

    def _call(self):
        outputs = self.execute(self._args)
        for out in outputs:
            out.block_until_ready()
        return outputs

    def unload(self):
        self._exe, self._args, self._host_inputs, self.flops = None, None, None, None


class XlaHostBackend:
    """The "XLA" executable called the way xlac is: host numpy in, host numpy out."""

    name = "XLA host"

    def __init__(self, device_backend: XlaGpuBackend):
        self._xla = device_backend
        self.version = device_backend.version

    def supports(self, program) -> bool:
        return True

    def load(self, program, inputs) -> None:
        if self._xla._exe is None:                   # XLA failed to compile: say so
            raise BackendError("XLA host: no XLA executable (see the XLA column)")
        return                                  # compiled once, by the XLA backend

    def _call(self):
        args = device_put(self._xla._host_inputs, self._xla._device)
        return [np.asarray(out) for out in self._xla.execute(args)]

    def outputs(self):
        with reported("XLA host run"):
            start = time.perf_counter()
            outputs = self._call()
            return outputs, time.perf_counter() - start

    def time(self, count: int) -> list[float]:
        with reported("XLA host run"):
            return _timed(self._call, count)

    def unload(self):
        pass

    def close(self):
        pass


class XlacCudaBackend(XlacBackend):
    """xlac with target="cuda" in a worker process (gpu/worker.py)."""

    worker = staticmethod(gpu_worker.serve)


class XlacResidentBackend(XlacBackend):
    """xlac with target="cuda", inputs put on the device once and results left there
    (gpu/worker.py serve_resident): the same terms as the "XLA" column."""

    worker = staticmethod(gpu_worker.serve_resident)

    def load(self, program, inputs) -> float:
        return self._ask(("load", program, self._seed), self._call_limit,
                         "xlac compile and inputs to the device")
