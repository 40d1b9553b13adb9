"""xlac_worker's protocol with every program compiled for target="cuda".

The worker compiles and makes its inputs as xlac_worker does; only ``xlac.compile`` gains
``target="cuda"``, so a call is a user's call: host numpy in, numpy out.
"""

from __future__ import annotations

import xlac_worker


class _CudaXlac:
    """The bits of the xlac module xlac_worker uses, compiling for the GPU."""

    def __init__(self, xlac):
        self._xlac = xlac
        self.__version__ = xlac.__version__

    def compile(self, source, **options):
        return self._xlac.compile(source, target="cuda", **options)


def serve(conn) -> None:
    """Answer requests until told to quit or the pipe closes (see xlac_worker.serve)."""
    try:
        import xlac
        cuda = _CudaXlac(xlac)
        tiny = cuda.compile(xlac_worker.TINY_PROGRAM, cache=False)
    except Exception as exc:  # noqa: BLE001 - reported to the harness, which goes on
        conn.send(("error", f"xlac on cuda does not start: {xlac_worker._describe(exc)}"))
        return
    try:
        tiny.run(*_tiny_inputs())        # cuInit and the first module load stay out of the timings
    except Exception:  # noqa: BLE001 - no GPU: every program's first call reports it
        pass
    conn.send(("ok", xlac.__version__))
    state: dict = {}
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        if request[0] == "quit":
            return
        conn.send(xlac_worker._answer(cuda, state, request))


def _tiny_inputs():
    import numpy as np
    return [np.ones(4, np.float32)]
