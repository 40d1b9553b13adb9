"""The CPU that code is compiled for, described once: its instruction-set
features and what the schedules derive from them (vector width, FMA, bf16).

``"host"`` reads this machine's ``/proc/cpuinfo``; the x86-64 micro-architecture
levels name the CPUs a build may target instead (``xlac.compile(..., cpu=
"x86-64-v3")``, ``XLAC_CPU``, ``--cpu``), so the lowering for AVX2 and for
AVX-512 can be made and checked on any machine.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from xlac.record import record

# /proc/cpuinfo flags that change what instructions compiled code may use.
_ISA_FLAG = re.compile(r"^(sse|ssse3|avx|fma|f16c|bmi|adx|aes|pclmul|popcnt|abm|lzcnt|movbe"
                       r"|sha|vaes|vpclmul|gfni|amx|xsave|cx16|rdrand|rdseed|3dnowprefetch"
                       r"|clflushopt|clwb|serialize|waitpkg|avx512|neon|asimd|sve)")

_V2 = ("cx16", "popcnt", "sse", "sse2", "sse4_1", "sse4_2", "ssse3")
_V3 = _V2 + ("avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave")
_V4 = _V3 + ("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl")
LEVELS: dict[str, tuple[str, ...]] = {"x86-64-v2": _V2, "x86-64-v3": _V3, "x86-64-v4": _V4}


@record                             # a frozen dataclass, without importing dataclasses
class CpuModel:
    """What compiled code may assume about the CPU it runs on."""

    name: str                       # host, x86-64-v3, ...
    features: tuple[str, ...]       # sorted /proc/cpuinfo spellings

    @property
    def vector_bytes(self) -> int:
        """Bytes in one SIMD register: 64 with AVX-512, 32 with AVX2, else 16."""
        return 64 if "avx512f" in self.features else 32 if "avx2" in self.features else 16

    @property
    def native_bf16(self) -> bool:
        """f32 <-> bf16 conversion in hardware (AVX512-BF16): no software rounding needed."""
        return "avx512_bf16" in self.features

    @property
    def native_f16(self) -> bool:
        """f32 <-> f16 conversion in hardware (F16C, every AVX2 CPU): without it
        LLVM calls libgcc's ``__truncsfhf2``, which the JIT cannot find."""
        return "f16c" in self.features

    @property
    def l1d_bytes(self) -> int:
        """Bytes of one core's L1 data cache: this host's (Linux's sysfs), 0 (not
        known) for a named level, which stands for CPUs of several sizes (32 KiB
        Zen 4 and Skylake-SP, 48 KiB Ice Lake to Emerald Rapids): the schedules
        then keep the plans measured on the 48 KiB ones."""
        return host_l1d_bytes() if self.name == "host" else 0

    def lacks(self, features) -> list[str]:
        """The features in ``features`` this CPU does not have."""
        return sorted(set(features) - set(self.features))


def cpu_model(name: str = "host") -> CpuModel:
    """The model called ``name``; ValueError naming the known ones otherwise."""
    if name in ("", "host"):
        return CpuModel("host", host_features())
    if name in LEVELS:
        return CpuModel(name, tuple(sorted(LEVELS[name])))
    raise ValueError(f"unknown CPU '{name}' (known: host, {', '.join(LEVELS)})")


# The vector extensions a CPUID mask (xlac.options.cpuid_mask_level, the
# benchmarks' cpuid_mask.c) hides above its level: /proc/cpuinfo still lists them.
_MASKED_FAMILY = re.compile(r"^(avx|amx|fma|f16c|bmi|abm|gfni|vaes|vpclmul)")


@functools.cache
def host_features() -> tuple[str, ...]:
    """The instruction-set extensions of this CPU (sorted), from /proc/cpuinfo;
    in a process whose CPUID is masked to a level, without those the mask hides,
    so that "host" means the CPU that LLVM and every library see."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return ()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            flags = {flag for flag in value.split() if _ISA_FLAG.match(flag)}
            return tuple(sorted(flags - _hidden_by_cpuid_mask(flags)))
    return ()


_CACHES = Path("/sys/devices/system/cpu/cpu0/cache")


@functools.cache
def host_l1d_bytes() -> int:
    """Bytes of this CPU's level-1 data cache (cpu0's, as Linux reports it), 0
    where it does not say."""
    for index in sorted(_CACHES.glob("index*")):
        try:
            level, kind, size = ((index / name).read_text().strip() for name in ("level", "type", "size"))
        except OSError:
            continue
        if level == "1" and kind == "Data" and size[:-1].isdigit() and size[-1] in "KM":
            return int(size[:-1]) << (10 if size[-1] == "K" else 20)
    return 0


def _hidden_by_cpuid_mask(flags) -> set[str]:
    from xlac.options import cpuid_mask_level
    level = LEVELS.get(cpuid_mask_level() or "")
    if level is None:
        return set()
    return {flag for flag in flags if _MASKED_FAMILY.match(flag) and flag not in level}


def check_runnable(features) -> None:
    """Refuse to run code compiled for a CPU of ``features`` on a host that
    lacks some: it would stop with SIGILL. Saving it is fine."""
    missing = cpu_model("host").lacks(features)
    if missing:
        name = next((level for level, wanted in LEVELS.items()
                     if sorted(wanted) == sorted(features)), "another CPU")
        from xlac.errors import XlacError
        raise XlacError(f"this code was compiled for {name}, which needs CPU features this "
                        f"CPU lacks ({', '.join(missing)}); save it (exe.serialize(), "
                        "xla-compile) and run it on such a CPU, or compile for cpu='host'")
