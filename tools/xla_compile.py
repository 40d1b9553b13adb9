"""xla-compile: compile a StableHLO program ahead of time into a shared library.

    xla-compile model.mlir -o libmodel.so --header model.h
    xla-compile model.mlir -o model.so --entry main,predict --name model
    xla-compile --cmake-dir        # the folder of XlacConfig.cmake: -DXlac_DIR=$(...)

The library exports, per entry, ``int <name>_<entry>(const void *const *inputs,
void *const *outputs)`` and ``<name>_<entry>_signature()`` (see docs/aot.md);
``xlac.load("model.so")`` runs it from Python without MLIR.
"""

from __future__ import annotations

import argparse
import sys

from xlac.tools.common import (
    add_progress_flags,
    one_dash_long_options,
    quiet_on_closed_pipe,
    read_input,
    tool_options,
    user_errors,
    version_line,
)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    argv = one_dash_long_options(sys.argv[1:] if argv is None else list(argv))
    if "--version" in argv:
        print(version_line("xla-compile"))
        raise SystemExit(0)
    if "--cmake-dir" in argv:             # for find_package(Xlac) / include(XlacAot.cmake)
        from pathlib import Path

        import xlac
        print(Path(xlac.__file__).parent / "cmake")
        raise SystemExit(0)
    p = argparse.ArgumentParser(prog="xla-compile", description=__doc__.strip().splitlines()[0],
                                allow_abbrev=False)
    p.add_argument("module", help="StableHLO program (.mlir text, .mlirbc, portable artifact)")
    p.add_argument("-o", dest="output", required=True, help="the shared library to write")
    p.add_argument("--cmake-dir", action="store_true",
                   help="print the folder of xlac's CMake helper (XlacConfig.cmake) and exit")
    p.add_argument("--header", default=None, help="also write this C header")
    p.add_argument("--target", default="cpu", help="cpu (default)")
    p.add_argument("--entry", default="main",
                   help="comma-separated entry functions (default main)")
    p.add_argument("--name", default="",
                   help="C symbol prefix (default: the library's name, 'libmodel.so' -> model)")
    p.add_argument("--disable-passes", default="", help="comma-separated passes to skip")
    p.add_argument("--mlir-timing", action="store_true", help="per-pass times on stderr")
    p.add_argument("--xla-trace", default="", metavar="FILE",
                   help="write a compile-time trace (Chrome trace JSON, for Perfetto); env XLAC_TRACE_TO")
    p.add_argument("--cpu", default="", help="CPU to compile for: host (default), x86-64-v2, "
                   "x86-64-v3 (AVX2), x86-64-v4 (AVX-512)")
    p.add_argument("--verify-each", action="store_true",
                   help="verify the IR after every pass, not each stage (env XLAC_VERIFY_EACH=1)")
    add_progress_flags(p)
    return p.parse_args(argv)


@quiet_on_closed_pipe
def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with user_errors("xla-compile"):
        return _compile(args)


def _compile(args) -> int:
    from xlac.aot import compile_library
    from xlac.compiler import resolve_options

    options = resolve_options(tool_options(args))
    if args.remarks:
        from xlac.pipeline.remark_log import print_remarks_on_stderr
        print_remarks_on_stderr()
    data, name = read_input(args.module)
    entries = tuple(e for e in args.entry.split(",") if e)
    prefix = compile_library(data, name, args.output, args.header, entries, args.name,
                             args.target, options)
    symbols = ", ".join(f"{prefix}_{entry}" for entry in entries)
    print(f"xla-compile: wrote {args.output} ({symbols})"
          + (f" and {args.header}" if args.header else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
