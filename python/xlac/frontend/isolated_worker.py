"""The isolated parser's side (``xlac.frontend.isolation``): read a request
from stdin, parse and verify it under limits, answer on stdout; until EOF.

A request is two frames (``xlac.pipes``): a JSON header (``name``) and the
program's bytes; an answer is two frames too: a JSON header with ``ok``, and
the module as bytecode (or nothing). A crash here ends only this process,
which the caller reports.
"""

from __future__ import annotations

import io
import json
import resource
import sys

import xlac.pipes as pipes

# Address space for one parse: the interpreter and MLIR as loaded, plus this
# much (or 32x the input, if more): enough for any real program, while an
# input that would allocate without end fails here instead of swapping.
_BUDGET = 4 << 30
_STACK = 64 << 20


def serve(stdin=None, stdout=None) -> None:
    """Answer requests from ``stdin`` (default: this process's) until it ends."""
    from xlac.context import new_context
    _die_with_parent()
    _limit_stack()
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    sys.stdout = sys.stderr                            # stray prints stay off the pipe
    while True:
        # A context takes ~50 ms to make (every dialect): the next one is made
        # while the caller is busy, not while it waits. One per program, so
        # nothing one input leaves in a context meets the next.
        ctx = new_context()
        frames = pipes.read_frames(stdin, 2)
        if frames is None:
            return                                    # the caller is done with this worker
        request, data = json.loads(frames[0]), frames[1]
        header, payload = _answer(ctx, data, request["name"])
        pipes.write_frames(stdout, json.dumps(header).encode(), payload)
        del ctx


def _answer(ctx, data: bytes, name: str) -> tuple[dict, bytes]:
    from xlac.errors import CompileError, error
    from xlac.frontend import worker_protocol
    from xlac.frontend.parse import read_module
    _limit_memory(len(data))
    try:
        module = read_module(ctx, data, name)
        if not data.lstrip()[:1].isascii() or data.startswith(b"ML\xefR"):
            _check_as_text(module, name)
        buffer = io.BytesIO()
        module.operation.write_bytecode(buffer)
        return {"ok": True, "unregistered": ctx.allow_unregistered_dialects}, buffer.getvalue()
    except CompileError as failure:
        return worker_protocol.error_header(failure), b""
    except MemoryError:
        failure = CompileError(error("parsing this input needs more memory than xlac allows "
                                     f"({_budget(len(data)) >> 30} GiB)", name))
        return worker_protocol.error_header(failure), b""
    except Exception as exc:  # noqa: BLE001 - any failure of a bad input is the input's error
        failure = CompileError(error(f"cannot read this input: {type(exc).__name__}: "
                                     f"{_text(exc)}", name),
                               "check that the input is StableHLO as MLIR text, bytecode "
                               "or a portable artifact")
        return worker_protocol.error_header(failure), b""


def _check_as_text(module, name: str) -> None:
    """Bytecode gets the text's pre-checks on the text it parsed to: nesting
    thousands deep (tuples of tuples) makes later passes crawl."""
    from xlac.errors import CompileError, Diagnostic
    from xlac.frontend.prechecks import check_text, text_without_blobs
    try:
        check_text(text_without_blobs(module), name)
    except CompileError as failure:        # a place in text the user never saw: name the file
        raise CompileError([Diagnostic(name, r.severity, r.message) for r in failure.records],
                           failure.hint) from None


def _text(exc: Exception) -> str:
    try:
        return str(exc).splitlines()[0][:300] if str(exc) else ""
    except Exception:  # noqa: BLE001 - a message that cannot print
        return ""


def _budget(size: int) -> int:
    return max(_BUDGET, 32 * size)


def _limit_memory(size: int) -> None:
    with open("/proc/self/statm") as statm:
        in_use = int(statm.read().split()[0]) * resource.getpagesize()
    soft = in_use + _budget(size)
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _die_with_parent() -> None:
    """A parse that never ends must not outlive the process that asked for it."""
    import ctypes
    import os
    import signal
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)      # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:
        os._exit(0)                                  # the parent is already gone


def _limit_stack() -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_STACK)
    soft = _STACK if hard == resource.RLIM_INFINITY else min(_STACK, hard)
    resource.setrlimit(resource.RLIMIT_STACK, (soft, hard))
