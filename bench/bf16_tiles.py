"""A bf16 x bf16 -> f32 matmul's register tile on the bf16 dot-product instructions
against xlac's f32 micro-kernel, on one core (bf16_tiles.c says what each way does).

```
python bench/bf16_tiles.py                  # 5 rounds of 100,000 calls per way
python bench/bf16_tiles.py --rounds 9 --calls 200000
```

Needs a CPU with AVX512-BF16 and AMX-BF16 (an Intel Xeon since Sapphire Rapids) and a C
compiler; the f32 micro-kernel is xlac's own, compiled for cpu="host". Each round runs
the four ways one after another in one process; the figure is each way's median over
the rounds of GFLOP/s per CPU-second, with its range, and its multiple of the f32
kernel's median.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
NEEDED = ("avx512_bf16", "amx_bf16", "amx_tile")


def missing_features() -> list[str]:
    flags = Path("/proc/cpuinfo").read_text().split() if Path("/proc/cpuinfo").exists() else []
    return [flag for flag in NEEDED if flag not in flags]


def f32_micro_kernel(cache_dir: Path) -> Path:
    """xlac's 8 x 32 f32 micro-kernel for this CPU, as a shared library."""
    from xlac.cpu_model import cpu_model
    from xlac.targets.cpu import micro_kernels
    return micro_kernels.shared_library(micro_kernels.symbol(8, 32), cpu_model("host").features, cache_dir)


def build(workdir: Path) -> Path:
    from xlac.files import find_c_compiler
    program = workdir / "bf16_tiles"
    subprocess.run([find_c_compiler() or "cc", "-O2", "-march=native", "-o", str(program),
                    str(HERE / "bf16_tiles.c"), "-ldl", "-lm"], check=True, capture_output=True, text=True)
    return program


def rounds(program: Path, kernel: Path, count: int, calls: int) -> dict[str, list[float]]:
    """GFLOP/s of each way in each round (and fail on a result that differs past f32 rounding)."""
    rates: dict[str, list[float]] = {}
    for _ in range(count):
        done = subprocess.run([str(program), str(kernel), str(calls)], capture_output=True, text=True, check=True)
        for line in done.stdout.split("\n"):
            if line:
                way, rate, difference = line.split()
                if float(difference) > 1e-5:
                    raise SystemExit(f"{way}: results differ from f32 by {difference}")
                rates.setdefault(way, []).append(float(rate))
    return rates


def table(rates: dict[str, list[float]]) -> str:
    base = statistics.median(rates["f32"])
    lines = [f"load {os.getloadavg()[0]:.1f}; GFLOP/s per CPU-second, median [range] of {len(rates['f32'])} rounds",
             "| way | GFLOP/s | x f32 micro-kernel |", "|---|---|---|"]
    for way, values in rates.items():
        median = statistics.median(values)
        lines.append(f"| {way} | {median:.1f} [{min(values):.1f}-{max(values):.1f}] | {median / base:.2f} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=100_000, help="tile calls per way and round")
    parser.add_argument("--cache-dir", type=Path, help="where xlac keeps its micro-kernel (default: a temporary one)")
    args = parser.parse_args()
    if missing_features():
        print(f"this CPU lacks {', '.join(missing_features())}: nothing to measure", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="xlac-bf16-tiles-") as workdir:
        kernel = f32_micro_kernel(args.cache_dir or Path(workdir))
        print(table(rounds(build(Path(workdir)), kernel, args.rounds, args.calls)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
