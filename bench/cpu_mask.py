"""Run the benchmark as on a smaller CPU: CPUID hides the features above a level.

`--xla_cpu_max_isa=AVX2` caps only the code XLA generates; its dot and
convolution libraries still ask CPUID and run AVX-512 (XLA's 1024 matmul: 327
GFLOP/s capped, 149 GFLOP/s with CPUID masked, on a 2-core AVX-512 Xeon). So
"xlac at AVX2 against XLA at AVX2" on an AVX-512 host compared xlac's AVX2 code
with XLA's AVX-512 libraries. cpuid_mask.c, preloaded into the whole benchmark
(XLA, numpy's BLAS and xlac's workers alike), makes every library see the
smaller CPU. At x86-64-v4 it hides what an AVX-512 CPU has beyond that level
(AVX512-BF16/FP16/VNNI, VBMI, AMX...), which XLA's libraries would use and xlac's
x86-64-v4 code does not. It needs a C compiler and Linux's CPUID faulting (`cpuid_fault` in
/proc/cpuinfo, and arch_prctl allowed); without them the run says so and goes on unmasked.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from xlac.files import built_library, find_c_compiler

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "cpuid_mask.c"
MASKABLE = ("x86-64-v2", "x86-64-v3", "x86-64-v4")
AVX512 = ("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl")     # x86-64-v4's
MARK = "XLAC_CPUID_MASK"            # set in the masked process: the level hidden to
_SYS_ARCH_PRCTL, _ARCH_SET_CPUID = 158, 0x1012      # x86-64


def why_not(level: str) -> str | None:
    """None when `level` can be masked here, else the reason it cannot."""
    if level not in MASKABLE:
        return f"{level} is not a level the mask knows (known: {', '.join(MASKABLE)})"
    if find_c_compiler() is None:
        return "no C compiler (cc, gcc or clang) to build bench/cpuid_mask.c"
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "no /proc/cpuinfo"
    if " cpuid_fault" not in flags:
        return "this CPU or hypervisor has no CPUID faulting (cpuid_fault)"
    missing = [flag for flag in AVX512 if flag not in flags.split()] if level == "x86-64-v4" else []
    if missing:
        return f"this CPU has no AVX-512 ({', '.join(missing)}): it is below x86-64-v4, not above"
    if not _faulting_allowed():
        return "this process may not turn CPUID faulting on (arch_prctl refused: a sandbox?)"
    return None


def _faulting_allowed() -> bool:
    """Whether arch_prctl(ARCH_SET_CPUID) works here (a seccomp filter may refuse
    it), tried in a child so that this process never runs with faulting on."""
    probe = ("import ctypes, sys\n"
             "syscall = ctypes.CDLL(None, use_errno=True).syscall\n"
             f"refused = syscall({_SYS_ARCH_PRCTL}, {_ARCH_SET_CPUID}, 0)\n"
             f"syscall({_SYS_ARCH_PRCTL}, {_ARCH_SET_CPUID}, 1)\n"
             "sys.exit(1 if refused else 0)\n")
    return subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0


def _library() -> Path:
    """bench/cpuid_mask.c built once per content (xlac.files.built_library)."""
    return built_library(SOURCE)


def reexec_masked(level: str) -> None:
    """Start this command again with CPUID masked to `level` (no return), or
    print why not and return. A no-op inside the masked process."""
    if os.environ.get(MARK):
        return
    reason = why_not(level)
    if reason:
        print(f"note: CPUID is not masked to {level} ({reason}): libraries that ask "
              f"CPUID (XLA's dots, numpy's BLAS) use the host's widest vectors", file=sys.stderr)
        return
    env = dict(os.environ, **{MARK: level})
    env["LD_PRELOAD"] = " ".join(filter(None, [str(_library()), env.get("LD_PRELOAD")]))
    print(f"note: CPUID masked to {level} for the whole run (bench/cpuid_mask.c)", file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, *sys.argv], env)


def masked_level() -> str | None:
    """The level CPUID is masked to in this process, for the report."""
    return os.environ.get(MARK)
