"""xla-run: compile a StableHLO program and run it, as iree-run-module.

    xla-run model.mlir --input=2x3xf32=1,2,3,4,5,6 --input=@x.npy
    xla-run model.mlir --function=main --benchmark=20 --reference
"""

from __future__ import annotations

import argparse
import sys
import time

from xlac.tools.common import read_input, tool_options, user_errors


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="xla-run", description=__doc__.strip().splitlines()[0])
    p.add_argument("module", help="StableHLO program (.mlir text, .mlirbc, portable artifact)")
    p.add_argument("--input", action="append", default=[],
                   help="SHAPExTYPE=VALUES or @file.npy ({rank} in the name: this MPI rank)")
    p.add_argument("--function", default="main", help="entry function (default main)")
    p.add_argument("--target", default="cpu", help="cpu (default) or cuda (NVIDIA GPU, sm_90)")
    p.add_argument("--benchmark", type=int, default=0, metavar="N", help="time N more runs")
    p.add_argument("--reference", action="store_true",
                   help="also run the StableHLO reference interpreter; print the largest difference")
    p.add_argument("--output", action="append", default=[],
                   help="@file.npy to save each result (in order; {rank}: this MPI rank)")
    p.add_argument("--disable-passes", default="",
                   help="comma-separated passes to skip (bisecting; env XLAC_DISABLE_PASSES)")
    p.add_argument("--mlir-timing", action="store_true",
                   help="per-pass compile times on stderr (env XLAC_TIMING=1)")
    p.add_argument("--xla-trace", default="", metavar="FILE",
                   help="write a compile-time trace (Chrome trace JSON, for Perfetto); env XLAC_TRACE_TO")
    p.add_argument("--cpu", default="", help="CPU to compile for: host (default), x86-64-v2/v3/v4")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with user_errors("xla-run"):
        return _run(args)


def _run(args) -> int:
    from xlac.compiler import compile_bytes, resolve_options
    from xlac.tools.run_io import format_result, parse_input

    data, name = read_input(args.module)
    options = resolve_options(tool_options(args))
    exe = compile_bytes(data, name, target=args.target, entry=args.function, options=options)
    rank, prefix = _rank()                      # an SPMD program: this process is one device
    inputs = [parse_input(spec.replace("{rank}", str(rank))) for spec in args.input]
    outputs = exe.run(*inputs)
    print(f"{prefix}EXEC @{args.function}")
    for index, (value, spec) in enumerate(zip(outputs, exe.signature.outputs)):
        print(f"{prefix}result[{index}]: {format_result(value, spec.element_type)}")
    _save(outputs, [target.replace("{rank}", str(rank)) for target in args.output])
    if args.benchmark:
        _benchmark(exe, inputs, args.benchmark)
    if args.reference:
        _compare_with_reference(data, inputs, outputs, args.function)
    return 0


def _rank() -> tuple[int, str]:
    """This process's MPI rank and the prefix of its output lines ("" alone)."""
    from xlac.targets.cpu.collectives import active_world
    world = active_world()
    if world is None or world.size == 1:
        return 0, ""
    return world.rank, f"[rank {world.rank}] "


def _save(outputs, targets: list[str]) -> None:
    import numpy as np
    for value, target in zip(outputs, targets):
        np.save(target.lstrip("@"), value)


def _benchmark(exe, inputs, count: int) -> None:
    times = []
    for _ in range(count):
        start = time.perf_counter()
        exe.run(*inputs)
        times.append((time.perf_counter() - start) * 1e3)
    times.sort()
    print(f"benchmark: {count} runs, median {times[len(times) // 2]:.3f} ms, "
          f"min {times[0]:.3f} ms, max {times[-1]:.3f} ms")


def _compare_with_reference(data: bytes, inputs, outputs, entry: str) -> None:
    from xlac.reference.interpreter import run_reference
    from xlac.tools.run_io import max_difference

    expected = run_reference(data, inputs, entry)
    for index, (got, want) in enumerate(zip(outputs, expected)):
        print(f"reference: result[{index}] largest difference {max_difference(got, want)}")


if __name__ == "__main__":
    sys.exit(main())
