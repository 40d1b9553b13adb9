"""The H200's peaks, one table, and what share of its peak a program reaches.

A memory-bound program is judged by bytes per second: each input read once and each
output written once (``Program.nbytes``) over the median time, against HBM bandwidth.
A compute-bound one by FLOPs per second (the export's count: 2 n^3 for a matmul, 4 b h s^2 d
for attention, jax's cost analysis for a model) against the dense tensor-core peak of its
element type. f32 programs are held to the TF32 peak: XLA's default precision for an f32
dot on the GPU lets cuBLAS use TF32 tensor cores, so that is what the hardware offers them;
the f32 peak without tensor cores is in the table for comparison.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Peak:
    value: float          # bytes/s or FLOP/s
    unit: str             # "TB/s" or "TFLOP/s": how the table prints it (value / 1e12)
    label: str
    source: str


_DATASHEET = "NVIDIA H200 Tensor Core GPU datasheet (H200 SXM; sparsity figures halved to dense)"
PEAKS = {
    "hbm": Peak(4.8e12, "TB/s", "HBM3e", _DATASHEET),
    "bf16": Peak(989.5e12, "TFLOP/s", "bf16 tensor cores", _DATASHEET + ": 1,979 TFLOPS sparse"),
    "f16": Peak(989.5e12, "TFLOP/s", "f16 tensor cores", _DATASHEET + ": 1,979 TFLOPS sparse"),
    "tf32": Peak(494.7e12, "TFLOP/s", "tf32 tensor cores", _DATASHEET + ": 989 TFLOPS sparse"),
    "f32": Peak(67e12, "TFLOP/s", "f32 without tensor cores", _DATASHEET),
}
# what a large bf16 GEMM reaches through cuBLAS on an H200 (about 80% of the datasheet's
# dense peak; the figure this benchmark's own XLA column is to confirm or replace)
CUBLAS_BF16_MEASURED = 790e12


# Past this max |xlac - XLA| / max |XLA| an output counts as wrong. XLA multiplies f32 dots
# in TF32 on the GPU (10 mantissa bits): against f32 a long dot differs by ~1e-3 of its largest
# value and a deep model by more (the 4-layer hf_bert on the H200: 2.7e-2), so programs held
# to the tf32 peak get 5e-2; the others keep their output type's (report.suspect_error).
TOLERANCE = {"tf32": 5e-2}


def is_memory_bound(peak: str) -> bool:
    return PEAKS[peak].unit == "TB/s"


def achieved(peak: str, nbytes: int, flops: float | None, median_ms: float | None) -> float | None:
    """Bytes/s or FLOP/s reached at ``median_ms`` per call; None without a time or a FLOP count."""
    if not median_ms or median_ms <= 0:
        return None
    work = nbytes if is_memory_bound(peak) else flops
    return None if not work else work / (median_ms / 1e3)


def percent_of_peak(peak: str, rate: float | None) -> float | None:
    return None if rate is None else 100.0 * rate / PEAKS[peak].value


def roofline_ms(peak: str, nbytes: int, flops: float | None) -> float | None:
    """The least time the peak allows for one call."""
    work = nbytes if is_memory_bound(peak) else flops
    return None if not work else 1e3 * work / PEAKS[peak].value


def peak_lines() -> list[str]:
    """The table's legend: every peak, its figure and where it comes from."""
    lines = [f"- {key}: {p.value / 1e12:g} {p.unit} ({p.label}; {p.source})" for key, p in PEAKS.items()]
    lines.append(f"- for scale: cuBLAS reaches about {CUBLAS_BF16_MEASURED / 1e12:g} TFLOP/s on a large "
                 "bf16 GEMM on an H200 (~80% of the dense peak)")
    return lines
