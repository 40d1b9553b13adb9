"""What the xla-* tools share: reading input, and failing with one line."""

from __future__ import annotations

import sys
from contextlib import contextmanager

from xlac.errors import InputError, XlacError
from xlac.options import Options


def read_input(path: str) -> tuple[bytes, str]:
    """The bytes of ``path`` (``-`` is stdin) and the name diagnostics use."""
    if path == "-":
        return sys.stdin.buffer.read(), "<stdin>"
    try:
        with open(path, "rb") as handle:
            return handle.read(), path
    except OSError as exc:
        raise SystemExit(_fail(f"{path}: error: cannot read file: {exc.strerror}")) from None


def _fail(message: str) -> int:
    print(message, file=sys.stderr)
    _stop_the_job(message)
    return 1


def _stop_the_job(message: str) -> None:
    """Under mpiexec, one rank's failure stops every rank: the others may be
    waiting for it in a collective (docs/distributed.md)."""
    options = Options.from_env()
    if options.launched_ranks > 1:
        from xlac.targets.cpu.collectives import mpi_world
        try:
            world = mpi_world(options.mpicc, options.cache_dir)
        except XlacError:
            return
        world.abort(message.splitlines()[0] if message else "error")


@contextmanager
def user_errors(tool: str):
    """Turn xlac's errors into stderr lines and exit code 1, never a traceback."""
    try:
        yield
    except InputError as exc:
        raise SystemExit(_fail(f"{tool}: error: {exc}")) from None
    except XlacError as exc:
        raise SystemExit(_fail(str(exc))) from None
    except ValueError as exc:       # e.g. a bad --pass-pipeline
        raise SystemExit(_fail(str(exc))) from None
    except KeyboardInterrupt:
        raise SystemExit(_fail(f"{tool}: interrupted")) from None
    except MemoryError:
        raise SystemExit(_fail(f"{tool}: error: out of memory")) from None
    except Exception as exc:  # noqa: BLE001 - a bug, but still no traceback for users
        raise SystemExit(_fail(f"{tool}: internal error: {type(exc).__name__}: {exc}\n"
                               "note: this is an xlac bug; please report it with the input")) from None


def tool_options(args) -> Options:
    """The environment's options with the flags a tool was given on top."""
    options = Options.from_env()
    changes = {}
    if getattr(args, "mlir_timing", False):
        changes["timing"] = True
    if getattr(args, "disable_passes", ""):
        changes["disable_passes"] = tuple(p for p in args.disable_passes.split(",") if p)
    if getattr(args, "xla_fusion_remarks", False):
        changes["fusion_remarks"] = True
    if getattr(args, "xla_trace", ""):
        changes["trace_to"] = args.xla_trace
    if getattr(args, "cpu", ""):
        changes["cpu"] = args.cpu
    return options.replace(**changes)
