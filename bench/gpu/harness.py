"""One ``run.py --target cuda`` run: xlac on the GPU against XLA on the GPU.

The CPU harness's steps (compile, first call and check, interleaved timing) on other
backends; without a GPU every backend reports why and the table still comes out.
"""

from __future__ import annotations

import os
import subprocess
import sys

from backends import BackendError
from harness import _select, measure_all
from report import versions

from gpu import report as cuda_report
from gpu import sized_report
from gpu.backends import XlacCudaBackend, XlacResidentBackend, XlaGpuBackend, XlaHostBackend
from gpu.sized import sized_programs


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
    results = measure_all(programs, backends, start_errors, args, cuda_report.BACKENDS)
    kernels = args.kernels if args.profile else 0       # the slowest kernels per program
    print("\n" + cuda_report.text_table(results, kernels), flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(cuda_report.markdown(results, method, versions(), device,
                                                 kernels=kernels))
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


def run_sized(args) -> int:
    """``--gpu-sized``: the exported GPU-sized programs, inputs on the device for both."""
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    programs = select_sized(args)
    if programs is None:
        return 2
    args.sized_programs = programs
    backends, errors = {"xlac": XlacResidentBackend(args.seed, args.kill_after_s)}, {}
    try:
        backends["XLA"] = XlaGpuBackend()
    except BackendError as exc:
        errors["XLA"] = str(exc)
        print(f"warning: {exc}", file=sys.stderr)
    method = sized_report.method_lines(args)
    device = device_name(backends.get("XLA"))
    print(f"device: {device}\n" + "\n".join(method), flush=True)
    results = measure_all(programs, backends, errors, args, sized_report.BACKENDS)
    kernels = args.kernels if args.profile else 0
    print("\n" + sized_report.text_table(results, kernels), flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(sized_report.markdown(results, method, versions(), device, kernels=kernels))
        print(f"\nwrote {args.out}")
    return 0


def select_sized(args):
    """The exported programs that --only names (all without it); None after saying what is wrong."""
    programs = sized_programs(args.gpu_sized_dir)
    if not programs:
        print(f"error: no GPU-sized programs in {args.gpu_sized_dir}: run python bench/export_gpu_sized.py "
              "(pip install -e '.[bench,gpu-bench]'; --scale 1/256 for small ones)", file=sys.stderr)
        return None
    if not args.only:
        return programs
    wanted = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = sorted(set(wanted) - {p.name for p in programs})
    if unknown:
        print(f"error: no GPU-sized program named {', '.join(unknown)} in {args.gpu_sized_dir}; have: "
              f"{', '.join(p.name for p in programs)}", file=sys.stderr)
        return None
    return [p for p in programs if p.name in wanted]
