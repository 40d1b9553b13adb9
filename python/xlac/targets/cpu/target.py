"""The CPU target, as a newcomer reads it: its stages in order, then its
capabilities. Machine code: ``xlac.targets.cpu.compile`` (the LLVM JIT, or
pieces compiled in worker processes and linked); code read back from bytes:
``xlac.targets.cpu.library``.
"""

from __future__ import annotations

from xlac.targets.cpu.pipeline import (
    bufferized_stage,
    counted_top_k,
    has_fft_kernels,
    has_integer_kernel,
    llvm_stage,
    stablehlo_stage,
)
from xlac.targets.target import Stage, Target, front_stages

# every target's; f16/bf16 sums in f32: the CPU's reduction schedules take f32 lanes;
# large top-ks counted with AVX-512; 8-bit matmuls over their whole k where an integer kernel takes them
_INPUT, _STABLEHLO, _FUSED, _LINALG = front_stages("cpu", narrow_sums_in_f32=True,
                                                   counted_top_k=counted_top_k,
                                                   integer_kernel=has_integer_kernel,
                                                   fft_kernels=has_fft_kernels)

CPU = Target(
    name="cpu",
    summary="x86-64 machine code through LLVM: JIT-compiled here, or a C library (xla-compile)",
    stages=(
        _INPUT,
        Stage(_STABLEHLO.name, _STABLEHLO.produces, stablehlo_stage),   # + weights as arguments
        _FUSED,
        _LINALG,
        Stage("bufferized", "memrefs, each kernel scheduled for this CPU: threads, tiles, vectors",
              bufferized_stage),
        Stage("llvm", "the LLVM dialect: a function per kernel, the entry with bare pointers",
              llvm_stage),
    ),
    compiler="xlac.targets.cpu.compile:CpuCompiler",
    loader="xlac.targets.cpu.library:load_function",
    device_kind="cpu",
    aot=True,
    profiles=True,
    recompiles=True,
    dynamic_shapes=True,
    input_keyed=True,
)


def whole_pipeline(entry: str = "main", cpu=None, threads=None, remarks=None, micro_kernels=None,
                   profile=None, split_copy_bytes=None, overlap_collectives=None,
                   collective_bucket_bytes=None, disable_passes=None) -> list[str]:
    """``xla-cpu-pipeline``: every stage of ``CPU`` in a row, from the Options
    the compiler would have: ``cpu`` (host, x86-64-v2/v3/v4: what the vector
    width, FMA, bf16 and the micro-kernels follow from), ``threads``
    (``num_threads``), ``remarks`` (``fusion_remarks``) and the Options fields
    of the other names; one not given keeps Options' default, as in a compile."""
    return CPU.pipeline_of(entry, cpu=cpu, num_threads=threads, fusion_remarks=remarks,
                           micro_kernels=micro_kernels, profile=profile, split_copy_bytes=split_copy_bytes,
                           overlap_collectives=overlap_collectives,
                           collective_bucket_bytes=collective_bucket_bytes, disable_passes=disable_passes)
