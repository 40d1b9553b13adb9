"""xla-opt: an mlir-opt-style driver for xlac's and MLIR's passes.

    xla-opt in.mlir --pass-pipeline='builtin.module(xla-ingest,xla-lower-to-linalg)'
    xla-opt in.mlir --xla-ingest --canonicalize --cse      # one flag per pass, in order
    xla-opt in.mlir --xla-stage=linalg -o out.mlir

mlir-opt's spellings work: one dash or two (``-pass-pipeline=...``), a flag per
pass with its options after ``=`` (``--canonicalize=max-iterations=3``).
"""

from __future__ import annotations

import argparse
import gc
import sys

from xlac.tools.common import (
    one_dash_long_options,
    quiet_on_closed_pipe,
    read_input,
    tool_options,
    user_errors,
    version_line,
)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The flags; ``pass_flags`` holds the per-pass ones (``--cse``), in order."""
    argv = one_dash_long_options(sys.argv[1:] if argv is None else list(argv))
    p = argparse.ArgumentParser(prog="xla-opt", description=__doc__.strip().splitlines()[0],
                                epilog="Any pass is also a flag: --canonicalize --cse "
                                       "(see --list-passes).", allow_abbrev=False)
    p.add_argument("input", nargs="?", default="-", help="input file, or - for stdin (default)")
    p.add_argument("-o", dest="output", default="-", help="output file (default stdout)")
    p.add_argument("--pass-pipeline", default="", help="pipeline in MLIR syntax")
    p.add_argument("--xla-stage", default="",
                   help="run the target's pipeline up to this stage (a code stage, such as "
                        "cuda's ptx, prints its code)")
    p.add_argument("--target", default="cpu", help="target of --xla-stage: cpu (default), cuda, "
                                                   "reference")
    p.add_argument("--entry", default="main", help="entry function for --xla-stage")
    p.add_argument("--cpu", default="", help="CPU for --xla-stage: host (default), x86-64-v2/v3/v4")
    p.add_argument("--disable-passes", default="", help="comma-separated passes to skip")
    p.add_argument("--split-input-file", action="store_true", help="split on '// -----'")
    p.add_argument("--verify-diagnostics", action="store_true",
                   help="check '// expected-error {{...}}' annotations")
    p.add_argument("--xla-fusion-remarks", action="store_true",
                   help="xla-fuse remarks on every fusion it rejects, and why "
                        "(env XLAC_FUSION_REMARKS=1)")
    p.add_argument("--list-passes", action="store_true", help="list passes and pipelines")
    p.add_argument("--emit-bytecode", action="store_true", help="write MLIR bytecode")
    p.add_argument("--mlir-print-debuginfo", action="store_true", help="print locations")
    p.add_argument("--mlir-print-ir-after-all", action="store_true")
    p.add_argument("--mlir-print-ir-before-all", action="store_true")
    p.add_argument("--mlir-print-ir-after-change", action="store_true")
    p.add_argument("--mlir-print-ir-after-failure", action="store_true")
    p.add_argument("--mlir-print-ir-tree-dir", default=None, help="one file per pass here")
    p.add_argument("--mlir-elide-elementsattrs-if-larger", type=int, default=None)
    p.add_argument("--mlir-timing", action="store_true", help="per-pass times on stderr")
    p.add_argument("--mlir-pass-statistics", action="store_true")
    p.add_argument("--version", action="store_true", help="print the versions and exit")
    args, args.pass_flags = p.parse_known_args(argv)
    return args


@quiet_on_closed_pipe
def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.version:
        print(version_line("xla-opt"))
        return 0
    if args.list_passes:
        return _list_passes()
    with user_errors("xla-opt"):
        from xlac.tools.opt_driver import OptDriver
        _pipeline_from_pass_flags(args)
        data, name = read_input(args.input)
        return OptDriver(args, tool_options(args)).run(data, name)


def _pipeline_from_pass_flags(args) -> None:
    if not args.pass_flags:
        return
    from xlac.errors import ToolError
    from xlac.tools.pass_flags import pipeline_from_flags
    if args.pass_pipeline or args.xla_stage:
        given = "--pass-pipeline" if args.pass_pipeline else "--xla-stage"
        raise ToolError(f"xla-opt: error: {given} cannot be combined with per-pass flags "
                        f"({' '.join(args.pass_flags)}): use one or the other")
    args.pass_pipeline = pipeline_from_flags(args.pass_flags)


def _list_passes() -> int:
    from xlac.passes.registry import get_pass_class, pass_names
    from xlac.pipeline.pipelines import NAMED_PIPELINES
    from xlac.targets import TARGETS, get_target

    print("xlac passes:")
    for name in pass_names():
        print(f"  {name:32} {get_pass_class(name).summary()}")
    print("xlac pipelines:")
    for name, (_, summary) in NAMED_PIPELINES.items():
        print(f"  {name:32} {summary}")
    print("stages (--target, --xla-stage, Executable.as_text):")
    for name in TARGETS:
        print(f"  {name:32} {', '.join(get_target(name).stage_names())}")
    print("plus every upstream MLIR and StableHLO pass (see torch-mlir-opt --help)")
    return 0


if __name__ == "__main__":
    gc.collect()
    sys.exit(main())
