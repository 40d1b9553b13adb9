"""What the xla-* tools share: reading input, failing with one line, the
spellings users bring from mlir-opt and iree-run-module, and a quiet exit
when the reader of stdout goes away (``xla-opt --list-passes | head``)."""

from __future__ import annotations

import functools
import os
import sys
from contextlib import contextmanager

from xlac.errors import InputError, XlacError
from xlac.options import Options


def read_input(path: str) -> tuple[bytes, str]:
    """The bytes of ``path`` (``-`` is stdin) and the name diagnostics use.

    The isolated parser is forked first, before this process starts MLIR's threads."""
    if Options.from_env().isolate_input:
        from xlac.frontend.isolation import start_worker
        start_worker(may_fork=True)
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
        from xlac.spmd.mpi import mpi_world
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
    except BrokenPipeError:
        raise                       # the reader went away: quiet_on_closed_pipe's business
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
        raise SystemExit(_fail(f"{tool}: internal error: {type(exc).__name__}: "
                               f"{str(exc).strip().splitlines()[0] if str(exc).strip() else ''}\n"
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
    if getattr(args, "verify_each", False):
        changes["verify_each"] = True
    if getattr(args, "progress", ""):
        changes["progress"] = args.progress
    if getattr(args, "quiet", False):
        changes["progress"] = "off"
    if getattr(args, "remarks", False):
        changes["cache_dir"] = ""            # a cache hit compiles nothing: it has no remarks
    return options.replace(**changes)


def add_progress_flags(parser) -> None:
    """``--progress`` and ``--quiet``: what a long compile shows (``XLAC_PROGRESS``)."""
    parser.add_argument("--progress", default="", choices=("auto", "bar", "log", "off"),
                        help="a long compile's progress: auto (default: a bar on a terminal, "
                             "a line per stage otherwise), bar, log or off; env XLAC_PROGRESS")
    parser.add_argument("--quiet", action="store_true",
                        help="no compile progress (--progress=off)")
    parser.add_argument("--remarks", action="store_true",
                        help="print the compile's remarks on stderr (`remark:` lines: kernels left "
                             "as scalar loops, and why); compiles without the cache")


def one_dash_long_options(argv: list[str], short: tuple[str, ...] = ("-o", "-h")) -> list[str]:
    """mlir-opt's ``-pass-pipeline=...`` as ``--pass-pipeline=...``: LLVM's option
    parser takes one dash or two for long options, argparse only two.
    ``-o=out.mlir`` becomes ``-o out.mlir``; ``-`` (stdin) and values stay."""
    fixed: list[str] = []
    for arg in argv:
        if arg.startswith("-o="):
            fixed += ["-o", arg[3:]]
        elif (len(arg) > 2 and arg[0] == "-" and arg[1].isalpha()
              and arg.split("=", 1)[0] not in short):
            fixed.append("-" + arg)
        else:
            fixed.append(arg)
    return fixed


def version_line(tool: str) -> str:
    """``--version``: xlac's version and the MLIR it runs on."""
    from importlib.metadata import PackageNotFoundError, version

    from xlac.version import __version__
    try:
        bindings = f"torch-mlir {version('torch-mlir')}"
    except PackageNotFoundError:
        bindings = "torch-mlir (version unknown)"
    return (f"{tool} (xlac {__version__}), Python {sys.version.split()[0]}, "
            f"MLIR and StableHLO from {bindings}")


def quiet_on_closed_pipe(main):
    """Wrap a tool's ``main``: a closed stdout (``| head``) ends it quietly
    with 141 (128 + SIGPIPE, as a C tool would die), never with a traceback."""
    @functools.wraps(main)
    def wrapped(argv: list[str] | None = None) -> int:
        try:
            status = main(argv)
            sys.stdout.flush()
            return status
        except BrokenPipeError:
            # Python flushes stdout again at exit and would print a second error
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            return 141
    return wrapped
