"""PTX made where an LLVM abort cannot reach the caller.

llvmlite's NVPTX back end ends the whole process (``LLVM ERROR: Cannot
select``, SIGABRT) on an instruction sm_90 lacks: a Hopper-only intrinsic
(setmaxnreg, wgmma) that needs sm_90a, say. So PTX is made by a worker
process (``xlac.targets.cuda.ptx_worker``), spawned once per process and
reused; it imports llvmlite alone (no MLIR) and keeps libdevice parsed. A
worker that dies becomes a CompileError with LLVM's last words and the
kernel that kills it, found by compiling halves of the kernels in fresh
workers (log2 of the kernels' count compiles, on the failure path only).
Measured cost: docs/cuda.md ("PTX in a worker process").
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

import xlac.pipes as pipes
from xlac.errors import CompileError, Diagnostic, error

_WORKER_MAIN = "from xlac.targets.cuda import ptx_worker; ptx_worker.serve()"
_BASE_SECONDS = 600.0                      # the biggest models take ~1 minute of NVPTX -O3
_HINT = ("LLVM's NVPTX code generator cannot compile this kernel for sm_90 (an instruction "
         "it cannot select: one that needs sm_90a, or an xlac lowering bug); please report it "
         "with the input program")


class _WorkerDied(Exception):
    def __init__(self, returncode: int):
        super().__init__(returncode)
        self.returncode = returncode


class NvptxWorker:
    """One worker process and its pipes; a fresh one after a death or a timeout."""

    def __init__(self):
        self._process: subprocess.Popen | None = None
        self._stderr = None
        self._owner = 0                       # the pid that started it: a fork makes its own
        self._lock = threading.Lock()         # one request at a time on the pipes
        self.started = 0                      # workers started (tests read it)

    def ptx(self, kernels: dict[str, str]) -> str:
        with self._lock:
            try:
                return self._ask(kernels)
            except _WorkerDied as death:
                last_words = self._last_words()
                culprits = self._culprits(kernels)
                raise _crash_error(death.returncode, last_words, culprits) from None

    def _ask(self, kernels: dict[str, str]) -> str:
        self._ensure_started()
        request = json.dumps({"kernels": kernels}).encode()
        seconds = _BASE_SECONDS + len(request) / 1e5
        try:
            pipes.write_frames(self._process.stdin, request)
            answers, deadline = self._process.stdout.fileno(), time.monotonic() + seconds
            header = json.loads(pipes.read_frame_by(answers, deadline))
            payload = pipes.read_frame_by(answers, deadline)
        except (BrokenPipeError, OSError, EOFError):
            raise _WorkerDied(self._reap()) from None
        except TimeoutError:
            self._kill()
            raise CompileError(error(f"making PTX took longer than {seconds:.0f} s; "
                                     "it was stopped", "")) from None
        if not header["ok"]:
            raise CompileError(header["diagnostics"], header["hint"])
        return payload.decode()

    def _culprits(self, kernels: dict[str, str]) -> list[str]:
        """The kernels that kill a worker alone, halving: one name, or the smallest
        set that still kills it where no half does alone."""
        names = list(kernels)
        while len(names) > 1:
            half = len(names) // 2
            for part in (names[:half], names[half:]):
                if self._kills({n: kernels[n] for n in part}):
                    names = part
                    break
            else:
                break
        return names

    def _kills(self, kernels: dict[str, str]) -> bool:
        try:
            self._ask(kernels)
        except _WorkerDied:
            return True
        except CompileError:
            return False
        return False

    def _ensure_started(self) -> None:
        if self._process is not None and self._owner == os.getpid() \
                and self._process.poll() is None:
            return
        self._stderr = tempfile.TemporaryFile()
        self._process = subprocess.Popen([sys.executable, "-c", _WORKER_MAIN],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=self._stderr, start_new_session=True)
        self._owner = os.getpid()
        self.started += 1

    def _reap(self) -> int:
        process, self._process = self._process, None
        return pipes.reap(process)

    def _kill(self) -> None:
        pipes.kill(self._process)
        self._process = None

    def _last_words(self) -> str:
        """The worker's last meaningful line on stderr (``LLVM ERROR: ...``)."""
        try:
            self._stderr.seek(0)
            lines = self._stderr.read()[-8192:].decode(errors="replace").splitlines()
        except (OSError, AttributeError):
            return ""
        meaningful = [line.strip() for line in lines if line.strip()
                      and not line.startswith((" ", "#", "Stack dump", "PLEASE", "0.", "1."))]
        return meaningful[-1][:300] if meaningful else ""


def _crash_error(returncode: int, last_words: str, culprits: list[str]) -> CompileError:
    try:
        how = signal.Signals(-returncode).name if returncode < 0 else f"exit status {returncode}"
    except ValueError:
        how = f"signal {-returncode}"
    which = f"kernel {culprits[0]}" if len(culprits) == 1 else \
        f"kernels {', '.join(culprits[:8])}{' ...' if len(culprits) > 8 else ''} (together)"
    records = [error(f"NVPTX code generation crashed ({how}) on {which}; it ran in a separate "
                     "process, so only that process died", "")]
    if last_words:
        records.append(Diagnostic("", "note", f"LLVM said: {last_words}"))
    return CompileError(records, _HINT)


_WORKER = NvptxWorker()


def start_worker() -> None:
    """Start the worker now (a compile does as it begins: the worker's imports
    overlap the MLIR passes)."""
    with _WORKER._lock:
        _WORKER._ensure_started()


def isolated_ptx(kernels: dict[str, str]) -> str:
    """``xlac.targets.cuda.nvptx.compile_ptx(kernels)``, in the worker."""
    return _WORKER.ptx(kernels)
