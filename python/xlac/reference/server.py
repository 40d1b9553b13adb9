"""The reference interpreter as a long-lived child process.

``run_reference`` starts a Python per call (a quarter second before any
work); a fuzzer asking for hundreds of results wants one child that answers
them all. ``ReferenceServer`` keeps one ``python -m xlac.reference.server``
child and exchanges pickles with it, a frame each (``xlac.pipes``). The
interpreter can abort the whole process on some inputs, which is why it is a
child at all: a request whose child dies (or runs past its timeout) raises
CompileError, and the next request starts a fresh child.

    with ReferenceServer() as server:
        outputs = server.run(program_text.encode(), [x, y])

``ReferenceServer(backend="xlac")`` runs xlac itself (uncached) the same way,
so a differential fuzzer survives, and can shrink, a program that crashes
the compiler.
"""

from __future__ import annotations

import atexit
import os
import pickle
import subprocess
import sys
import time

import numpy as np

import xlac.pipes as pipes
from xlac.errors import CompileError


class ReferenceServer:
    """One child answering many ``run`` requests in turn.

    ``backend``: "interpreter" (the StableHLO reference interpreter) or "xlac".
    """

    def __init__(self, timeout: float = 600, backend: str = "interpreter"):
        if backend not in _BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(_BACKENDS)}, not {backend!r}")
        self.timeout = timeout
        self.backend = backend
        self._child: subprocess.Popen | None = None
        self.requests = 0
        self.restarts = 0

    def run(self, data: bytes, inputs: list[np.ndarray], entry: str = "main",
            timeout: float | None = None) -> list[np.ndarray]:
        """The backend's results for ``entry`` of program ``data`` on ``inputs``."""
        request = pickle.dumps((data, [np.asarray(x, order="C") for x in inputs], entry))
        child = self._running_child()
        self.requests += 1
        limit = timeout or self.timeout
        try:
            pipes.write_frames(child.stdin, request)
            reply = pipes.read_frame_by(child.stdout.fileno(), time.monotonic() + limit)
        except (OSError, EOFError, TimeoutError) as exc:
            raise CompileError(self._lost_child(exc, limit)) from None
        status, payload = pickle.loads(reply)
        if status != "ok":
            raise CompileError(payload)
        return payload

    def close(self) -> None:
        """Stop the child (it also stops when its stdin closes)."""
        child, self._child = self._child, None
        if child is None:
            return
        child.stdin.close()
        try:
            child.wait(timeout=5)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        child.stdout.close()

    def __enter__(self) -> ReferenceServer:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _running_child(self) -> subprocess.Popen:
        if self._child is not None and self._child.poll() is None:
            return self._child
        if self._child is not None:   # died between requests
            self.restarts += 1
        self._child = subprocess.Popen([sys.executable, "-m", "xlac.reference.server",
                                        self.backend],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        return self._child

    def _lost_child(self, exc: Exception, limit: float) -> str:
        """Forget a child that died or hung; the next request starts another."""
        child, self._child = self._child, None
        self.restarts += 1
        child.kill()
        code = child.wait()
        for pipe in (child.stdin, child.stdout):
            try:
                pipe.close()
            except OSError:   # unflushed bytes for a dead reader
                pass
        what = f"<{self.backend}>: error: the {self.backend} process"
        if isinstance(exc, TimeoutError):
            return f"{what} took more than {limit:.0f} s; it was restarted"
        return f"{what} died (exit {code}) on this program; it was restarted"


_SHARED: ReferenceServer | None = None


def shared_server() -> ReferenceServer:
    """A process-wide server, stopped at exit."""
    global _SHARED
    if _SHARED is None:
        _SHARED = ReferenceServer()
        atexit.register(_SHARED.close)
    return _SHARED


# backend -> "module:function" answering one pickled request in the child. By
# name: the child imports only its own backend, and xlac itself (the
# compiler, above this layer) is one of them.
_BACKENDS = {"interpreter": "xlac.reference.interpreter:evaluate_request",
             "xlac": "xlac.tools.compile_requests:answer"}


def _serve(backend: str) -> None:
    """The child: answer requests until stdin closes."""
    import importlib
    module_name, function = _BACKENDS[backend].split(":")
    answer = getattr(importlib.import_module(module_name), function)
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())   # stray prints must not corrupt replies
    requests = sys.stdin.buffer
    while True:
        request = pipes.read_frame(requests)
        if request is None:
            return
        pipes.write_frames(replies, answer(request))


if __name__ == "__main__":
    _serve(sys.argv[1] if len(sys.argv) > 1 else "interpreter")
