"""One ``run.py --target cuda`` run: xlac on the GPU against XLA on the GPU.

The CPU harness's steps (compile, first call and check, interleaved timing) on other
backends; without a GPU every backend reports why and the table still comes out.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import cuda_report
from backends import BackendError
from cuda_backends import XlacCudaBackend, XlaGpuBackend, XlaHostBackend
from harness import _check, _prepare, _progress, _select, _time
from programs import make_inputs
from report import BackendResult, ProgramResult, versions


def run(args) -> int:
    # jax would take 75% of the GPU's memory up front, beside the xlac worker's allocations
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    programs = _select(args)
    if programs is None:
        return 2
    backends, start_errors = start_backends(args)
    method = cuda_report.method_lines(args)
    device = device_name(backends.get("XLA"))
    print(f"device: {device}\n" + "\n".join(method), flush=True)
    results, started = [], time.perf_counter()
    try:
        for index, program in enumerate(programs):
            spent = time.perf_counter() - started
            floor = args.budget_s / len(programs) / 3
            budget = max((args.budget_s - spent) / (len(programs) - index), floor)
            _progress(f"[{index + 1}/{len(programs)}] {program.name}")
            results.append(bench_program(program, backends, start_errors, args, budget))
    finally:
        for backend in backends.values():
            backend.close()
    print("\n" + cuda_report.text_table(results), flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(cuda_report.markdown(results, method, versions(), device))
        print(f"\nwrote {args.out}")
    return 0


def start_backends(args) -> tuple[dict, dict]:
    backends, errors = {}, {}
    backends["xlac"] = XlacCudaBackend(args.seed, args.kill_after_s)
    try:
        backends["XLA"] = XlaGpuBackend()
        backends["XLA host"] = XlaHostBackend(backends["XLA"])
    except BackendError as exc:
        errors["XLA"] = errors["XLA host"] = str(exc)
        print(f"warning: {exc}", file=sys.stderr)
    return backends, errors


def bench_program(program, backends: dict, start_errors: dict, args, budget_s: float) -> ProgramResult:
    """Compile, check and time one program on every backend; failures end up in the result."""
    inputs = make_inputs(program, args.seed)
    result = ProgramResult(program, {}, flops=program.flops)
    outputs, estimates = {}, {}
    for name in cuda_report.BACKENDS:
        if name in start_errors:
            result.backends[name] = BackendResult(error=start_errors[name])
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
    for backend in backends.values():
        backend.unload()
    return result


def device_name(xla) -> str:
    """The GPU's name from XLA, else from nvidia-smi, else 'unknown GPU'."""
    if xla is not None and getattr(xla, "device_name", None):
        return xla.device_name
    try:
        found = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                               capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        found = ""
    return found.splitlines()[0] if found else "unknown GPU"
