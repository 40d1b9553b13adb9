"""One benchmark run: select programs, start backends, measure each program, report."""

from __future__ import annotations

import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

from backends import BackendError, NumpyBackend, XlaBackend, XlacBackend
from programs import SUITE, extra_program, make_inputs, suite_programs
from report import BACKENDS, BackendResult, ProgramResult, markdown, text_table, versions
from timing import interleave, max_rel_error, plan_reps


def run(args) -> int:
    programs = _select(args)
    if programs is None:
        return 2
    backends, start_errors = _start_backends(args)
    method = _method(args, start_errors)
    print("\n".join(method), flush=True)
    results = measure_all(programs, backends, start_errors, args, BACKENDS)
    print("\n" + text_table(results, args.kernels if args.profile else 0), flush=True)
    overhead = _call_overhead(args)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        table = markdown(results, method, versions(), args.kernels if args.profile else 0)
        args.out.write_text("\n".join([table.rstrip("\n"), *overhead, ""]))
        print(f"\nwrote {args.out}")
    return 0


def _call_overhead(args) -> list[str]:
    """The call-overhead section (bench/call_overhead.py), printed; its Markdown lines."""
    if not args.call_overhead:
        return []
    import call_overhead
    _progress("call overhead: xlac vs jax.jit on one-op programs")
    rows = call_overhead.measure(rounds=2 if args.quick else 40, batch=10 if args.quick else 200)
    print("\n".join(call_overhead.text_lines(rows)), flush=True)
    return call_overhead.markdown_lines(rows)


def measure_all(programs, backends: dict, start_errors: dict, args, names) -> list[ProgramResult]:
    """Each program on the backends ``names``, within args.budget_s; closes the backends."""
    results, started = [], time.perf_counter()
    try:
        for index, program in enumerate(programs):
            spent = time.perf_counter() - started
            # Slow programs overspend; a floor keeps the later ones' fast backends measured.
            floor = args.budget_s / len(programs) / 3
            budget = max((args.budget_s - spent) / (len(programs) - index), floor)
            _progress(f"[{index + 1}/{len(programs)}] {program.name}")
            results.append(bench_program(program, backends, start_errors, args, budget, names))
    finally:
        for backend in backends.values():
            backend.close()
    return results


def _select(args):
    try:
        programs = suite_programs() if (SUITE / "manifest.json").exists() else []
        taken = {p.name for p in programs}
        for offset, path in enumerate(args.files):
            extra = extra_program(path, seed_index=100 + offset)
            if extra.name in taken:
                extra = replace(extra, name=path.name)
            taken.add(extra.name)
            programs.append(extra)
        if getattr(args, "models", False):
            from models import model_programs
            found, notes = model_programs(args.models_dir)
            for note in notes:
                print(note, file=sys.stderr)
            programs += [m for m in found if m.name not in taken]
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None
    if args.only:
        wanted = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = sorted(set(wanted) - {p.name for p in programs})
        if unknown:
            print(f"error: no program named {', '.join(unknown)}; have: "
                  f"{', '.join(p.name for p in programs) or f'none ({SUITE} is missing)'}",
                  file=sys.stderr)
            return None
        programs = [p for p in programs if p.name in wanted]
    return programs


def _start_backends(args):
    backends, errors = {}, {}
    factories = {"xlac": lambda: XlacBackend(args.seed, args.kill_after_s),
                 "XLA": XlaBackend, "numpy": NumpyBackend}
    for name in BACKENDS:
        try:
            backends[name] = factories[name]()
        except BackendError as exc:
            errors[name] = str(exc)
            print(f"warning: {exc}", file=sys.stderr)
    return backends, errors


def bench_program(program, backends: dict, start_errors: dict, args, budget_s: float,
                  names=BACKENDS) -> ProgramResult:
    """Compile, check and time one program on each backend of ``names``; failures end up
    in the result."""
    inputs = make_inputs(program, args.seed)
    result = ProgramResult(program, {}, flops=program.flops)
    outputs, estimates = {}, {}
    for name in names:
        if name in start_errors:
            result.backends[name] = BackendResult(error=start_errors[name])
            continue
        if not backends[name].supports(program):
            continue
        entry = result.backends[name] = BackendResult()
        try:
            estimate = _prepare(backends[name], program, inputs, entry, outputs, args)
        except BackendError as exc:
            entry.error = str(exc)
            continue
        if estimate is not None:
            estimates[name] = estimate
    if result.flops is None and "XLA" in backends:
        result.flops = backends["XLA"].flops
    _check(result, outputs)
    del outputs
    _time(result, backends, estimates, args, budget_s)
    if getattr(args, "profile", False):
        _profile(result, backends.get("xlac"), args)
    for backend in backends.values():
        backend.unload()
    return result


def _prepare(backend, program, inputs, entry: BackendResult, outputs: dict, args) -> float | None:
    """Compile, make the first call (its outputs feed the check), estimate a call's time."""
    entry.compile_s = backend.load(program, inputs)
    outputs[backend.name], first = backend.outputs()
    compiled = "" if entry.compile_s is None else f"compile {entry.compile_s:.2f} s, "
    _progress(f"  {backend.name}: {compiled}first call {first * 1e3:.1f} ms")
    if first > args.max_call_s:
        entry.slow, entry.times = True, [first]
        return None
    if first >= 1.0 or args.warmup == 0:
        return first
    return min(first, statistics.median(backend.time(args.warmup)))


