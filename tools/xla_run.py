"""xla-run: compile a StableHLO program and run it, as iree-run-module.

    xla-run model.mlir --input=2x3xf32=1,2,3,4,5,6 --input=@x.npy
    xla-run model.mlir --function=main --input=4xf32=1 --benchmark=20 --reference
    xla-run --module=model.mlir --device=local-task --function=main --input=@x.npy \
            --output=@y0.npy --output=@y1.npy

iree-run-module's spellings work: ``--module=``, ``--device=local-task``
(``local-sync``: one thread; ``cuda``), ``--entry_function=``, one
``--output=`` per result (``@f.npy`` writes, ``+f.npy`` appends, empty skips).
"""

from __future__ import annotations

import argparse
import sys
import time

from xlac.tools.common import (
    add_progress_flags,
    one_dash_long_options,
    quiet_on_closed_pipe,
    read_input,
    tool_options,
    user_errors,
    version_line,
)

# iree-run-module's --device -> (xlac target, threads; 0: every core)
DEVICES = {"local-task": ("cpu", 0), "local-sync": ("cpu", 1), "cpu": ("cpu", 0),
           "cuda": ("cuda", 0)}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    argv = one_dash_long_options(sys.argv[1:] if argv is None else list(argv))
    p = argparse.ArgumentParser(prog="xla-run", description=__doc__.strip().splitlines()[0],
                                allow_abbrev=False)
    p.add_argument("module", nargs="?", default=None,
                   help="StableHLO program (.mlir text, .mlirbc, portable artifact; - for stdin)")
    p.add_argument("--module", dest="module_flag", default=None, metavar="FILE",
                   help="the program, as iree-run-module spells it")
    p.add_argument("--input", action="append", default=[],
                   help="SHAPExTYPE=VALUES or @file.npy ({rank} in the name: this MPI rank)")
    p.add_argument("--function", "--entry_function", dest="function", default="main",
                   help="entry function (default main)")
    p.add_argument("--target", default=None,
                   help="cpu (default), cuda (NVIDIA GPU, sm_90) or reference (the StableHLO "
                        "interpreter: slow, exact)")
    p.add_argument("--device", default=None,
                   help="as iree-run-module: local-task (CPU), local-sync (CPU, one thread), cuda")
    p.add_argument("--benchmark", type=int, default=0, metavar="N", help="time N more runs")
    p.add_argument("--profile", nargs="?", const="", default=None, metavar="TRACE.json",
                   help="time each kernel over 10 runs (--benchmark N runs); print the slowest, "
                        "and write a Chrome trace (Perfetto) if a file is given")
    p.add_argument("--reference", action="store_true",
                   help="also run the StableHLO reference interpreter; print the largest difference")
    p.add_argument("--output", action="append", default=[],
                   help="one per result, in order: @file.npy writes it, +file.npy appends it, "
                        "empty skips it; {rank} in a name: this MPI rank")
    p.add_argument("--disable-passes", default="",
                   help="comma-separated passes to skip (bisecting; env XLAC_DISABLE_PASSES)")
    p.add_argument("--mlir-timing", action="store_true",
                   help="per-pass compile times on stderr (env XLAC_TIMING=1)")
    p.add_argument("--xla-trace", default="", metavar="FILE",
                   help="write a compile-time trace (Chrome trace JSON, for Perfetto); env XLAC_TRACE_TO")
    p.add_argument("--cpu", default="", help="CPU to compile for: host (default), x86-64-v2/v3/v4")
    p.add_argument("--verify-each", action="store_true",
                   help="verify the IR after every pass, not each stage (env XLAC_VERIFY_EACH=1)")
    p.add_argument("--version", action="store_true", help="print the versions and exit")
    add_progress_flags(p)
    args = p.parse_args(argv)
    if args.module and args.module_flag and args.module != args.module_flag:
        p.error(f"two programs given: {args.module} and --module={args.module_flag}")
    args.module = args.module or args.module_flag
    if args.module is None and not args.version:
        p.error("no program: give a file (or - for stdin), or --module=FILE")
    return args


def _resolve_device(args) -> None:
    """``--device`` (iree-run-module) and ``--target`` (xlac) as one target."""
    from xlac.errors import ToolError
    target, threads = DEVICES.get(args.device or "local-task", (None, 0))
    if target is None:
        raise ToolError(f"xla-run: error: unknown --device '{args.device}': xlac runs on "
                        + ", ".join(DEVICES) + " (or give --target=cpu|cuda|reference)")
    if args.target and args.device and args.target != target:
        raise ToolError(f"xla-run: error: --target={args.target} and --device={args.device} "
                        "disagree: give one of them")
    args.target = args.target or target
    args.device_threads = threads


@quiet_on_closed_pipe
def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.version:
        print(version_line("xla-run"))
        return 0
    with user_errors("xla-run"):
        _resolve_device(args)
        return _run(args)


def _run(args) -> int:
    from xlac.compiler import compile_bytes, resolve_options
    from xlac.tools.run_io import (
        check_input_count,
        check_outputs,
        format_result,
        parse_input,
        save_outputs,
    )

    data, name = read_input(args.module)
    options = resolve_options(tool_options(args))
    if args.remarks:
        from xlac.pipeline.remark_log import print_remarks_on_stderr
        print_remarks_on_stderr()
    if args.device_threads:
        options = options.replace(num_threads=args.device_threads)
    exe = compile_bytes(data, name, target=args.target, entry=args.function, options=options)
    rank, prefix = _rank()                      # an SPMD program: this process is one device
    inputs = [parse_input(spec.replace("{rank}", str(rank))) for spec in args.input]
    check_input_count(inputs, exe.signature.inputs, args.function)
    check_outputs(args.output, len(exe.signature.outputs))
    outputs = exe.run(*inputs)
    print(f"{prefix}EXEC @{args.function}")
    for index, (value, spec) in enumerate(zip(outputs, exe.signature.outputs)):
        print(f"{prefix}result[{index}]: {format_result(value, spec.element_type)}")
    save_outputs(outputs, [target.replace("{rank}", str(rank)) for target in args.output])
    if args.benchmark:
        _benchmark(exe, inputs, args.benchmark)
    if args.profile is not None:
        _profile(exe, inputs, args.benchmark or 10, args.profile)
    if args.reference:
        _compare_with_reference(data, inputs, outputs, args.function)
    return 0


def _profile(exe, inputs, runs: int, trace: str) -> None:
    profile = exe.profile(*inputs, runs=runs)
    print("profile: " + profile.table(), end="")
    if trace:
        profile.write_trace(trace)
        print(f"profile: trace written to {trace} (open it in https://ui.perfetto.dev)")


def _rank() -> tuple[int, str]:
    """This process's MPI rank and the prefix of its output lines ("" alone)."""
    from xlac.spmd.mpi import active_world
    world = active_world()
    if world is None or world.size == 1:
        return 0, ""
    return world.rank, f"[rank {world.rank}] "



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
