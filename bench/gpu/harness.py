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
from gpu.backends import XlacCudaBackend, XlaGpuBackend, XlaHostBackend


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
