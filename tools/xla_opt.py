"""xla-opt: an mlir-opt-style driver for xlac's and MLIR's passes.

    xla-opt in.mlir --pass-pipeline='builtin.module(xla-ingest,xla-lower-to-linalg)'
    xla-opt in.mlir --xla-stage=linalg -o out.mlir
"""

from __future__ import annotations

import argparse
import gc
import sys

from xlac.tools.common import read_input, tool_options, user_errors


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="xla-opt", description=__doc__.strip().splitlines()[0])
    p.add_argument("input", nargs="?", default="-", help="input file, or - for stdin (default)")
    p.add_argument("-o", dest="output", default="-", help="output file (default stdout)")
    p.add_argument("--pass-pipeline", default="", help="pipeline in MLIR syntax")
    p.add_argument("--xla-stage", default="", help="run the CPU pipeline up to this stage")
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
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.list_passes:
        return _list_passes()
    with user_errors("xla-opt"):
        from xlac.tools.opt_driver import OptDriver
        data, name = read_input(args.input)
        return OptDriver(args, tool_options(args)).run(data, name)


def _list_passes() -> int:
    from xlac import passes
    from xlac.pipeline.pipelines import CPU_STAGES, NAMED_PIPELINES

    print("xlac passes:")
    for name in passes.pass_names():
        print(f"  {name:32} {passes.get_pass_class(name).summary()}")
    print("xlac pipelines:")
    for name, (_, summary) in NAMED_PIPELINES.items():
        print(f"  {name:32} {summary}")
    print(f"stages (--xla-stage, Executable.as_text): {', '.join(CPU_STAGES)}")
    print("plus every upstream MLIR and StableHLO pass (see torch-mlir-opt --help)")
    return 0


if __name__ == "__main__":
    gc.collect()
    sys.exit(main())