def _check(result: ProgramResult, outputs: dict) -> None:
    reference = next((n for n in ("XLA", "numpy") if n in outputs), None)
    result.reference = reference
    if reference is None:
        return
    parts = []
    for name, got in outputs.items():
        if name == reference:
            continue
        error = result.backends[name].check = max_rel_error(got, outputs[reference])
        flag = "  <-- MISMATCH" if not result.agrees(name) else ""
        parts.append(f"{name} vs {reference} max rel err {error:.1e}{flag}")
    if parts:
        print(f"check {result.program.name}: " + "; ".join(parts), flush=True)


def _time(result: ProgramResult, backends: dict, estimates: dict, args, budget_s: float) -> None:
    if not estimates:
        return
    reps = plan_reps(estimates, budget_s, args.min_reps, args.max_reps)
    _progress("  timing " + ", ".join(f"{n} x{k}" for n, k in reps.items()))
    timed = interleave({n: backends[n] for n in reps}, reps, args.pause_ms / 1e3,
                       error_type=BackendError)
    for name, times in timed.times.items():
        result.backends[name].times = times
    for name, error in timed.errors.items():
        result.backends[name].error = error


def _profile(result: ProgramResult, xlac, args) -> None:
    """The slowest kernels of xlac's program (and its trace), when xlac ran it correctly
    enough to be timed; a failure is a note of the kernel table, never of the run."""
    timed = result.backends.get("xlac")
    if xlac is None or not hasattr(xlac, "profile") or timed is None or not timed.times:
        return
    if timed.compile_s is not None and timed.compile_s > args.profile_max_compile_s:
        result.profile_error = (f"skipped: the profiled copy is compiled again, and xlac took "
                                f"{timed.compile_s:.0f} s (--profile-max-compile-s)")
        return
    median = statistics.median(timed.times)
    runs = 1 if args.quick else max(1, min(10, int(args.profile_s / max(median, 1e-6))))
    trace = None
    if args.traces:
        args.traces.mkdir(parents=True, exist_ok=True)
        trace = str(Path(args.traces) / f"{result.program.name}.trace.json")
    try:
        result.profile = xlac.profile(runs, args.kernels, trace)
    except BackendError as exc:
        result.profile_error = str(exc)[:300]
        return
    top = result.profile.top[0] if result.profile.top else None
    _progress(f"  profile: {result.profile.kernels} kernels in {result.profile.seconds:.1f} s"
              + (f"; slowest {100 * top[2]:.0f}% {top[0]}" if top else ""))


def _method(args, start_errors: dict) -> list[str]:
    threads = (f"pinned to {args.threads} CPU(s), the roofline still counts both cores"
               if args.threads else "all CPUs the process may use")
    xla = XlaBackend.method if "XLA" not in start_errors else "XLA unavailable"
    mode = "quick smoke run; " if args.quick else ""
    return [f"XLA: {xla}; the same text goes to xlac.compile",
            f"timing: {mode}wall time per call (XLA: inputs already on device, outputs waited for "
            f"with block_until_ready); {args.warmup} warm-up call(s) after the first; backends "
            f"interleaved in round-robin batches with {args.pause_ms:g} ms pauses "
            f"(OPENBLAS_THREAD_TIMEOUT={os.environ.get('OPENBLAS_THREAD_TIMEOUT', 'unset')}: "
            "numpy's BLAS threads do not spin into the next backend's batch); "
            "ms as median [p10-p90]",
            "roofline: max(FLOPs / 320 GFLOP/s, bytes / 45 GB/s) (shared/bench/README.md); "
            "%roof = roofline / median",
            f"inputs: manifest dist/scale, seed {args.seed} (real models: their own recipe); "
            f"err: max |out - XLA| / max |XLA|; threads: {threads}", _level(args)] + _model_lines(args)


def _level(args) -> str:
    """Which vectors each side's code uses: a --cpu run caps both, and with CPUID
    masked (cpu_mask.py) XLA's library calls and numpy's BLAS too."""
    if not getattr(args, "cpu", None):
        return "cpu: the host's features for both compilers"
    capped = (f"cpu: xlac compiles for {args.cpu}; XLA's generated code is capped the same way "
              f"(XLA_FLAGS={os.environ.get('XLA_FLAGS', '')})")
    if os.environ.get("XLAC_CPUID_MASK") == args.cpu:
        return (capped + f", and CPUID is masked to {args.cpu} for the whole run (bench/cpuid_mask.c), "
                "so XLA's dot and convolution libraries and numpy's BLAS pick that level's code too")
    return capped + ", its dot and convolution library calls still use the host's widest vectors"


def _model_lines(args) -> list[str]:
    lines = []
    if getattr(args, "models", False):
        from models import SHARED_MODELS
        lines.append(f"real models: {SHARED_MODELS} (inputs from its make_inputs.py) and "
                     f"{args.models_dir} (bench/export_models.py; NAME.inputs.npz)")
    if getattr(args, "profile", False):
        lines.append(f"kernels: exe.profile in the xlac worker, a profiled copy, 1-10 calls "
                     f"(~{args.profile_s:g} s); traces: {args.traces or 'not written (--traces DIR)'}")
    return lines


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
