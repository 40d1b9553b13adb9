"""Untrusted programs parsed where a crash cannot reach the caller.

MLIR's bytecode reader and parser trust their input: bad bytes can corrupt
the heap, abort with ``LLVM ERROR``, overflow the stack or loop. So by default
(``Options.isolate_input``; docs/security.md) every program a user hands over
is first parsed and verified by a persistent worker process, started once per
process and reused, under limits on address space, stack and time. The worker
answers with the module as MLIR bytecode that it wrote itself (the caller
parses that instead of the user's bytes), or with the diagnostics of a clean
failure. A worker that dies or overruns its time becomes a ``CompileError``
naming the input and the signal; the next program gets a fresh worker.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import threading
import time

import xlac.pipes as pipes
from xlac.errors import CompileError, Diagnostic, error
from xlac.frontend import isolated_worker, worker_process
from xlac.frontend import worker_protocol as protocol
from xlac.frontend.jax_export import embedded_program
from xlac.frontend.parse import parse_module
from xlac.frontend.prechecks import check_text
from xlac.frontend.resource_blobs import bind_blobs, split_blobs
from xlac.mlir import ir
from xlac.record import record

_HINT = ("the input is not a valid StableHLO program; if it came from a tool, "
         "please report the crash with the input")


@record
class Vetted:
    """What the worker made of an input: bytecode it wrote, safe to parse in process."""

    bytecode: bytes
    unregistered: bool             # the program holds ops of dialects xlac does not load (sdy)


class ParseWorker:
    """One worker process and the pipes to it; restarted after a death or a timeout."""

    def __init__(self):
        self._process: subprocess.Popen | None = None
        self._stderr = None
        self._owner = 0                                # the pid that started it (fork-safe)
        self._lock = threading.Lock()

    def start(self, may_fork: bool = False) -> None:
        """Start the worker now; ``may_fork``: the caller knows a fork is safe here."""
        with self._lock:
            self._ensure_started(may_fork)

    def vet(self, data: bytes, source_name: str, timeout: float) -> Vetted:
        with self._lock:
            self._ensure_started()
            try:
                self._send(data, source_name)
                header, payload = self._receive(timeout + _scaled(len(data)))
            except _WorkerDied as death:
                raise self._crash_error(death.returncode, source_name) from None
            except TimeoutError:
                self._kill()
                raise CompileError(error(f"parsing this input took longer than "
                                         f"{timeout + _scaled(len(data)):.0f} s; it was stopped",
                                         source_name),
                                   "XLAC_PARSE_TIMEOUT sets the limit (seconds)") from None
        if header["ok"]:
            return Vetted(payload, header.get("unregistered", False))
        raise protocol.error_from(header)

    def _ensure_started(self, may_fork: bool = False) -> None:
        if self._process is not None and self._owner == os.getpid() \
                and self._process.poll() is None:
            return
        self._stderr = tempfile.TemporaryFile()
        self._process = worker_process.start_worker(self._stderr, isolated_worker.serve, may_fork)
        self._owner = os.getpid()

    def _send(self, data: bytes, source_name: str) -> None:
        request = json.dumps({"name": source_name}).encode()
        try:
            pipes.write_frames(self._process.stdin, request, data)
        except (BrokenPipeError, OSError):
            raise _WorkerDied(self._reap()) from None

    def _receive(self, timeout: float) -> tuple[dict, bytes]:
        """The answer's two frames: its JSON header and its payload, both within ``timeout``."""
        deadline = time.monotonic() + timeout
        answers = self._process.stdout.fileno()
        try:
            header = json.loads(pipes.read_frame_by(answers, deadline))
            return header, pipes.read_frame_by(answers, deadline)
        except EOFError:
            raise _WorkerDied(self._reap()) from None

    def _reap(self) -> int:
        return pipes.reap(self._process)

    def _kill(self) -> None:
        pipes.kill(self._process)
        self._process = None

    def _crash_error(self, returncode: int, source_name: str) -> CompileError:
        what = _signal_name(returncode)
        records = [error(f"the MLIR parser crashed ({what}) on this input; "
                         "xlac parsed it in a separate process, so only that process died",
                         source_name)]
        last_words = self._last_words()
        if last_words:
            records.append(Diagnostic("", "note", f"the parser said: {last_words}"))
        self._process = None
        return CompileError(records, _HINT)

    def _last_words(self) -> str:
        """The parser's last line on stderr (``LLVM ERROR: ...``), if it left one."""
        try:
            self._stderr.seek(0)
            lines = self._stderr.read()[-4096:].decode(errors="replace").splitlines()
        except OSError:
            return ""
        meaningful = [line.strip() for line in lines if line.strip()
                      and not line.startswith((" ", "#", "Stack dump", "PLEASE"))]
        return meaningful[-1][:200] if meaningful else ""


class _WorkerDied(Exception):
    def __init__(self, returncode: int):
        super().__init__(returncode)
        self.returncode = returncode


def _scaled(size: int) -> float:
    """Extra seconds for big inputs: text parses at tens of MB/s."""
    return size / 5e6


def _signal_name(returncode: int) -> str:
    if returncode is not None and returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit status {returncode}"


_WORKER = ParseWorker()


def parse_untrusted(ctx: ir.Context, data: bytes, source_name: str, options) -> ir.Module:
    """``parse_module`` for bytes a user handed over: checked for absurd nesting
    and shapes, then (``options.isolate_input``) parsed and verified first by
    the isolated worker, whose own bytecode is what this process parses."""
    data = embedded_program(data) or data
    check_text(data, source_name)
    blobs = split_blobs(data)          # weights' hex apart from the code: docs/compile-time.md
    if blobs is not None:
        module = _parsed(ctx, blobs.code, source_name, options)
        if bind_blobs(module, blobs, source_name):
            return module
    return _parsed(ctx, data, source_name, options)


def _parsed(ctx: ir.Context, data: bytes, source_name: str, options) -> ir.Module:
    if not options.isolate_input:
        return parse_module(ctx, data, source_name)
    vetted = vet(data, source_name, options.parse_timeout)
    if vetted.unregistered:
        ctx.allow_unregistered_dialects = True
    return parse_module(ctx, vetted.bytecode, source_name)


def vet(data: bytes, source_name: str, timeout: float) -> Vetted:
    """``data`` parsed and verified by the worker: its bytecode, or a CompileError."""
    return _WORKER.vet(data, source_name, timeout)


def start_worker(may_fork: bool = False) -> None:
    """Start the worker ahead of the first program; the CLIs do, forking it
    (``xlac.frontend.worker_process``)."""
    _WORKER.start(may_fork)
